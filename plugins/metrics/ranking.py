"""Ranking evaluators (algorithms.md 5.2.2-5.2.4): average precision, precision-recall points,
break-even points; pure functions of a :class:`toolkit.api.Predictions`.

Rankings sort by score descending with ties kept in the original order (a stable sort), as
algorithms.md 0.2 decides and 5.2.2 and 5.2.4 repeat. The ranking score of class k
(:func:`class_scores`) is, for two classes, the margin of its decision score over the other's (the
log posterior odds of a probabilistic model); with more classes, its posterior probability when the
model gives probabilities, otherwise the margin of its decision score over the best other class.

The rankings themselves (average precision, the precision-recall points, the break-even point) use
the log posterior odds ``s_k - logsumexp_{j != k} s_j`` (:func:`log_odds`, :func:`break_even_scores`)
whenever the probabilities are the softmax of the decision scores (every NB-family model, whose scores
are joint log-likelihoods). Those order the instances as the posterior does, but a posterior rounds to
1.0 for many text documents (their log-odds reach hundreds), which tied them and let the order of the
test rows decide. Only instances with equal scores (say, two identical documents), or scores within
1e-12 of each other relative to their size (equal in exact arithmetic, apart by rounding:
:func:`toolkit.evaluation.ranking.rank_key`), still tie, and those keep the row order, as 0.2 prescribes. WEKA's per-class ROC and PR areas (:func:`class_scores`, used
by ``per-class``) stay on the probabilities, as WEKA computes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolkit.api import Predictions
import toolkit.evaluation.measures as measures
from toolkit.evaluation.ranking import average_precision_of_ranking, rank_key

__all__ = ["average_precision", "pr_curve", "bep_micro", "bep_macro", "ranking_scores", "break_even", "class_scores",
           "break_even_scores", "log_odds", "roc_auc", "roc_auc_macro", "pr_auc", "pr_auc_macro"]


def _shift_rows(scores: np.ndarray) -> np.ndarray:
    """Each row of ``scores`` less its maximum, with the NB models' rule for rows whose maximum is infinite
    (``ProbabilisticClassifier._log_normalise``): the classes at +inf share the mass (0, the others -inf);
    a row all -inf is uniform (all 0). A row with a NaN stays NaN."""
    s = np.asarray(scores, dtype=np.float64)
    top = s.max(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        z = s - top
    plus = np.isposinf(top).ravel()
    if plus.any():
        z[plus] = np.where(np.isposinf(s[plus]), 0.0, -np.inf)
    z[np.isneginf(top).ravel()] = 0.0
    return z


def log_odds(scores: np.ndarray) -> np.ndarray:
    """(n, K) ``s_k - logsumexp_{j != k} s_j``: for joint log-likelihoods the log posterior odds
    ``log P(k|x) - log(1 - P(k|x))``, without the rounding of ``P`` to 1.

    O(nK) on ``z = s - max``: the others of a class below the row's top (its first maximum) hold the top,
    ``z_k - log1p(sum of e^z_j over j neither the top nor k)``; the top gets the log-sum-exp of the others
    about the second best. For two finite classes that is the margin ``s_k - s_other``, bit for bit. Rows
    whose maximum is infinite get the log-odds of the posterior the NB models give them
    (:func:`_shift_rows`); a class at -inf gets -inf, a sole finite class (or a sole +inf) +inf.
    """
    z = _shift_rows(scores)
    rows = np.arange(z.shape[0])
    top = np.argmax(z, axis=1)
    rest = z.copy()
    rest[rows, top] = -np.inf                     # every class but the top
    e = np.exp(rest)
    second = rest.max(axis=1, keepdims=True)
    about = np.where(np.isfinite(second), second, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = z - np.log1p(e.sum(axis=1, keepdims=True) - e)
        out[rows, top] = -(about[:, 0] + np.log(np.exp(rest - about).sum(axis=1)))    # z at the top is 0
    return out


def _scores_give_proba(scores: np.ndarray, proba: np.ndarray) -> bool:
    """True when ``proba`` is the softmax of ``scores`` (atol 1e-9, the NB models' rule for infinite
    rows): the scores are then joint log-likelihoods up to a constant per row, and their log-odds
    (:func:`log_odds`) rank as ``proba`` does."""
    if scores.shape != proba.shape:
        return False
    e = np.exp(_shift_rows(scores))
    with np.errstate(invalid="ignore"):
        soft = e / e.sum(axis=1, keepdims=True)
    return bool(np.allclose(soft, proba, rtol=0.0, atol=1e-9))


def class_scores(p: Predictions) -> np.ndarray | None:
    """(n, K): column k ranks the test instances for class k (see the module's docstring); None when the
    model gives neither probabilities nor scores."""
    scores, proba = p.scores, p.proba
    if scores is None and proba is None:
        return None
    if scores is not None:
        scores = np.asarray(scores, dtype=np.float64)
        if scores.shape[1] == 2 and np.all(np.isfinite(scores)):
            margin = scores[:, 1] - scores[:, 0]
            return np.column_stack([-margin, margin])
    if proba is not None:
        return np.asarray(proba, dtype=np.float64)
    out = np.empty_like(scores)
    for k in range(scores.shape[1]):                   # a loop over classes, each vectorised over rows
        others = np.delete(scores, k, axis=1)
        out[:, k] = scores[:, k] - (others.max(axis=1) if others.shape[1] else 0.0)
    return out


def break_even_scores(p: Predictions) -> np.ndarray | None:
    """(n, K) scores the break-even point ranks by: the log posterior odds (:func:`log_odds`) when the
    probabilities are the softmax of the decision scores, else :func:`class_scores`."""
    if p.scores is not None and p.proba is not None:
        scores = np.asarray(p.scores, dtype=np.float64)
        if _scores_give_proba(scores, np.asarray(p.proba, dtype=np.float64)):
            return log_odds(scores)
    return class_scores(p)


def ranking_scores(p: Predictions, k: int) -> np.ndarray:
    """Score used to rank the test instances for class ``k``: column k of :func:`break_even_scores`."""
    scores = break_even_scores(p)
    if scores is None:
        raise ValueError("the model gives neither probabilities nor scores")
    return scores[:, k]


def _order(scores: np.ndarray, relevant: np.ndarray, ties: str) -> np.ndarray:
    n = len(scores)
    key = rank_key(scores)   # scores a few ulps apart (permuted class scores) tie, as in exact arithmetic
    if ties == "pessimistic":  # non-relevant first within a tie
        return np.lexsort((np.arange(n), relevant.astype(int), key))
    return np.lexsort((np.arange(n), key))


def _binary_positive(p: Predictions) -> int:
    return int(p.extra.get("positive", 1))


def _classes_to_score(p: Predictions) -> list[int]:
    K = len(p.classes)
    if K == 2:
        return [_binary_positive(p)]
    return [k for k in range(K) if np.any(p.y_true == k)]


def _known_class_scores(p: Predictions, of: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """The ranking scores (``of(p)``, default :func:`break_even_scores`) and the class codes of the test
    instances with a known class."""
    scores = (of or break_even_scores)(p)
    if scores is None:
        raise ValueError("the model gives neither probabilities nor scores")
    known = p.y_true >= 0
    return scores[known], p.y_true[known]


def average_precision(p: Predictions, ties: str = "stable") -> float:
    """Binary: AP of the positive class (code 1, or ``extra['positive']``); else the one-vs-rest mean."""
    classes = _classes_to_score(p)
    if not classes:
        return float("nan")
    all_scores, y = _known_class_scores(p)
    values = []
    for k in classes:
        scores = all_scores[:, k]
        relevant = y == k
        order = _order(scores, relevant, ties)
        values.append(average_precision_of_ranking(relevant[order]))
    values = [v for v in values if v == v]
    return float(np.mean(values)) if values else float("nan")


def pr_curve(p: Predictions) -> dict[str, Any]:
    """Non-interpolated precision-recall points (at each relevant rank) per scored class."""
    classes = _classes_to_score(p)
    if not classes:
        return {}
    all_scores, y = _known_class_scores(p)
    curves = {}
    for k in classes:
        relevant = y == k
        rel = relevant[_order(all_scores[:, k], relevant, "stable")]
        total = int(rel.sum())
        if total == 0:
            continue
        hits = np.cumsum(rel)
        ranks = np.arange(1, len(rel) + 1)
        curves[p.classes[k]] = {"recall": (hits[rel] / total).tolist(), "precision": (hits[rel] / ranks[rel]).tolist()}
    return curves


def break_even(p: Predictions) -> tuple[np.ndarray, np.ndarray]:
    """Per class: (N_k relevant, TP_k among the top N_k by :func:`break_even_scores`), algorithms.md 5.2.4;
    a tie across the cut-off keeps the row order (0.2)."""
    K = len(p.classes)
    n_rel = np.bincount(p.y_true[p.y_true >= 0], minlength=K).astype(np.int64)
    tp = np.zeros(K, dtype=np.int64)
    if not n_rel.any():
        return n_rel, tp
    scores, y = _known_class_scores(p, break_even_scores)
    for k in np.flatnonzero(n_rel):
        relevant = y == k
        order = _order(scores[:, k], relevant, "stable")
        tp[k] = int(relevant[order[: n_rel[k]]].sum())
    return n_rel, tp


def _scored_break_even(p: Predictions) -> tuple[np.ndarray, np.ndarray]:
    """(N_k, TP_k) of the classes the break-even points average: for two classes the positive class
    only (code 1, or ``extra['positive']``), as average precision (a one-vs-rest task's break-even point
    is its positive class's, algorithms.md 5.2.4); otherwise every class with relevant test instances."""
    n_rel, tp = break_even(p)
    if len(p.classes) == 2:
        keep = np.zeros(2, dtype=bool)
        keep[_binary_positive(p)] = True
        keep &= n_rel > 0
    else:
        keep = n_rel > 0
    return n_rel[keep], tp[keep]


def bep_micro(p: Predictions) -> float:
    """(1/N) sum_k N_k TP_k/N_k = sum TP / sum N at the break-even cut-offs; for two classes the
    positive class's TP / N."""
    n_rel, tp = _scored_break_even(p)
    total = n_rel.sum()
    return float(tp.sum() / total) if total else float("nan")


def bep_macro(p: Predictions) -> float:
    """Mean over classes with relevant test instances of TP_k / N_k; for two classes the positive
    class's TP / N."""
    n_rel, tp = _scored_break_even(p)
    return float(np.mean(tp / n_rel)) if len(n_rel) else float("nan")


def _areas(p: Predictions, area) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    scores = class_scores(p)
    K = len(p.classes)
    support = np.bincount(p.y_true[p.y_true >= 0], minlength=K).astype(np.float64)
    if scores is None or not support.any():     # nothing evaluated: no area (measures.pr_auc raises then)
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
