"""Ties that are exact in arithmetic but not in floating point (a differential review against scikit-learn
and brute force, 2026-12-07): algorithms.md 0.2 breaks a tie by the lower index / the original position,
and the last bits of two scores computed along different paths decided instead."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

import toolkit
from toolkit.api import Predictions
from toolkit.evaluation import measures
from toolkit.evaluation.ranking import average_precision_of_ranking


@pytest.mark.parametrize("event_model", ["document", "token"])
def test_a_word_and_its_complement_tie_and_the_lower_index_is_kept(event_model):
    """Document-event MI of a word whose presence is another's absence is the same number (and so is the
    token-event MI of the two columns of a two-word vocabulary); the selector kept whichever came out an
    ulp larger (63 of 1,500 random cases)."""
    kept = []
    for seed in range(60):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(3, 40))
        present = rng.random(n) < rng.uniform(0.2, 0.8)
        present[:2] = [True, False]
        y = rng.integers(0, int(rng.integers(2, 5)), n)
        y[:2] = [0, 1]
        for X in (np.column_stack([present, ~present]), np.column_stack([~present, present])):
            sel = toolkit.get_feature_selector("mi", k=1, event_model=event_model).fit(X.astype(float), y)
            scores = sel.scores_
            assert scores[0] == pytest.approx(scores[1], rel=1e-12, abs=1e-15)
            kept.append(int(sel.support_[0]))
            assert list(sel.ranking()) == [0, 1]
    assert kept == [0] * len(kept)


def test_rows_whose_other_class_scores_are_permuted_keep_their_order():
    """Two rows with class-0 scores 2 and the other classes' scores {0, 0, 2} in another order have the same
    log-odds for class 0; the ranking put the one an ulp larger first."""
    s = np.array([[2.0, 0, 0, 2], [2.0, 0, 2, 0]])
    for order, first_relevant in (([0, 1], False), ([1, 0], True)):
        p = Predictions(y_true=np.array([3, 0])[order], y_pred=np.array([0, 0]), proba=softmax(s[order], axis=1),
                        scores=s[order], classes=tuple("abcd"))
        assert toolkit.get_evaluator("pr-curve")(p)["a"]["precision"] == [1.0 if first_relevant else 0.5]


@pytest.mark.parametrize("seed", range(5))
def test_average_precision_with_permuted_scores_equals_the_stable_ranking_by_exact_groups(seed):
    """Rows fall in groups that share class 0's score and the multiset of the other classes' scores, in a
    random order per row: class 0's log-odds are equal within a group and differ by at least 1 between
    groups. The reference ranks by group value (exact: the group's integers) and then by row."""
    rng = np.random.default_rng(seed)
    n, K = 60, 5
    group = rng.integers(0, 6, n)
    own = group.astype(float)                              # class 0's score: the group
    others = np.array([0.0, 1.0, 1.0, 3.0])                # the same multiset for every row
    scores = np.column_stack([own, np.array([rng.permutation(others) for _ in range(n)])])
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    p = Predictions(y_true=y, y_pred=np.argmax(scores, axis=1), proba=softmax(scores, axis=1), scores=scores,
                    classes=tuple("abcde"))
    order = np.lexsort((np.arange(n), -group))            # exact: the group decides, then the row
    want0 = average_precision_of_ranking(y[order] == 0)
    from toolkit.plugins.metrics import ranking

    all_scores, codes = ranking._known_class_scores(p)
    got_order = ranking._order(all_scores[:, 0], codes == 0, "stable")
    assert list(got_order) == list(order)
    assert average_precision_of_ranking(codes[got_order] == 0) == want0


def test_pr_area_with_a_top_group_of_weight_zero_is_a_number():
    """Precision at a top threshold holding only weight-0 rows is 0/0; it gains no recall, and scikit-learn's
    average_precision_score gives 1.0 here; pr_auc gave NaN."""
    y = np.array([0, 1, 1, 0])
    s = np.array([[0.1, 0.9], [0.3, 0.7], [0.4, 0.6], [0.8, 0.2]])
    w = np.array([0.0, 1, 1, 1])
    assert measures.pr_auc(y, s, w)[1] == 1.0
    # brute force: the unweighted area of the rows with weight, the same ranking
    assert measures.pr_auc(y[1:], s[1:])[1] == 1.0


def test_rank_key_groups_only_rounding_apart_scores():
    from toolkit.evaluation.ranking import rank_key

    inf, nan = np.inf, np.nan
    s = np.array([-inf, 30.0, -30.0, inf, -inf, 30.0 * (1 + 2e-16), 29.999, 1e-20, -1e-20, 0.0, nan, inf])
    key = rank_key(s)
    # +inf (twice) first, then 30 and its rounding neighbour, 29.999, 1e-20, 0, -1e-20 (relative
    # tolerance only: tiny scores are not tied to each other), -30, -inf (twice), NaN last
    assert key.tolist() == [7, 1, 6, 0, 7, 1, 2, 3, 5, 4, 8, 0]
    assert rank_key(np.array([])).tolist() == [] and rank_key(np.array([2.0])).tolist() == [0]
    # ties do not chain: 1,000 scores 9e-13 apart (relative) are not one group
    assert len(set(rank_key(1.0 + np.arange(1000) * 9e-13).tolist())) == 500


def test_words_absent_from_the_training_part_do_not_tie_every_other_word():
    """A word absent from the training part scores -inf; np.nan_to_num made it -1.8e308, a finite score whose
    size made every real score tie, and the first k columns were kept instead of the k best (a review of
    this fix found it). Brute force: the k best by score, ties to the lower index."""
    from toolkit.api import FeatureSelectorBase

    assert FeatureSelectorBase.top_k(np.array([1.0, 2.0, 3.0, -np.inf]), 2).tolist() == [1, 2]
    assert FeatureSelectorBase.top_k(np.array([0.5, 0.9, 1e15]), 2).tolist() == [1, 2]
    assert FeatureSelectorBase.top_k(np.array([np.nan, 1.0, 1.0]), 1).tolist() == [1]
    rng = np.random.default_rng(0)
    y = np.arange(200) % 2
    X = rng.poisson(0.5, (200, 50)).astype(float)
    X[:, 40] += 5 * y
    X[:, 49] = 0                       # absent from the training data
    for name in ("mi", "kl", "dkl"):
        sel = toolkit.get_feature_selector(name, k=3).fit(X, y)
        s = np.asarray(sel.scores_)
        assert s[49] == -np.inf
        want = sorted(np.lexsort((np.arange(50), -s))[:3].tolist())
        assert sorted(sel.support_.tolist()) == want and 40 in want, name
        assert sel.ranking()[-1] == 49


def test_tiny_probabilities_keep_their_order():
    """With probabilities that are not a softmax of scores (liblinear-lr), 1e-30 and 1e-20 tied."""
    proba = np.array([[1e-30, 0.5, 0.5 - 1e-30], [1e-20, 0.5, 0.5 - 1e-20], [0.9, 0.05, 0.05],
                      [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]])
    y = np.array([1, 0, 0, 1, 2])
    p = Predictions(y_true=y, y_pred=np.argmax(proba, axis=1), proba=proba, scores=None, classes=tuple("abc"))
    from toolkit.plugins.metrics import ranking

    order = ranking._order(ranking._known_class_scores(p)[0][:, 0], y == 0, "stable")
    assert order.tolist() == [2, 3, 4, 1, 0]   # 0.05 twice ties (rows in order), then 1e-20 before 1e-30
