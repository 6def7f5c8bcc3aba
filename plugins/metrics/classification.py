"""Evaluators on predicted labels and probabilities (algorithms.md 5.2.1): pure functions of a
:class:`toolkit.api.Predictions`. The counting is :mod:`toolkit.evaluation.measures` (shared with WEKA's
evaluation summary); instances without a known class are not evaluated, and, as ``error`` always was,
every test instance counts once (instance weights are left to the summary)."""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.api import Predictions
import toolkit.evaluation.measures as measures

__all__ = ["error", "accuracy", "log_loss", "confusion_matrix", "per_class", "kappa", "mcc", "brier",
           "mean_absolute_error", "root_mean_squared_error", "averaged_measure"]


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


def _counts(p: Predictions) -> measures.ClassCounts:
    """What the per-class and averaged measures need: O(K), no K x K matrix (no class limit)."""
    return measures.ClassCounts.of(p.y_true, p.y_pred, len(p.classes))


def confusion_matrix(p: Predictions) -> dict[str, Any]:
    """The (true, predicted) counts: K x K cells, so at most measures.MAX_CONFUSION_CLASSES classes
    (registered with that limit: a dataset with more is refused before the first repetition)."""
    cm = measures.confusion_matrix(p.y_true, p.y_pred, len(p.classes))
    return {"labels": list(p.classes), "matrix": cm.astype(np.int64).tolist()}


def per_class(p: Predictions) -> dict[str, Any]:
    """WEKA's "Detailed Accuracy By Class" of one test part: per class its support, TP and FP rates,
    precision, recall, F1, and (from probabilities, else decision scores) its ROC and PR areas."""
    from toolkit.plugins.metrics.ranking import class_scores

    rates = measures.class_rates(_counts(p))
    out: dict[str, Any] = {"labels": list(p.classes)}
    out.update({k: v.tolist() for k, v in rates.items()})
    scores = class_scores(p)
    K = len(p.classes)
    if scores is None or not np.any(p.y_true >= 0):   # nothing evaluated: no area (measures.pr_auc raises then)
        scores = None
    out["roc_auc"] = (measures.roc_auc(p.y_true, scores) if scores is not None else np.full(K, np.nan)).tolist()
    out["pr_auc"] = (measures.pr_auc(p.y_true, scores) if scores is not None else np.full(K, np.nan)).tolist()
    return out


def averaged_measure(measure: str, average: str):  # type: ignore[no-untyped-def]
    """The evaluator ``<measure>-<average>`` (precision, recall, f1; macro, micro, weighted)."""
    def evaluator(p: Predictions) -> float:
        return measures.averaged(_counts(p), measure, average)

    evaluator.__name__ = f"{measure}_{average}"
    evaluator.__qualname__ = evaluator.__name__
    evaluator.__doc__ = f"{measure} averaged over classes ({average})"
    return evaluator


def kappa(p: Predictions) -> float:
    return measures.kappa(_counts(p))


def mcc(p: Predictions) -> float:
    return measures.matthews(_counts(p))


def brier(p: Predictions) -> float:
    return float("nan") if p.proba is None else measures.brier(p.y_true, p.proba)


def mean_absolute_error(p: Predictions) -> float:
    if p.proba is None:
        return float("nan")
    n, abs_sum, _ = measures.absolute_squared_errors(p.y_true, p.proba)
    return abs_sum / n if n else float("nan")


def root_mean_squared_error(p: Predictions) -> float:
    if p.proba is None:
        return float("nan")
    n, _, sq_sum = measures.absolute_squared_errors(p.y_true, p.proba)
    return float(np.sqrt(sq_sum / n)) if n else float("nan")
