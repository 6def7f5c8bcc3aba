"""The metrics family's evaluators against scikit-learn's independent implementations (and brute-force
loops written here), on random predictions with ties, absent classes and two or more classes."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn import metrics as skm

import toolkit
from toolkit.api import Predictions
from toolkit.evaluation import measures


def _predictions(seed: int, n: int = 60, K: int = 3, ties: bool = False, absent: bool = False) -> Predictions:
    rng = np.random.default_rng(seed)
    proba = rng.dirichlet(np.ones(K), size=n)
    if ties:  # coarse probabilities: many tied scores
        proba = np.round(proba * 4) / 4 + 1e-3
        proba /= proba.sum(axis=1, keepdims=True)
    y_true = rng.integers(0, K, n)
    if absent:
        y_true[y_true == K - 1] = 0  # the last class never occurs in the test part
    y_true[: 2] = -1  # two instances with a missing class: never evaluated
    y_pred = np.argmax(proba, axis=1)
    return Predictions(y_true=y_true, y_pred=y_pred, proba=proba, scores=np.log(proba),
                       classes=tuple(f"c{k}" for k in range(K)))


def _ev(name: str):
    return toolkit.get_evaluator(name)


CASES = [dict(seed=s, K=K, ties=t, absent=a) for s, K, t, a in
         itertools.product([1, 2], [2, 3, 5], [False, True], [False, True]) if not (a and K == 2)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_label_metrics_equal_scikit_learn(case):
    p = _predictions(**case)
    known = p.y_true >= 0
    yt, yp = p.y_true[known], p.y_pred[known]
    K = len(p.classes)
    prec, rec, f1, support = skm.precision_recall_fscore_support(yt, yp, labels=range(K), zero_division=0)
    detail = _ev("per-class")(p)
    assert detail["labels"] == list(p.classes)
    np.testing.assert_allclose(detail["precision"], prec, rtol=1e-12)
    np.testing.assert_allclose(detail["recall"], rec, rtol=1e-12)
    np.testing.assert_allclose(detail["f1"], f1, rtol=1e-12)
    np.testing.assert_array_equal(detail["support"], support)
    for average in ("macro", "micro", "weighted"):
        expected = skm.precision_recall_fscore_support(yt, yp, average=average, zero_division=0)
        for i, measure in enumerate(("precision", "recall", "f1")):
            assert _ev(f"{measure}-{average}")(p) == pytest.approx(expected[i], rel=1e-12, abs=1e-15), (measure,
                                                                                                          average)
    assert _ev("kappa")(p) == pytest.approx(skm.cohen_kappa_score(yt, yp), rel=1e-12, abs=1e-15)
    assert _ev("mcc")(p) == pytest.approx(skm.matthews_corrcoef(yt, yp), rel=1e-12, abs=1e-15)
    cm = _ev("confusion-matrix")(p)
    np.testing.assert_array_equal(cm["matrix"], skm.confusion_matrix(yt, yp, labels=range(K)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_areas_equal_scikit_learn(case):
    p = _predictions(**case)
    known = p.y_true >= 0
    yt, proba = p.y_true[known], p.proba[known]
    K = len(p.classes)
    detail = _ev("per-class")(p)
    present = [k for k in range(K) if np.any(yt == k)]
    for k in range(K):
        if k in present:
            score = proba[:, k] if K > 2 else np.log(proba[:, k]) - np.log(proba[:, 1 - k])
            assert detail["roc_auc"][k] == pytest.approx(skm.roc_auc_score(yt == k, score), rel=1e-12)
            assert detail["pr_auc"][k] == pytest.approx(skm.average_precision_score(yt == k, score), rel=1e-12)
        else:
            assert math.isnan(detail["roc_auc"][k]) and math.isnan(detail["pr_auc"][k])
    if K == 2:
        assert _ev("roc-auc")(p) == pytest.approx(skm.roc_auc_score(yt, proba[:, 1]), rel=1e-12)
        assert _ev("pr-auc")(p) == pytest.approx(skm.average_precision_score(yt, proba[:, 1]), rel=1e-12)
    elif len(present) == K:  # scikit-learn's one-vs-rest needs every class in the test part
        for avg, name in (("weighted", "roc-auc"), ("macro", "roc-auc-macro")):
            assert _ev(name)(p) == pytest.approx(skm.roc_auc_score(yt, proba, multi_class="ovr", average=avg),
                                                 rel=1e-12)
        onehot = np.eye(K)[yt]
        assert _ev("pr-auc")(p) == pytest.approx(skm.average_precision_score(onehot, proba, average="weighted"),
                                                 rel=1e-12)
        assert _ev("pr-auc-macro")(p) == pytest.approx(skm.average_precision_score(onehot, proba, average="macro"),
                                                       rel=1e-12)


def test_roc_area_by_brute_force_with_weights():
    """Weighted ROC area: the weighted share of (positive, negative) pairs ordered right, ties one half."""
    rng = np.random.default_rng(7)
    n, K = 40, 3
    scores = np.round(rng.random((n, K)), 1)
    y = rng.integers(0, K, n)
    w = rng.random(n) + 0.5
    got = measures.roc_auc(y, scores, w)
    for k in range(K):
        num = den = 0.0
        for i in range(n):
            for j in range(n):
                if y[i] == k and y[j] != k:
                    pair = w[i] * w[j]
                    den += pair
                    num += pair * (1.0 if scores[i, k] > scores[j, k] else 0.5 if scores[i, k] == scores[j, k] else 0)
        assert got[k] == pytest.approx(num / den, rel=1e-12)


@pytest.mark.parametrize("K", [2, 4])
def test_probability_scores_by_brute_force(K):
    p = _predictions(3, K=K, ties=True)
    rows = [i for i in range(len(p.y_true)) if p.y_true[i] >= 0]
    sq = [sum((p.proba[i, k] - (k == p.y_true[i])) ** 2 for k in range(K)) for i in rows]
    ab = [sum(abs(p.proba[i, k] - (k == p.y_true[i])) for k in range(K)) / K for i in rows]
    assert _ev("brier")(p) == pytest.approx(sum(sq) / len(rows), rel=1e-12)
    assert _ev("mean-absolute-error")(p) == pytest.approx(sum(ab) / len(rows), rel=1e-12)
    assert _ev("root-mean-squared-error")(p) == pytest.approx(math.sqrt(sum(sq) / K / len(rows)), rel=1e-12)
    if K == 2:
        known = p.y_true >= 0
        assert _ev("brier")(p) == pytest.approx(2 * skm.brier_score_loss(p.y_true[known], p.proba[known, 1]),
                                                rel=1e-12)


def test_direction_and_probability_needs_are_declared():
    registry = toolkit.get_registry()
    lower = {"error", "log-loss", "brier", "mean-absolute-error", "root-mean-squared-error"}
    for name in ["kappa", "mcc", "roc-auc", "pr-auc", "f1-macro", "precision-weighted", "recall-micro", *lower]:
        spec = registry.get("evaluator", name)
        assert spec.greater_is_better == (name not in lower), name
    assert {n for n in registry.names("evaluator") if registry.get("evaluator", n).needs_proba} >= {
        "brier", "mean-absolute-error", "root-mean-squared-error", "log-loss"}


def test_degenerate_test_parts():
    """One class only, nothing evaluated: rates stay defined, areas are NaN, nothing raises."""
    one = Predictions(y_true=np.zeros(5, np.int64), y_pred=np.zeros(5, np.int64), proba=np.tile([0.9, 0.1], (5, 1)),
                      scores=None, classes=("a", "b"))
    assert _ev("kappa")(one) == 1.0 and _ev("mcc")(one) == 0.0
    assert math.isnan(_ev("roc-auc")(one))
    none = Predictions(y_true=np.full(3, -1), y_pred=np.zeros(3, np.int64), proba=np.tile([0.5, 0.5], (3, 1)),
                       scores=None, classes=("a", "b"))
    for name in ("kappa", "f1-macro", "roc-auc", "brier", "mean-absolute-error"):
        assert math.isnan(_ev(name)(none)), name


def test_area_measures_of_nothing_evaluated_are_nan():
    """No test instance of known class: every area is undefined (pr_auc raised IndexError in reduceat,
    found by the metrics review; roc_auc had its own guard)."""
    from toolkit.evaluation import measures

    for y, scores in ((np.full(3, -1), np.full((3, 2), 0.5)), (np.zeros(0, dtype=int), np.zeros((0, 3)))):
        for area in (measures.pr_auc(y, scores), measures.roc_auc(y, scores)):
            assert area.shape == (scores.shape[1],) and np.isnan(area).all()
