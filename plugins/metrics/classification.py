"""Evaluators on predicted labels and probabilities (algorithms.md 5.2.1): pure functions of a
:class:`toolkit.api.Predictions`."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.api import Predictions

__all__ = ["error", "accuracy", "log_loss", "confusion_matrix"]


def error(p: Predictions) -> float:
    """(#misclassified) / (#evaluated); instances without a known class are not evaluated."""
    known = p.y_true >= 0
    n = int(known.sum())
    return float(np.sum(p.y_pred[known] != p.y_true[known]) / n) if n else float("nan")


def accuracy(p: Predictions) -> float:
    return 1.0 - error(p)


def log_loss(p: Predictions, eps: float = 1e-15) -> float:
    """Mean of -log P(true class), probabilities clipped to [eps, 1]."""
    known = p.y_true >= 0
    if p.proba is None or not known.any():
        return float("nan")
    chosen = p.proba[np.flatnonzero(known), p.y_true[known]]
    return float(-np.mean(np.log(np.clip(chosen, eps, 1.0))))


def confusion_matrix(p: Predictions) -> dict[str, Any]:
    K = len(p.classes)
    known = p.y_true >= 0
    matrix = np.zeros((K, K), dtype=np.int64)
    np.add.at(matrix, (p.y_true[known], p.y_pred[known]), 1)
    return {"labels": list(p.classes), "matrix": matrix.tolist()}
