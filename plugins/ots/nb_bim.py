"""``nb-bim``: binary naive Bayes on feature presence, scored as the OTS paper does (algorithms.md 2.5)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import CLASSIFIER_STATE, ProbabilisticClassifier, Schema, SufficientStatistics
from toolkit.errors import CapabilityError

from toolkit.plugins.ots.bim import (
    BIMCounts, bim_counts, bim_weights, binary_codes, check_alpha, check_features, document_counts, feature_mask,
    presence, resolve_threshold, unit_bim_counts,
)
from toolkit.plugins.ots.leave_one_out import optimal_threshold

__all__ = ["BIMNaiveBayes", "BIMStatistics"]


class BIMStatistics(SufficientStatistics):
    """(Weighted) document counts per feature and class, sparse (1, F) rows ``n_pos`` / ``n_neg`` (a shard
    holds only its features); N^+ / N^- are the base's class weights. They add."""

    def __init__(self, n_pos: sp.csr_matrix, n_neg: sp.csr_matrix):
        super().__init__()
        self.n_pos, self.n_neg = n_pos, n_neg

    def _merge(self, other: BIMStatistics) -> BIMStatistics:
        return BIMStatistics(self.n_pos + other.n_pos, self.n_neg + other.n_neg)


def _sparse_row(values: np.ndarray) -> sp.csr_matrix:
    nz = np.flatnonzero(values)
    return sp.csr_matrix((values[nz], nz, np.array([0, len(nz)])), shape=(1, len(values)))


