"""KL, dKL and MI feature scores (algorithms.md 3.1-3.2): the 7.4 test vector (revision 2), explicit-loop
references of Schneider's definitions, and scikit-learn's mutual information as an independent MI."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import toolkit
from toolkit.errors import ParameterError
from toolkit.plugins.text.selection import (
    DKLSelector, KLSelector, MISelector, TextStatistics, dkl_scores, exact_kl, k_tilde, kl_scores,
    mutual_information,
)

X74 = np.array([[2, 1, 0, 0], [1, 0, 1, 0], [3, 0, 0, 1], [0, 2, 0, 1], [0, 1, 1, 3]], dtype=float)
Y74 = np.array([0, 0, 0, 1, 1])


def test_algorithms_7_4_vector():
    stats = TextStatistics(sp.csr_matrix(X74), Y74)
    np.testing.assert_allclose(stats.p_word_given_class[0], (7 / 13, 2 / 13, 2 / 13, 2 / 13), atol=1e-12)
    np.testing.assert_allclose(stats.p_word_given_class[1], (1 / 12, 4 / 12, 2 / 12, 5 / 12), atol=1e-12)
    np.testing.assert_allclose(stats.kl_tilde(), (0, 0.101410, 0.147620, 0.101410), atol=1e-6)
    np.testing.assert_allclose(stats.kl_tilde("laplace"), (0, 0.101410, 0.147620, 0.101410), atol=1e-6)
    np.testing.assert_allclose(stats.kl_tilde("ml"), (0, 0.073241, 0.107898, 0.073241), atol=1e-6)
    np.testing.assert_allclose(k_tilde(stats), (0.180291, 0.120194, 0.107799, 0.150243), atol=1e-6)
    # revision 2: ML estimates in both terms of KL
    np.testing.assert_allclose(kl_scores(stats), (0.180291, 0.046953, -0.000099, 0.077002), atol=1e-6)
    np.testing.assert_allclose(dkl_scores(stats), (0.182063, 0.013853, -0.001953, 0.030880), atol=1e-6)
    np.testing.assert_allclose(exact_kl(stats), (0.070769, 0.123533, 0.125158, 0.053156), atol=1e-6)
    np.testing.assert_allclose(mutual_information(stats), (0.673012, 0.291103, 0.013844, 0.291103), atol=1e-6)
    np.testing.assert_allclose(mutual_information(stats, "token"), (0.312270, 0.049595, 0.000231, 0.094935),
                               atol=1e-6)
    # revision 1's (withdrawn) KL mixed the estimators: K~ with ML p(w), KL~ with the Laplace p(w|c)
    np.testing.assert_allclose(k_tilde(stats) - stats.kl_tilde("laplace"), (0.180291, 0.018784, -0.039821, 0.048832),
                               atol=1e-6)
    # MI of a word that occurs exactly in class 0 is the class entropy
    assert mutual_information(stats)[0] == pytest.approx(-(0.6 * math.log(0.6) + 0.4 * math.log(0.4)), abs=1e-12)


def test_rankings_and_selection():
    assert list(KLSelector(k=4).fit(X74, Y74).ranking()) == [0, 3, 1, 2]
    assert list(DKLSelector(k=4).fit(X74, Y74).ranking()) == [0, 3, 1, 2]
    assert list(MISelector(k=4, event_model="token").fit(X74, Y74).ranking()) == [0, 3, 1, 2]
    mi = MISelector(k=2).fit(X74, Y74)
    assert list(mi.ranking()) == [0, 1, 3, 2]          # w1 and w3 tie; the lower index first
    assert list(mi.support_) == [0, 1]
    assert list(KLSelector(k=2).fit(X74, Y74).support_) == [0, 3]
    assert list(KLSelector(k=0.5).fit(X74, Y74).support_) == [0, 3]     # a share of the vocabulary
    assert list(KLSelector(k=None).fit(X74, Y74).support_) == [0, 1, 2, 3]
    np.testing.assert_array_equal(KLSelector(k=2).fit(X74, Y74).transform(X74), X74[:, [0, 3]])


def _brute_force(X, y):
    """Schneider's definitions (algorithms.md 3.1) with explicit loops."""
    n, V = X.shape
    K = int(y.max()) + 1
    size = [sum(1 for d in range(n) if y[d] == j) for j in range(K)]
    p_c = [size[j] / n for j in range(K)]
    class_tokens = [sum(X[d, w] for d in range(n) if y[d] == j for w in range(V)) for j in range(K)]
    total = sum(class_tokens)
    kl, dkl, exact, exact_ml, mi = [], [], [], [], []
    for w in range(V):
        p_wc = [(1 + sum(X[d, w] for d in range(n) if y[d] == j)) / (V + class_tokens[j]) for j in range(K)]
        p_ml = [sum(X[d, w] for d in range(n) if y[d] == j) / class_tokens[j] for j in range(K)]
        N_jt = [sum(1 for d in range(n) if y[d] == j and X[d, w] > 0) for j in range(K)]
        N_t = sum(N_jt)
        kl_tilde = -sum(p_c[j] * p_wc[j] * math.log(N_jt[j] / size[j]) for j in range(K) if N_jt[j] > 0)
        kl_tilde_ml = -sum(p_c[j] * p_ml[j] * math.log(N_jt[j] / size[j]) for j in range(K) if N_jt[j] > 0)
        p_w = sum(X[d, w] for d in range(n)) / total
        p_mix = sum(p_c[j] * p_wc[j] for j in range(K))
        kl.append(-p_w * math.log(N_t / n) - kl_tilde_ml)
        dkl.append(-p_mix * math.log(N_t / n) - kl_tilde)
        e = e_ml = 0.0
        for d in range(n):
            if X[d, w] > 0:
                p_wd = X[d, w] / X[d].sum()
                e += p_wd * math.log(p_wd / p_wc[y[d]])
                e_ml += p_wd * math.log(p_wd / p_ml[y[d]])
        exact.append(e / n)
        exact_ml.append(-p_w * math.log(N_t / n) - e_ml / n)
        m = 0.0
        for j in range(K):
            for present in (True, False):
                joint = sum(1 for d in range(n) if y[d] == j and (X[d, w] > 0) == present) / n
                pe = sum(1 for d in range(n) if (X[d, w] > 0) == present) / n
                if joint > 0:
                    m += joint * math.log(joint / (p_c[j] * pe))
        mi.append(m)
    return np.array(kl), np.array(dkl), np.array(exact), np.array(mi), np.array(exact_ml)


