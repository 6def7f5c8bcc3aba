"""Naive Bayes for mixed nominal and numeric data (algorithms.md 2.1-2.3).

Nominal attributes use Laplace-smoothed counts. Numeric (and date) attributes use one of
two models: ``variant="weka"`` is WEKA 3.6's NormalEstimator (precision, rounding, CDF mass over
one precision step, probabilities clamped at 1e-75) and predicts what WEKA's NaiveBayes predicts;
``variant="gaussian"`` is the maximum-likelihood Gaussian with scikit-learn's variance smoothing.
Missing values are skipped in training and prediction, as WEKA does.

Scores are computed in log space (order-independent). ``replay=True`` instead replays WEKA's
sequential linear-space product with its 1e75 rescaling, attribute by attribute in file order,
for bit-level parity where WEKA itself underflows (high-dimensional text).

Sparse input is accepted: every attribute's value-0 term is summed once per class, and only the
stored entries add corrections, so the cost is O(nnz * K).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import ndtr

from toolkit.api import CLASSIFIER_STATE, ProbabilisticClassifier, Schema
from toolkit.errors import CapabilityError, ParameterError

from toolkit.plugins.naive_bayes.estimators import (
    MIN_PROB, class_weights, distinct_pairs, gaussian_stats, nominal_counts, normal_prob, normal_stats,
    row_chunks, warn_huge_values,
)
from toolkit.plugins.naive_bayes.shards import FitFromShards

__all__ = ["NaiveBayes", "WekaNaiveBayes", "GaussianNaiveBayes", "log_prior"]

_PRIORS = ("laplace", "mle", "uniform")
#: a Gaussian column's value-0 term above this (0 is ~45 deviations from a class mean) is summed per row
#: on sparse input, not added to every row and taken back at the stored entries (see ``_sparse_jll``)
_LIGHT_TERM = 1e3
#: nominal estimates of algorithms.md 1.1: additive (Lidstone, ``laplace`` = l), m-estimate, no-match
_ESTIMATES = ("additive", "m-estimate", "no-match")


def log_prior(counts: np.ndarray, prior: str) -> np.ndarray:
    """Log class prior from weighted class counts: laplace (n_c+1)/(n+K), mle n_c/n, uniform 1/K."""
    K = len(counts)
    total = counts.sum()
    with np.errstate(divide="ignore"):
        if prior == "laplace":
            return np.log(counts + 1.0) - np.log(total + K)
        if prior == "mle":
            return np.log(counts) - np.log(total)
        if prior == "uniform":
            return np.full(K, -np.log(K))
    raise ParameterError(f"prior must be one of {', '.join(_PRIORS)}, not '{prior}'")


class NaiveBayes(FitFromShards, ProbabilisticClassifier):
    """Naive Bayes; ``variant`` chooses the numeric model ("weka" or "gaussian")."""

    _state_schema = {**CLASSIFIER_STATE, "nominal_columns_": "array:i1", "numeric_columns_": "array:i1",
                     "class_count_": "array:f1", "class_log_prior_": "array:f1", "nominal_log_prob_": "array:f2",
                     "nominal_prob_": "array:f2", "nominal_offsets_": "array:i1", "mean_": "array:f2",
                     "precision_": "?array:f1", "sigma_": "?array:f2", "var_": "?array:f2", "epsilon_": "?float"}


    _default_variant = "weka"

    def __init__(self, *, variant: str = "weka", laplace: float = 1.0, prior: str | None = None,
                 var_smoothing: float = 1e-9, replay: bool = False, estimate: str = "additive",
                 m: float | None = None, c0: float = 0.5):
        self.variant = variant
        self.laplace = laplace
        self.prior = prior
        self.var_smoothing = var_smoothing
        self.replay = replay
        self.estimate = estimate
        self.m = m
        self.c0 = c0

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> str:
        if self.variant not in ("weka", "gaussian"):
            raise ParameterError(f"variant must be 'weka' or 'gaussian', not '{self.variant}'")
        prior = self.prior or ("laplace" if self.variant == "weka" else "mle")
        if prior not in _PRIORS:
            raise ParameterError(f"prior must be one of {', '.join(_PRIORS)}, not '{prior}'")
        if self.estimate not in _ESTIMATES:
            raise ParameterError(f"estimate must be one of {', '.join(_ESTIMATES)}, not {self.estimate!r}")
        if self.estimate != "additive" and self.replay:
            raise ParameterError("replay=True reproduces WEKA, whose nominal estimate is additive (Laplace)")
        for name in ("laplace", "var_smoothing", "c0") + (("m",) if self.m is not None else ()):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not value >= 0:
                raise ParameterError(f"{name} must be a number >= 0, not {value!r}")
        # a flag, not any truthy value: replay="False" (a bare word of a spec string) would switch it on
        if not isinstance(self.replay, (bool, np.bool_)):
            raise ParameterError(f"replay must be true or false, not {self.replay!r}")
        if self.replay and self.variant != "weka":
            raise ParameterError("replay=True reproduces WEKA's arithmetic and needs variant='weka'")
        return prior

    #: laplace, prior and var_smoothing only shape estimates from counts and moments (algorithms.md 2.1-2.3)
    grid_params = ("var_smoothing", "laplace", "prior", "estimate", "m", "c0")

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> NaiveBayes:
        self._apply_params(self._fit_statistics(X, y, sample_weight, schema))
        return self

    def _fit_statistics(self, X: Any, y: Any, sample_weight: Any, schema: Schema | None) -> dict[str, Any]:
        """Counts and moments: what laplace, prior and var_smoothing leave unchanged."""
        self._check_params()
        X, y, w = self._validate_fit(X, y, sample_weight, schema)
        self._set_columns()
        K = len(self.classes_)
        n_values = self.schema_.n_values[self.nominal_columns_]
        counts = nominal_counts(X, y, w, self.nominal_columns_, n_values, K)
        if self.variant == "weka":
            normal = normal_stats(X, y, w, self.numeric_columns_, K)
            warn_huge_values(normal, self.numeric_columns_, self.schema_, "nb-weka")
            return self._adopt(class_weights(y, w, K), counts, normal)
        with np.errstate(over="ignore", invalid="ignore"):
            gaussian = gaussian_stats(X, y, w, self.numeric_columns_, K, 0.0)
        return self._adopt(class_weights(y, w, K), counts, gaussian=gaussian)

    def _set_columns(self) -> None:
        strings = self.schema_.columns_of_kind("string")
        if len(strings):
            name = self.schema_.features.name(int(strings[0]))
            raise CapabilityError(f"naive Bayes cannot use string attribute '{name}' directly; "
                                  "turn text into word counts first (a string-to-words step)")
        self.nominal_columns_ = self.schema_.columns_of_kind("nominal")
        self.numeric_columns_ = self.schema_.columns_of_kind("numeric", "date")

    def _adopt(self, class_count: np.ndarray, counts: Any, normal: Any = None, gaussian: Any = None) -> dict[str, Any]:
        """Keep the statistics (from one pass or merged shards); the state for _apply_params."""
        self.class_count_ = class_count
        self.nominal_offsets_ = counts.offsets
        state: dict[str, Any] = {"counts": counts}
        if normal is not None:
            self.precision_ = normal.precision
            self.mean_ = normal.mean
            self.sigma_ = normal.sigma
        else:
            state["gaussian"] = gaussian
        return state

    # ------------------------------------------------------------------ fitting from shards
    def _numeric_statistics(self) -> str:
        return "histogram" if self.variant == "weka" else "moments"

    def _state_from_statistics(self, statistics: Any) -> dict[str, Any]:
        from toolkit.plugins.naive_bayes.shards import NBStatistics

        wanted = ("naive-bayes", "histogram" if self.variant == "weka" else "moments")
        if not isinstance(statistics, NBStatistics) or statistics.settings != wanted:
            raise CapabilityError(f"nb-{self.variant} is fitted from naive-Bayes statistics {wanted}, not "
                                  f"{getattr(statistics, 'settings', type(statistics).__name__)}")
        self._set_columns()
        if self.variant == "weka":
            return self._adopt(statistics.class_weight, statistics.nominal, statistics.numeric.normal(unit=getattr(statistics, "unit_weight", None)))
        with np.errstate(over="ignore", invalid="ignore"):
            gaussian = statistics.numeric.finish(0.0)
        return self._adopt(statistics.class_weight, statistics.nominal, gaussian=gaussian)

    def _apply_params(self, state: dict[str, Any]) -> None:
        """The estimates that laplace, prior and var_smoothing set."""
        prior = self._check_params()
        if prior == "mle" and not self.class_count_.sum() > 0:
            raise CapabilityError("the training instances' weights sum to 0: the class prior 'mle' (n_c / n) is "
                                  "undefined; give instances positive weights, or prior 'laplace' or 'uniform'")
        self.class_log_prior_ = log_prior(self.class_count_, prior)
        with np.errstate(divide="ignore"):
            if self.estimate == "m-estimate":
                probs = state["counts"].m_estimate(self.m)
            elif self.estimate == "no-match":
                if not self.class_count_.sum() > 0:
                    raise CapabilityError("the training instances' weights sum to 0: the no-match estimate "
                                          "(c0 / n for an unseen value) is undefined; give instances positive "
                                          "weights, or estimate 'additive'")
                probs = state["counts"].no_match(self.c0, float(self.class_count_.sum()))
            else:
                probs = state["counts"].smoothed(self.laplace)
            self.nominal_log_prob_ = np.log(probs)
        self.nominal_prob_ = probs
        if self.variant != "weka":
            with np.errstate(over="ignore", invalid="ignore"):
                stats = state["gaussian"].smoothed(self.var_smoothing)
            bad = ~np.all(np.isfinite(stats.var) & np.isfinite(stats.mean), axis=1)
            if bad.any():
                # an overflowing column makes epsilon (var_smoothing x the largest variance) and so every
                # column's variance inf: name the column whose own moments overflow
                own = ~np.all(np.isfinite(stats.unsmoothed) & np.isfinite(stats.mean), axis=1)
                name = self.schema_.features.name(int(self.numeric_columns_[np.argmax(own if own.any() else bad)]))
                raise CapabilityError(f"attribute '{name}' has values too large for a Gaussian model (its variance "
                                      f"overflows); rescale it, or use nb-weka")
            if stats.largest == 0 and stats.mean.size:
                # every variance is 0, yet class means differ: the squares underflowed (values ~1e-160 and
                # less), and epsilon's absolute fallback would swamp the differences without a word
                with np.errstate(invalid="ignore"):
                    spread = np.nanmax(stats.mean, axis=1) > np.nanmin(stats.mean, axis=1)
                if spread.any():
                    name = self.schema_.features.name(int(self.numeric_columns_[np.argmax(spread)]))
                    raise CapabilityError(f"attribute '{name}' has values too small for a Gaussian model (its "
                                          f"variance underflows to 0); rescale it, or use nb-weka")
            flat = ~(stats.var > 0)   # var_smoothing 0 and a cell of one value: no density (0/0 at its mean)
            if flat.any():
                j, k = np.unravel_index(int(np.argmax(flat)), flat.shape)
                name = self.schema_.features.name(int(self.numeric_columns_[j]))
                raise CapabilityError(f"attribute '{name}' takes a single value in class '{self.schema_.classes[k]}' "
                                      f"and var_smoothing is 0: a Gaussian of variance 0 has no density; give "
                                      f"var_smoothing > 0")
            self.mean_ = stats.mean
            self.var_ = stats.var
            self.epsilon_ = stats.epsilon

    # ------------------------------------------------------------------ per-attribute log terms
    def _numeric_log_terms(self, values: np.ndarray) -> np.ndarray:
        """(n, F_num) values -> (n, F_num, K) log P(x|c); NaN rows give NaN (skipped by caller)."""
        if self.variant == "weka":
            p = normal_prob(values, self.precision_, self.mean_, self.sigma_)
            return np.log(np.maximum(MIN_PROB, p))
        diff = values[:, :, None] - self.mean_[None]
        return -0.5 * (np.log(2 * np.pi * self.var_[None]) + diff * diff / self.var_[None])

    def _nominal_log_terms(self, codes: np.ndarray) -> np.ndarray:
        """(n, F_nom) codes -> (n, F_nom, K) log P(v|c); missing -> 0 (no factor)."""
        present = ~np.isnan(codes)
        index = np.where(present, codes, 0).astype(np.int64) + self.nominal_offsets_[:-1]
        terms = self.nominal_log_prob_[index]
        terms[~present] = 0.0
        return terms

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        if self.replay:
            jll = self._replay(X)
        else:
            jll = self._sparse_jll(X) if sp.issparse(X) else self._dense_jll(X)
            if self.variant == "weka" and self.estimate == "additive":   # WEKA's ties: WEKA's estimate only
                jll = self._replay_ties(X, jll)
        # algorithms.md 2.1: a class scored -inf loses; when every class is (laplace 0, a value unseen in
        # every class), the prior alone decides
        impossible = np.all(jll == -np.inf, axis=1)
        if impossible.any():
            jll[impossible] = self.class_log_prior_
        return jll

    def _replay_ties(self, X: Any, jll: np.ndarray) -> np.ndarray:
        """WEKA multiplies in linear space, attribute by attribute, and its argmax takes the first maximum:
        where two classes tie in log space (nominal data ties exactly), the last bits of that product decide
        which one WEKA predicts. Rows whose two best scores are that close are replayed."""
        if jll.shape[1] < 2 or jll.shape[0] == 0:
            return jll
        top = np.partition(jll, -2, axis=1)
        best, second = top[:, -1], top[:, -2]
        with np.errstate(invalid="ignore"):
            close = np.isfinite(best) & (best - second <= 1e-9 * (1.0 + np.abs(best)))
        rows = np.flatnonzero(close)
        if len(rows):
            jll[rows] = self._replay(X[rows])
        return jll

    def _dense_jll(self, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        jll = np.tile(self.class_log_prior_, (n, 1))
        if len(self.nominal_columns_):
            codes = X[:, self.nominal_columns_]
            present = ~np.isnan(codes)
            rows = np.broadcast_to(np.arange(n)[:, None], codes.shape)[present]
            index = (np.where(present, codes, 0).astype(np.int64) + self.nominal_offsets_[:-1])[present]
            jll += _indicator(rows, index, n, len(self.nominal_log_prob_)) @ self.nominal_log_prob_
        if len(self.numeric_columns_):
            values = X[:, self.numeric_columns_]
            if self.variant == "weka":
                jll += self._weka_numeric_jll(values)
            else:
                jll += self._gaussian_numeric_jll(values)
        return jll

    def _weka_numeric_jll(self, values: np.ndarray) -> np.ndarray:
        """Sum of log P(x_j | c): each distinct (attribute, rounded value) pair is evaluated once.

        WEKA's rounding to the precision makes the values discrete, so there are usually far fewer
        distinct pairs than cells; an indicator matrix (built directly in CSR form, a row's cells in
        attribute order) then sums the pair terms per row.
        """
        n, F = values.shape
        present = ~np.isnan(values)
        cols = np.tile(np.arange(F), n)
        with np.errstate(over="ignore"):   # a subnormal precision: steps of inf, as Java's division gives WEKA
            steps = np.rint(values / self.precision_).ravel()
        if present.all():
            indptr = np.arange(0, n * F + 1, F, dtype=np.int64)
        else:
            keep = present.ravel()
            cols, steps = cols[keep], steps[keep]
            indptr = np.concatenate([[0], np.cumsum(present.sum(axis=1))]).astype(np.int64)
        if len(cols) == 0:
            return np.zeros((n, len(self.classes_)))
        pair, u_cols, u_vals = distinct_pairs(cols, steps, steps * self.precision_[cols])
        half = (self.precision_[u_cols] / 2.0)[:, None]
        mean, sigma = self.mean_[u_cols], self.sigma_[u_cols]
        prob = ndtr((u_vals[:, None] - mean + half) / sigma) - ndtr((u_vals[:, None] - mean - half) / sigma)
        log_terms = np.log(np.maximum(MIN_PROB, prob))
        indicator = sp.csr_matrix((np.ones(len(pair)), pair, indptr), shape=(n, len(u_cols)))
        return indicator @ log_terms

    def _gaussian_numeric_jll(self, values: np.ndarray, positions: np.ndarray | None = None) -> np.ndarray:
        """-1/2 sum_j [log(2 pi var) + (x - mu)^2 / var] over the observed j, class by class (``values``:
        the numeric columns, or those at ``positions`` among them). A value that no class can score (its
        squared distance overflows in every class, or it is infinite) counts as missing, as NaN does: else
        its -inf in every class left the prior alone to decide the row, the other attributes' evidence
        thrown away."""
        mean_, var_ = (self.mean_, self.var_) if positions is None else (self.mean_[positions], self.var_[positions])
        K = len(self.classes_)
        out = np.empty((values.shape[0], K))
        log_norm = np.log(2 * np.pi * var_)
        present = ~np.isnan(values)
        with np.errstate(over="ignore", invalid="ignore"):
            if present.all():  # the common case: no masks, one pass per class
                constant = log_norm.sum(axis=0)
                for k in range(K):  # vectorised over rows and attributes; K is small
                    diff = values - mean_[:, k]
                    out[:, k] = -0.5 * (constant[k] + (diff * diff / var_[:, k]).sum(axis=1))
            else:
                clean = np.where(present, values, 0.0)
                for k in range(K):
                    diff = clean - mean_[:, k]
                    terms = log_norm[:, k] + diff * diff / var_[:, k]
                    out[:, k] = -0.5 * np.where(present, terms, 0.0).sum(axis=1)
        unscored = ~np.isfinite(out).all(axis=1)
        if unscored.any():   # rare: cell by cell for those rows only
            out[unscored] = self._gaussian_rows(values[unscored], mean_, var_)
        return out

    @staticmethod
    def _gaussian_rows(values: np.ndarray, mean_: np.ndarray, var_: np.ndarray) -> np.ndarray:
        """:meth:`_gaussian_numeric_jll` of a few rows with (n, F, K) terms, a cell that no class scores
        (NaN, inf, overflow) left out."""
        diff = values[:, :, None] - mean_[None]
        with np.errstate(over="ignore", invalid="ignore"):
            terms = np.log(2 * np.pi * var_)[None] + diff * diff / var_[None]
        scored = np.isfinite(terms).any(axis=2, keepdims=True)
        return -0.5 * np.where(scored, terms, 0.0).sum(axis=1)

    def _sparse_jll(self, X: sp.csr_matrix) -> np.ndarray:
        """Sum of every attribute's value-0 term, plus corrections at the stored entries."""
        n, F = X.shape
        K = len(self.classes_)
        zero_terms = np.zeros((F, K))          # log P(0 | c) per column
        if len(self.nominal_columns_):
            zero_terms[self.nominal_columns_] = self._nominal_log_terms(
                np.zeros((1, len(self.nominal_columns_))))[0]
        if len(self.numeric_columns_):
            zero_terms[self.numeric_columns_] = self._numeric_log_terms(
                np.zeros((1, len(self.numeric_columns_))))[0]
        # Gaussian columns where 0 lies far from a class's mean (dense-like data with large values, stored
        # sparse) are summed per row as the dense path sums them: adding their value-0 term (-m^2 / 2 var,
        # 7e15 for a variance of 0.67 around 1e8) to every row and taking it back at the stored entries
        # left float steps of ~1 where the classes differ by less
        heavy = np.zeros(F, dtype=bool)
        if self.variant != "weka" and len(self.numeric_columns_):
            with np.errstate(invalid="ignore"):
                heavy[self.numeric_columns_] = ~(np.abs(zero_terms[self.numeric_columns_]) <= _LIGHT_TERM).all(axis=1)
            zero_terms[heavy] = 0.0
        heavy_cols = np.flatnonzero(heavy)
        # a value 0 of probability 0 (laplace 0, m 0, c0 0): log P(0|c) = -inf cannot be added to every row and
        # taken back at the stored entries (-inf + inf = NaN); rows where such a column is an implicit 0 are
        # set to -inf after the sums instead
        impossible_zero = ~np.isfinite(zero_terms)
        zero_terms = np.where(impossible_zero, 0.0, zero_terms)
        n_impossible = impossible_zero.sum(axis=0)
        jll = np.tile(self.class_log_prior_ + zero_terms.sum(axis=0), (n, 1))
        position = np.full(F, -1, dtype=np.int64)
        position[self.nominal_columns_] = np.arange(len(self.nominal_columns_))
        is_nominal = np.zeros(F, dtype=bool)
        is_nominal[self.nominal_columns_] = True
        num_position = np.full(F, -1, dtype=np.int64)
        num_position[self.numeric_columns_] = np.arange(len(self.numeric_columns_))
        for rows in row_chunks(n, max(1, int(X.nnz / max(n, 1))) * K + 3 * len(heavy_cols), budget=8_000_000):
            part = X[rows]
            if len(heavy_cols):
                jll[rows] += self._gaussian_numeric_jll(part[:, heavy_cols].toarray(), num_position[heavy_cols])
            cols, vals = part.indices, part.data
            terms = np.empty((len(vals), K))
            nom = is_nominal[cols]
            if nom.any():
                v = vals[nom]
                c = position[cols[nom]]
                present = ~np.isnan(v)
                idx = np.where(present, v, 0).astype(np.int64) + self.nominal_offsets_[c]
                t = self.nominal_log_prob_[idx]
                t[~present] = 0.0
                terms[nom] = t
            num = ~nom
            if num.any():
                v = vals[num]
                c = num_position[cols[num]]
                present = ~np.isnan(v)
                t = np.zeros((len(v), K))
                if self.variant == "weka":
                    r = np.rint(v / self.precision_[c]) * self.precision_[c]
                    half = (self.precision_[c] / 2.0)[:, None]
                    p = ndtr((r[:, None] - self.mean_[c] + half) / self.sigma_[c]) - \
                        ndtr((r[:, None] - self.mean_[c] - half) / self.sigma_[c])
                    t = np.log(np.maximum(MIN_PROB, p))
                else:
                    d = v[:, None] - self.mean_[c]
                    t = -0.5 * (np.log(2 * np.pi * self.var_[c]) + d * d / self.var_[c])
                t[~present | heavy[cols[num]]] = 0.0     # heavy columns: summed above
                terms[num] = t
            terms -= zero_terms[cols]
            # rows are contiguous in CSR order: a 0/1 matrix sums each row's entries
            gather = sp.csr_matrix((np.ones(len(vals)), np.arange(len(vals)), part.indptr),
                                   shape=(part.shape[0], len(vals)))
            jll[rows] += gather @ terms
            if n_impossible.any():   # impossible columns stored in the row (with any value) do not count
                stored = gather @ impossible_zero[cols].astype(np.float64)
                jll[rows] = np.where(stored < n_impossible, -np.inf, jll[rows])
        return jll

    # ------------------------------------------------------------------ WEKA replay
    def _replay(self, X: Any) -> np.ndarray:
        """WEKA's distributionForInstance, exactly: linear product in file order with rescaling."""
        n, F = X.shape
        K = len(self.classes_)
        out = np.empty((n, K))
        # WEKA's class estimator: (n_c + 1) / (n + K), a division in linear space (exp of the log prior can
        # differ from it in the last bit, which decides ties)
        counts, total = self.class_count_, self.class_count_.sum()
        prior = {"laplace": (counts + 1.0) / (total + K), "mle": counts / total if total > 0 else np.zeros(K),
                 "uniform": np.full(K, 1.0 / K)}[self._check_params()]
        # WEKA: DiscreteEstimator probability as count / sum, computed in linear space
        nom_pos = {int(c): i for i, c in enumerate(self.nominal_columns_)}
        num_pos = {int(c): i for i, c in enumerate(self.numeric_columns_)}
        for rows in row_chunks(n, F, budget=2_000_000):
            block = X[rows]
            block = block.toarray() if sp.issparse(block) else np.asarray(block)
            probs = np.tile(prior, (block.shape[0], 1))
            for j in range(F):
                values = block[:, j]
                present = ~np.isnan(values)
                if not present.any():
                    continue
                if j in nom_pos:
                    i = nom_pos[j]
                    idx = np.where(present, values, 0).astype(np.int64) + self.nominal_offsets_[i]
                    temp = np.maximum(MIN_PROB, self.nominal_prob_[idx])
                else:
                    i = num_pos[j]
                    sel = np.array([i])
                    p = normal_prob(np.where(present, values, 0.0)[:, None], self.precision_[sel],
                                    self.mean_[sel], self.sigma_[sel])[:, 0, :]
                    temp = np.maximum(MIN_PROB, p)
                new = probs * temp
                probs = np.where(present[:, None], new, probs)
                peak = probs.max(axis=1)
                rescale = present & (peak > 0) & (peak < MIN_PROB)
                probs[rescale] *= 1e75
            with np.errstate(divide="ignore", invalid="ignore"):
                out[rows] = np.log(probs / probs.sum(axis=1, keepdims=True))
        out[np.isnan(out).any(axis=1)] = -np.inf   # nothing possible: the caller falls back to the prior
        return out