class BIMNaiveBayes(ProbabilisticClassifier):
    """Binary naive Bayes on feature presence, scored as the OTS paper does (algorithms.md 2.5).

    ``decision_function`` gives columns (-b, score): ``score`` is eq. A.5 (the sum of the selected
    weights in the document), so ranking by the margin is ranking by the paper's score, and
    ``score + b > 0`` is the Bernoulli decision with b = sum over selected t of
    log((1 - p_t)/(1 - q_t)) + log(N^+/N^-). ``predict_proba`` is the Bernoulli posterior over the
    selected features. ``threshold="loo"`` picks tau in {0, 0.1, ..., 10} by leave-one-out AP on the
    training data (the paper's OptCut). ``features="positive"`` (default) weights only the features
    present in a training positive, ``"all"`` every feature (algorithms.md 2.5).
    """

    checks_infinite_values = True   # presence reads inf as present

    _state_schema = {**CLASSIFIER_STATE, "threshold_": "float", "intercept_": "float", "n_selected_features_": "int",
                     "weights_": "array:f1", "coef_": "array:f1", "loo_ap_": "?array:f1"}

    def __init__(self, *, alpha: float = 1.0, threshold: float | str = 1.0, features: str = "positive"):
        self.alpha = alpha
        self.threshold = threshold
        self.features = features

    def _check_params(self) -> None:
        """Ranges and choices, checked before any data (toolkit.api.validate_component)."""
        check_alpha(self.alpha)
        resolve_threshold(self.threshold, "nb-bim")
        check_features(self.features, "nb-bim")

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> BIMNaiveBayes:
        self._apply_params(self._fit_statistics(X, y, sample_weight, schema))
        return self

    def _fit_statistics(self, X: Any, y: Any, sample_weight: Any, schema: Schema | None) -> dict[str, Any]:
        """The document counts (and, for threshold='loo', the leave-one-out choice of tau)."""
        alpha = check_alpha(self.alpha)
        threshold = resolve_threshold(self.threshold, "nb-bim")
        features = check_features(self.features, "nb-bim")
        X, codes, w = self._validate_fit(X, y, sample_weight, schema)
        positive, negative = binary_codes(codes, len(self.classes_), "nb-bim",
                                          None if schema is not None else self.classes_)
        unit = bool(np.all(w == 1.0))
        state: dict[str, Any] = {}
        if unit:
            state["counts"] = unit_bim_counts(X, positive, negative, who="nb-bim")
        else:
            state["counts"] = bim_counts(presence(X, "nb-bim"), positive, negative, w)
        if threshold == "loo":
            if not unit:
                raise CapabilityError("nb-bim: threshold='loo' (leave-one-out) needs unit instance weights")
            state["tau"], self.loo_ap_ = optimal_threshold(presence(X), positive, negative, alpha, features=features)
        return state

    def _apply_params(self, state: dict[str, Any]) -> None:
        """Weights, the selected features and the intercept, from the counts."""
        alpha = check_alpha(self.alpha)
        features = check_features(self.features, "nb-bim")
        counts = state["counts"]
        tau = state["tau"] if "tau" in state else float(resolve_threshold(self.threshold, "nb-bim"))
        weights = bim_weights(counts, alpha, feature_mask(counts, features))
        selected = np.abs(weights) > tau
        self.threshold_ = tau
        self.weights_ = weights
        self.coef_ = np.where(selected, weights, 0.0)
        # log((1 - p)/(1 - q)) over the selected features, plus the prior log-odds
        log1m_p = np.log(np.maximum(counts.N_pos - counts.n_pos, 0.0) + alpha) - np.log(counts.N_pos + 2 * alpha)
        log1m_q = np.log(np.maximum(counts.N_neg - counts.n_neg, 0.0) + alpha) - np.log(counts.N_neg + 2 * alpha)
        if counts.N_pos > 0 and counts.N_neg > 0:
            prior = np.log(counts.N_pos) - np.log(counts.N_neg)
        else:  # one class absent: keep the scores finite so that they still rank
            prior = np.log(counts.N_pos + 1.0) - np.log(counts.N_neg + 1.0)
        self.intercept_ = float(np.sum((log1m_p - log1m_q)[selected]) + prior)
        self.n_selected_features_ = int(selected.sum())

    # ------------------------------------------------------------------ fitting from shards
    def statistics_passes(self) -> int:
        """One pass of document counts; threshold='loo' needs the documents themselves."""
        check_alpha(self.alpha)
        check_features(self.features, "nb-bim")
        if resolve_threshold(self.threshold, "nb-bim") == "loo":
            raise CapabilityError("nb-bim: threshold='loo' chooses tau by leave-one-out over the training "
                                  "documents, which shard statistics cannot replay; give a number")
        return 1

    def _shard_statistics(self, X: Any, y: np.ndarray, w: np.ndarray, schema: Schema, previous: Any) -> Any:
        positive, negative = binary_codes(y, len(schema.classes), "nb-bim")
        if bool(np.all(w == 1.0)):
            n_all = document_counts(X, sparse=True, who="nb-bim")
            pos_rows = np.flatnonzero(positive)
            n_pos = document_counts(X, pos_rows, sparse=True)
            n_neg = sp.csr_matrix(n_all - n_pos)
            n_neg.eliminate_zeros()     # features of the positives only
            stats = BIMStatistics(n_pos, n_neg)
        else:
            c = bim_counts(presence(X, "nb-bim"), positive, negative, w)
            stats = BIMStatistics(_sparse_row(c.n_pos), _sparse_row(c.n_neg))
        stats.settings = ("nb-bim", "document-counts")
        return stats

    def _state_from_statistics(self, statistics: Any) -> dict[str, Any]:
        if not isinstance(statistics, BIMStatistics):
            raise CapabilityError(f"nb-bim is fitted from document counts, not {type(statistics).__name__}")
        binary_codes(np.zeros(0, np.int64), len(statistics.labels), "nb-bim")   # two classes at most
        weight = statistics.class_weight
        N_pos, N_neg = (weight[1], weight[0]) if len(weight) == 2 else (0.0, weight[0])
        return {"counts": BIMCounts(statistics.n_pos.toarray().ravel(), statistics.n_neg.toarray().ravel(),
                                    N_pos, N_neg)}

    def score_documents(self, X: Any) -> np.ndarray:
        """The paper's score (eq. A.5) of each row: the sum of the selected weights present in it."""
        return np.asarray(presence(self._validate_predict(X), "nb-bim") @ self.coef_).ravel()

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        s = np.asarray(presence(X, "nb-bim") @ self.coef_).ravel()
        if len(self.classes_) < 2:
            return np.zeros((X.shape[0], 1))
        return np.column_stack([np.full(len(s), -self.intercept_), s])

