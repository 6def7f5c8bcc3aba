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

from toolkit.api import ProbabilisticClassifier, Schema
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins._naive_bayes_impl import log_prior
from toolkit.plugins._nb_estimators import (
    MIN_PROB, class_weights, nominal_counts, normal_stats, row_chunks, weka_precision,
)

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


class BMANaiveBayes(ProbabilisticClassifier):
    """Naive Bayes averaged over every feature subset, in linear time (Wu's thesis, eq. 25).

    :param H: base of the inclusion penalty C = H^(N+1); 1 is the uniform prior over subsets.
    """

    def __init__(self, *, H: float = 1.0):
        self.H = H

    # ------------------------------------------------------------------ per-value log-probabilities
    def _nominal_lp(self, codes: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Entries (value codes of nominal column positions ``cols``) -> (cond (m, K), uncond (m,))."""
        index = codes.astype(np.int64) + self.nominal_offsets_[cols]
        return self.nominal_log_cond_[index], self.nominal_log_all_[index]

    def _numeric_lp(self, values: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Entries of numeric column positions ``cols`` -> (cond (m, K), uncond (m,)), WEKA estimators.

        Each distinct (column, rounded value) pair is evaluated once.
        """
        prec = self.precision_[cols]
        rounded = np.rint(values / prec) * prec
        if len(values) == 0:
            return np.zeros((0, len(self.classes_))), np.zeros(0)
        order = np.lexsort((rounded, cols))
        new = np.ones(len(order), dtype=bool)
        new[1:] = (cols[order][1:] != cols[order][:-1]) | (rounded[order][1:] != rounded[order][:-1])
        pair = np.empty(len(order), dtype=np.int64)
        pair[order] = np.cumsum(new) - 1
        first = order[new]
        c, r = cols[first], rounded[first]
        half = (self.precision_[c] / 2.0)[:, None]
        cond = ndtr((r[:, None] - self.mean_[c] + half) / self.sigma_[c]) - \
            ndtr((r[:, None] - self.mean_[c] - half) / self.sigma_[c])
        allm, alls = self.mean_all_[c][:, None], self.sigma_all_[c][:, None]
        uncond = ndtr((r[:, None] - allm + half) / alls) - ndtr((r[:, None] - allm - half) / alls)
        cond_lp = np.log(np.maximum(MIN_PROB, cond))
        uncond_lp = np.log(np.maximum(MIN_PROB, uncond[:, 0]))
        return cond_lp[pair], uncond_lp[pair]

    def _entry_lp(self, cols: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """log P(value | class) (m, K) and log P(value) (m,) for observed entries of any column."""
        K = len(self.classes_)
        cond = np.empty((len(cols), K))
        uncond = np.empty(len(cols))
        nom = self.is_nominal_[cols]
        if nom.any():
            cond[nom], uncond[nom] = self._nominal_lp(values[nom], self.position_[cols[nom]])
        num = ~nom
        if num.any():
            cond[num], uncond[num] = self._numeric_lp(values[num], self.position_[cols[num]])
        return cond, uncond

    @staticmethod
    def _entries(X: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, column, value) of every observed cell of a dense matrix, or stored entry of a CSR one."""
        if sp.issparse(X):
            rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            keep = ~np.isnan(X.data)
            return rows[keep], X.indices[keep].astype(np.int64), X.data[keep]
        present = ~np.isnan(X)
        rows, cols = np.nonzero(present)
        return rows, cols, X[rows, cols]

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> BMANaiveBayes:
        if not (isinstance(self.H, (int, float)) and self.H > 0):
            raise ParameterError(f"H must be a number > 0, not {self.H!r}")
        X, y, w = self._validate_fit(X, y, sample_weight, schema)
        schema = self.schema_
        strings = schema.columns_of_kind("string")
        if len(strings):
            raise CapabilityError(f"BMA naive Bayes cannot use string attribute "
                                  f"'{schema.features.name(int(strings[0]))}'; turn text into word counts first")
        K = len(self.classes_)
        F = X.shape[1]
        self.nominal_columns_ = schema.columns_of_kind("nominal")
        self.numeric_columns_ = schema.columns_of_kind("numeric", "date")
        self.is_nominal_ = np.zeros(F, dtype=bool)
        self.is_nominal_[self.nominal_columns_] = True
        self.position_ = np.zeros(F, dtype=np.int64)
        self.position_[self.nominal_columns_] = np.arange(len(self.nominal_columns_))
        self.position_[self.numeric_columns_] = np.arange(len(self.numeric_columns_))
        self.class_count_ = class_weights(y, w, K)
        self.class_log_prior_ = log_prior(self.class_count_, "laplace")
        # nominal: Laplace per class and unconditionally
        n_values = schema.n_values[self.nominal_columns_]
        counts = nominal_counts(X, y, w, self.nominal_columns_, n_values, K)
        self.nominal_offsets_ = counts.offsets
        with np.errstate(divide="ignore"):
            self.nominal_log_cond_ = np.log(counts.smoothed(1.0))
            column_of_row = np.repeat(np.arange(len(n_values)), n_values)
            all_counts = counts.counts.sum(axis=1)
            all_observed = counts.observed.sum(axis=1)
            self.nominal_log_all_ = np.log((all_counts + 1.0) / (all_observed[column_of_row] + n_values[column_of_row]))
        # numeric: NormalEstimator per class and unconditionally, with one precision per attribute
        precision = weka_precision(X, self.numeric_columns_)
        stats = normal_stats(X, y, w, self.numeric_columns_, K, precision)
        pooled = normal_stats(X, np.zeros_like(y), w, self.numeric_columns_, 1, precision)
        self.precision_ = precision
        self.mean_, self.sigma_ = stats.mean, stats.sigma
        self.mean_all_, self.sigma_all_ = pooled.mean[:, 0], pooled.sigma[:, 0]
        # resubstitution log-likelihoods SC_j (feature used) and SAC_j (feature ignored), and N_j
        rows, cols, values = self._entries(X)
        cond, uncond = self._entry_lp(cols, values)
        own = cond[np.arange(len(rows)), y[rows]]
        weight = w[rows]
        self.sc_ = np.bincount(cols, weights=weight * own, minlength=F)
        self.sac_ = np.bincount(cols, weights=weight * uncond, minlength=F)
        self.n_observed_ = np.bincount(cols, weights=weight, minlength=F)
        if sp.issparse(X):
            # implicit zeros are observed values 0: add their terms once per (column, class)
            zero_cond, zero_uncond = self._entry_lp(np.arange(F), np.zeros(F))
            stored = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=X.shape)
            Y = sp.csr_matrix((w, (np.arange(len(y)), y)), shape=(len(y), K))
            nan_rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[np.isnan(X.data)]
            nan_cols = X.indices[np.isnan(X.data)]
            not_stored = sp.csr_matrix((np.ones(len(nan_rows)), (nan_rows, nan_cols)), shape=X.shape) + stored
            implicit = np.asarray(Y.sum(axis=0)).ravel()[None, :] - np.asarray((Y.T @ not_stored).T.todense())
            self.sc_ += (implicit * zero_cond).sum(axis=1)
            self.sac_ += implicit.sum(axis=1) * zero_uncond
            self.n_observed_ += implicit.sum(axis=1)
        return self

    # ------------------------------------------------------------------ prediction
    def _log_penalty(self) -> np.ndarray:
        return (self.n_observed_ + 1.0) * np.log(self.H)

    def _terms(self, cols: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For entries: (A (m,), B (m, K), LSE(A, B) (m, K))."""
        cond, uncond = self._entry_lp(cols, values)
        a = self.sac_[cols] + uncond
        b = self.sc_[cols][:, None] + cond - self._log_penalty()[cols][:, None]
        return a, b, np.logaddexp(a[:, None], b)

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        n, F = X.shape
        K = len(self.classes_)
        jll = np.tile(self.class_log_prior_, (n, 1))
        base = np.zeros(K)
        zero_terms = None
        if sp.issparse(X):
            _, _, zero_terms = self._terms(np.arange(F), np.zeros(F))
            base = zero_terms.sum(axis=0)
        for chunk in row_chunks(n, max(1, F) * K):
            part = X[chunk]
            rows, cols, values = self._entries(part)
            _, _, terms = self._terms(cols, values)
            if zero_terms is not None:
                terms = terms - zero_terms[cols]
                nan_rows = np.repeat(np.arange(part.shape[0]), np.diff(part.indptr))[np.isnan(part.data)]
                nan_cols = part.indices[np.isnan(part.data)]
                rows = np.concatenate([rows, nan_rows])
                terms = np.concatenate([terms, -zero_terms[nan_cols]])  # a missing value adds no factor
            gather = sp.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))), shape=(part.shape[0], len(rows)))
            jll[chunk] += base + gather @ terms
        return jll

    # ------------------------------------------------------------------ the automatic feature selection
    def feature_weights(self, X: Any, k: int | None = None) -> np.ndarray:
        """Posterior weight of "feature used", pi_jk(x) = exp(B - LSE(A, B)), per instance.

        Returns (n, F, K), or (n, F) for class ``k``; NaN where a value is missing.
        """
        X = self._validate_predict(X)
        if sp.issparse(X):
            X = X.toarray()
        n, F = X.shape
        rows, cols, values = self._entries(X)
        _, b, lse = self._terms(cols, values)
        out = np.full((n, F, len(self.classes_)), np.nan)
        out[rows, cols] = np.exp(b - lse)
        return out if k is None else out[:, :, k]

    def model_feature_weights(self) -> np.ndarray:
        """Posterior weight of "used" for each feature given the training data alone:
        sigmoid(SC_j - (N_j + 1) log H - SAC_j). Near 1: informative; near 0: noise."""
        logit = self.sc_ - self._log_penalty() - self.sac_
        return 1.0 / (1.0 + np.exp(-np.clip(logit, -700, 700)))

    def explain(self) -> dict[str, Any]:
        """Per-feature weights of the fitted model, for ``toolkit explain``."""
        weights = self.model_feature_weights()
        names = self.schema_.features.names()
        return {
            "model": "bma-nb",
            "H": self.H,
            "columns": ["feature", "weight_used", "SC", "SAC", "N"],
            "rows": [[names[j], float(weights[j]), float(self.sc_[j]), float(self.sac_[j]), float(self.n_observed_[j])]
                     for j in np.argsort(-weights, kind="stable")],
            "note": "weight_used = P(feature used | training data) = sigmoid(SC - (N+1) log H - SAC)",
        }
