"""BIM naive Bayes (algorithms.md 2.5, 3.3, 4.3): test vector 7.7 (revision 2's default feature set, and
revision 1's values with features="all"), closed-form leave-one-out against refitting with the feature set
fixed, the classifier's decision and posterior against explicit sums, the weight-threshold selector."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import bim_reference as ref
import toolkit
from toolkit.api import Predictions, Schema
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.ots.nb_bim import BIMNaiveBayes
from toolkit.plugins.ots.bim_threshold import BIMThresholdSelector
from toolkit.plugins.ots.leave_one_out import OPTCUT_GRID, loo_average_precision, loo_scores, ranked_average_precision
from toolkit.plugins.ots.bim import bim_counts, bim_weights, feature_mask, presence, thresholded
from toolkit.plugins.metrics.ranking import average_precision

# algorithms.md 7.7: d0..d2 are C1, d3..d8 are C-1
X77 = np.array([[1, 1, 0, 0, 1], [1, 0, 1, 0, 0], [1, 1, 1, 0, 0], [0, 1, 0, 1, 0], [1, 0, 0, 1, 0],
                [0, 0, 0, 1, 1], [0, 1, 0, 0, 0], [0, 0, 1, 1, 0], [1, 0, 0, 0, 1]], dtype=float)
Y77 = np.array([1, 1, 1, 0, 0, 0, 0, 0, 0])
# revision 2, features="positive" (default): t3 occurs in no C1 document and has weight 0
W77 = [1.897120, 0.916291, 1.504077, 0, 0.105361]
RESUB77 = {0: [2.918771, 3.401197, 4.317488, 0.916291, 1.897120, 0.105361, 0.916291, 1.504077, 2.002481],
           1: [1.897120, 3.401197, 3.401197, 0, 1.897120, 0, 0, 1.504077, 1.897120]}
LOO77 = {0: ([1.532477, 2.708050, 3.218876, 1.321756, 2.302585, 0.510826, 1.321756, 2.197225, 2.813411], 0.722222),
         1: ([1.609438, 2.708050, 2.708050, 1.321756, 2.302585, 0, 1.321756, 2.197225, 2.302585], 0.833333)}
# revision 1, features="all"
W77_ALL = [1.897120, 0.916291, 1.504077, -1.897120, 0.105361]
RESUB77_ALL = {0: [2.918771, 3.401197, 4.317488, -0.980829, 0, -1.791759, 0.916291, -0.393043, 2.002481],
               1: [1.897120, 3.401197, 3.401197, -1.897120, 0, -1.897120, 0, -0.393043, 1.897120]}
LOO77_ALL = {0: ([1.532477, 2.708050, 3.218876, -0.352221, 0.628609, -1.163151, 1.321756, 0.523248, 2.813411],
                 0.805556),
             1: ([1.609438, 2.708050, 2.708050, -0.352221, 0.628609, -1.673976, 1.321756, 0.523248, 2.302585],
                 0.916667)}
VECTORS77 = {"positive": (W77, RESUB77, LOO77), "all": (W77_ALL, RESUB77_ALL, LOO77_ALL)}


def _masks(y):
    return y == 1, y == 0


@pytest.mark.parametrize("features", ["positive", "all"])
@pytest.mark.parametrize("sparse", [False, True])
def test_vector_7_7_weights_and_resubstitution(sparse, features):
    weights, resubstitution, _ = VECTORS77[features]
    X = sp.csr_matrix(X77) if sparse else X77
    B = presence(X)
    counts = bim_counts(B, *_masks(Y77))
    w = bim_weights(counts, 1.0, feature_mask(counts, features))
    np.testing.assert_allclose(w, weights, atol=5e-7)
    options = {} if features == "positive" else {"features": features}  # the default is "positive"
    for tau, expected in resubstitution.items():
        np.testing.assert_allclose(B @ thresholded(w, tau), expected, atol=5e-7)
        clf = BIMNaiveBayes(threshold=tau, **options).fit(X, Y77, schema=Schema.numeric(5, ["neg", "pos"]))
        np.testing.assert_allclose(clf.score_documents(X), expected, atol=5e-7)
        np.testing.assert_allclose(clf.weights_, weights, atol=5e-7)


@pytest.mark.parametrize("features", ["positive", "all"])
@pytest.mark.parametrize("tau", [0, 1])
def test_vector_7_7_leave_one_out(tau, features):
    expected, ap = VECTORS77[features][2][tau]
    B = presence(sp.csr_matrix(X77))
    options = {} if features == "positive" else {"features": features}
    scores = loo_scores(B, *_masks(Y77), 1.0, tau, **options)
    np.testing.assert_allclose(scores, expected, atol=5e-7)
    assert ranked_average_precision(scores, Y77 == 1) == pytest.approx(ap, abs=5e-7)
    assert loo_average_precision(B, *_masks(Y77), 1.0, np.array([float(tau)]), **options)[0] == \
        pytest.approx(ap, abs=5e-7)
    # the brute-force reference refits without each document, the feature set fixed from all of them
    np.testing.assert_allclose(ref.loo_scores(X77, Y77, 1.0, tau, features), expected, atol=5e-7)


def test_a_feature_whose_only_positive_is_left_out_keeps_its_leave_one_out_weight():
    # t4 occurs in one positive (d0) and two negatives (d5, d8): without d0 its weight is w(0, n- = 2)
    B = presence(X77)
    scores = loo_scores(B, *_masks(Y77), 1.0, 0.0)
    w_t0 = math.log(3 / 1) - math.log(3 / 5)          # n+ = 3 -> 2 of N+ = 2, n- = 2 of 6
    w_t1 = math.log(2 / 2) - math.log(3 / 5)          # n+ = 2 -> 1 of 2
    w_t4 = math.log(1 / 3) - math.log(3 / 5)          # n+ = 1 -> 0 of 2: stays in the set
    assert scores[0] == pytest.approx(w_t0 + w_t1 + w_t4, abs=1e-12)


def test_vector_7_7_average_precision_of_a_ranked_list():
    # labels (1,0,1,0,0,1) in rank order -> (1 + 2/3 + 3/6)/3
    scores = np.array([[0.0, 6], [0, 5], [0, 4], [0, 3], [0, 2], [0, 1]])
    pred = Predictions(y_true=np.array([1, 0, 1, 0, 0, 1]), y_pred=np.ones(6, dtype=np.int64), proba=None,
                       scores=scores, classes=("neg", "pos"))
    assert average_precision(pred) == pytest.approx(0.722222, abs=5e-7)


def _random_binary(seed, n=24, F=7, density=0.35, n_pos=7):
    rng = np.random.default_rng(seed)
    X = (rng.random((n, F)) < density).astype(float)
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, n_pos, replace=False)] = 1
    X[y == 1, 0] = (rng.random(n_pos) < 0.8)  # a feature that favours C1
    X[3] = X[5]  # identical documents: exact ties
    return X, y


@pytest.mark.parametrize("features", ["positive", "all"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("tau", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_closed_form_leave_one_out_equals_refitting(seed, tau, alpha, features):
    X, y = _random_binary(seed)
    # a feature in exactly one positive (left out, it keeps its weight w(0, n-)) and one in none
    X[y == 1, 5] = 0
    X[np.flatnonzero(y == 1)[0], 5] = 1
    X[y == 1, 6] = 0
    assert X[y == 0, 5].sum() > 0 and X[y == 0, 6].sum() > 0
    fast = loo_scores(presence(sp.csr_matrix(X)), *_masks(y), alpha, tau, features=features)
    slow = ref.loo_scores(X, y, alpha, tau, features)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-9)
    assert ranked_average_precision(fast, y == 1) == pytest.approx(ref.average_precision(slow, list(y == 1)),
                                                                   abs=1e-12)


@pytest.mark.parametrize("features", ["positive", "all"])
def test_counts_are_binarised_and_weights_match_the_textbook_formula(features):
    X, y = _random_binary(4)
    X[y == 1, 6] = 0  # a feature of the negatives only
    counts = X * np.random.default_rng(1).integers(1, 5, X.shape)  # word counts: presence = count > 0
    c = bim_counts(presence(sp.csr_matrix(counts)), *_masks(y))
    w = bim_weights(c, 1.0, feature_mask(c, features))
    np.testing.assert_allclose(w, ref.weights(X, y, 1.0, features), atol=1e-12)
    assert (w[6] == 0) == (features == "positive")


def test_decision_and_posterior_are_the_bernoulli_model_over_the_selected_features():
    X, y = _random_binary(5, n=30, F=8)
    X[y == 1, 7] = 0  # outside the feature set: never selected, not in the posterior
    tau = 0.5
    clf = BIMNaiveBayes(threshold=tau).fit(sp.csr_matrix(X), y, schema=Schema.numeric(8, ["neg", "pos"]))
    N_pos, N_neg = int((y == 1).sum()), int((y == 0).sum())
    w = ref.weights(X, y)
    proba = clf.predict_proba(X)
    for i in range(len(X)):
        log_joint = {1: math.log(N_pos / len(y)), 0: math.log(N_neg / len(y))}
        for t in range(8):
            if abs(w[t]) <= tau:
                continue
            p = ((X[y == 1, t] > 0).sum() + 1) / (N_pos + 2)
            q = ((X[y == 0, t] > 0).sum() + 1) / (N_neg + 2)
            log_joint[1] += math.log(p if X[i, t] else 1 - p)
            log_joint[0] += math.log(q if X[i, t] else 1 - q)
        margin = log_joint[1] - log_joint[0]
        scores = clf.decision_function(X[i:i + 1])[0]
        assert scores[1] == pytest.approx(ref.score(w, X[i], tau), abs=1e-9)
        assert scores[1] - scores[0] == pytest.approx(margin, abs=1e-9)
        assert proba[i, 1] == pytest.approx(1 / (1 + math.exp(-margin)), abs=1e-12)
        assert clf.predict(X[i:i + 1])[0] == int(margin > 0)


@pytest.mark.parametrize("features", ["positive", "all"])
def test_optcut_threshold_maximises_brute_force_leave_one_out_ap(features):
    X, y = _random_binary(6, n=20, F=6, n_pos=6)
    X[y == 1, 5] = 0
    slow = [ref.average_precision(ref.loo_scores(X, y, 1.0, tau, features), list(y == 1)) for tau in OPTCUT_GRID]
    fast = loo_average_precision(presence(X), *_masks(y), 1.0, OPTCUT_GRID, features=features)
    np.testing.assert_allclose(fast, slow, atol=1e-12)
    best = float(OPTCUT_GRID[int(np.argmax(slow))])  # the first of the best, in grid order
    assert len(set(np.round(slow, 9))) > 2  # the threshold matters on this data
    assert BIMNaiveBayes(threshold="loo", features=features).fit(X, y).threshold_ == best
    assert BIMThresholdSelector(threshold="loo", features=features).fit(X, y).threshold_ == best


def test_threshold_selector_keeps_strictly_larger_weights():
    sel = BIMThresholdSelector(threshold=1.0).fit(sp.csr_matrix(X77), Y77)
    assert sel.support_.tolist() == [0, 2]  # algorithms.md 7.7, revision 2: t3 is in no positive
    np.testing.assert_allclose(sel.scores_, np.abs(W77), atol=5e-7)
    every = BIMThresholdSelector(threshold=1.0, features="all").fit(sp.csr_matrix(X77), Y77)
    assert every.support_.tolist() == [0, 2, 3]  # revision 1: tau = 1 keeps t0, t2, t3
    np.testing.assert_allclose(every.scores_, np.abs(W77_ALL), atol=5e-7)
    assert BIMThresholdSelector(threshold=1.8971, features="all").fit(X77, Y77).support_.tolist() == [0, 3]
    assert BIMThresholdSelector(threshold=1.8971).fit(X77, Y77).support_.tolist() == [0]
    w0 = float(sel.scores_[0])
    assert 0 not in BIMThresholdSelector(threshold=w0).fit(X77, Y77).support_  # strict inequality


def test_selector_then_classifier_equals_classifier_with_the_threshold():
    X, y = _random_binary(7, n=40, F=10)
    ds = Dataset("t", [Attribute(f"w{i}", "numeric") for i in range(10)] + [Attribute("c", "nominal", ("n", "p"))],
                 sp.csr_matrix(X), y, 10, np.ones(40))
    a = toolkit.Pipeline("nb-bim:threshold=0", feature_selector="bim-threshold:threshold=1", tune=False).fit(ds)
    b = toolkit.Pipeline("nb-bim:threshold=1", tune=False).fit(ds)
    np.testing.assert_allclose(a.predict(ds).scores, b.predict(ds).scores, atol=1e-12)


def test_ap_ranks_by_the_margin_when_probabilities_saturate():
    # posteriors all round to 1.0, the log-odds still order the documents
    scores = np.array([[0.0, 50.0], [0.0, 60.0], [0.0, 70.0]])
    pred = Predictions(y_true=np.array([0, 0, 1]), y_pred=np.ones(3, dtype=np.int64),
                       proba=np.array([[0.0, 1.0]] * 3), scores=scores, classes=("n", "p"))
    assert average_precision(pred) == 1.0


def test_bad_parameters_and_more_than_two_classes_are_refused():
    with pytest.raises(ParameterError, match="alpha"):
        BIMNaiveBayes(alpha=0).fit(X77, Y77)
    with pytest.raises(ParameterError, match="threshold"):
        BIMNaiveBayes(threshold="often").fit(X77, Y77)
    with pytest.raises(ParameterError, match="threshold"):
        BIMThresholdSelector(threshold=-1).fit(X77, Y77)
    with pytest.raises(ParameterError, match="features must be 'positive'"):
        BIMNaiveBayes(features="negative").fit(X77, Y77)
    with pytest.raises(ParameterError, match="features"):
        BIMThresholdSelector(features=1).fit(X77, Y77)
    with pytest.raises(CapabilityError, match="--positive"):
        BIMNaiveBayes().fit(X77, np.arange(9) % 3)
    ds = toolkit.load_arff("iris")
    fitted = toolkit.Pipeline("nb-bim", tune=False)
    with pytest.raises(CapabilityError, match="--positive CLASS"):
        fitted.fit(ds)


@pytest.mark.parametrize("features", ["positive", "all"])
def test_features_never_seen_in_training_carry_no_weight(features):
    """algorithms.md 2.5: a feature outside the training feature set is ignored at scoring time. A column
    that no training document holds (t5) must leave the 7.7 weights, scores and intercept unchanged; with
    features="all" its Laplace weight would otherwise be log((N- + 1)/(N+ + 1)) > 0."""
    weights, resubstitution, _ = VECTORS77[features]
    X = np.column_stack([X77, np.zeros(9)])
    options = {} if features == "positive" else {"features": features}
    for tau, expected in resubstitution.items():
        clf = BIMNaiveBayes(threshold=tau, **options).fit(X, Y77, schema=Schema.numeric(6, ["neg", "pos"]))
        ref = BIMNaiveBayes(threshold=tau, **options).fit(X77, Y77, schema=Schema.numeric(5, ["neg", "pos"]))
        np.testing.assert_allclose(clf.weights_, weights + [0.0], atol=5e-7)
        assert clf.intercept_ == pytest.approx(ref.intercept_, abs=1e-12)
        only_t5 = np.zeros((1, 6))
        only_t5[0, 5] = 1.0
        assert clf.score_documents(only_t5)[0] == 0.0
        np.testing.assert_allclose(clf.score_documents(X), expected, atol=5e-7)
    support = BIMThresholdSelector(threshold=0.2, **options).fit(X, Y77).support_.tolist()
    assert 5 not in support


def test_a_feature_with_p_equal_to_q_has_weight_0_and_a_threshold_of_0_drops_it():
    """algorithms.md 2.5 / 3.3: keep t iff |w_t| > tau, strictly. p = 2/13 and q = 30/195 exactly (one of 11
    positives, 29 of 193 negatives, alpha 1) give w = 0, but the difference of the logits' logarithms left
    -4.4e-16, which tau = 0 kept (285 such features over five text datasets). The leave-one-out weights follow
    the same rule: a positive left out of 4 of 11 gives p = 4/12 = q = 65/195 for 64 of 193 negatives. The
    equalities are checked with exact fractions."""
    from fractions import Fraction

    from toolkit.plugins.ots.bim import bim_counts, presence
    from toolkit.plugins.ots.bim_threshold import BIMThresholdSelector
    from toolkit.plugins.ots.leave_one_out import loo_weights
    from toolkit.plugins.ots.nb_bim import BIMNaiveBayes

    n_pos, n_neg = 11, 193
    y = np.r_[np.ones(n_pos), np.zeros(n_neg)].astype(int)
    X = np.zeros((n_pos + n_neg, 4))
    X[0, 0] = 1                     # neutral: in 1 positive and 29 negatives
    X[n_pos:n_pos + 29, 0] = 1
    X[:6, 1] = 1                    # a positive feature
    X[0, 2] = 1                     # in 1 positive and 28 negatives: not neutral
    X[n_pos:n_pos + 28, 2] = 1
    X[:4, 3] = 1                    # neutral once a positive holding it is left out
    X[n_pos:n_pos + 64, 3] = 1
    rate = lambda n, N: Fraction(n + 1, N + 2)  # noqa: E731  (alpha = 1)
    assert rate(1, n_pos) == rate(29, n_neg) and rate(1, n_pos) != rate(28, n_neg)
    clf = BIMNaiveBayes(threshold=0.0).fit(X, y)
    assert clf.weights_[0] == 0.0 and np.all(clf.weights_[1:] != 0.0) and clf.n_selected_features_ == 3
    sel = BIMThresholdSelector(threshold=0.0).fit(X, y)
    assert sel.support_.tolist() == [1, 2, 3]
    c = bim_counts(presence(X), y == 1, y == 0)
    w_pos, w_neg = loo_weights(c, 1.0)
    for t in range(4):
        n_p, n_n = int(c.n_pos[t]), int(c.n_neg[t])
        assert (w_pos[t] == 0.0) == (rate(n_p - 1, n_pos - 1) == rate(n_n, n_neg))
        assert (w_neg[t] == 0.0) == (rate(n_p, n_pos) == rate(n_n - 1, n_neg - 1))
    assert w_pos[3] == 0.0 and rate(3, 10) == rate(64, 193)


@pytest.mark.parametrize("sparse", [False, True])
def test_nb_bim_called_directly_refuses_missing_values(sparse):
    """nb-bim has no missing-value capability (the pipeline refuses NaN for it), yet its own fit and
    predict read NaN as an absent feature without a word, where nb-multinomial and dcm refuse."""
    import scipy.sparse as sp

    import toolkit as tk
    from toolkit.errors import CapabilityError

    X = np.array([[1, 0, 2], [0, 1, 0], [1, 1, 0], [0, 0, 1]], float)
    y = np.array([1, 0, 1, 0])
    bad = X.copy()
    bad[0, 0] = np.nan
    wrap = sp.csr_matrix if sparse else np.asarray
    with pytest.raises(CapabilityError, match="1 missing"):
        tk.get_classifier("nb-bim", threshold=0.0).fit(wrap(bad), y)
    fitted = tk.get_classifier("nb-bim", threshold=0.0).fit(wrap(X), y)
    with pytest.raises(CapabilityError, match="missing"):
        fitted.predict(wrap(bad))
    with pytest.raises(CapabilityError, match="missing"):
        fitted.score_documents(wrap(bad))
    huge = X.copy()
    huge[0, 0], huge[1, 1] = np.inf, -np.inf      # inf - inf sums to NaN: no NaN entry, accepted
    tk.get_classifier("nb-bim", threshold=0.0).fit(wrap(huge), y)


def test_a_training_set_of_positives_only_without_a_schema_is_positive():
    """y = [1, 1, 1] without a schema: the lone label took class code 0 and read as negatives, so the
    weights were 0 (features='positive') or of the wrong sign ('all'). algorithms.md 2.5: with alpha > 0
    the missing class has q = 1/2, so w_t = logit((n_t + 1) / (N + 2))."""
    import toolkit as tk
    from toolkit.plugins.ots.bim_threshold import BIMThresholdSelector

    X = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1]], float)
    y = np.array([1, 1, 1])
    n = X.sum(axis=0)
    p = (n + 1) / (3 + 2)
    expected = np.log(p / (1 - p))
    for features in ("positive", "all"):
        selector = BIMThresholdSelector(threshold=0.0, features=features).fit(X, y)
        np.testing.assert_allclose(selector.weights_, expected, rtol=1e-12)
    model = tk.get_classifier("nb-bim", threshold=0.0).fit(X, y)
    np.testing.assert_allclose(np.asarray(model.coef_).ravel(), expected, rtol=1e-12)
    # the label 0 alone stays the negative class
    negatives = BIMThresholdSelector(threshold=0.0, features="all").fit(X, np.zeros(3, dtype=np.int64))
    np.testing.assert_allclose(negatives.weights_, -expected, rtol=1e-12)
