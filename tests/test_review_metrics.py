"""Metrics review (rev-metrics): regressions for the bugs it found, each with expected values from
algorithms.md's test vectors, scikit-learn, WEKA 3.6 (tests/golden/weka_metrics_review.json, written by
scripts/weka/make_metrics_refs.py) or a brute-force computation here, never from the code under test."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import toolkit
from toolkit.api import Predictions
from toolkit.plugins.metrics import ranking


def _ev(name: str):
    return toolkit.get_evaluator(name)


def _binary(margin, y) -> Predictions:
    margin = np.asarray(margin, dtype=np.float64)
    scores = np.column_stack([np.zeros_like(margin), margin])     # s_1 - s_0 = margin
    proba = 1.0 / (1.0 + np.exp(scores[:, ::-1] - scores))         # softmax of the scores
    return Predictions(y_true=np.asarray(y), y_pred=(margin > 0).astype(np.int64), proba=proba, scores=scores,
                       classes=("neg", "pos"))


def _brute_positive_bep(margin, y) -> float:
    """algorithms.md 5.2.4 for the positive class: the N positives' share of the N instances ranked
    highest by the margin, ties in row order (0.2)."""
    n_pos = sum(1 for v in y if v == 1)
    ranked = sorted(range(len(y)), key=lambda i: (-margin[i], i))
    return sum(1 for i in ranked[:n_pos] if y[i] == 1) / n_pos


# --------------------------------------------------------------------------- break-even on two classes

def test_binary_break_even_is_the_positive_class_algorithms_vector():
    """algorithms.md 7.9, class A as a binary task: scores (0.9 .. 0.4), labels (1,1,0,0,1,0): N_A = 3,
    TP = 2, so the break-even point is 2/3 (the negative class's own break-even is not part of it)."""
    p = _binary([0.9, 0.8, 0.7, 0.6, 0.5, 0.4], [1, 1, 0, 0, 1, 0])
    assert _ev("bep-micro")(p) == pytest.approx(2 / 3, abs=1e-15)
    assert _ev("bep-macro")(p) == pytest.approx(2 / 3, abs=1e-15)


def test_binary_break_even_of_a_rare_positive_class():
    """One positive ranked second: its break-even point is 0. Averaging in the negative class (top 5
    by -margin hold 4 negatives) reported 4/6 (micro) and 0.4 (macro)."""
    p = _binary([0.5, 0.9, 0.1, 0.2, 0.3, 0.4], [1, 0, 0, 0, 0, 0])
    assert _ev("bep-micro")(p) == 0.0
    assert _ev("bep-macro")(p) == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_break_even_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 60
    margin = np.round(rng.normal(size=n), 1)         # ties across the cut-off
    y = (rng.random(n) < 0.15 + 0.1 * seed).astype(np.int64)
    y[:2] = [1, 0]
    expected = _brute_positive_bep(margin.tolist(), y.tolist())
    p = _binary(margin, y)
    assert _ev("bep-micro")(p) == pytest.approx(expected, abs=1e-15)
    assert _ev("bep-macro")(p) == pytest.approx(expected, abs=1e-15)


def test_binary_break_even_without_positives_is_nan():
    p = _binary([0.3, -0.2, 0.1], [0, 0, 0])
    assert math.isnan(_ev("bep-micro")(p)) and math.isnan(_ev("bep-macro")(p))
    assert math.isnan(_ev("average-precision")(p))    # as the AP of the positive class


def test_multi_class_break_even_keeps_every_class_algorithms_vector():
    """algorithms.md 7.9 (classes A and B; C holds the documents of neither): N_A = 3, TP_A = 2 and
    N_B = 1, TP_B = 1, ranking each class by its own column."""
    A = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    B = [0.2, 0.1, 0.9, 0.3, 0.4, 0.5]
    proba = np.column_stack([A, B, np.zeros(6)])
    p = Predictions(y_true=np.array([0, 0, 1, 2, 0, 2]), y_pred=np.zeros(6, np.int64), proba=proba, scores=None,
                    classes=("A", "B", "C"))
    n_rel, tp = ranking.break_even(p)
    assert n_rel[:2].tolist() == [3, 1] and tp[:2].tolist() == [2, 1]
    # (A, B) pooled: 3/4 and (2/3 + 1)/2, as the vector says; C (N = 2, all scores tied, row order: d0, d1) TP = 0
    assert tp[:2].sum() / n_rel[:2].sum() == pytest.approx(0.75)
    assert np.mean(tp[:2] / n_rel[:2]) == pytest.approx(0.833333, abs=1e-6)
    assert _ev("bep-micro")(p) == pytest.approx((2 + 1 + 0) / (3 + 1 + 2), abs=1e-15)
    assert _ev("bep-macro")(p) == pytest.approx((2 / 3 + 1 + 0) / 3, abs=1e-15)


# --------------------------------------------------------------------------- nothing evaluated

@pytest.mark.parametrize("n", [0, 3])
def test_areas_of_a_test_part_without_a_known_class_are_nan(n):
    """A test file whose classes are all '?' (or no test instance): every area is NaN, as
    docs/plugins.md says of an area without positives; pr-auc and per-class raised IndexError (in
    numpy's add.reduceat) and failed the repetition."""
    proba = np.tile([0.2, 0.3, 0.5], (n, 1))
    p = Predictions(y_true=np.full(n, -1, np.int64), y_pred=np.full(n, 2, np.int64), proba=proba,
                    scores=np.log(proba), classes=("a", "b", "c"))
    for name in ("pr-auc", "pr-auc-macro", "roc-auc", "roc-auc-macro"):
        assert math.isnan(_ev(name)(p)), name
    detail = _ev("per-class")(p)
    assert all(math.isnan(v) for v in detail["pr_auc"] + detail["roc_auc"])
    assert detail["support"] == [0.0, 0.0, 0.0]


# --------------------------------------------------------------------------- WEKA 3.6 on given distributions

WEKA = json.loads((Path(__file__).parent / "golden" / "weka_metrics_review.json").read_text())


@pytest.mark.parametrize("case", WEKA["cases"], ids=lambda c: c["name"])
def test_evaluators_equal_weka_on_the_same_distributions(case):
    """Ties, an absent class, probabilities 0 and 1, one instance, one predicted class, one true class:
    the evaluators (which count every instance once) and, with instance weights, the core measures they
    use, against weka.classifiers.Evaluation fed the same distributions."""
    from toolkit.evaluation import measures

    y, proba, w = np.array(case["y"]), np.array(case["proba"]), np.array(case["weights"])
    weka, K = case["weka"], case["K"]
    with np.errstate(divide="ignore"):
        scores = np.log(proba)                      # NB-like joint scores; -inf where p = 0
    y_pred = np.argmax(proba, axis=1)               # WEKA predicts the first maximum too
    close = dict(rtol=1e-9, atol=1e-12)
    APPROX = dict(rel=1e-9, abs=1e-12)
    if np.all(w == 1):
        for scored in (None, scores):
            p = Predictions(y_true=y, y_pred=y_pred, proba=proba, scores=scored,
                            classes=tuple(f"c{k}" for k in range(K)))
            assert _ev("error")(p) == pytest.approx(weka["error"], **APPROX)
            assert _ev("kappa")(p) == pytest.approx(weka["kappa"], **APPROX)
            assert _ev("mean-absolute-error")(p) == pytest.approx(weka["mae"], **APPROX)
            assert _ev("root-mean-squared-error")(p) == pytest.approx(weka["rmse"], **APPROX)
            for ours, theirs in (("precision", "precision"), ("recall", "recall"), ("f1", "f1")):
                assert _ev(f"{ours}-weighted")(p) == pytest.approx(weka[f"weighted_{theirs}"], **APPROX)
            detail = _ev("per-class")(p)
            for key in ("tp_rate", "fp_rate", "precision", "recall", "f1", "roc_auc"):
                np.testing.assert_allclose(detail[key], weka[key], equal_nan=True, err_msg=key, **close)
            np.testing.assert_array_equal(_ev("confusion-matrix")(p)["matrix"], weka["cm"])
            if len(set(y.tolist())) > 1:
                assert _ev("roc-auc")(p) == pytest.approx(weka["weighted_roc_auc"], **APPROX)
            else:   # documented difference: a single test class has no ROC area (NaN); WEKA 3.6 prints 0
                assert math.isnan(_ev("roc-auc")(p)) and weka["weighted_roc_auc"] == 0.0
    cm = measures.confusion_matrix(y, y_pred, K, w)
    np.testing.assert_allclose(cm, weka["cm"], **close)
    assert measures.kappa(cm) == pytest.approx(weka["kappa"], **APPROX)
    n, abs_sum, sq_sum = measures.absolute_squared_errors(y, proba, w)
    assert abs_sum / n == pytest.approx(weka["mae"], **APPROX)
    assert math.sqrt(sq_sum / n) == pytest.approx(weka["rmse"], **APPROX)
    np.testing.assert_allclose(measures.roc_auc(y, proba, w), weka["roc_auc"], equal_nan=True, **close)
    assert measures.averaged(cm, "f1", "weighted") == pytest.approx(weka["weighted_f1"], **APPROX)


def test_stored_predictions_give_the_ranking_metrics_back():
    """With --save-proba a probabilistic model's records held the probabilities only, but the two-class
    ROC area and AP rank by the log-odds of the decision scores: on ReutersGrain 228 of 604 posteriors
    round to 0 or 1, and scikit-learn on the stored probabilities gave 0.9195 for a stored 0.9381. The
    scores are stored too; from them scikit-learn gives the stored values back."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    import toolkit

    results = toolkit.evaluate("ReutersGrain-train", ["nb-weka"], test="ReutersGrain-test",
                               metrics=["roc-auc", "average-precision"], store_proba=True)
    record = results.records[0]
    stored = record["predictions"]
    y = np.asarray(stored["y_true"])
    proba, scores = np.asarray(stored["proba"]), np.asarray(stored["scores"], dtype=np.float64)
    assert np.sum((proba[:, 1] == 0) | (proba[:, 1] == 1)) > 100            # the case: saturated posteriors
    margin = scores[:, 1] - scores[:, 0]
    assert record["metrics"]["roc-auc"] == pytest.approx(roc_auc_score(y, margin), rel=1e-12)
    assert record["metrics"]["average-precision"] == pytest.approx(average_precision_score(y, margin), rel=1e-12)
