"""``bim-threshold``: keep the features whose BIM weight exceeds a threshold (algorithms.md 3.3)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.api import FeatureSelectorBase, Schema, as_matrix

from toolkit.plugins.ots.bim import (
    bim_counts, bim_weights, binary_codes, check_alpha, check_features, feature_mask, presence, resolve_threshold,
)
from toolkit.plugins.ots.leave_one_out import optimal_threshold

__all__ = ["BIMThresholdSelector"]


class BIMThresholdSelector(FeatureSelectorBase):
    """Keep the features whose BIM weight satisfies |w_t| > threshold (algorithms.md 3.3); with
    ``threshold="loo"`` the threshold maximises the leave-one-out AP on the training part. Only the
    BIM feature set can be kept: by default (``features="positive"``) the features present in a
    training positive; the others score 0."""

    _state_schema = {"threshold_": "float", "weights_": "array:f1", "scores_": "array:f1", "support_": "array:i1",
                     "loo_ap_": "?array:f1"}

    def __init__(self, *, threshold: float | str = 1.0, alpha: float = 1.0, features: str = "positive"):
        self.threshold = threshold
        self.alpha = alpha
        self.features = features

    def _check_params(self) -> None:
        """Ranges and choices, checked before any data (toolkit.api.validate_component)."""
        check_alpha(self.alpha)
        resolve_threshold(self.threshold, "bim-threshold")
        check_features(self.features, "bim-threshold")

    def fit(self, X: Any, y: Any, schema: Schema | None = None) -> BIMThresholdSelector:
        alpha = check_alpha(self.alpha)
        threshold = resolve_threshold(self.threshold, "bim-threshold")
        features = check_features(self.features, "bim-threshold")
        X = as_matrix(X)
        y = np.asarray(y)
        if schema is not None:
            codes = np.where(np.isnan(y.astype(np.float64)), -1, y).astype(np.int64)
            n_classes = len(schema.classes)
        else:   # unlabelled rows (NaN, None) are left out, as in a fit with a schema (algorithms.md 0.2)
            known = (~np.isnan(y) if y.dtype.kind == "f" else
                     np.array([v is not None and v == v for v in y], dtype=bool) if y.dtype == object
                     else np.ones(len(y), dtype=bool))
            labels = np.unique(y[known])
            codes = np.full(len(y), -1, dtype=np.int64)
            codes[known] = np.searchsorted(labels, y[known])
            n_classes = len(labels)
        positive, negative = binary_codes(codes, n_classes, "bim-threshold", None if schema is not None else labels)
        B = presence(X)
        if threshold == "loo":
            tau, self.loo_ap_ = optimal_threshold(B, positive, negative, alpha, features=features)
        else:
            tau = float(threshold)
        counts = bim_counts(B, positive, negative)
        weights = bim_weights(counts, alpha, feature_mask(counts, features))
        self.threshold_ = tau
        self.weights_ = weights
        self.scores_ = np.abs(weights)
        self.support_ = np.flatnonzero(self.scores_ > tau)
        return self
