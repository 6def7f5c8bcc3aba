"""Sufficient statistics of the naive-Bayes family, computed once and shared by NB and BMA-NB.

* Discrete (nominal) attributes: weighted counts per (value, class), WEKA's DiscreteEstimator.
* Numeric attributes, WEKA's NormalEstimator (algorithms.md 2.3): a precision per attribute from
  the mean gap between sorted distinct training values, values rounded to it, and a per-class
  mean and standard deviation of the rounded values with sigma >= precision / 6.
* Numeric attributes, plain Gaussian (algorithms.md 2.2): mean and population variance per class.

Everything is vectorised over rows, columns and classes; missing values (NaN) are skipped. Sparse
matrices are handled without densifying: implicit zeros are values 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtr

__all__ = [
    "DEFAULT_PRECISION", "MIN_PROB", "NominalCounts", "NormalStats", "GaussianStats", "nominal_counts",
    "weka_precision", "normal_stats", "gaussian_stats", "weka_round", "normal_prob", "class_weights",
    "one_hot", "row_chunks", "distinct_pairs", "step_slots",
]

#: WEKA's default precision when an attribute has fewer than two distinct values.
DEFAULT_PRECISION = 0.01
#: WEKA NaiveBayes clamps every attribute probability from below at this value.
MIN_PROB = 1e-75


def row_chunks(n: int, width: int, budget: int = 4_000_000) -> list[slice]:
    """Row slices such that ``rows * width`` stays near ``budget`` elements (bounded temporaries)."""
    step = max(1, budget // max(width, 1))
    return [slice(start, min(n, start + step)) for start in range(0, n, step)] or [slice(0, 0)]


def one_hot(y: np.ndarray, n_classes: int, weights: np.ndarray | None = None) -> sp.csr_matrix:
    """(n, K) sparse indicator of the classes, holding the weights."""
    n = len(y)
    data = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    return sp.csr_matrix((data, (np.arange(n), y)), shape=(n, n_classes))


def class_weights(y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    return np.bincount(y, weights=w, minlength=n_classes).astype(np.float64)


# ------------------------------------------------------------------------------------ nominal

@dataclass
class NominalCounts:
    """Counts of every (column, value) per class, flattened: row ``offsets[j] + v``."""

    counts: np.ndarray          # (total values, K) weighted counts
    offsets: np.ndarray         # (F_nom + 1,) start of each column's block
    n_values: np.ndarray        # (F_nom,) declared values per column
    observed: np.ndarray        # (F_nom, K) weighted non-missing count per column and class

    def _per_row(self) -> tuple[np.ndarray, np.ndarray]:
        """(n_c of each row's column and class, (total values, K); J of each row's column, (total values, 1))."""
        column_of_row = np.repeat(np.arange(len(self.n_values)), self.n_values)
        return self.observed[column_of_row], self.n_values[column_of_row, None].astype(np.float64)

    def smoothed(self, laplace: float) -> np.ndarray:
        """P(v|c) = (n_vc + l) / (n_c + l J), (total values, K)."""
        observed, J = self._per_row()
        denom = observed + laplace * J
        with np.errstate(divide="ignore", invalid="ignore"):
            # l = 0 and nothing observed in the class (an absent class, a column all missing): 0/0, which
            # made every score NaN; the limit of the estimate as l -> 0 there is 1/J
            return np.where(denom > 0, (self.counts + laplace) / denom, 1.0 / J)

    def m_estimate(self, m: float | None) -> np.ndarray:
        """P(v|c) = (n_vc + m p_v) / (n_c + m) with p_v = 1/J (algorithms.md 1.1); ``m=None`` is J for
        each attribute, which is Laplace."""
        observed, J = self._per_row()
        virtual = J if m is None else np.float64(m)
        denom = observed + virtual
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(denom > 0, (self.counts + virtual / J) / denom, 1.0 / J)   # m = 0, nothing seen: p_v

    def no_match(self, c0: float, n: float) -> np.ndarray:
        """Kohavi, Becker and Sommerfield's estimate (algorithms.md 1.1): n_vc / n_c, and c0 / n (n: the
        training set's size) where n_vc is 0. Not a distribution over the values; never the default."""
        observed, _J = self._per_row()
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = self.counts / observed
        return np.where(self.counts > 0, ratio, c0 / n if n > 0 else np.inf)


def _columns(X: np.ndarray | sp.csr_matrix, columns: np.ndarray) -> np.ndarray | sp.csr_matrix:
    """``X[:, columns]`` without a copy when every column is taken in order."""
    if len(columns) == X.shape[1] and np.array_equal(columns, np.arange(X.shape[1])):
        return X
    return X[:, columns]


def _dense_columns(X: np.ndarray | sp.csr_matrix, columns: np.ndarray) -> np.ndarray:
    sub = _columns(X, columns)
    return sub.toarray() if sp.issparse(sub) else np.asarray(sub)


def nominal_counts(X: np.ndarray | sp.csr_matrix, y: np.ndarray, w: np.ndarray, columns: np.ndarray,
                   n_values: np.ndarray, n_classes: int) -> NominalCounts:
    """Weighted value counts per class for the nominal ``columns`` (codes; NaN = missing)."""
    n_values = np.asarray(n_values, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_values)]).astype(np.int64)
    total = int(offsets[-1])
    counts = np.zeros((total, n_classes))
    observed = np.zeros((len(columns), n_classes))
    if len(columns) == 0 or X.shape[0] == 0:
        return NominalCounts(counts, offsets, n_values, observed)
    for rows in row_chunks(X.shape[0], len(columns)):
        codes = _dense_columns(X[rows], columns)
        present = ~np.isnan(codes)
        flat = np.where(present, codes, 0).astype(np.int64) + offsets[:-1]
        yy = np.broadcast_to(y[rows, None], codes.shape)
        ww = np.broadcast_to(w[rows, None], codes.shape)
        index = flat[present] * n_classes + yy[present]
        counts += np.bincount(index, weights=ww[present], minlength=total * n_classes).reshape(total, n_classes)
        col_index = np.broadcast_to(np.arange(len(columns)), codes.shape)[present] * n_classes + yy[present]
        observed += np.bincount(col_index, weights=ww[present],
                                minlength=len(columns) * n_classes).reshape(len(columns), n_classes)
    return NominalCounts(counts, offsets, n_values, observed)


