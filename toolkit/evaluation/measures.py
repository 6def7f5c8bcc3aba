"""Measures of one set of predictions: the confusion matrix and what follows from it, one-vs-rest ROC and
precision-recall areas, probability scores. Shared by the metrics plugin's evaluators and by WEKA's
evaluation summary (:mod:`toolkit.evaluation.summary`), so that both compute them the same way; public
to plugins.

Conventions (WEKA's ``Evaluation`` and scikit-learn's, which agree here): a rate whose denominator is
0 is 0 (precision of a class never predicted, recall of a class absent from the test part); an area
under a curve that needs positives and negatives is NaN when one of them is missing. Weights are
instance weights (1 when not given). Everything is vectorised: a sort per class, no loop over
instances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolkit.errors import ToolkitError

__all__ = ["MAX_CONFUSION_CLASSES", "check_confusion_size", "confusion_matrix", "ClassCounts", "class_rates", "averaged",
           "kappa", "matthews", "roc_auc", "pr_auc", "class_weighted_mean", "brier", "absolute_squared_errors",
           "AVERAGES"]

#: the averages of per-class precision, recall and F1 that :func:`averaged` knows
AVERAGES = ("macro", "micro", "weighted")


def _weights(n: int, weights: np.ndarray | None) -> np.ndarray:
    return np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)


#: classes a confusion matrix may have: K x K cells of 8 bytes (8,192 classes: 512 MiB)
MAX_CONFUSION_CLASSES = 8192


def check_confusion_size(n_classes: int) -> None:
    """Refuse a confusion matrix past :data:`MAX_CONFUSION_CLASSES` before anything allocates one."""
    if n_classes > MAX_CONFUSION_CLASSES:
        raise ToolkitError(f"a confusion matrix of {n_classes:,} classes ({n_classes * n_classes:,} cells) is past "
                           f"the limit of {MAX_CONFUSION_CLASSES:,} classes; choose metrics that need none "
                           f"(error, accuracy)")


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int,
                     weights: np.ndarray | None = None) -> np.ndarray:
    """(K, K) summed weights of (true class, predicted class); rows with a missing class (code < 0) and
    unpredicted rows (code < 0) are left out. More than :data:`MAX_CONFUSION_CLASSES` classes is an
    error, not an allocation of K x K cells."""
    check_confusion_size(n_classes)
    y_true = np.asarray(y_true, dtype=np.int64)
    y_pred = np.asarray(y_pred, dtype=np.int64)
    w = _weights(len(y_true), weights)
    keep = (y_true >= 0) & (y_pred >= 0)
    flat = y_true[keep] * n_classes + y_pred[keep]
    return np.bincount(flat, weights=w[keep], minlength=n_classes * n_classes).reshape(n_classes, n_classes)


@dataclass(frozen=True)
class ClassCounts:
    """Per class: the weight of its correct predictions (the confusion matrix's diagonal), of its true
    instances (row sums) and of its predictions (column sums). Every statistic of this module but the
    matrix itself needs only these: O(K) where the matrix is K x K, so they have no class limit."""

    correct: np.ndarray
    support: np.ndarray
    predicted: np.ndarray

    @classmethod
    def of(cls, y_true: np.ndarray, y_pred: np.ndarray, n_classes: int,
           weights: np.ndarray | None = None) -> ClassCounts:
        """Counted from the codes, as :func:`confusion_matrix` counts them (a missing class or an
        unpredicted row, code < 0, left out)."""
        y_true = np.asarray(y_true, dtype=np.int64)
        y_pred = np.asarray(y_pred, dtype=np.int64)
        w = _weights(len(y_true), weights)
        keep = (y_true >= 0) & (y_pred >= 0)
        t, p, w = y_true[keep], y_pred[keep], w[keep]
        hit = t == p
        return cls(np.bincount(t[hit], weights=w[hit], minlength=n_classes).astype(np.float64),
                   np.bincount(t, weights=w, minlength=n_classes).astype(np.float64),
                   np.bincount(p, weights=w, minlength=n_classes).astype(np.float64))

    @classmethod
    def from_matrix(cls, cm: np.ndarray) -> ClassCounts:
        cm = np.asarray(cm, dtype=np.float64)
        return cls(np.diag(cm).copy(), cm.sum(axis=1), cm.sum(axis=0))

    @property
    def total(self) -> float:
        return float(self.support.sum())

    def __add__(self, other: ClassCounts) -> ClassCounts:
        return ClassCounts(self.correct + other.correct, self.support + other.support,
                           self.predicted + other.predicted)


def _counts(counts: ClassCounts | np.ndarray) -> ClassCounts:
    """A confusion matrix is also accepted wherever counts are (the functions below took one before)."""
    return counts if isinstance(counts, ClassCounts) else ClassCounts.from_matrix(counts)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


def class_rates(counts: ClassCounts | np.ndarray) -> dict[str, np.ndarray]:
    """Per class (one against the rest): support (true instances), TP rate (= recall), FP rate,
    precision and F1, each 0 where its denominator is 0."""
    c = _counts(counts)
    tp, support, predicted, total = c.correct, c.support, c.predicted, c.total
    fp = predicted - tp
    negatives = total - support
    recall = _ratio(tp, support)
    precision = _ratio(tp, predicted)
    f1 = _ratio(2 * precision * recall, precision + recall)
    return {"support": support, "tp_rate": recall, "fp_rate": _ratio(fp, negatives), "precision": precision,
            "recall": recall, "f1": f1}


def averaged(counts: ClassCounts | np.ndarray, measure: str, average: str) -> float:
    """Precision, recall or F1 (``measure``) averaged over classes: ``macro`` (the plain mean over the
    classes that occur in the test part or among the predictions, as scikit-learn), ``weighted`` (by support, WEKA's "Weighted Avg."), ``micro`` (from the pooled counts, which
    for single-label data is the accuracy)."""
    if measure not in ("precision", "recall", "f1"):
        raise ValueError(f"measure must be precision, recall or f1, not {measure!r}")
    c = _counts(counts)
    total = c.total
    if total == 0:
        return float("nan")
    if average == "micro":
        return float(c.correct.sum() / total)
    rates = class_rates(c)
    values = rates[measure]
    if average == "macro":
        seen = (rates["support"] > 0) | (c.predicted > 0)
        return float(values[seen].mean())
    if average == "weighted":
        return float(np.sum(values * rates["support"]) / total)
    raise ValueError(f"average must be one of {', '.join(AVERAGES)}, not {average!r}")


def kappa(counts: ClassCounts | np.ndarray) -> float:
    """Cohen's kappa: (observed - chance agreement) / (1 - chance), chance from the row and column
    sums; 1 when chance agreement is 1 (WEKA's convention)."""
    c = _counts(counts)
    total = c.total
    if total == 0:
        return float("nan")
    chance = float(np.sum(c.support * c.predicted) / total ** 2)
    observed = float(c.correct.sum() / total)
    return (observed - chance) / (1 - chance) if chance < 1 else 1.0


def matthews(counts: ClassCounts | np.ndarray) -> float:
    """Matthews correlation coefficient, multi-class (Gorodkin's R_K): (c s - sum_k p_k t_k) /
    sqrt((s^2 - sum p_k^2)(s^2 - sum t_k^2)); 0 when a factor under the root is 0."""
    counts = _counts(counts)
    s = counts.total
    c = counts.correct.sum()
    t = counts.support
    p = counts.predicted
    den = (s * s - np.dot(p, p)) * (s * s - np.dot(t, t))
    if den <= 0:
        return 0.0
    return float((c * s - np.dot(p, t)) / np.sqrt(den))


def _tie_groups(scores: np.ndarray, positive: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positive and negative weight per distinct score, scores descending (equal scores form one group)."""
    if len(scores) == 0:   # nothing evaluated (no test instance of known class): no groups
        return np.zeros(0), np.zeros(0)
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    pos = np.where(positive[order], w[order], 0.0)
    neg = np.where(positive[order], 0.0, w[order])
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    return np.add.reduceat(pos, starts), np.add.reduceat(neg, starts)


def _valid(y_true: np.ndarray, scores: np.ndarray, weights: np.ndarray | None) -> tuple[np.ndarray, ...]:
    y_true = np.asarray(y_true, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    w = _weights(len(y_true), weights)
    keep = y_true >= 0
    return y_true[keep], scores[keep], w[keep]


def roc_auc(y_true: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Area under the ROC curve of each class against the rest (``scores[:, k]`` ranks class k): the
    probability that a random positive scores above a random negative, ties counting one half (the
    trapezoid through WEKA's ``ThresholdCurve`` points). NaN for a class without positives or negatives."""
    y_true, scores, w = _valid(y_true, scores, weights)
    K = scores.shape[1]
    out = np.full(K, np.nan)
    if len(y_true) == 0:
        return out
    for k in range(K):
        pos_w, neg_w = _tie_groups(scores[:, k], y_true == k, w)
        P, N = pos_w.sum(), neg_w.sum()
        if P <= 0 or N <= 0:
            continue
        neg_above = np.cumsum(neg_w) - neg_w  # negative weight strictly above each group
        # positive pairs won against the negatives below, half against the tied ones
        out[k] = float(np.sum(pos_w * (N - neg_above - neg_w + 0.5 * neg_w)) / (P * N))
    return out


def pr_auc(y_true: np.ndarray, scores: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Area under the precision-recall curve of each class against the rest, as a step function over the
    distinct score thresholds: sum over thresholds of (recall gain) x precision (scikit-learn's
    ``average_precision_score``; tied scores share one threshold). NaN for a class without positives."""
    y_true, scores, w = _valid(y_true, scores, weights)
    K = scores.shape[1]
    out = np.full(K, np.nan)
    for k in range(K):
        pos_w, neg_w = _tie_groups(scores[:, k], y_true == k, w)
        P = pos_w.sum()
        if P <= 0:
            continue
        tp = np.cumsum(pos_w)
        fp = np.cumsum(neg_w)
        # a top group of weight 0 gains no recall: its precision (0/0) counts for nothing, not NaN
        precision = np.divide(tp, tp + fp, out=np.zeros_like(tp), where=tp + fp > 0)
        out[k] = float(np.sum(pos_w / P * precision))
    return out


def class_weighted_mean(values: np.ndarray, support: np.ndarray, undefined: str = "skip") -> float:
    """Mean of per-class ``values`` weighted by class support. NaN values: ``skip`` leaves them and their
    weight out; ``weka`` leaves them out of the sum but keeps their weight (WEKA 3.6's weighted ROC
    area, which divides by every instance)."""
    values = np.asarray(values, dtype=np.float64)
    support = np.asarray(support, dtype=np.float64)
    defined = ~np.isnan(values)
    total = support.sum() if undefined == "weka" else support[defined].sum()
    if total <= 0:
        return float("nan")
    return float(np.sum(values[defined] * support[defined]) / total)


def _one_hot(y_true: np.ndarray, K: int) -> np.ndarray:
    out = np.zeros((len(y_true), K))
    out[np.arange(len(y_true)), y_true] = 1.0
    return out


def brier(y_true: np.ndarray, proba: np.ndarray, weights: np.ndarray | None = None) -> float:
    """Brier's (1950) score: the (weighted) mean over instances of sum_k (p_k - [y = k])^2; for two
    classes twice scikit-learn's ``brier_score_loss`` of the positive class."""
    y_true, proba, w = _valid(y_true, proba, weights)
    if w.sum() <= 0:
        return float("nan")
    sq = np.sum((proba - _one_hot(y_true, proba.shape[1])) ** 2, axis=1)
    return float(np.sum(w * sq) / w.sum())


def absolute_squared_errors(y_true: np.ndarray, proba: np.ndarray,
                            weights: np.ndarray | None = None) -> tuple[float, float, float]:
    """(sum of weights, weighted sum of mean |p_k - [y = k]| over classes, the same of squares): what WEKA's
    mean absolute error and root mean squared error divide (MAE = second / first, RMSE = sqrt(third /
    first))."""
    y_true, proba, w = _valid(y_true, proba, weights)
    diff = proba - _one_hot(y_true, proba.shape[1])
    K = proba.shape[1]
    return float(w.sum()), float(np.sum(w * np.abs(diff).sum(axis=1)) / K), float(np.sum(w * (diff ** 2).sum(axis=1)) / K)
