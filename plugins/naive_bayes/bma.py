"""Bayesian model averaging over all 2^F feature subsets of naive Bayes (thesis eq. 25, algorithms.md 2.6).

Each feature is a mixture of "used" (class-conditional) and "ignored" (class-independent) over the
N training instances plus the test instance; the sum over subsets factorises into a product over
features, so training is O(N F) and prediction O(F K) per instance, never a loop over subsets:

    s_k = log P(k) + sum_{j observed} LSE( SAC_j + lp(E_j*, x_j),  SC_j + lp(E_jk, x_j) - (N_j + 1) log H )

SC_j / SAC_j are the resubstitution log-likelihoods of the training data with the class-conditional
and the unconditional estimators (WEKA's DiscreteEstimator and NormalEstimator, exactly as the
thesis author's code, with the CDF mass over the precision step, clamped at 1e-75). C = H^(N_j+1)
is the feature-inclusion penalty: H < 1 favours features, H > 1 penalises them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtr

from toolkit.api import CLASSIFIER_STATE, ProbabilisticClassifier, Schema
from toolkit.errors import CapabilityError, ParameterError, ToolkitError
from toolkit.plugins.naive_bayes.classifiers import log_prior
from toolkit.plugins.naive_bayes.estimators import (
    MIN_PROB, class_weights, distinct_pairs, nominal_counts, normal_stats, row_chunks, step_slots, warn_huge_values,
    weka_precision,
)
from toolkit.plugins.naive_bayes.shards import FitFromShards

__all__ = ["BMANaiveBayes", "zh_bases"]


def zh_bases() -> list[float]:
    """The (Z, H) scheme's distinct bases b = Z +- 2^-H, ascending (algorithms.md 2.6, 7.3)."""
    values = set()
    for z in (0.8, 0.9, 1.0, 1.1, 1.2):
        values.add(round(z, 10))
        for h in (1, 2, 3, 4, 5):
            values.add(round(z + 2.0 ** -h, 10))
            values.add(round(z - 2.0 ** -h, 10))
    return sorted(values)