# ------------------------------------------------------------------------------------ WEKA normal

def warn_huge_values(stats: NormalStats, columns: np.ndarray, schema: Any, who: str) -> None:
    """Warn, naming the attribute, when a numeric column's sum of squares overflows (values beyond ~1e154):
    WEKA's NormalEstimator (and nb-weka, bma-nb, which follow it) then cannot estimate its spread and scores
    it like noise (a file scaled by 1e160 fell from 85.5 % to 51 % accuracy in WEKA 3.6.14 itself);
    rescaling it keeps what it says. Read off the sums the fit made anyway: no pass over the data."""
    if stats.sum_squares is None or stats.sum_squares.size == 0:
        return
    bad = ~np.isfinite(stats.sum_squares).all(axis=1)
    if not bad.any():
        return
    from toolkit.errors import warn

    col = int(columns[int(np.argmax(bad))])
    warn(f"{who}: attribute '{schema.features.name(col)}' holds values so large that their squares overflow, so "
         f"its spread cannot be estimated (WEKA's NaiveBayes scores such an attribute like noise too): rescale "
         f"it", stacklevel=3)


def weka_precision(X: np.ndarray | sp.csr_matrix, columns: np.ndarray) -> np.ndarray:
    """Per column: the sum of gaps between consecutive distinct sorted values over their number.

    The gaps are added one after the other in ascending order, as WEKA does, so the result is
    bit-identical to WEKA's for dense data. Fewer than two distinct values give 0.01.
    """
    out = np.full(len(columns), DEFAULT_PRECISION)
    if len(columns) == 0 or X.shape[0] == 0:
        return out
    if not sp.issparse(X):
        # one contiguous row per attribute: one copy of the data, and at most one more block (each new
        # block of the data's size is faulted in afresh once the allocator has handed the last one back)
        values = np.asarray(_columns(X, columns), dtype=np.float64)
        whole, out_whole = _whole_number_precision(values)
        out[whole] = out_whole
        rest = np.flatnonzero(~whole)
        if len(rest):   # one contiguous copy, a row per attribute, sorted in place
            out[rest] = _sorted_precision(values.T[rest])
        return out
    csc = sp.csc_matrix(X[:, columns])
    n = csc.shape[0]
    col_of = np.repeat(np.arange(csc.shape[1]), np.diff(csc.indptr))
    vals = csc.data
    keep = ~np.isnan(vals)
    col_of, vals = col_of[keep], vals[keep]
    stored_per_col = np.bincount(col_of, minlength=csc.shape[1])
    nan_per_col = np.bincount(np.repeat(np.arange(csc.shape[1]), np.diff(csc.indptr))[~keep],
                              minlength=csc.shape[1])
    implicit = (n - stored_per_col - nan_per_col) > 0
    col_of = np.concatenate([col_of, np.flatnonzero(implicit)])
    vals = np.concatenate([vals, np.zeros(int(implicit.sum()))])
    order = np.lexsort((vals, col_of))
    col_of, vals = col_of[order], vals[order]
    same_col = col_of[1:] == col_of[:-1]
    distinct = same_col & (vals[1:] != vals[:-1])  # as WEKA compares: inf == inf is no new value
    gaps = vals[1:][distinct] - vals[:-1][distinct]
    counts = np.bincount(col_of[1:][distinct], minlength=csc.shape[1])
    sums = np.bincount(col_of[1:][distinct], weights=gaps, minlength=csc.shape[1])
    ok = counts > 0
    out[ok] = sums[ok] / counts[ok]
    return out


#: whole numbers up to this magnitude are stored, subtracted and added exactly
_EXACT_WHOLE = 2.0 ** 52
#: elements per chunk of the whole-number checks (temporaries stay small, below malloc's mmap threshold)
_CHUNK = 8192


