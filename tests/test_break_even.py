"""Break-even point (algorithms.md 5.2.4): the log posterior odds it ranks by against a brute-force
log-sum-exp over the other classes, its independence of the order of the test rows when text
posteriors round to 1.0, and a small example computed by hand with a tie across the cut-off."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

import toolkit
from toolkit.api import Predictions
from toolkit.plugins.metrics import ranking
from toolkit.plugins.text.multinomial import MultinomialNB


def _brute_log_odds(scores: np.ndarray) -> np.ndarray:
    """s_k - logsumexp_{j != k} s_j, a class and a row at a time."""
    n, K = scores.shape
    out = np.empty((n, K))
    for i in range(n):
        for k in range(K):
            out[i, k] = scores[i, k] - logsumexp(np.delete(scores[i], k))
    return out


def _posterior(scores: np.ndarray) -> np.ndarray:
    """The NB models' posterior (api.ProbabilisticClassifier), infinite rows included."""
    return np.exp(MultinomialNB()._log_normalise(scores))


def _predictions(scores: np.ndarray, y: np.ndarray) -> Predictions:
    scores = np.asarray(scores, dtype=np.float64)
    return Predictions(y_true=np.asarray(y), y_pred=np.argmax(scores, axis=1), proba=_posterior(scores),
                       scores=scores, classes=tuple(f"c{k}" for k in range(scores.shape[1])))


@pytest.mark.parametrize("K", [2, 3, 5])
def test_log_odds_equal_a_brute_force_log_sum_exp(K):
    rng = np.random.default_rng(K)
    rows = [rng.normal(0.0, 3.0, size=(40, K)),                       # ordinary
            -1e5 + rng.normal(0.0, 300.0, size=(40, K)),              # log-likelihoods of long documents
            -1e5 * rng.random((10, K)),                              # classes far apart: posteriors 0 and 1
            np.tile(rng.normal(size=(1, K)), (3, 1)),                 # identical rows
            np.full((2, K), -7.5)]                                     # every class tied
    minus_inf = rng.normal(0.0, 3.0, size=(30, K))
    minus_inf[rng.random((30, K)) < 0.4] = -np.inf
    minus_inf[np.arange(30), rng.integers(0, K, 30)] = rng.normal(size=30)  # a finite best in every row
    minus_inf[0] = -np.inf
    minus_inf[0, 1] = -3.0                                            # one finite class: +inf, the others -inf
    rows.append(minus_inf)
    scores = np.vstack(rows)
    got = ranking.log_odds(scores)
    want = _brute_log_odds(scores)
    assert np.array_equal(np.isposinf(got), np.isposinf(want))
    assert np.array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    assert np.isposinf(got[-30, 1]) and np.all(np.isneginf(np.delete(got[-30], 1)))
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-8)
    # the values themselves, not only their order: logit of the posterior where it does not saturate
    p = _posterior(scores)
    fine = (p > 1e-6) & (p < 1 - 1e-6)
    np.testing.assert_allclose(got[fine], np.log(p[fine]) - np.log1p(-p[fine]), rtol=1e-9, atol=1e-9)
    if K == 2:   # the margin s_k - s_other the binary rankings use (class_scores), bit for bit
        both = np.isfinite(scores).all(axis=1)
        np.testing.assert_array_equal(got[both], (scores - scores[:, ::-1])[both])
    # identical rows give identical bits, whatever their position
    assert np.array_equal(got[-35], got[-34]) and np.array_equal(got[-35], got[-33])


@pytest.mark.parametrize("K", [2, 3, 5])
def test_log_odds_of_infinite_rows_are_those_of_the_posterior(K):
    """Rows the brute force leaves undefined (NaN): all -inf is a uniform posterior, some +inf share it."""
    scores = np.full((3, K), -np.inf)
    scores[1, 0] = np.inf
    scores[2, :2] = np.inf
    if K > 2:
        scores[2, -1] = 0.0
    got = ranking.log_odds(scores)
    p = _posterior(scores)
    with np.errstate(divide="ignore"):
        want = np.log(p) - np.log1p(-p)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert np.allclose(got[0], -np.log(K - 1)) and np.isposinf(got[1, 0])