def test_against_explicit_loops():
    rng = np.random.default_rng(9)
    X = rng.poisson(1.0, size=(30, 15)).astype(float)
    X[rng.random(X.shape) < 0.5] = 0
    X[:, 0] = 0
    X[0, 0] = 2                                       # a word in one document only
    y = np.arange(30) % 3
    stats = TextStatistics(sp.csr_matrix(X), y)
    kl, dkl, exact, mi, exact_variant = _brute_force(X, y)
    np.testing.assert_allclose(kl_scores(stats), kl, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(KLSelector(k=None, variant="exact").fit(X, y).scores_, exact_variant, rtol=1e-12,
                               atol=1e-14)
    np.testing.assert_allclose(dkl_scores(stats), dkl, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(exact_kl(stats), exact, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(mutual_information(stats), mi, rtol=1e-12, atol=1e-14)


def test_document_mi_matches_scikit_learn():
    fs = pytest.importorskip("sklearn.feature_selection")
    rng = np.random.default_rng(2)
    X = rng.poisson(0.7, size=(50, 10)).astype(float)
    y = rng.integers(0, 4, size=50)
    ours = mutual_information(TextStatistics(X, y))
    theirs = fs.mutual_info_classif((X > 0).astype(int), y, discrete_features=True)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_token_mi_against_explicit_loops():
    X, y = X74, Y74
    n, V = X.shape
    total = X.sum()
    want = []
    for w in range(V):
        m = 0.0
        for j in range(2):
            class_tokens = X[y == j].sum()
            in_w = X[y == j, w].sum()
            for joint, pe in ((in_w / total, X[:, w].sum() / total),
                              ((class_tokens - in_w) / total, 1 - X[:, w].sum() / total)):
                if joint > 0:
                    m += joint * math.log(joint / (class_tokens / total * pe))
        want.append(m)
    got = mutual_information(TextStatistics(X, y), event_model="token")
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_word_absent_from_training_scores_minus_infinity():
    X = np.column_stack([X74, np.zeros(5)])
    for sel in (KLSelector(k=None), DKLSelector(k=None), MISelector(k=None)):
        assert sel.fit(X, Y74).scores_[4] == -np.inf
        assert sel.ranking()[-1] == 4


def test_exact_variant_ranks_by_the_exact_divergence():
    sel = KLSelector(k=None, variant="exact").fit(X74, Y74)
    stats = TextStatistics(X74, Y74)
    np.testing.assert_allclose(sel.scores_, k_tilde(stats) - exact_kl(stats, "ml"), rtol=1e-12)
    # w0 by hand: K~ = 0.180291; p(w0|c0) = 6/9, documents 1-3 have p(w0|d) = 2/3, 1/2, 3/4
    exact_w0 = (2 / 3 * math.log(1.0) + 0.5 * math.log(0.75) + 0.75 * math.log(1.125)) / 5
    assert sel.scores_[0] == pytest.approx(0.180291 - exact_w0, abs=1e-6)


def test_a_class_independent_word_scores_zero_under_kl():
    # Schneider's check (algorithms.md 3.1): if w is independent of the class, K~_t = KL~_t. Column 0 takes the
    # same share of every class's tokens (1/6) and occurs in the same share of its documents (1/2); classes
    # differ in size and length. Revision 1's KL (Laplace p(w|c) in KL~) did not score it 0.
    X = np.array([[2, 3, 3, 0], [0, 5, 1, 0], [2, 0, 1, 3], [0, 2, 0, 2],        # class 0: 24 tokens, 4 docs
                  [3, 9, 0, 3], [0, 0, 1, 2]], dtype=float)                         # class 1: 18 tokens, 2 docs
    y = np.array([0, 0, 0, 0, 1, 1])
    stats = TextStatistics(sp.csr_matrix(X), y)
    np.testing.assert_allclose(stats.N[:, 0] / stats.N.sum(axis=1), [1 / 6, 1 / 6], rtol=1e-15)
    np.testing.assert_allclose(stats.Ndoc[:, 0] / stats.class_docs, [1 / 2, 1 / 2], rtol=1e-15)
    assert kl_scores(stats)[0] == pytest.approx(0.0, abs=1e-15)
    assert abs((k_tilde(stats) - stats.kl_tilde("laplace"))[0]) > 1e-3   # revision 1 left a residual


@pytest.mark.parametrize("sel", [KLSelector(k=0), KLSelector(k=-3), KLSelector(k=1.5), KLSelector(k="a"),
                                 KLSelector(variant="other"), MISelector(event_model="bits")])
def test_bad_parameters(sel):
    with pytest.raises(ParameterError):
        sel.fit(X74, Y74)


def test_unknown_estimator_is_refused():
    with pytest.raises(ParameterError, match="estimator"):
        TextStatistics(X74, Y74).kl_tilde("smoothed")


def test_selectors_run_inside_the_harness():
    res = toolkit.evaluate("ReutersGrain-train", ["nb-multinomial:epsilon=1,prior=mle"], feature_selector="dkl:k=50",
                           test="ReutersGrain-test", metrics=["accuracy"])
    rec = res.ok()[0]
    assert rec["extra"]["n_selected_features"] == 50
    assert rec["metrics"]["accuracy"] > 0.8


def test_laplace_vocabulary_is_the_training_vocabulary():
    """|V| of eq. 2 counts the words of the training part (algorithms.md 1.2, 3.1): columns that no
    training document holds leave every score of the 7.4 vector unchanged."""
    X = np.column_stack([X74[:, :2], np.zeros(5), X74[:, 2:], np.zeros(5)])
    seen = [0, 1, 3, 4]
    stats = TextStatistics(sp.csr_matrix(X), Y74)
    assert stats.vocabulary_size == 4
    np.testing.assert_allclose(stats.p_word_given_class[0][seen], (7 / 13, 2 / 13, 2 / 13, 2 / 13), atol=1e-12)
    np.testing.assert_allclose(dkl_scores(stats)[seen], (0.182063, 0.013853, -0.001953, 0.030880), atol=1e-6)
    np.testing.assert_allclose(kl_scores(stats)[seen], (0.180291, 0.046953, -0.000099, 0.077002), atol=1e-6)
    np.testing.assert_allclose(exact_kl(stats)[seen], (0.070769, 0.123533, 0.125158, 0.053156), atol=1e-6)
    assert np.all(dkl_scores(stats)[[2, 5]] == -np.inf)


def test_scores_zero_in_exact_arithmetic_tie_at_zero_and_go_to_the_lower_index():
    """A one-class training part scores every word 0 (K~ = KL~; MI of a constant class), and dKL scores 0
    a word whose document rate is the same in every class; computed, those came out as +-1e-17, and that
    noise, not the lower index (algorithms.md 0.2, 3.1), ordered them (the first k of a one-class part
    were [0, 7, 11], not [0, 1, 2])."""
    import scipy.sparse as sp

    from toolkit.plugins.text.selection import DKLSelector, KLSelector, MISelector

    rng = np.random.default_rng(50)
    X = sp.csr_matrix(((rng.random((30, 12)) < 0.3) * rng.integers(1, 4, (30, 12))).astype(float))
    assert (X.getnnz(axis=0) > 0).all()
    for selector in (KLSelector(k=3), DKLSelector(k=3), MISelector(k=3), MISelector(k=3, event_model="token")):
        selector.fit(X, np.zeros(30, dtype=np.int64))
        assert selector.support_.tolist() == [0, 1, 2]
        assert np.all(selector.scores_ == 0.0)
    # words 2, 3, 4 and 6 occur in the same share of the documents of both classes (4 + 4 documents)
    X = np.array([[6, 8, 6, 0, 0, 0, 0, 0], [0, 0, 1, 0, 6, 0, 8, 0], [0, 4, 0, 2, 4, 0, 0, 0],
                  [5, 0, 0, 0, 0, 0, 4, 7], [0, 0, 4, 0, 0, 0, 7, 0], [4, 0, 6, 6, 0, 8, 0, 2],
                  [0, 0, 6, 0, 8, 6, 8, 0], [0, 1, 7, 0, 8, 7, 0, 3]], float)
    y = np.array([0, 1] * 4)
    rates = np.array([(X[y == k] > 0).mean(axis=0) for k in (0, 1)])
    equal = np.flatnonzero(rates[0] == rates[1])
    assert equal.tolist() == [2, 3, 4, 6]
    selector = DKLSelector(k=4).fit(sp.csr_matrix(X), y)
    assert np.all(selector.scores_[equal] == 0.0)
    order = selector.ranking().tolist()
    assert [w for w in order if w in equal] == [2, 3, 4, 6]
