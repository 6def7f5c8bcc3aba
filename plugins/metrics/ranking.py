"""Ranking evaluators (algorithms.md 5.2.2-5.2.4): average precision, precision-recall points,
break-even points; pure functions of a :class:`toolkit.api.Predictions`.

Rankings sort by score descending with ties kept in the original order (a stable sort), as
algorithms.md 0.2 decides. The ranking score of class k is, for two classes, the margin of its
decision score over the other's (the log posterior odds of a probabilistic model); with more
classes, its posterior probability when the model gives probabilities, otherwise the margin of its
decision score over the best other class.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.api import Predictions
import toolkit.evaluation.measures as measures
from toolkit.evaluation.ranking import average_precision_of_ranking

__all__ = ["average_precision", "pr_curve", "bep_micro", "bep_macro", "ranking_scores", "break_even", "class_scores",
           "roc_auc", "roc_auc_macro", "pr_auc", "pr_auc_macro"]


def ranking_scores(p: Predictions, k: int) -> np.ndarray:
    """Score used to rank the test instances for class ``k``.

    Two classes with finite decision scores: the margin ``s_k - s_other``. For a probabilistic model
    that is the log posterior odds, which orders instances exactly as the posterior does but keeps
    apart those whose probabilities both round to 1.0 (common for text, where log-odds reach
    hundreds); for a ranking model (BIM, CMLS) it is its own score. Otherwise the posterior
    probability, or the margin over the best other class when there are no probabilities.
    """
    if p.scores is not None and p.scores.shape[1] == 2 and np.all(np.isfinite(p.scores)):
        return p.scores[:, k] - p.scores[:, 1 - k]
    if p.proba is not None:
        return p.proba[:, k]
    if p.scores is None:
        raise ValueError("the model gives neither probabilities nor scores")
    others = np.delete(p.scores, k, axis=1)
    best_other = others.max(axis=1) if others.shape[1] else 0.0
    return p.scores[:, k] - best_other


def _order(scores: np.ndarray, relevant: np.ndarray, ties: str) -> np.ndarray:
    n = len(scores)
    if ties == "pessimistic":  # non-relevant first within a tie
        return np.lexsort((np.arange(n), relevant.astype(int), -scores))
    return np.lexsort((np.arange(n), -scores))


def _binary_positive(p: Predictions) -> int:
    return int(p.extra.get("positive", 1))


def _classes_to_score(p: Predictions) -> list[int]:
    K = len(p.classes)
    if K == 2:
        return [_binary_positive(p)]
    return [k for k in range(K) if np.any(p.y_true == k)]


def average_precision(p: Predictions, ties: str = "stable") -> float:
    """Binary: AP of the positive class (code 1, or ``extra['positive']``); else the one-vs-rest mean."""
    known = p.y_true >= 0
    values = []
    for k in _classes_to_score(p):
        scores = ranking_scores(p, k)[known]
        relevant = p.y_true[known] == k
        order = _order(scores, relevant, ties)
        values.append(average_precision_of_ranking(relevant[order]))
    values = [v for v in values if v == v]
    return float(np.mean(values)) if values else float("nan")


def pr_curve(p: Predictions) -> dict[str, Any]:
    """Non-interpolated precision-recall points (at each relevant rank) per scored class."""
    known = p.y_true >= 0
    curves = {}
    for k in _classes_to_score(p):
        scores = ranking_scores(p, k)[known]
        relevant = p.y_true[known] == k
        rel = relevant[_order(scores, relevant, "stable")]
        total = int(rel.sum())
        if total == 0:
            continue
        hits = np.cumsum(rel)
        ranks = np.arange(1, len(rel) + 1)
        curves[p.classes[k]] = {"recall": (hits[rel] / total).tolist(), "precision": (hits[rel] / ranks[rel]).tolist()}
    return curves


def break_even(p: Predictions) -> tuple[np.ndarray, np.ndarray]:
    """Per class: (N_k relevant, TP_k in the top N_k by that class's score)."""
    known = p.y_true >= 0
    K = len(p.classes)
    n_rel = np.zeros(K, dtype=np.int64)
    tp = np.zeros(K, dtype=np.int64)
    for k in range(K):
        relevant = p.y_true[known] == k
        n_k = int(relevant.sum())
        n_rel[k] = n_k
        if n_k == 0:
            continue
        order = _order(ranking_scores(p, k)[known], relevant, "stable")
        tp[k] = int(relevant[order[:n_k]].sum())
    return n_rel, tp


def bep_micro(p: Predictions) -> float:
    """(1/N) sum_k N_k TP_k/N_k = sum TP / sum N at the break-even cut-offs."""
    n_rel, tp = break_even(p)
    total = n_rel.sum()
    return float(tp.sum() / total) if total else float("nan")


def bep_macro(p: Predictions) -> float:
    """Mean over classes with relevant test instances of TP_k / N_k."""
    n_rel, tp = break_even(p)
    present = n_rel > 0
    return float(np.mean(tp[present] / n_rel[present])) if present.any() else float("nan")


def class_scores(p: Predictions) -> np.ndarray | None:
    """(n, K): column k ranks the test instances for class k (:func:`ranking_scores`); None when the model
    gives neither probabilities nor scores."""
    if p.proba is None and p.scores is None:
        return None
    return np.column_stack([ranking_scores(p, k) for k in range(len(p.classes))])


def _areas(p: Predictions, area) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    scores = class_scores(p)
    K = len(p.classes)
    support = np.bincount(p.y_true[p.y_true >= 0], minlength=K).astype(np.float64)
    if scores is None:
        return np.full(K, np.nan), support
    return area(p.y_true, scores), support


def roc_auc(p: Predictions) -> float:
    """One-vs-rest ROC area per class, averaged with the classes' test frequencies as weights (WEKA's
    "Weighted Avg." ROC Area); for two classes the ROC area itself."""
    values, support = _areas(p, measures.roc_auc)
    return measures.class_weighted_mean(values, support)


def roc_auc_macro(p: Predictions) -> float:
    """Unweighted mean over the classes present in the test part of the one-vs-rest ROC areas."""
    values, _ = _areas(p, measures.roc_auc)
    return float(np.nanmean(values)) if np.any(~np.isnan(values)) else float("nan")


def pr_auc(p: Predictions) -> float:
    """One-vs-rest area under the precision-recall curve (step-wise over distinct thresholds), weighted
    by class frequency; for two classes, the area of the positive class (code 1)."""
    values, support = _areas(p, measures.pr_auc)
    if len(p.classes) == 2:
        return float(values[_binary_positive(p)])
    return measures.class_weighted_mean(values, support)


def pr_auc_macro(p: Predictions) -> float:
    """Unweighted mean over the classes present in the test part of the one-vs-rest PR areas."""
    values, _ = _areas(p, measures.pr_auc)
    return float(np.nanmean(values)) if np.any(~np.isnan(values)) else float("nan")