def _saturated_text(seed: int) -> Predictions:
    """Five classes of long synthetic documents; in the test part, class e's documents are drawn from the
    other classes' word distributions. Most posteriors are exactly 1.0, and for each of a..d more test
    documents have P = 1.0 than the class has relevant ones: the cut-off falls inside that tie."""
    rng = np.random.default_rng(seed)
    K, V = 5, 60
    theta = rng.dirichlet(np.full(V, 0.3), size=K)

    def corpus(source):
        return np.vstack([rng.multinomial(int(rng.integers(150, 400)), theta[c]) for c in source]).astype(float)

    y_train = rng.integers(0, K, 200)
    model = MultinomialNB(epsilon=0.01).fit(corpus(y_train), y_train)
    source = rng.integers(0, K - 1, 300)
    y_test = np.where(rng.random(300) < 0.2, K - 1, source)
    scores, proba = model.decision_and_proba(corpus(source))
    return Predictions(y_true=y_test, y_pred=np.argmax(scores, axis=1), proba=proba, scores=scores,
                       classes=("a", "b", "c", "d", "e"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_break_even_does_not_depend_on_the_order_of_the_test_rows(seed):
    p = _saturated_text(seed)
    n = len(p.y_true)
    for k in range(4):   # classes a..d: more documents at P = 1.0 than relevant ones
        assert np.sum(p.proba[:, k] == 1.0) > np.sum(p.y_true == k)
    micro, macro = toolkit.get_evaluator("bep-micro"), toolkit.get_evaluator("bep-macro")
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        perm = rng.permutation(n)
        q = Predictions(y_true=p.y_true[perm], y_pred=p.y_pred[perm], proba=p.proba[perm],
                        scores=p.scores[perm], classes=p.classes)
        assert micro(q) == micro(p)
        assert macro(q) == macro(p)
    # the reference: rank by the brute-force log-odds (no ties left), top N_k of each class
    odds = _brute_log_odds(p.scores)
    assert all(len(np.unique(odds[:, k])) == n for k in range(5))
    tp, n_rel = [], []
    for k in range(5):
        rel = p.y_true == k
        top = np.argsort(-odds[:, k], kind="stable")[: rel.sum()]
        tp.append(rel[top].sum())
        n_rel.append(rel.sum())
    tp, n_rel = np.array(tp), np.array(n_rel)
    assert micro(p) == pytest.approx(tp.sum() / n_rel.sum(), abs=1e-15)
    assert macro(p) == pytest.approx(np.mean(tp / n_rel), abs=1e-15)


def test_break_even_by_hand_with_a_tie_across_the_cut_off():
    # Joint log-likelihoods of classes (a, b, c); -inf makes the log-odds exact integers:
    #   s_a - logsumexp(s_b, s_c) = s_a - s_b when s_c = -inf, and so on.
    inf = np.inf
    scores = np.array([[0.0, -50.0, -inf],     # d0  label b   log-odds a 50, b -50, c -inf
                       [0.0, -40.0, -inf],     # d1  label a                a 40, b -40
                       [0.0, -60.0, -inf],     # d2  label a                a 60, b -60
                       [0.0, -45.0, -inf],     # d3  label b                a 45, b -45
                       [0.0, -45.0, -inf],     # d4  label a (d3's scores)  a 45, b -45
                       [-inf, 0.0, -30.0],     # d5  label c                a -inf, b 30, c -30
                       [-inf, -30.0, 0.0]])    # d6  label c                a -inf, b -30, c 30
    y = np.array([1, 0, 0, 1, 0, 2, 2])
    # P(a | d0..d4) = 1/(1 + e^-40 ...) rounds to 1.0: by probability d0..d4 tie for class a.
    p = _predictions(scores, y)
    assert np.all(p.proba[:5, 0] == 1.0)
    # class a, N_a = 3 (d1, d2, d4): by log-odds d2 60 (rel), d0 50, then d3 and d4 tie at 45 across the
    #   cut-off; the tie keeps the row order (algorithms.md 5.2.4, 0.2): d3 (not rel) -> TP_a = 1.
    #   (By probability the five-way tie at 1.0 took d0, d1, d2: TP_a = 2.)
    # class b, N_b = 2 (d0, d3): d5 30, d6 -30 -> TP_b = 0.
    # class c, N_c = 2 (d5, d6): d6 30, d5 -30 -> TP_c = 2.
    # micro = (1 + 0 + 2) / (3 + 2 + 2) = 3/7; macro = (1/3 + 0/2 + 2/2) / 3 = 4/9.
    n_rel, tp = ranking.break_even(p)
    assert n_rel.tolist() == [3, 2, 2] and tp.tolist() == [1, 0, 2]
    assert ranking.bep_micro(p) == pytest.approx(3 / 7, abs=1e-15)
    assert ranking.bep_macro(p) == pytest.approx(4 / 9, abs=1e-15)
    # the remaining tie is a genuine one (identical scores): swapping d3 and d4 puts d4 first, TP_a = 2
    swap = np.array([0, 1, 2, 4, 3, 5, 6])
    q = _predictions(scores[swap], y[swap])
    assert ranking.break_even(q)[1].tolist() == [2, 0, 2]
    assert ranking.bep_micro(q) == pytest.approx(4 / 7, abs=1e-15)


def test_break_even_ranks_by_probability_when_it_is_not_the_softmax_of_the_scores():
    """A model whose probabilities are not the softmax of its scores (LIBLINEAR's normalised sigmoids)
    keeps the ranking by probability, as do models without scores; without probabilities, the margin."""
    scores = np.array([[3.0, 0.0, 1.0], [2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.0, 0.4]])
    proba = np.array([[0.5, 0.2, 0.3], [0.7, 0.1, 0.2], [0.2, 0.6, 0.2], [0.9, 0.05, 0.05]])
    y = np.array([1, 0, 1, 0])
    p = Predictions(y_true=y, y_pred=np.argmax(scores, axis=1), proba=proba, scores=scores,
                    classes=("a", "b", "c"))
    # class a, N_a = 2 (d1, d3): by probability d3 0.9, d1 0.7 -> TP_a = 2 (by log-odds of the scores
    #   d0 would come first: 3 - log(1 + e) = 1.69 against d1's 2 - log 2 = 1.31 and d3's 0.5 - log(1 + e^0.4)).
    # class b, N_b = 2 (d0, d2): d2 0.6, d0 0.2 -> TP_b = 2.
    assert ranking.break_even(p)[1].tolist() == [2, 2, 0]
    np.testing.assert_array_equal(ranking.break_even_scores(p), proba)
    no_proba = Predictions(y_true=y, y_pred=p.y_pred, proba=None, scores=scores, classes=p.classes)
    # margins over the best other class, a: (2, 2, -1, 0.1) -> d0, d1: TP_a = 1; b: (-3, -2, 1, -0.5) -> d2, d3:
    #   TP_b = 1
    assert ranking.break_even(no_proba)[1].tolist() == [1, 1, 0]


@pytest.mark.parametrize("seed", [0, 1])
def test_average_precision_and_pr_points_do_not_depend_on_the_order_of_the_test_rows(seed):
    """The multi-class AP ranked by the posterior, tied at 1.0 for most of these documents: the row order
    decided it. Ranked by the log-odds, it equals the AP of a brute-force ranking, in every row order."""
    p = _saturated_text(seed)
    n = len(p.y_true)
    ap, pr = toolkit.get_evaluator("average-precision"), toolkit.get_evaluator("pr-curve")
    odds = _brute_log_odds(p.scores)
    values = []
    for k in range(5):
        rel = p.y_true == k
        ranked = rel[np.argsort(-odds[:, k], kind="stable")]
        hits = np.cumsum(ranked)
        values.append(np.mean(hits[ranked] / (np.flatnonzero(ranked) + 1)))
    assert ap(p) == pytest.approx(np.mean(values), abs=1e-12)
    rng = np.random.default_rng(200 + seed)
    for _ in range(4):
        perm = rng.permutation(n)
        q = Predictions(y_true=p.y_true[perm], y_pred=p.y_pred[perm], proba=p.proba[perm],
                        scores=p.scores[perm], classes=p.classes)
        assert ap(q) == ap(p)
        assert pr(q) == pr(p)
