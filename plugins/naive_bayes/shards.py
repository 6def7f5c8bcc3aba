"""Statistics of the naive-Bayes family that merge over shards of the training data (toolkit.api's
shard protocol), for nb-weka, nb-gaussian and bma-nb.

* Nominal attributes: the weighted value counts per class of :class:`~.estimators.NominalCounts`; they add.
* Numeric attributes, WEKA's NormalEstimator and BMA (algorithms.md 2.3, 2.6): WEKA's precision is the
  mean gap between the *distinct* values of an attribute over all training rows, and every value is
  rounded to it before the moments are summed, so neither can be added over shards as numbers. What adds
  is the histogram: every distinct (attribute, value) pair with its weight per class
  (:class:`ValueHistogram`); merging is a union of pairs. From the merged histogram the precision is the
  same sum of gaps in the same ascending order as a single pass (bit for bit), and the rounded moments,
  and BMA's resubstitution log-likelihoods, are sums over pairs. Its size is the number of distinct
  pairs: small for counts and discretised measurements, up to the number of cells for continuous data
  (then the statistics are as large as the data; WEKA's precision needs them).
* Numeric attributes, plain Gaussian (algorithms.md 2.2): per (attribute, class) the weight, the mean
  and the sum of squared deviations, merged with Chan, Golub & LeVeque's update; for sparse data the same
  for the cells that hold a nonzero value only (every other cell has mean 0 and no deviation), so they
  stay as sparse as the data (:class:`GaussianMoments`). Sums of the values and of their squares would
  add, but the variance from them cancels: 2.0 for 0.67 around 1e8.

Zero values of sparse data are counted per (attribute, class) from the class totals, never stored.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import SufficientStatistics
from toolkit.plugins.naive_bayes.estimators import (
    DEFAULT_PRECISION, GaussianStats, NominalCounts, NormalStats, _columns, _normal_from_sums, _replay_block,
    _smooth, class_weights, _at, moments_finish, nominal_counts, one_hot, row_chunks, sparse_cell_moments,
    weka_round,
)

__all__ = ["ValueHistogram", "value_histogram", "GaussianMoments", "gaussian_moments", "NBStatistics",
           "merge_nominal", "FitFromShards", "nb_statistics"]


def merge_nominal(a: NominalCounts, b: NominalCounts) -> NominalCounts:
    """The value counts of two shards together (the same declared values)."""
    return NominalCounts(a.counts + b.counts, a.offsets, a.n_values, a.observed + b.observed)


# ------------------------------------------------------------------------------------ value histogram

@dataclass
class ValueHistogram:
    """Distinct (column, value) pairs of the non-missing values, sorted by column then value, with the
    summed weight of each pair per class. ``cols`` index the numeric columns (0..F_num-1); a pair is
    present when at least one row holds it, whatever its weight (WEKA's precision counts every value)."""

    cols: np.ndarray      # (U,) int64
    values: np.ndarray    # (U,) float64
    weights: np.ndarray   # (U, K) float64
    n_columns: int

    def merge(self, other: ValueHistogram) -> ValueHistogram:
        return _group(np.concatenate([self.cols, other.cols]), np.concatenate([self.values, other.values]),
                      np.vstack([self.weights, other.weights]), self.n_columns)

    def precision(self) -> np.ndarray:
        """WEKA's precision per column: the gaps between consecutive distinct values, added in ascending
        order (as weka_precision and WEKA do), over their number; 0.01 below two distinct values."""
        out = np.full(self.n_columns, DEFAULT_PRECISION)
        if len(self.cols) < 2:
            return out
        same = self.cols[1:] == self.cols[:-1]
        gaps = np.diff(self.values)
        distinct = same & (gaps != 0)
        col = self.cols[1:][distinct]
        counts = np.bincount(col, minlength=self.n_columns)
        sums = np.bincount(col, weights=gaps[distinct], minlength=self.n_columns)
        ok = counts > 0
        out[ok] = sums[ok] / counts[ok]
        return out

    def rounded(self, precision: np.ndarray) -> np.ndarray:
        """Each pair's value rounded to its column's precision (WEKA's r(x))."""
        return weka_round(self.values, precision[self.cols])

    def normal(self, precision: np.ndarray | None = None, unit: np.ndarray | None = None) -> NormalStats:
        """WEKA NormalEstimator parameters per (column, class) from the rounded values' moments.

        ``unit`` (K,) says which classes hold only instances of weight 1 (:attr:`NBStatistics.unit_weight`):
        there a cell whose values are all one rounded value and whose final sums fail WEKA's test
        (``_replay_failing_cells``: a class constant at a large value, say) gets the standard deviation WEKA's
        running sums keep, as ``fit`` gives it; that replay is the same in any order of the instances."""
        if precision is None:
            precision = self.precision()
        K = self.weights.shape[1]
        r = self.rounded(precision)
        sw = _column_sums(self.cols, self.weights, self.n_columns)
        with np.errstate(over="ignore", invalid="ignore"):
            sv = _column_sums(self.cols, self.weights * r[:, None], self.n_columns)
            sq = _column_sums(self.cols, self.weights * (r * r)[:, None], self.n_columns)
        assert sw.shape[1] == K
        stats = _normal_from_sums(precision, sw, sv, sq)
        if unit is not None and len(r):
            _replay_constant_cells(stats, self.cols, r, self.weights, np.asarray(unit, dtype=bool))
        return stats


def _replay_constant_cells(stats: NormalStats, cols: np.ndarray, rounded: np.ndarray, weights: np.ndarray,
                           unit: np.ndarray) -> None:
    """The running-sum replay of ``_replay_failing_cells`` for the cells it replays in row order: a class of
    unit weights in which the column holds one rounded value (its n instances each add that value, so
    every order gives the same sums). Other failing cells need WEKA's order of the instances, which a
    histogram does not keep; they keep the final sums' answer."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sd = np.sqrt(np.abs(stats.sum_squares - stats.mean * stats.sum_values) / stats.weight)
    m, sw, sv, sq = stats.mean, stats.weight, stats.sum_values, stats.sum_squares
    with np.errstate(invalid="ignore", over="ignore"):
        # constant at a whole number: every running sum i m and i m^2 is exact below 2^53, so every candidate
        # is exactly 0 and the default stands (as _replay_failing_cells skips them)
        exact = (sd == 0) & (m == np.rint(m)) & (sv == m * sw) & (sq == m * m * sw) & (np.abs(sq) < 2.0 ** 53)
    failing = ((sw > 0) & (sq != 0) & (~(sd > 1e-10) | (sd <= 1e-6 * np.abs(m))) & ~exact & unit[None, :]
               & (sw == np.rint(sw)) & (sw <= 1e8))
    if not failing.any():
        return
    floor = stats.precision / 6.0
    starts = np.searchsorted(cols, np.arange(len(stats.precision) + 1))   # the histogram is sorted by column
    for j, k in zip(*np.nonzero(failing)):
        block = slice(starts[j], starts[j + 1])
        values = rounded[block][weights[block, k] > 0]
        if len(values) == 0 or not np.all(values == values[0]):
            continue
        count = int(sw[j, k])
        _replay_block(stats, np.full((count, 1), values[0]), np.ones((count, 1), dtype=bool), np.ones(count), floor,
                      np.array([j]), int(k))


def _column_sums(cols: np.ndarray, values: np.ndarray, n_columns: int) -> np.ndarray:
    """(n_columns, K) sums of the rows of ``values`` (U, K) per column."""
    K = values.shape[1]
    index = (cols[:, None] * K + np.arange(K)).ravel()
    return np.bincount(index, weights=values.ravel(), minlength=n_columns * K).reshape(n_columns, K)


def _group(cols: np.ndarray, values: np.ndarray, weights: np.ndarray, n_columns: int) -> ValueHistogram:
    """Sort entries by (column, value) and add the weights of equal pairs."""
    K = weights.shape[1] if weights.ndim == 2 else 0
    if len(cols) == 0:
        return ValueHistogram(np.zeros(0, np.int64), np.zeros(0), np.zeros((0, K)), n_columns)
    order = np.lexsort((values, cols))
    cols, values, weights = cols[order], values[order], weights[order]
    new = np.ones(len(cols), dtype=bool)
    new[1:] = (cols[1:] != cols[:-1]) | (values[1:] != values[:-1])
    starts = np.flatnonzero(new)
    return ValueHistogram(cols[starts].astype(np.int64), values[starts] + 0.0, np.add.reduceat(weights, starts, axis=0),
                          n_columns)


def _entries_histogram(cols: np.ndarray, values: np.ndarray, classes: np.ndarray, weights: np.ndarray, K: int,
                       n_columns: int) -> ValueHistogram:
    """The histogram of single entries (column, value, class, weight): one sort, one bincount."""
    if len(cols) == 0:
        return ValueHistogram(np.zeros(0, np.int64), np.zeros(0), np.zeros((0, K)), n_columns)
    order = np.lexsort((values, cols))
    cols, values = cols[order], values[order]
    new = np.ones(len(cols), dtype=bool)
    new[1:] = (cols[1:] != cols[:-1]) | (values[1:] != values[:-1])
    pair = np.cumsum(new) - 1
    U = int(pair[-1]) + 1
    table = np.bincount(pair * K + classes[order], weights=weights[order], minlength=U * K).reshape(U, K)
    starts = np.flatnonzero(new)
    return ValueHistogram(cols[starts].astype(np.int64), values[starts] + 0.0, table, n_columns)


def value_histogram(X: np.ndarray | sp.csr_matrix, y: np.ndarray, w: np.ndarray, columns: np.ndarray,
                    n_classes: int) -> ValueHistogram:
    """The histogram of the numeric ``columns`` of one shard (NaN = missing, skipped)."""
    F = len(columns)
    K = n_classes
    if F == 0 or X.shape[0] == 0:
        return ValueHistogram(np.zeros(0, np.int64), np.zeros(0), np.zeros((0, K)), F)
    sub = _columns(X, columns)
    if sp.issparse(sub):
        sub = sp.csr_matrix(sub)
        rows = np.repeat(np.arange(sub.shape[0]), np.diff(sub.indptr))
        keep = ~np.isnan(sub.data)
        stored = _entries_histogram(sub.indices[keep].astype(np.int64), sub.data[keep], y[rows[keep]],
                                    w[rows[keep]], K, F)
        # implicit zeros: per (column, class) the class total less the stored entries (values and NaN)
        pattern = sp.csr_matrix((np.ones(len(sub.data)), sub.indices, sub.indptr), shape=sub.shape)
        zero_cols = np.flatnonzero(np.bincount(sub.indices, minlength=F) < sub.shape[0])
        stored_weight = np.asarray((one_hot(y, K, w).T @ pattern).T.todense())   # (F, K)
        zeros = ValueHistogram(zero_cols.astype(np.int64), np.zeros(len(zero_cols)),
                               class_weights(y, w, K)[None, :] - stored_weight[zero_cols], F)
        return stored.merge(zeros)
    parts = []
    for chunk in row_chunks(sub.shape[0], F, budget=2_000_000):   # bounded temporaries
        block = np.asarray(sub[chunk], dtype=np.float64)
        r, c = np.nonzero(~np.isnan(block))
        parts.append(_entries_histogram(c.astype(np.int64), block[r, c], y[chunk][r], w[chunk][r], K, F))
    if len(parts) == 1:
        return parts[0]
    return _group(np.concatenate([p.cols for p in parts]), np.concatenate([p.values for p in parts]),
                  np.vstack([p.weights for p in parts]), F)


# ------------------------------------------------------------------------------------ Gaussian moments

@dataclass
class GaussianMoments:
    """Per (column, class) moments that merge over shards with Chan et al.'s pairwise update.

    Dense data: ``sw`` (weight of the observed values), ``mean`` and ``m2`` (weighted sum of squared
    deviations from the mean), (F, K) each. Sparse data: ``total`` (K,) class weights, sparse (F, K)
    ``missing`` weights, and for the ``cells`` (``column * K + class``, ascending) that hold a nonzero
    value their ``cell_mean`` and ``cell_m2``; every other cell's observed values are zeros. Shards of
    both kinds merge (the sparse form is turned dense).
    """

    sw: np.ndarray | None = None
    mean: np.ndarray | None = None
    m2: np.ndarray | None = None
    total: np.ndarray | None = None
    missing: sp.csr_matrix | None = None
    cells: np.ndarray | None = None
    cell_mean: np.ndarray | None = None
    cell_m2: np.ndarray | None = None

    @property
    def is_sparse(self) -> bool:
        return self.cells is not None

    def _observed(self, cells: np.ndarray) -> np.ndarray:
        """The observed weight of these cells (sparse form): the class total less the missing weight."""
        K = len(self.total)
        missing = self.missing.tocoo()
        held = missing.row.astype(np.int64) * K + missing.col
        order = np.argsort(held)
        return self.total[cells % K] - _at(held[order], missing.data[order], cells)

    def as_moments(self) -> GaussianMoments:
        """The dense (sw, mean, m2) form."""
        if not self.is_sparse:
            return self
        sw = self.total[None, :] - self.missing.toarray()
        mean, m2 = np.zeros(sw.shape), np.zeros(sw.shape)
        mean.ravel()[self.cells], m2.ravel()[self.cells] = self.cell_mean, self.cell_m2
        return GaussianMoments(sw=sw, mean=mean, m2=m2)

    def merge(self, other: GaussianMoments) -> GaussianMoments:
        if self.is_sparse and other.is_sparse:
            cells = np.union1d(self.cells, other.cells)
            a = [self._observed(cells), _at(self.cells, self.cell_mean, cells), _at(self.cells, self.cell_m2, cells)]
            b = [other._observed(cells), _at(other.cells, other.cell_mean, cells), _at(other.cells, other.cell_m2, cells)]
            _, mean, m2 = _chan(*a, *b)
            return GaussianMoments(total=self.total + other.total, missing=self.missing + other.missing,
                                   cells=cells, cell_mean=mean, cell_m2=m2)
        a, b = self.as_moments(), other.as_moments()
        return GaussianMoments(*_chan(a.sw, a.mean, a.m2, b.sw, b.mean, b.m2))

    def finish(self, var_smoothing: float) -> GaussianStats:
        """Means and variances as gaussian_stats gives them: empty cells take the all-class values,
        epsilon = var_smoothing x the largest all-class variance."""
        dense = self.as_moments()
        all_var, mean, var = moments_finish(dense.sw, dense.mean, dense.m2)
        return _smooth(mean, var, float(all_var.max()) if all_var.size else 0.0, var_smoothing)


def _chan(sw_a: np.ndarray, mean_a: np.ndarray, m2_a: np.ndarray, sw_b: np.ndarray, mean_b: np.ndarray,
          m2_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chan, Golub & LeVeque's pairwise update of (weight, mean, sum of squared deviations)."""
    n = sw_a + sw_b
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        share = np.where(n > 0, sw_b / n, 0.0)
        delta = mean_b - mean_a
        mean = np.where(sw_a > 0, mean_a + delta * share, mean_b)
        m2 = m2_a + m2_b + np.where((sw_a > 0) & (sw_b > 0), delta * delta * sw_a * share, 0.0)
    return n, mean, m2


def gaussian_moments(X: np.ndarray | sp.csr_matrix, y: np.ndarray, w: np.ndarray, columns: np.ndarray,
                     n_classes: int) -> GaussianMoments:
    """The moments of the numeric ``columns`` of one shard (NaN = missing, skipped)."""
    F, K = len(columns), n_classes
    sub = _columns(X, columns) if F else np.zeros((X.shape[0], 0))
    if sp.issparse(sub):
        total, missing, cells, _, mean, m2 = sparse_cell_moments(sp.csr_matrix(sub), y, w, K)
        return GaussianMoments(total=total, missing=missing, cells=cells, cell_mean=mean, cell_m2=m2)
    sw = np.zeros((F, K))
    mean = np.zeros((F, K))
    m2 = np.zeros((F, K))
    if F == 0 or sub.shape[0] == 0:
        return GaussianMoments(sw=sw, mean=mean, m2=m2)
    sub = np.asarray(sub, dtype=np.float64)
    present = ~np.isnan(sub)
    order = np.argsort(y, kind="stable")
    counts = np.bincount(y, minlength=K)
    nonempty = np.flatnonzero(counts)
    starts = np.concatenate([[0], np.cumsum(counts)])[nonempty]
    pw = present[order] * w[order][:, None]
    clean = np.where(present, sub, 0.0)[order]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sw[:, nonempty] = np.add.reduceat(pw, starts, axis=0).T
        sv = np.zeros((F, K))
        sv[:, nonempty] = np.add.reduceat(pw * clean, starts, axis=0).T
        mean = np.where(sw > 0, sv / np.where(sw > 0, sw, 1.0), 0.0)
        dev = np.where(pw > 0, clean - mean.T[y[order]], 0.0)      # two passes: no cancellation
        m2[:, nonempty] = np.add.reduceat(pw * dev * dev, starts, axis=0).T
    return GaussianMoments(sw=sw, mean=mean, m2=m2)


# ------------------------------------------------------------------------------------ the statistics

class NBStatistics(SufficientStatistics):
    """Nominal value counts and the numeric part (a :class:`ValueHistogram` for nb-weka
    and bma-nb, which share it, or :class:`GaussianMoments` for nb-gaussian)."""

    def __init__(self, nominal: NominalCounts, numeric: ValueHistogram | GaussianMoments,
                 unit_weight: np.ndarray | None = None):
        super().__init__()
        self.nominal = nominal
        self.numeric = numeric
        #: (K,) whether every instance of the class had weight 1 (None: not known): WEKA's running sums
        #: over a class constant in a column are then known without the order of the instances
        self.unit_weight = unit_weight

    def _merge(self, other: Any) -> NBStatistics:
        out = copy.copy(self)
        out.nominal = merge_nominal(self.nominal, other.nominal)
        out.numeric = self.numeric.merge(other.numeric)
        mine, theirs = getattr(self, "unit_weight", None), getattr(other, "unit_weight", None)
        out.unit_weight = None if mine is None or theirs is None else mine & theirs
        return out


class FitFromShards:
    """The shard half of the protocol for the naive Bayes models of this family (nb-weka, nb-gaussian,
    bma-nb): one pass, statistics from :func:`nb_statistics` with the model's numeric kind."""

    #: "histogram" (WEKA's precision from the distinct values) or "moments" (Gaussian sums)
    def _numeric_statistics(self) -> str:
        return "histogram"

    def statistics_passes(self) -> int:
        self._check_params()  # type: ignore[attr-defined]
        return 1

    def _shard_statistics(self, X: Any, y: np.ndarray, w: np.ndarray, schema: Any, previous: Any) -> Any:
        probe = copy.copy(self)
        probe.schema_ = schema  # type: ignore[attr-defined]
        probe._set_columns()  # type: ignore[attr-defined]  # refuses string attributes
        return nb_statistics(X, y, w, schema, self._numeric_statistics())


def nb_statistics(X: Any, y: np.ndarray, w: np.ndarray, schema: Any, numeric: str) -> NBStatistics:
    """One shard's statistics; ``numeric`` is "histogram" (WEKA's estimator, BMA) or "moments" (Gaussian)."""
    K = len(schema.classes)
    nominal_columns = schema.columns_of_kind("nominal")
    numeric_columns = schema.columns_of_kind("numeric", "date")
    counts = nominal_counts(X, y, w, nominal_columns, schema.n_values[nominal_columns], K)
    if numeric == "histogram":
        part: ValueHistogram | GaussianMoments = value_histogram(X, y, w, numeric_columns, K)
    else:
        part = gaussian_moments(X, y, w, numeric_columns, K)
    unit = np.bincount(y, weights=(w != 1.0).astype(np.float64), minlength=K) == 0
    stats = NBStatistics(counts, part, unit)
    stats.settings = ("naive-bayes", numeric)
    return stats
