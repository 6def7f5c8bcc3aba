"""``nb-bim``: binary naive Bayes on feature presence, scored as the OTS paper does (algorithms.md 2.5)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.api import CLASSIFIER_STATE, ProbabilisticClassifier, Schema
from toolkit.errors import CapabilityError

from toolkit.plugins.ots.bim import (
    bim_counts, bim_weights, binary_codes, check_alpha, check_features, feature_mask, presence, resolve_threshold,
)
from toolkit.plugins.ots.leave_one_out import optimal_threshold

__all__ = ["BIMNaiveBayes"]


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

    _state_schema = {**CLASSIFIER_STATE, "threshold_": "float", "intercept_": "float", "n_selected_features_": "int",
                     "weights_": "array:f1", "coef_": "array:f1", "loo_ap_": "?array:f1"}

    def __init__(self, *, alpha: float = 1.0, threshold: float | str = 1.0, features: str = "positive"):
        self.alpha = alpha
        self.threshold = threshold
        self.features = features

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> BIMNaiveBayes:
        alpha = check_alpha(self.alpha)
        threshold = resolve_threshold(self.threshold, "nb-bim")
        features = check_features(self.features, "nb-bim")
        X, codes, w = self._validate_fit(X, y, sample_weight, schema)
        positive, negative = binary_codes(codes, len(self.classes_), "nb-bim")
        B = presence(X)
        unit = bool(np.all(w == 1.0))
        counts = bim_counts(B, positive, negative, None if unit else w)
        if threshold == "loo":
            if not unit:
                raise CapabilityError("nb-bim: threshold='loo' (leave-one-out) needs unit instance weights")
            tau, self.loo_ap_ = optimal_threshold(B, positive, negative, alpha, features=features)
        else:
            tau = float(threshold)
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
        return self

    def score_documents(self, X: Any) -> np.ndarray:
        """The paper's score (eq. A.5) of each row: the sum of the selected weights present in it."""
        return np.asarray(presence(self._validate_predict(X)) @ self.coef_).ravel()

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        s = np.asarray(presence(X) @ self.coef_).ravel()
        if len(self.classes_) < 2:
            return np.zeros((X.shape[0], 1))
        return np.column_stack([np.full(len(s), -self.intercept_), s])