class BMANaiveBayes(FitFromShards, ProbabilisticClassifier):
    """Naive Bayes averaged over every feature subset, in linear time (Wu's thesis, eq. 25).

    :param H: base of the inclusion penalty C = H^(N+1); 1 is the uniform prior over subsets.
    """

    _state_schema = {**CLASSIFIER_STATE, **{k: "array:i1" for k in (
        "nominal_columns_", "numeric_columns_", "position_", "nominal_offsets_", "nominal_row_column_")},
        **{k: "array:f1" for k in ("class_count_", "class_log_prior_", "nominal_log_all_", "precision_", "mean_all_",
                                   "sigma_all_", "sc_", "sac_", "n_observed_")},
        "is_nominal_": "array:b1", "nominal_log_cond_": "array:f2", "mean_": "array:f2", "sigma_": "array:f2"}


    def __init__(self, *, H: float = 1.0):
        self.H = H

    # ------------------------------------------------------------------ per-value log-probabilities
    def _pairs(self, cols: np.ndarray, values: np.ndarray, block: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Map observed entries (column, value) to distinct pairs, and give each pair's log-probabilities.

        Returns ``pair`` (m,) into tables of U pairs: ``pair_col`` (U,), ``cond`` (U, K) = log P(value | k)
        and ``uncond`` (U,) = log P(value). Nominal pairs are the rows of the count tables; numeric
        values are rounded to the attribute's precision first, so few distinct pairs remain.
        ``block``: the entries are every cell of this dense matrix in row-major order (no NaN).
        """
        n_nom = len(self.nominal_log_all_)
        if block is not None and not len(self.nominal_columns_):   # dense and all numeric: (n, F) at once
            with np.errstate(over="ignore"):   # a subnormal precision: steps of inf, as in Java
                steps = np.divide(block, self.precision_)
            np.rint(steps, out=steps)
            pair, u_cols, u_vals = distinct_pairs(None, steps, None, self.precision_)
            return (pair, *self._pair_tables(u_cols, u_vals))
        if not len(self.nominal_columns_):        # all numeric: no masks, no copies of the entries
            pair, c_all, num_values = None, cols, values
        else:
            pair = np.empty(len(cols), dtype=np.int64)
            nom = self.is_nominal_[cols]
            pair[nom] = values[nom].astype(np.int64) + self.nominal_offsets_[self.position_[cols[nom]]]
            num = np.flatnonzero(~nom)
            c_all, num_values = cols[num], values[num]
        precision_of_column = np.zeros(len(self.is_nominal_))
        precision_of_column[self.numeric_columns_] = self.precision_
        prec = precision_of_column[c_all]
        steps = np.rint(num_values / prec)
        rounded = steps * prec
        if len(c_all):
            local, u_cols, u_vals = distinct_pairs(c_all, steps, rounded)
            if pair is None:
                pair = local + n_nom
            else:
                pair[num] = n_nom + local
        else:
            u_cols, u_vals = np.zeros(0, np.int64), np.zeros(0)
            if pair is None:
                pair = np.zeros(0, dtype=np.int64)
        return (pair, *self._pair_tables(u_cols, u_vals))

    def _pair_tables(self, u_cols: np.ndarray, u_vals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``pair_col``, ``cond`` and ``uncond`` of the nominal pairs followed by the numeric ones."""
        K = len(self.classes_)
        n_nom = len(self.nominal_log_all_)
        pos = self.position_[u_cols]
        half = (self.precision_[pos] / 2.0)[:, None]
        mean, sigma = self.mean_[pos], self.sigma_[pos]
        cond_num = ndtr((u_vals[:, None] - mean + half) / sigma) - ndtr((u_vals[:, None] - mean - half) / sigma)
        allm, alls = self.mean_all_[pos][:, None], self.sigma_all_[pos][:, None]
        uncond_num = (ndtr((u_vals[:, None] - allm + half) / alls) - ndtr((u_vals[:, None] - allm - half) / alls))[:, 0]
        cond = np.vstack([self.nominal_log_cond_.reshape(n_nom, K), np.log(np.maximum(MIN_PROB, cond_num))])
        uncond = np.concatenate([self.nominal_log_all_, np.log(np.maximum(MIN_PROB, uncond_num))])
        pair_col = np.concatenate([self.nominal_columns_[self.nominal_row_column_], u_cols]).astype(np.int64)
        return pair_col, cond, uncond

    @staticmethod
    def _block(X: Any, rows: np.ndarray) -> np.ndarray | None:
        """X itself when its entries are all its cells (dense, nothing missing), else None."""
        return X if not sp.issparse(X) and len(rows) == X.shape[0] * X.shape[1] else None

    @staticmethod
    def _entries(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, column, value) of every observed cell of a dense matrix, or stored entry of a CSR one."""
        if sp.issparse(X):
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            keep = ~np.isnan(X.data)
            return rows[keep], X.indices[keep].astype(np.int64), X.data[keep]
        n, F = X.shape
        present = ~np.isnan(X)
        if present.all():           # every cell, in row-major order, without index gathers
            return np.repeat(np.arange(n), F), np.tile(np.arange(F), n), np.ascontiguousarray(X).ravel()
        rows, cols = np.nonzero(present)
        return rows, cols, X[rows, cols]

    # ------------------------------------------------------------------ fit
    #: H only sets the inclusion penalty at prediction time; the statistics SC, SAC, N are H-free
    grid_params = ("H",)

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> BMANaiveBayes:
        self._check_params()   # before the pass over the data: a refused H leaves no half-fitted model
        self._apply_params(self._fit_statistics(X, y, sample_weight, schema))
        return self

    def _check_params(self) -> None:
        H = self.H
        if isinstance(H, (bool, np.bool_)) or not (isinstance(H, (int, float, np.integer, np.floating)) and H > 0):
            raise ParameterError(f"H must be a number > 0, not {H!r}")

    def _apply_params(self, state: Any) -> None:
        self._check_params()

    def _fit_statistics(self, X: Any, y: Any, sample_weight: Any, schema: Schema | None) -> None:
        X, y, w = self._validate_fit(X, y, sample_weight, schema)
        self._set_columns()
        schema = self.schema_
        K = len(self.classes_)
        F = X.shape[1]
        n_values = schema.n_values[self.nominal_columns_]
        counts = nominal_counts(X, y, w, self.nominal_columns_, n_values, K)
        # numeric: NormalEstimator per class and unconditionally, with one precision per attribute
        precision = weka_precision(X, self.numeric_columns_)
        normal, pooled = normal_stats(X, y, w, self.numeric_columns_, K, precision, with_pooled=True)
        warn_huge_values(normal, self.numeric_columns_, schema, "bma-nb")
        self._estimators(class_weights(y, w, K), counts, normal, pooled)
        # resubstitution log-likelihoods SC_j (feature used) and SAC_j (feature ignored), and N_j
        if self._dense_numeric(X) and self._dense_numeric_sums(X, y, w):
            return
        rows, cols, values = self._entries(X)
        pair, _pair_col, cond, uncond = self._pairs(cols, values, self._block(X, rows))
        # added entry by entry in row order per column (bincount), as the author's code adds instances
        cond_terms = cond.ravel()[pair * K + y[rows]]
        uncond_terms = uncond[pair]
        # float sums even without a stored entry (np.bincount of nothing is int64 whatever its weights)
        if np.all(w == 1.0):        # unit weights: the products are the terms themselves
            self.sc_ = np.bincount(cols, weights=cond_terms, minlength=F).astype(np.float64)
            self.sac_ = np.bincount(cols, weights=uncond_terms, minlength=F).astype(np.float64)
            self.n_observed_ = np.bincount(cols, minlength=F).astype(np.float64)
        else:
            weight = w[rows]
            self.sc_ = np.bincount(cols, weights=weight * cond_terms, minlength=F).astype(np.float64)
            self.sac_ = np.bincount(cols, weights=weight * uncond_terms, minlength=F).astype(np.float64)
            self.n_observed_ = np.bincount(cols, weights=weight, minlength=F).astype(np.float64)
        if sp.issparse(X):
            # implicit zeros are observed values 0: add their terms once per (column, class)
            zero_pair, _, zc, zu = self._pairs(np.arange(F), np.zeros(F))
            zero_cond, zero_uncond = zc[zero_pair], zu[zero_pair]
            stored = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=X.shape)
            Y = sp.csr_matrix((w, (np.arange(len(y)), y)), shape=(len(y), K))
            nan_rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[np.isnan(X.data)]
            nan_cols = X.indices[np.isnan(X.data)]
            not_stored = sp.csr_matrix((np.ones(len(nan_rows)), (nan_rows, nan_cols)), shape=X.shape) + stored
            implicit = np.asarray(Y.sum(axis=0)).ravel()[None, :] - np.asarray((Y.T @ not_stored).T.todense())
            self.sc_ += (implicit * zero_cond).sum(axis=1)
            self.sac_ += implicit.sum(axis=1) * zero_uncond
            self.n_observed_ += implicit.sum(axis=1)

    def _dense_numeric(self, X: Any) -> bool:
        """Whether X is dense, all numeric and without missing values (the sums' short path)."""
        return not len(self.nominal_columns_) and not sp.issparse(X) and not np.isnan(X).any()

    def _dense_numeric_sums(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> bool:
        """SC, SAC and N of a dense, all-numeric X without missing values, a few thousand rows at a
        time: the same terms added in the same order as the general path (each column's terms one
        after the other in row order: a running sum carried from chunk to chunk), with temporaries of a
        chunk's size and the pair numbers as int32, instead of a dozen blocks of the data's size (each
        faulted in afresh by the next fit once the allocator has trimmed it). False, with nothing set,
        where the steps are too wide for the pairs' direct table (the general path sorts them)."""
        n, F = X.shape
        K = len(self.classes_)
        precision = self.precision_
        chunks = row_chunks(n, F, budget=65_536)
        # the steps' range per column: rint(x / precision) is monotone in x for a precision > 0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lowest = np.rint(X.min(axis=0) / precision)
            highest = np.rint(X.max(axis=0) / precision)
        layout = step_slots(lowest, highest, X.size) if np.all(precision > 0) else None
        if layout is None:
            return False
        start, shift, size = layout

        def slots_of(rows: slice) -> np.ndarray:   # recomputed per pass: no block of the data's size kept
            slot = np.rint(X[rows] / precision)
            slot += shift
            return slot.astype(np.int64)

        occupied = np.zeros(size, dtype=bool)
        for rows in chunks:
            occupied[slots_of(rows).ravel()] = True
        slots = np.flatnonzero(occupied)
        u_cols = np.searchsorted(start, slots, side="right") - 1
        # a pair's value from its slot: (slot - shift) * precision, the product the entries' rounding gives
        _pair_col, cond, uncond = self._pair_tables(u_cols, (slots - shift[u_cols]) * precision[u_cols])
        number = (np.cumsum(occupied) - 1).astype(np.int32)
        cond_flat = cond.ravel()
        unit = bool(np.all(w == 1.0))
        sac, sc = np.zeros(F), np.zeros(F)   # the running sums start at 0.0, as bincount's do
        for rows in chunks:
            pair = np.take(number, slots_of(rows))
            for total, table, index in ((sac, uncond, pair), (sc, cond_flat, pair.astype(np.int64) * K +
                                                               y[rows, None])):
                terms = np.take(table, index)
                if not unit:
                    terms *= w[rows, None]
                running = np.ascontiguousarray(terms.T)   # (F, rows): each column's terms in row order
                running[:, 0] += total
                np.add.accumulate(running, axis=1, out=running)
                total[:] = running[:, -1]
        self.sac_, self.sc_ = sac, sc
        # every cell is observed: each column adds the rows' weights in row order
        self.n_observed_ = (np.full(F, float(n)) if unit else
                            np.full(F, np.bincount(np.zeros(n, dtype=np.int64), weights=w, minlength=1)[0]))
        return True

    def _set_columns(self) -> None:
        schema = self.schema_
        strings = schema.columns_of_kind("string")
        if len(strings):
            raise CapabilityError(f"BMA naive Bayes cannot use string attribute "
                                  f"'{schema.features.name(int(strings[0]))}'; turn text into word counts first")
        bags = schema.columns_of_kind("relational")
        if len(bags):
            raise CapabilityError(f"BMA naive Bayes cannot use relational (multi-instance) attribute "
                                  f"'{schema.features.name(int(bags[0]))}'; remove the attribute")
        F = len(schema.features)
        self.nominal_columns_ = schema.columns_of_kind("nominal")
        self.numeric_columns_ = schema.columns_of_kind("numeric", "date")
        self.is_nominal_ = np.zeros(F, dtype=bool)
        self.is_nominal_[self.nominal_columns_] = True
        self.position_ = np.zeros(F, dtype=np.int64)
        self.position_[self.nominal_columns_] = np.arange(len(self.nominal_columns_))
        self.position_[self.numeric_columns_] = np.arange(len(self.numeric_columns_))

    def _estimators(self, class_count: np.ndarray, counts: Any, stats: Any, pooled: Any = None) -> None:
        """The class-conditional and unconditional estimators, from counts and WEKA normal statistics
        (``pooled``: the unconditional numeric ones; by default the sums of the classes')."""
        self.class_count_ = class_count
        self.class_log_prior_ = log_prior(self.class_count_, "laplace")
        # nominal: Laplace per class and unconditionally
        n_values = counts.n_values
        self.nominal_offsets_ = counts.offsets
        with np.errstate(divide="ignore"):
            self.nominal_log_cond_ = np.log(counts.smoothed(1.0))
            column_of_row = np.repeat(np.arange(len(n_values)), n_values)
            self.nominal_row_column_ = column_of_row
            all_counts = counts.counts.sum(axis=1)
            all_observed = counts.observed.sum(axis=1)
            self.nominal_log_all_ = np.log((all_counts + 1.0) / (all_observed[column_of_row] + n_values[column_of_row]))
        pooled = stats.pooled() if pooled is None else pooled
        self.precision_ = stats.precision
        self.mean_, self.sigma_ = stats.mean, stats.sigma
        self.mean_all_, self.sigma_all_ = pooled.mean[:, 0], pooled.sigma[:, 0]

    # ------------------------------------------------------------------ fitting from shards
    def _state_from_statistics(self, statistics: Any) -> None:
        """The estimators from the merged counts and value histogram, and SC, SAC and N as sums over the
        distinct (attribute, value) pairs weighted by how often each class holds them."""
        from toolkit.plugins.naive_bayes.shards import NBStatistics

        if not isinstance(statistics, NBStatistics) or statistics.settings != ("naive-bayes", "histogram"):
            raise CapabilityError(f"bma-nb is fitted from naive-Bayes statistics ('naive-bayes', 'histogram'), "
                                  f"not {getattr(statistics, 'settings', type(statistics).__name__)}")
        self._set_columns()
        hist = statistics.numeric
        precision = hist.precision()
        self._estimators(statistics.class_weight, statistics.nominal, hist.normal(precision, getattr(statistics, "unit_weight", None)))
        F = len(self.schema_.features)
        pair_col, cond, uncond = self._pair_tables(self.numeric_columns_[hist.cols], hist.rounded(precision))
        weights = np.vstack([statistics.nominal.counts, hist.weights])     # the same pair order
        total = weights.sum(axis=1)
        self.sc_ = np.bincount(pair_col, weights=(weights * cond).sum(axis=1), minlength=F)
        self.sac_ = np.bincount(pair_col, weights=total * uncond, minlength=F)
        self.n_observed_ = np.bincount(pair_col, weights=total, minlength=F)

    # ------------------------------------------------------------------ prediction
    def _log_penalty(self, H: float | None = None) -> np.ndarray:
        return (self.n_observed_ + 1.0) * np.log(self.H if H is None else H)

    def _lse(self, pair_col: np.ndarray, cond: np.ndarray, uncond: np.ndarray, H: float | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per distinct pair: A (U,), B (U, K) and LSE(A, B) (U, K), with inclusion base ``H``."""
        a = self.sac_[pair_col] + uncond
        b = self.sc_[pair_col][:, None] + cond - self._log_penalty(H)[pair_col][:, None]
        return a, b, np.logaddexp(a[:, None], b)

    def _terms(self, cols: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For entries: ``pair`` (m,) and, per distinct pair, A (U,), B (U, K) and LSE(A, B) (U, K)."""
        pair, pair_col, cond, uncond = self._pairs(cols, values)
        return (pair, *self._lse(pair_col, cond, uncond))

    def _prepare_scoring(self, X: Any) -> dict[str, Any]:
        """Everything of the scores that does not depend on H: the distinct (attribute, value) pairs,
        their log-probabilities and the indicator matrices that sum them per row."""
        X = self._validate_predict(X)
        n, F = X.shape
        parts: dict[str, Any] = {"n": n, "zero": None}
        if sp.issparse(X):
            parts["zero"] = self._pairs(np.arange(F), np.zeros(F))   # every attribute at value 0
        rows, cols, values = self._entries(X)
        pair, pair_col, cond, uncond = self._pairs(cols, values, self._block(X, rows))
        parts["pairs"] = (pair_col, cond, uncond)
        # an indicator matrix sums each row's pair terms (rows x distinct pairs)
        parts["S"] = sp.csr_matrix((np.ones(len(rows)), (rows, pair)), shape=(n, len(pair_col)))
        if sp.issparse(X):
            # stored values replace the value-0 term; a stored NaN (missing) removes it
            nan_rows = np.repeat(np.arange(n), np.diff(X.indptr))[np.isnan(X.data)]
            nan_cols = X.indices[np.isnan(X.data)]
            parts["replaced"] = (sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, F)),
                                 sp.csr_matrix((np.ones(len(nan_rows)), (nan_rows, nan_cols)), shape=(n, F)))
        return parts

    def _score_prepared(self, parts: dict[str, Any]) -> np.ndarray:
        """The scores s_k of algorithms.md 2.6 with the current H, from :meth:`_prepare_scoring`."""
        jll = np.tile(self.class_log_prior_, (parts["n"], 1))
        zero_terms = None
        if parts["zero"] is not None:
            zero_pair, zero_col, zero_cond, zero_uncond = parts["zero"]
            zero_terms = self._lse(zero_col, zero_cond, zero_uncond)[2][zero_pair]   # (F, K)
            jll += zero_terms.sum(axis=0)
        lse = self._lse(*parts["pairs"])[2]
        jll += parts["S"] @ lse
        if zero_terms is not None:
            stored, missing = parts["replaced"]
            jll -= stored @ zero_terms
            jll -= missing @ zero_terms
        return jll

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        return self._score_prepared(self._prepare_scoring(X))

    # ------------------------------------------------------------------ the automatic feature selection
    def feature_weights(self, X: Any, k: int | None = None) -> np.ndarray:
        """Posterior weight of "feature used", pi_jk(x) = exp(B - LSE(A, B)), per instance.

        Returns (n, F, K), or (n, F) for class ``k`` (an index 0..K-1 of ``classes_``); NaN where a value
        is missing.
        """
        X = self._validate_predict(X)
        K = len(self.classes_)
        if k is not None and (isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer))
                              or not 0 <= k < K):
            raise ParameterError(f"k must be a class index from 0 to {K - 1}, not {k!r}")
        if sp.issparse(X):
            X = X.toarray()
        n, F = X.shape
        rows, cols, values = self._entries(X)
        pair, _, b, lse = self._terms(cols, values)
        out = np.full((n, F, len(self.classes_)), np.nan)
        out[rows, cols] = np.exp(b - lse)[pair]
        return out if k is None else out[:, :, k]

    def model_feature_weights(self) -> np.ndarray:
        """Posterior weight of "used" for each feature given the training data alone:
        sigmoid(SC_j - (N_j + 1) log H - SAC_j). Near 1: informative; near 0: noise."""
        if not hasattr(self, "sc_"):
            raise ToolkitError(f"{type(self).__name__} is not fitted yet; call fit first")
        logit = self.sc_ - self._log_penalty() - self.sac_
        return 1.0 / (1.0 + np.exp(-np.clip(logit, -700, 700)))

    def explain(self) -> dict[str, Any]:
        """Per-feature weights of the fitted model, for ``toolkit explain``."""
        weights = self.model_feature_weights()
        # ordered by the log-odds of "used", not by the weight: on text most weights round to exactly 1.0,
        # and among them the order was the columns'
        logit = self.sc_ - self._log_penalty() - self.sac_
        names = self.schema_.features.names()
        return {
            "model": "bma-nb",
            "H": self.H,
            "columns": ["feature", "weight_used", "SC", "SAC", "N"],
            "rows": [[names[j], float(weights[j]), float(self.sc_[j]), float(self.sac_[j]), float(self.n_observed_[j])]
                     for j in np.argsort(-logit, kind="stable")],
            "note": "weight_used = P(feature used | training data) = sigmoid(SC - (N+1) log H - SAC); rows by "
                    "SC - (N+1) log H - SAC, highest first",
        }