def _whole_number_precision(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """WEKA's precision without sorting, for the columns of ``values`` (rows, attributes) that hold
    whole numbers of magnitude <= 2^52 (NaN: missing) in a range not much wider than the column.

    There every gap between consecutive distinct values is a whole number and so is every partial sum
    (at most max - min <= 2^53): WEKA's sequential sum of the gaps is exactly max - min, whatever the
    order, and its count is the number of distinct values less one. Returns which columns qualified
    and their precisions."""
    n, R = values.shape
    lo = np.fmin.reduce(values, axis=0)   # NaN-ignoring (a column of NaN only gives NaN)
    hi = np.fmax.reduce(values, axis=0)
    with np.errstate(invalid="ignore"):
        candidate = (np.abs(lo) <= _EXACT_WHOLE) & (np.abs(hi) <= _EXACT_WHOLE) & (hi - lo <= 4.0 * n + 64)
    if not candidate.any():
        return candidate, np.zeros(0)
    # one presence table over the candidate columns' ranges: slot = offset of the column + (value - min)
    first = np.flatnonzero(candidate)
    span = (hi[first] - lo[first] + 1.0).astype(np.int64)
    offset = np.zeros(R, dtype=np.int64)
    offset[first] = np.concatenate([[0], np.cumsum(span)[:-1]])
    shift = np.zeros(R)
    shift[first] = offset[first] - lo[first]   # whole numbers: value + (offset - min) is exact
    seen = np.zeros(int(span.sum()), dtype=bool)
    # a few rows at a time (small temporaries): are the columns whole numbers (NaN aside), and which
    # slots they fill (a value that is not whole still falls in its column's range, which is dropped)
    for rows in row_chunks(n, R, budget=_CHUNK):
        chunk = values[rows]
        present = chunk == chunk
        candidate &= ((chunk == np.rint(chunk)) | ~present).all(axis=0)
        present &= candidate
        seen[(chunk + shift)[present].astype(np.int64)] = True
        if not candidate.any():
            return candidate, np.zeros(0)
    distinct = np.add.reduceat(seen, offset[first])[candidate[first]]
    kept = np.flatnonzero(candidate)
    precision = np.full(len(kept), DEFAULT_PRECISION)
    gaps = distinct - 1
    ok = gaps > 0
    precision[ok] = (hi[kept] - lo[kept])[ok] / gaps[ok]
    return candidate, precision


def _sorted_precision(values: np.ndarray) -> np.ndarray:
    """WEKA's precision of each row of ``values`` (attributes, values; sorted here, in place): the gaps
    between consecutive distinct values added one after the other, over their number."""
    out = np.full(values.shape[0], DEFAULT_PRECISION)
    values.sort(axis=1)   # NaN sorts last
    # WEKA: the next value counts when it differs from the last counted one and is not missing (its
    # loop stops at the first missing value: they sort last); inf == inf is no new value
    distinct = values[:, 1:] != values[:, :-1]
    if np.isnan(values[:, -1]).any():
        distinct &= ~np.isnan(values[:, 1:])
    if 4 * int(np.count_nonzero(distinct)) <= distinct.size:   # few changes (discrete data)
        row, at = np.nonzero(distinct)
        sums, counts = _sequential_row_sums(values[row, at + 1] - values[row, at], row, values.shape[0])
    else:   # mostly changes (continuous data): running sums along each row, 0.0 where no new value
        counts = np.count_nonzero(distinct, axis=1)
        with np.errstate(invalid="ignore"):   # inf - inf where no new value: replaced by 0.0
            gaps = np.subtract(values[:, 1:], values[:, :-1])
        np.copyto(gaps, 0.0, where=np.logical_not(distinct, out=distinct))
        np.add.accumulate(gaps, axis=1, out=gaps)   # adding 0.0 changes no bit of a sum >= 0
        sums = gaps[:, -1]
    ok = counts > 0
    out[ok] = sums[ok] / counts[ok]
    return out


def _sequential_row_sums(values: np.ndarray, row: np.ndarray, R: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row 0..R-1: its ``values`` (``row`` gives each one's row, ascending, values in order within
    a row) added one after the other, left to right, and their number.

    A running sum in a fixed order is what WEKA computes; numpy's ``sum`` adds pairwise (other bits).
    The values are packed, left-aligned and zero-padded, into an (R, most per row) table whose
    ``cumsum`` along the rows is that running sum (adding a trailing 0.0 changes no bit). Discrete
    data have few values per row, so the table is small.
    """
    counts = np.bincount(row, minlength=R)
    if len(row) == 0:
        return np.zeros(R), counts
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    table = np.zeros((R, int(counts.max())))
    table[row, np.arange(len(row)) - first[row]] = values
    return np.cumsum(table, axis=1)[:, -1], counts


def weka_round(values: np.ndarray, precision: np.ndarray) -> np.ndarray:
    """``rint(x / precision) * precision``, half to even like Java's Math.rint (a subnormal precision
    overflows to inf, as Java's division does)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.rint(values / precision) * precision


def step_slots(lowest: np.ndarray, highest: np.ndarray, n_entries: int
               ) -> tuple[np.ndarray, np.ndarray, int] | None:
    """One direct table of (column, step) slots for steps between each column's ``lowest`` and
    ``highest`` (inf and -inf: a column without entries): each column's start, the shift that takes a
    step to its slot (slot = step + shift, exact for whole numbers below 2^53) and the table's size.
    None where a step is not finite or not below 2^52, or the ranges outgrow ``n_entries`` (sort then)."""
    used = np.isfinite(lowest) & np.isfinite(highest)
    unused = (lowest == np.inf) & (highest == -np.inf)      # no entry; anything else is NaN or infinite
    exact = bool(np.all(used | unused)) and bool(np.all(np.abs(lowest[used]) < _EXACT_WHOLE)) and \
        bool(np.all(np.abs(highest[used]) < _EXACT_WHOLE))   # every step a whole number stored exactly
    span = np.where(used, highest - lowest + 1.0, 0.0)
    if not exact or span.sum() > 4 * n_entries + 100_000:
        return None
    start = np.concatenate([[0], np.cumsum(span)[:-1]]).astype(np.int64)
    return start, np.where(used, start - lowest, 0.0), int(span.sum())


def distinct_pairs(cols: np.ndarray | None, steps: np.ndarray, rounded: np.ndarray | None,
                   precision: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Number the distinct (column, rounded value) pairs in (column, value) order.

    ``cols=None``: ``steps`` and ``rounded`` are a dense (n, F) block, entry (i, j) in column j, and the
    pair numbers come back in row-major order (as for ``cols = tile(arange(F), n)``, without the gathers).
    There ``rounded`` may be None with the columns' ``precision``: the rounded values, steps * precision,
    are then computed for the pairs only (no second block of the data's size).

    ``steps`` are the whole numbers rint(value / precision), ``rounded`` = steps * precision. Returns
    each entry's pair number and the pairs' columns and values. When the steps span a small range
    per column (the usual case: WEKA's precision is the mean gap between distinct values), a direct
    table numbers the pairs in O(entries + range) without sorting; otherwise the pairs are sorted.
    """
    if cols is None:   # a dense (n, F) block, entries in row-major order, column = position in the row
        n, F = steps.shape
        if n == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        lowest, highest = steps.min(axis=0), steps.max(axis=0)   # NaN propagates: then not exact below
    else:
        F = int(cols.max()) + 1
        lowest = np.full(F, np.inf)
        highest = np.full(F, -np.inf)
        np.minimum.at(lowest, cols, steps)
        np.maximum.at(highest, cols, steps)
    layout = step_slots(lowest, highest, steps.size)
    if layout is not None:
        start, shift, size = layout
        if cols is None:   # the same whole numbers, written straight into integers (one block, not two)
            slot = np.add(steps, shift, out=np.empty(steps.shape, dtype=np.int64), casting="unsafe").ravel()
        else:
            slot = (steps + shift[cols]).astype(np.int64)
        if rounded is None:   # which slots are filled: a slot's value comes from the slot itself
            first_entry = None
            occupied = np.zeros(size, dtype=bool)
            occupied[slot] = True
        else:                 # one entry that fills each slot (its value is the slot's, as the entries' own)
            first_entry = np.full(size, -1, dtype=np.int64)
            first_entry[slot] = np.arange(len(slot))
            occupied = first_entry >= 0
        slots = np.flatnonzero(occupied)
        u_cols = np.searchsorted(start, slots, side="right") - 1
        # (slot - shift) * precision is the same product of the same whole number as an entry's rounding
        values = ((slots - shift[u_cols]) * precision[u_cols] if first_entry is None
                  else rounded.ravel()[first_entry[slots]])
        # every slot filled (discrete data): the slot is the pair number
        pair = slot if len(slots) == len(occupied) else (np.cumsum(occupied) - 1)[slot]
        return pair, u_cols.astype(np.int64), values
    if cols is None:
        if rounded is None:
            rounded = steps * precision
        cols = np.tile(np.arange(steps.shape[1]), steps.shape[0])
        steps, rounded = steps.ravel(), rounded.ravel()
    order = np.lexsort((rounded, cols))
    new = np.ones(len(order), dtype=bool)
    new[1:] = (cols[order][1:] != cols[order][:-1]) | (rounded[order][1:] != rounded[order][:-1])
    local = np.empty(len(order), dtype=np.int64)
    local[order] = np.cumsum(new) - 1
    first = order[new]
    return local, cols[first], rounded[first]


@dataclass
class NormalStats:
    """Per (column, class): WEKA NormalEstimator mean and standard deviation, and the precision."""

    precision: np.ndarray   # (F,)
    mean: np.ndarray        # (F, K)
    sigma: np.ndarray       # (F, K)
    weight: np.ndarray      # (F, K) sum of weights of non-missing values
    sum_values: np.ndarray | None = None    # (F, K) sum of w r(x)
    sum_squares: np.ndarray | None = None   # (F, K) sum of w r(x)^2

    def pooled(self) -> NormalStats:
        """The class-independent estimator: the same sums added over the classes."""
        assert self.sum_values is not None and self.sum_squares is not None
        return _normal_from_sums(self.precision, self.weight.sum(1, keepdims=True),
                                 self.sum_values.sum(1, keepdims=True), self.sum_squares.sum(1, keepdims=True))


def _normal_from_sums(precision: np.ndarray, sw: np.ndarray, sv: np.ndarray, sq: np.ndarray) -> NormalStats:
    """WEKA NormalEstimator: mean = sv/sw, sd = sqrt(|sq - mean sv| / sw), sigma >= precision/6."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mean = np.where(sw > 0, sv / sw, 0.0)
        sd = np.where(sw > 0, np.sqrt(np.abs(sq - mean * sv) / sw), 0.0)
    floor = (precision / 6.0)[:, None]
    sigma = np.where(sd > 1e-10, np.maximum(floor, sd), floor)
    return NormalStats(precision, mean, np.broadcast_to(sigma, mean.shape).copy(), sw, sv, sq)


def _without_missing(X: sp.spmatrix) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """A copy of ``X`` with stored NaNs set to 0, and the 0/1 matrix of where they were."""
    clean = sp.csr_matrix(X, dtype=np.float64, copy=True)
    nan = np.isnan(clean.data)
    missing = sp.csr_matrix((nan.astype(np.float64), clean.indices.copy(), clean.indptr.copy()),
                            shape=clean.shape)  # own index arrays: eliminate_zeros works in place
    missing.eliminate_zeros()
    clean.data[nan] = 0.0
    return clean, missing


def _class_sums(values: np.ndarray | sp.csr_matrix, y: np.ndarray, w: np.ndarray, n_classes: int,
                present: np.ndarray | sp.csr_matrix | None, overwrite: bool = False
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(sum w, sum w x, sum w x^2) per (column, class); NaN-free ``values``. With ``overwrite`` a dense
    ``values`` is squared in place (the caller's scratch: no second block of its size)."""
    Y = one_hot(y, n_classes, w)  # (n, K) with weights
    if sp.issparse(values):
        sv = np.asarray((Y.T @ values).T.todense())
        sq = np.asarray((Y.T @ values.multiply(values)).T.todense())
    else:
        sv = (Y.T @ values).T
        squares = np.multiply(values, values, out=values if overwrite else None)
        sq = (Y.T @ squares).T
    total = np.bincount(y, weights=w, minlength=n_classes).astype(np.float64)  # in data order, as WEKA adds
    if present is None:
        sw = np.broadcast_to(total, sv.shape).copy()
    elif sp.issparse(present):
        sw = total[None, :] - np.asarray((Y.T @ present).T.todense())  # present holds the missing cells
    else:
        sw = (Y.T @ present.astype(np.float64)).T
    return np.asarray(sw), np.asarray(sv), np.asarray(sq)


def normal_stats(X: np.ndarray | sp.csr_matrix, y: np.ndarray, w: np.ndarray, columns: np.ndarray,
                 n_classes: int, precision: np.ndarray | None = None, *, with_pooled: bool = False
                 ) -> Any:
    """WEKA NormalEstimator parameters for the numeric ``columns``, per class; ``with_pooled``: also the
    class-independent estimator (one NormalEstimator fed every instance, bma-nb's), as a pair. Its noisy
    cells are replayed in WEKA's order of the instances, as the classes' are: the sums of the classes'
    sums took their digits from the row and class order (a spread of 2.1 or 1.5 for 1 around 1e8)."""
    if precision is None:
        precision = weka_precision(X, columns)
    F = len(columns)
    if F == 0:
        empty = np.zeros((0, n_classes))
        stats = NormalStats(precision, empty, empty, empty, empty, empty)
        return (stats, stats.pooled()) if with_pooled else stats
    sub = _columns(X, columns)
    if sp.issparse(sub):
        sub, missing = _without_missing(sub)
        sub.data = weka_round(sub.data, precision[sub.indices])
        sw, sv, sq = _class_sums(sub, y, w, n_classes, missing)

        def block(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            part = sub[rows][:, cols]
            return part.toarray(), missing[rows][:, cols].toarray() == 0
    else:
        sub = np.asarray(sub, dtype=np.float64)
        missing = np.isnan(sub)
        any_missing = bool(missing.any())
        with np.errstate(over="ignore", invalid="ignore"):  # huge values overflow to inf, as in WEKA
            rounded = np.divide(sub, precision)          # weka_round, without further temporaries
            np.rint(rounded, out=rounded)
            np.multiply(rounded, precision, out=rounded)
            if any_missing:
                rounded[missing] = 0.0
            sw, sv, sq = _class_sums(rounded, y, w, n_classes, ~missing if any_missing else None,
                                     overwrite=True)

        def block(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            part = sub[np.ix_(rows, cols)]
            present = ~np.isnan(part)
            with np.errstate(over="ignore", invalid="ignore"):
                return np.where(present, weka_round(part, precision[cols]), 0.0), present
    by_column: list[Any] = []

    def column(j: int) -> np.ndarray:   # the raw values, read only when WEKA's order is needed
        if not sp.issparse(X):
            return np.asarray(X[:, int(columns[j])], dtype=np.float64)
        if not by_column:   # one conversion, then O(column entries) each (a slice of CSR costs O(nnz))
            by_column.append(sp.csc_matrix(X[:, columns], dtype=np.float64))
        Xc = by_column[0]
        out = np.zeros(Xc.shape[0])
        lo, hi = Xc.indptr[j], Xc.indptr[j + 1]
        out[Xc.indices[lo:hi]] = Xc.data[lo:hi]
        return out

    found: list[np.ndarray] = []

    def weka_order() -> np.ndarray:   # found once, when a noisy cell first needs it
        if not found:
            found.append(weka_instance_order(column, F, len(y)))
        return found[0]

    stats = _replay_failing_cells(_normal_from_sums(precision, sw, sv, sq), block, y, w, weka_order)
    if not with_pooled:
        return stats
    pooled = _normal_from_sums(precision, sw.sum(1, keepdims=True), sv.sum(1, keepdims=True),
                               sq.sum(1, keepdims=True))
    return stats, _replay_failing_cells(pooled, block, np.zeros(len(y), dtype=np.int64), w, weka_order)


_MAX_VALUE = float(np.finfo(np.float64).max)
_REPLAY_BLOCK = 1 << 20          # values in one block of a replay (8 MB a temporary)
_WEKA_ORDER_CELLS = 100_000      # without the C sort: rows x numeric columns for which WEKA's order is found
#: with the C sort: WEKA's order is a quicksort of the rows by every numeric column in turn (what WEKA
#: does too), ~0.5 s at this many cells; beyond it the replay keeps row order
_WEKA_ORDER_CELLS_C = 10_000_000

try:   # WEKA's quicksort in C (plugins/naive_bayes/_weka_sort.c); the Python port below gives the same order
    from toolkit.plugins.naive_bayes import _weka_sort
except ImportError:   # pragma: no cover - the extension is built with the package
    _weka_sort = None


def weka_sort_order(values: np.ndarray) -> np.ndarray:
    """The permutation WEKA 3.6's ``Utils.sortWithNoMissingValues`` returns: its quicksort (median of
    three, unstable), step for step, so that ties come out in WEKA's order. Used only where that order
    decides a result (see :func:`_replay_failing_cells`)."""
    if _weka_sort is None:
        return _weka_sort_order_python(values)
    values = np.ascontiguousarray(values, dtype=np.float64)
    index = np.empty(len(values), dtype=np.int64)
    _weka_sort.sort_order(values, index)
    return index


def _weka_sort_order_python(values: np.ndarray) -> np.ndarray:
    """:func:`weka_sort_order` as a Python loop (~2 s a million values): the reference of the C one."""
    a = values.tolist()
    n = len(a)
    index = list(range(n))

    def conditional_swap(left: int, right: int) -> None:
        if a[index[left]] > a[index[right]]:
            index[left], index[right] = index[right], index[left]

    stack = [(0, n - 1)] if n > 1 else []
    while stack:
        left, right = stack.pop()
        diff = right - left
        if diff <= 0:
            continue
        if diff == 1:
            conditional_swap(left, right)
            continue
        if diff == 2:
            conditional_swap(left, left + 1)
            conditional_swap(left, right)
            conditional_swap(left + 1, right)
            continue
        center = (left + right) // 2                  # sortLeftRightAndCenter
        conditional_swap(left, center)
        conditional_swap(left, right)
        conditional_swap(center, right)
        index[center], index[right - 1] = index[right - 1], index[center]
        pivot = a[index[right - 1]]
        lo, hi = left, right - 1                      # partition(array, index, left, right, pivot)
        while True:
            lo += 1
            while a[index[lo]] < pivot:
                lo += 1
            hi -= 1
            while a[index[hi]] > pivot:
                hi -= 1
            if lo >= hi:
                break
            index[lo], index[hi] = index[hi], index[lo]
        index[lo], index[right - 1] = index[right - 1], index[lo]
        stack.append((lo + 1, right))
        stack.append((left, lo - 1))
    return np.asarray(index, dtype=np.int64)


def weka_instance_order(column: Callable[[int], np.ndarray], n_columns: int, n_rows: int) -> np.ndarray:
    """The order in which WEKA 3.6's NaiveBayes adds the training instances to its estimators: its precision
    loop sorts the instances in place by each numeric attribute in turn (missing values as Double.MAX_VALUE),
    so they come sorted by the last, ties as the cascade of quicksorts leaves them. ``column(j)``: the raw
    values of numeric column j over the rows."""
    order = np.arange(n_rows)
    for j in range(n_columns):
        values = np.asarray(column(j), dtype=np.float64)[order]
        order = order[weka_sort_order(np.where(np.isnan(values), _MAX_VALUE, values))]
    return order


def _replay_failing_cells(stats: NormalStats, block: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                          y: np.ndarray, w: np.ndarray, weka_order: Callable[[], np.ndarray] | None = None
                          ) -> NormalStats:
    """WEKA's NormalEstimator recomputes the standard deviation from its running sums after every value and
    keeps the last one above 1e-10 (at least precision / 6). The final sums give that value unless their own
    candidate fails the test: NaN once the squares overflow (|x| ~ 1e154 and more), or ~0 for a class in
    which the column is constant, where rounding noise of an earlier step may have passed it; and a spread
    within rounding noise of its mean (1e-12 at 0.1) takes its digits from the order of the additions. For
    those cells only, the running sums are replayed (a loop over classes, vectorised over the cells'
    columns): in row order for constant cells of unit weights (any order gives the same sums), else in the
    order WEKA adds
    the instances (:func:`weka_instance_order`, found only then: a Python quicksort). Cells whose values
    are all 0 (sum of squares 0: every candidate is 0) are skipped, which keeps sparse data's empty columns
    out of it."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sd = np.sqrt(np.abs(stats.sum_squares - stats.mean * stats.sum_values) / stats.weight)
    failing = (stats.weight > 0) & (stats.sum_squares != 0) & (~(sd > 1e-10) | (sd <= 1e-6 * np.abs(stats.mean)))
    if not failing.any():
        return stats
    # a class constant at a whole number r with unit weights (an indicator column, say): every running sum
    # i r and i r^2 is exact below 2^53, so every candidate is exactly 0 and the default stands (no replay)
    unit = np.bincount(y, weights=(w != 1.0).astype(np.float64), minlength=stats.mean.shape[1]) == 0
    m, sw, sv, sq = stats.mean, stats.weight, stats.sum_values, stats.sum_squares
    with np.errstate(invalid="ignore", over="ignore"):
        exact = (unit[None, :] & (sd == 0) & (m == np.rint(m)) & (sv == m * sw) & (sq == m * m * sw)
                 & (np.abs(sq) < 2.0 ** 53))
    failing &= ~exact
    if not failing.any():
        return stats
    floor = stats.precision / 6.0
    # WEKA's order comes from a quicksort over every numeric column: found for data up to 10 million cells
    # (100,000 without the C sort, a Python loop); beyond that the replay keeps row order (exact for
    # constant cells, order-dependent for noisy ones)
    cap = _WEKA_ORDER_CELLS_C if _weka_sort is not None else _WEKA_ORDER_CELLS
    ordered = weka_order is not None and len(y) * len(stats.precision) <= cap
    order_of_rows: list[np.ndarray] = []
    for k in np.flatnonzero(failing.any(axis=0)):
        rows_k = np.flatnonzero(y == k)
        step = max(1, _REPLAY_BLOCK // max(len(rows_k), 1))   # columns a block: bounded memory
        all_cols = np.flatnonzero(failing[:, k])
        for cols in (all_cols[i:i + step] for i in range(0, len(all_cols), step)):
            rows = rows_k
            values, present = block(rows, cols)
            spread = (np.where(present, values, -np.inf).max(axis=0)
                      - np.where(present, values, np.inf).min(axis=0))
            if ((spread > 0).any() or not unit[k]) and ordered:
                # a cell that is not constant, or weighted: the order of its additions decides its digits
                if not order_of_rows:
                    order_of_rows.append(weka_order())  # type: ignore[misc]
                rows = order_of_rows[0][y[order_of_rows[0]] == k]
                values, present = block(rows, cols)
            _replay_block(stats, values, present, w[rows], floor, cols, k)
    return stats


def _replay_block(stats: NormalStats, values: np.ndarray, present: np.ndarray, w: np.ndarray,
                  floor: np.ndarray, cols: np.ndarray, k: int) -> None:
    """WEKA's running sums over one block of a class's rows (in WEKA's order) and columns: the mean and the
    last standard deviation above 1e-10 (at least the floor)."""
    weight = np.where(present, w[:, None], 0.0)
    values = np.where(weight != 0, values, 0.0)          # WEKA skips a value of weight 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        sw = np.cumsum(weight, axis=0)
        sv = np.cumsum(values * weight, axis=0)           # m_SumOfValues += data * weight
        sq = np.cumsum(values * values * weight, axis=0)  # m_SumOfValuesSq += data * data * weight
        mean = sv / sw
        candidate = np.sqrt(np.abs(sq - mean * sv) / sw)
    passed = (weight != 0) & (sw > 0) & (candidate > 1e-10)
    any_passed = passed.any(axis=0)
    last = len(values) - 1 - np.argmax(passed[::-1], axis=0)
    kept = candidate[last, np.arange(len(cols))]
    stats.sigma[cols, k] = np.where(any_passed, np.maximum(floor[cols], kept), floor[cols])
    stats.mean[cols, k] = mean[-1]


def normal_prob(values: np.ndarray, precision: np.ndarray, mean: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """WEKA NormalEstimator.getProbability: the normal mass of the precision step around r(x).

    ``values`` (n, F) -> (n, F, K). The difference of two CDFs is kept as WEKA computes it (no
    tail-accurate rewrite), so far-out values give exactly 0, as in WEKA.
    """
    r = weka_round(values, precision)[:, :, None]
    half = (precision / 2.0)[None, :, None]
    upper = ndtr((r - mean[None] + half) / sigma[None])
    lower = ndtr((r - mean[None] - half) / sigma[None])
    return upper - lower


# ------------------------------------------------------------------------------------ Gaussian

@dataclass
class GaussianStats:
    mean: np.ndarray   # (F, K)
    var: np.ndarray    # (F, K), smoothing included
    epsilon: float
    unsmoothed: np.ndarray | None = None   # (F, K) the variances before smoothing
    largest: float = 0.0                   # the largest all-class variance (epsilon's scale)

    def smoothed(self, var_smoothing: float) -> GaussianStats:
        """The same moments with another ``var_smoothing`` (no pass over the data)."""
        assert self.unsmoothed is not None
        return _smooth(self.mean, self.unsmoothed, self.largest, var_smoothing)


def _smooth(mean: np.ndarray, var: np.ndarray, largest: float, var_smoothing: float) -> GaussianStats:
    """epsilon = var_smoothing x the largest all-class variance (scikit-learn's rule), added to every variance."""
    epsilon = var_smoothing * largest if largest > 0 else var_smoothing
    return GaussianStats(mean, var + epsilon, epsilon, var, largest)


def _grouped(y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row order grouping the classes, the start of each non-empty class, and those classes."""
    order = np.argsort(y, kind="stable")
    counts = np.bincount(y, minlength=n_classes)
    nonempty = np.flatnonzero(counts)
    starts = np.concatenate([[0], np.cumsum(counts)])[nonempty]
    return order, starts, nonempty


def moments_finish(sw: np.ndarray, cmean: np.ndarray, m2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(all-class variance, mean, variance) per (column, class) from the observed weight, the mean and the
    sum of squared deviations of each cell (the all-class moments by the law of total variance; empty
    cells take the all-class values). Shared by the sparse fit and the shard statistics."""
    all_w = sw.sum(1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        all_mean = np.where(all_w > 0, (sw * cmean).sum(1) / np.where(all_w > 0, all_w, 1.0), 0.0)
        spread = np.where(sw > 0, cmean - all_mean[:, None], 0.0)
        all_var = np.where(all_w > 0, (m2 + sw * spread * spread).sum(1) / np.where(all_w > 0, all_w, 1.0), 0.0)
        var = np.where(sw > 0, m2 / np.where(sw > 0, sw, 1.0), all_var[:, None])
    mean = np.where(sw > 0, cmean, all_mean[:, None])
    return all_var, mean, var


def _at(cells: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """``values`` of ``cells`` (ascending) at the ``wanted`` cells, 0 where a cell is not held."""
    if len(cells) == 0:
        return np.zeros(len(wanted))
    at = np.minimum(np.searchsorted(cells, wanted), len(cells) - 1)
    return np.where(cells[at] == wanted, values[at], 0.0)


def sparse_cell_moments(X: sp.csr_matrix, y: np.ndarray, w: np.ndarray, n_classes: int, every_cell: bool = False
                        ) -> tuple[np.ndarray, sp.csr_matrix, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gaussian moments of sparse data in two passes over the stored entries, for the (column, class)
    cells that hold a nonzero value: (class totals (K,), missing weight per cell (F, K) sparse, the cells
    ``column * K + class``, their observed weight, mean and sum of squared deviations). The stored values'
    deviations are summed, and the zeros (implicit or stored) add their weight times mean^2; every other
    cell has mean 0 and no deviation. NaN entries are missing. O(nnz log nnz), nothing of size F x K;
    with ``every_cell`` all F x K cells in O(nnz + F K), for a caller that holds them anyway."""
    F, K = X.shape[1], n_classes
    if not X.has_canonical_format:   # a duplicate entry is part of one value: add them first
        X = X.copy()
        X.sum_duplicates()
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    values = np.asarray(X.data, dtype=np.float64)
    known = ~np.isnan(values)
    cell = X.indices.astype(np.int64) * K + y[rows]
    total = np.bincount(y, weights=w, minlength=K).astype(np.float64)
    gone_cells, gone_inverse = np.unique(cell[~known], return_inverse=True)
    gone_w = np.bincount(gone_inverse, weights=w[rows][~known], minlength=len(gone_cells))
    missing = sp.csr_matrix((gone_w, (gone_cells // K, gone_cells % K)), shape=(F, K))
    nonzero = known & (values != 0)
    # every cell by bincount (no sort) when that is not much more than the entries; a shard keeps only
    # the cells that hold a value
    all_cells = every_cell or F * K <= 4 * max(int(np.count_nonzero(nonzero)), 1)
    if all_cells:
        cells, inverse = np.arange(F * K), cell[nonzero]
    else:
        cells, inverse = np.unique(cell[nonzero], return_inverse=True)
    wk, xk = w[rows][nonzero], values[nonzero]
    sw = total[cells % K] - _at(gone_cells, gone_w, cells)
    # the zeros are counted as whole numbers: sw less the stored weight, summed in another order, is
    # +-1e-14 where a cell has none, and that times a mean^2 of 1e16 was a variance of 50 for 0.66
    stored_n = np.bincount(inverse, minlength=len(cells))
    gone_n = np.bincount(gone_inverse, minlength=len(gone_cells)).astype(np.float64)
    zeros_n = np.bincount(y, minlength=K)[cells % K] - _at(gone_cells, gone_n, cells) - stored_n
    with np.errstate(divide="ignore", invalid="ignore"):
        cmean = np.where(sw > 0, np.bincount(inverse, weights=wk * xk, minlength=len(cells))
                         / np.where(sw > 0, sw, 1.0), 0.0)
        dev = xk - cmean[inverse]
        m2 = np.bincount(inverse, weights=wk * dev * dev, minlength=len(cells))
        stored = np.bincount(inverse, weights=wk, minlength=len(cells))
        m2 += np.where(zeros_n > 0, np.maximum(sw - stored, 0.0), 0.0) * cmean * cmean   # the observed zeros
    m2 = np.where(sw > 0, m2, 0.0)
    if all_cells and not every_cell:
        held = stored_n > 0
        cells, sw, cmean, m2 = cells[held], sw[held], cmean[held], m2[held]
    return total, missing, cells, sw, cmean, m2


def _sparse_moments(X: sp.csr_matrix, y: np.ndarray, w: np.ndarray, n_classes: int
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(all-class variance, mean, variance) per (column, class) of sparse data (:func:`sparse_cell_moments`)."""
    F, K = X.shape[1], n_classes
    _, _, _, sw, cmean, m2 = sparse_cell_moments(X, y, w, K, every_cell=True)
    return moments_finish(sw.reshape(F, K), cmean.reshape(F, K), m2.reshape(F, K))


def gaussian_stats(X: np.ndarray | sp.csr_matrix, y: np.ndarray, w: np.ndarray, columns: np.ndarray,
                   n_classes: int, var_smoothing: float) -> GaussianStats:
    """Mean and population variance per class (+ epsilon); empty cells take the all-class values.

    Two passes (mean, then squared deviations) on dense and sparse data alike, so no precision is lost
    to cancellation when values are large (a one-pass ``sum x^2 / n - mean^2`` gave 2.0 for a variance
    of 0.67 around 1e8).
    """
    F = len(columns)
    if F == 0:
        empty = np.zeros((0, n_classes))
        return GaussianStats(empty, empty, var_smoothing, empty, 0.0)
    sub = _columns(X, columns)
    if sp.issparse(sub):
        all_var, mean, var = _sparse_moments(sp.csr_matrix(sub), y, w, n_classes)
    elif not np.isnan(sub).any() and np.all(w == 1.0):
        # the common case: no missing value, unit weights; two passes over rows grouped by class
        order, starts, nonempty = _grouped(y, n_classes)
        grouped = np.asarray(sub, dtype=np.float64)[order]
        counts = np.diff(np.concatenate([starts, [len(y)]]))
        sw = np.zeros((F, n_classes))
        sw[:, nonempty] = counts
        mean_nonempty = np.add.reduceat(grouped, starts, axis=0) / counts[:, None]
        # the deviations and their squares in place, class by class (rows of a class are contiguous):
        # one block of the data's size, not four (each new block is faulted in afresh once the
        # allocator has handed the last one back, which cost more than the arithmetic)
        ends = np.append(starts[1:], len(y))
        for k, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
            block = grouped[a:b]
            np.subtract(block, mean_nonempty[k], out=block)
            np.multiply(block, block, out=block)
        var_nonempty = np.add.reduceat(grouped, starts, axis=0) / counts[:, None]
        # all-class moments from the class moments (law of total variance): no further pass over rows
        share = counts[:, None] / len(y)
        all_mean = (share * mean_nonempty).sum(axis=0)
        all_var = (share * (var_nonempty + (mean_nonempty - all_mean) ** 2)).sum(axis=0)
        mean = np.repeat(all_mean[:, None], n_classes, axis=1)
        var = np.repeat(all_var[:, None], n_classes, axis=1)
        mean[:, nonempty] = mean_nonempty.T
        var[:, nonempty] = var_nonempty.T
    else:
        sub = np.asarray(sub, dtype=np.float64)
        present = ~np.isnan(sub)
        order, starts, nonempty = _grouped(y, n_classes)
        ws = w[order][:, None]
        pw = present[order] * ws                       # weight of each observed value
        clean = np.where(present, sub, 0.0)[order]
        sw = np.zeros((F, n_classes))
        sv = np.zeros((F, n_classes))
        sw[:, nonempty] = np.add.reduceat(pw, starts, axis=0).T
        sv[:, nonempty] = np.add.reduceat(pw * clean, starts, axis=0).T
        all_w, all_v = sw.sum(1), sv.sum(1)
        with np.errstate(divide="ignore", invalid="ignore"):
            all_mean = np.where(all_w > 0, all_v / all_w, 0.0)
            mean = np.where(sw > 0, sv / sw, all_mean[:, None])
            class_of_row = y[order]
            dev = np.where(pw > 0, clean - mean.T[class_of_row], 0.0)
            ss = np.zeros((F, n_classes))
            ss[:, nonempty] = np.add.reduceat(pw * dev * dev, starts, axis=0).T
            dev_all = np.where(pw > 0, clean - all_mean, 0.0)
            all_var = np.where(all_w > 0, (pw * dev_all * dev_all).sum(0) / np.where(all_w > 0, all_w, 1.0), 0.0)
            var = np.where(sw > 0, ss / np.where(sw > 0, sw, 1.0), all_var[:, None])
    return _smooth(mean, var, float(all_var.max()) if all_var.size else 0.0, var_smoothing)