def _indicator(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int) -> sp.csr_matrix:
    """(n_rows, n_cols) matrix with a 1 at every (row, col): multiplying by it sums table rows per instance."""
    return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_rows, n_cols))


class WekaNaiveBayes(NaiveBayes):
    """WEKA 3.6 NaiveBayes with default options (NormalEstimator for numeric attributes)."""

    def __init__(self, *, variant: str = "weka", laplace: float = 1.0, prior: str | None = None,
                 var_smoothing: float = 1e-9, replay: bool = False, estimate: str = "additive",
                 m: float | None = None, c0: float = 0.5):
        super().__init__(variant=variant, laplace=laplace, prior=prior, var_smoothing=var_smoothing,
                         replay=replay, estimate=estimate, m=m, c0=c0)


class GaussianNaiveBayes(NaiveBayes):
    """Gaussian naive Bayes with maximum-likelihood variances plus smoothing (scikit-learn style)."""

    def __init__(self, *, variant: str = "gaussian", laplace: float = 1.0, prior: str | None = None,
                 var_smoothing: float = 1e-9, replay: bool = False, estimate: str = "additive",
                 m: float | None = None, c0: float = 0.5):
        super().__init__(variant=variant, laplace=laplace, prior=prior, var_smoothing=var_smoothing,
                         replay=replay, estimate=estimate, m=m, c0=c0)
