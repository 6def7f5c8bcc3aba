"""Statistics against algorithms.md 7.9 and conventions.md 11.5 (values computed independently there)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from toolkit.evaluation import stats


def test_corrected_resampled_ttest_vector():
    """conventions.md 11.5: d = [.02,.01,.03,-.01,.02,0,.04,.01,.02,.03], ratio 0.5 -> t 1.468576, p 0.176011."""
    d = np.array([.02, .01, .03, -.01, .02, 0, .04, .01, .02, .03])
    result = stats.corrected_ttest(d, np.zeros(10), 0.5)
    assert result.mean_difference == pytest.approx(0.017)
    assert np.var(d, ddof=1) == pytest.approx(2.2333e-4, rel=1e-4)
    assert result.statistic == pytest.approx(1.468576, abs=1e-6)
    assert result.p_value == pytest.approx(0.176011, abs=1e-6)


def test_corrected_ttest_zero_variance_follows_weka():
    assert stats.corrected_ttest([1, 1, 1], [1, 1, 1], 0.1).p_value == 1.0
    assert stats.corrected_ttest([2, 2, 2], [1, 1, 1], 0.1).p_value == 0.0


def test_paired_ttest_vector():
    """algorithms.md 7.9: t = 2.449490, two-sided p 0.0704840, one-sided 0.0352420."""
    a = [0.80, 0.82, 0.78, 0.85, 0.81]
    b = [0.78, 0.80, 0.79, 0.82, 0.78]
    two = stats.paired_ttest(a, b)
    assert two.statistic == pytest.approx(2.449490, abs=1e-6)
    assert two.p_value == pytest.approx(0.0704840, abs=1e-7)
    assert stats.paired_ttest(a, b, "greater").p_value == pytest.approx(0.0352420, abs=1e-7)


def test_sign_test_vector():
    """algorithms.md 7.9: 17 of 20 -> one-sided 1351/2^20, two-sided twice that."""
    assert stats.sign_test(17, 3) == pytest.approx(1351 / 2**20)
    assert stats.sign_test(17, 3, "two-sided") == pytest.approx(0.00257683, abs=1e-8)
    # two-sided is symmetric: 3 wins of 20 is as far from chance as 17 (5.2.8's "twice the one-sided p",
    # read literally, would be 1 here)
    assert stats.sign_test(3, 17, "two-sided") == pytest.approx(2 * 1351 / 2**20)
    assert stats.sign_test(10, 10, "two-sided") == 1.0


def test_critical_values_and_intervals():
    assert stats.t_critical(10) == pytest.approx(2.228139, abs=1e-6)
    assert stats.t_critical(9) == pytest.approx(2.262157, abs=1e-6)
    assert stats.thesis_ci(2 / 43, 435) * 100 == pytest.approx(2.25, abs=0.005)
    assert stats.normal_ci(2 / 43, 43) * 100 == pytest.approx(6.29, abs=0.005)
    assert stats.lower_confidence_limit([0.70, 0.72, 0.69, 0.71, 0.73]) == pytest.approx(0.694926, abs=1e-6)
    assert stats.lower_confidence_limit([0.70, 0.72, 0.69, 0.71, 0.73], two_sided=True) == pytest.approx(0.690368, abs=1e-6)
    mean, sd, half = stats.mean_ci([0.1, 0.2, 0.3])
    assert (mean, sd) == pytest.approx((0.2, 0.1)) and half == pytest.approx(sps.t.ppf(0.975, 2) * 0.1 / math.sqrt(3))


@given(st.lists(st.floats(-1, 1), min_size=3, max_size=12), st.floats(0.05, 1.0), st.floats(-5, 5))
def test_ttest_symmetry_and_shift_invariance(values, ratio, shift):
    rng = np.random.default_rng(len(values))
    a = np.array(values)
    b = a + rng.normal(scale=0.1, size=len(a))
    ab = stats.corrected_ttest(a, b, ratio)
    ba = stats.corrected_ttest(b, a, ratio)
    shifted = stats.corrected_ttest(a + shift, b + shift, ratio)
    if math.isfinite(ab.statistic):
        assert ba.statistic == pytest.approx(-ab.statistic, rel=1e-9, abs=1e-12)
        assert ba.p_value == pytest.approx(ab.p_value, rel=1e-9, abs=1e-12)
        assert shifted.p_value == pytest.approx(ab.p_value, rel=1e-6, abs=1e-9)


# ------------------------------------------------------------------ several datasets (Demsar 2006)

def _brute_force_ranks(row, greater_is_better=True):
    """Rank 1 = best; a tie shares the mean of the positions it spans (counted pairwise, no sorting)."""
    out = []
    for x in row:
        better = sum(1 for y in row if (y > x if greater_is_better else y < x))
        equal = sum(1 for y in row if y == x)  # includes x itself
        out.append(better + (equal + 1) / 2)
    return out


@pytest.mark.parametrize("seed, ties", [(1, False), (2, True), (3, True)])
def test_ranks_are_the_brute_force_mean_ranks(seed, ties):
    rng = np.random.default_rng(seed)
    scores = rng.random((12, 5))
    if ties:
        scores = np.round(scores, 1)
    for greater in (True, False):
        got = stats.ranks(scores, greater)
        for i, row in enumerate(scores):
            assert got[i].tolist() == pytest.approx(_brute_force_ranks(row.tolist(), greater))


@pytest.mark.parametrize("seed, k, n, ties", [(1, 3, 10, False), (2, 4, 20, True), (3, 5, 14, True), (4, 2, 8, False),
                                              (5, 6, 30, True)])
def test_friedman_equals_scipy(seed, k, n, ties):
    rng = np.random.default_rng(seed)
    scores = rng.random((n, k)) + np.linspace(0, 0.3, k)
    if ties:
        scores = np.round(scores, 1)
    ours = stats.friedman(scores)
    ref = sps.friedmanchisquare(*scores.T) if k >= 3 else None
    if ref is not None:
        assert ours.chi2 == pytest.approx(ref.statistic, rel=1e-12)
        assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    # Iman-Davenport from its definition, and the average ranks by brute force
    ff = (n - 1) * ours.chi2 / (n * (k - 1) - ours.chi2)
    assert ours.iman_davenport == pytest.approx(ff, rel=1e-12)
    assert ours.iman_davenport_p == pytest.approx(sps.f.sf(ff, k - 1, (k - 1) * (n - 1)), rel=1e-10)
    brute = np.mean([_brute_force_ranks(row.tolist()) for row in scores], axis=0)
    assert ours.average_ranks.tolist() == pytest.approx(brute.tolist())


def test_friedman_without_ties_is_demsars_formula():
    """Demsar (2006) eq. for chi2_F on average ranks R_j: 12N/(k(k+1)) [sum R_j^2 - k(k+1)^2/4]."""
    rng = np.random.default_rng(11)
    scores = rng.random((9, 4))
    r = np.mean([_brute_force_ranks(row.tolist()) for row in scores], axis=0)
    expected = 12 * 9 / (4 * 5) * (np.sum(r ** 2) - 4 * 25 / 4)
    assert stats.friedman(scores).chi2 == pytest.approx(expected, rel=1e-12)


def test_iman_davenport_is_undefined_when_every_dataset_ranks_alike():
    """chi2_F = N (k - 1) makes F_F's denominator 0: the statistic is undefined, not p = 0 ("highly
    significant" on two datasets, where Friedman's own p is 0.157)."""
    scores = np.array([[0.1, 0.5], [0.2, 0.9]])
    result = stats.friedman(scores)
    assert result.chi2 == pytest.approx(2.0) and result.p_value == pytest.approx(sps.chi2.sf(2.0, 1))
    assert math.isnan(result.iman_davenport) and math.isnan(result.iman_davenport_p)


DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]  # Table 5(a), k = 2..10
DEMSAR_Q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


@pytest.mark.parametrize("k", range(2, 11))
def test_nemenyi_q_equals_demsars_table(k):
    """Demsar's Table 5 rounds the studentized range quantile to 3 decimals and then divides by sqrt(2): our
    exact q is within that rounding (< 1e-3) of his value and reproduces it exactly after the same rounding."""
    for alpha, table in ((0.05, DEMSAR_Q05), (0.10, DEMSAR_Q10)):
        q = stats.nemenyi_q(k, alpha)
        assert abs(q - table[k - 2]) < 1e-3, (k, alpha, q)
        assert round(round(q * math.sqrt(2), 3) / math.sqrt(2), 3) == table[k - 2], (k, alpha, q)


def test_nemenyi_critical_difference_and_cliques():
    """CD = q_alpha sqrt(k(k+1)/(6N)); Demsar's example: k = 4, N = 14 -> CD = 2.569 sqrt(20/84) = 1.25."""
    rng = np.random.default_rng(5)
    scores = rng.random((14, 4))
    result = stats.nemenyi(scores)
    assert result.critical_difference == pytest.approx(stats.nemenyi_q(4) * math.sqrt(4 * 5 / (6 * 14)))
    assert round(result.critical_difference, 2) == 1.25
    # cliques by brute force: maximal sets of methods, consecutive in rank order, spanning less than CD
    r = result.average_ranks
    order = list(np.argsort(r, kind="stable"))
    spans = [tuple(order[i:j + 1]) for i in range(4) for j in range(i + 1, 4) if r[order[j]] - r[order[i]] < result.critical_difference]
    maximal = [s for s in spans if not any(set(s) < set(t) for t in spans)]
    assert sorted(result.cliques) == sorted(maximal)
    for i in range(4):
        for j in range(4):
            assert result.different(i, j) == (abs(r[i] - r[j]) >= result.critical_difference)


def test_cliques_of_a_known_layout():
    ranks = [1.0, 1.5, 2.6, 3.9, 4.0]
    assert stats.cliques(ranks, 1.2) == [(0, 1), (1, 2), (3, 4)]
    assert stats.cliques(ranks, 5.0) == [(0, 1, 2, 3, 4)]
    assert stats.cliques(ranks, 0.1) == []


def test_holm_against_its_step_down_definition():
    rng = np.random.default_rng(3)
    for m in (1, 2, 5, 10):
        p = rng.random(m) ** 3
        adjusted = stats.holm(p)
        for alpha in (0.01, 0.05, 0.2):
            order = np.argsort(p)
            reject = np.zeros(m, bool)
            for step, idx in enumerate(order):  # reject while p_(i) <= alpha / (m - i)
                if p[idx] <= alpha / (m - step):
                    reject[idx] = True
                else:
                    break
            assert ((adjusted <= alpha) == reject).all(), (m, alpha)
    assert stats.holm([0.01, 0.04, 0.03]).tolist() == pytest.approx([0.03, 0.06, 0.06])


def test_wilcoxon_and_sign_test_across_datasets():
    rng = np.random.default_rng(8)
    a, b = rng.random(15), rng.random(15) - 0.2
    res = stats.wilcoxon(a, b)
    ref = sps.wilcoxon(a - b)
    assert res.statistic == ref.statistic and res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    assert stats.wilcoxon([1, 2, 3], [1, 2, 3]).p_value == 1.0
    wins, ties, losses, p = stats.sign_test_datasets([0.9, 0.8, 0.7, 0.5, 0.4], [0.8, 0.8, 0.6, 0.6, 0.3])
    assert (wins, ties, losses) == (3, 1, 1) and p == pytest.approx(2 * (5 / 16), rel=1e-12)  # P(X>=3|4)=5/16
    assert stats.sign_test_datasets([0.1], [0.2], greater_is_better=False)[:3] == (1, 0, 0)


def test_pairwise_wilcoxon_is_holm_corrected():
    rng = np.random.default_rng(9)
    scores = rng.random((20, 4)) + np.array([0, 0.05, 0.2, 0.4])
    pairs = stats.pairwise_wilcoxon(scores)
    assert [(t.a, t.b) for t in pairs] == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    raw = [sps.wilcoxon(scores[:, t.a] - scores[:, t.b]).pvalue for t in pairs]
    assert [t.p_value for t in pairs] == pytest.approx(raw, rel=1e-12)
    assert [t.p_holm for t in pairs] == pytest.approx(stats.holm(raw).tolist())


# ------------------------------------------------------------------ Bayesian correlated t-test

@pytest.mark.parametrize("seed, rope", [(1, 0.01), (2, 0.0), (3, 0.05), (4, 0.001)])
def test_bayesian_correlated_ttest_equals_baycomp(seed, rope):
    """baycomp's CorrelatedTTest assumes k-fold cross-validation: nfolds = 10, runs = 1 is exactly the
    toolkit's 10 % test with 10 repetitions when n_test/n_train = 1/9."""
    baycomp = pytest.importorskip("baycomp")
    rng = np.random.default_rng(seed)
    a = 0.8 + 0.03 * rng.standard_normal(10)
    b = a + 0.01 + 0.02 * rng.standard_normal(10)
    ours = stats.bayesian_correlated_ttest(a, b, rope=rope, test_train_ratio=1 / 9)
    ref = baycomp.CorrelatedTTest.probs(a, b, rope=rope, runs=1)  # its difference is b - a: left = a better
    if rope > 0:
        assert (ours.p_a_better, ours.p_equivalent, ours.p_b_better) == pytest.approx(ref, rel=1e-10, abs=1e-14)
    else:
        assert (ours.p_a_better, ours.p_b_better) == pytest.approx(ref, rel=1e-10, abs=1e-14)
    lower = stats.bayesian_correlated_ttest(a, b, rope=rope, test_train_ratio=1 / 9, greater_is_better=False)
    assert (lower.p_a_better, lower.p_b_better) == pytest.approx((ours.p_b_better, ours.p_a_better))


def test_bayesian_test_on_harness_records_equals_baycomp():
    """On the harness's own splits of iris (n = 150: 15 test, 135 train, ratio 1/9 = baycomp's 10 folds)."""
    baycomp = pytest.importorskip("baycomp")
    import toolkit

    results = toolkit.evaluate("iris", ["nb-weka", "liblinear-lr:C=1,B=1"], metrics=["accuracy"], runs=10)
    names = results.pipelines()
    a, b = results.values("iris", names[0], "accuracy"), results.values("iris", names[1], "accuracy")
    recs = results.cell("iris", names[0])
    ratio = stats.test_train_ratio([r["n_test"] for r in recs], [r["n_train"] for r in recs])
    assert ratio == pytest.approx(1 / 9)
    ours = stats.bayesian_correlated_ttest(a, b, rope=0.01, test_train_ratio=ratio)
    ref = baycomp.CorrelatedTTest.probs(np.array(a), np.array(b), rope=0.01, runs=1)
    assert (ours.p_a_better, ours.p_equivalent, ours.p_b_better) == pytest.approx(ref, rel=1e-10, abs=1e-14)


def test_bayesian_degenerate_cases():
    same = stats.bayesian_correlated_ttest([0.5] * 5, [0.5] * 5, rope=0.01)
    assert (same.p_a_better, same.p_equivalent, same.p_b_better) == (0.0, 1.0, 0.0)
    shifted = stats.bayesian_correlated_ttest([0.6] * 5, [0.5] * 5, rope=0.01)
    assert shifted.p_a_better == 1.0
    with pytest.raises(ValueError):
        stats.bayesian_correlated_ttest([1, 2], [1, 2], rope=-1)


def test_sign_test_mark_follows_the_wins_not_the_means():
    """B has the lower error in 9 of 10 repetitions and loses one by far, so its mean error is higher:
    the sign test (two-sided p = 2 (C(10,0) + C(10,1)) / 2^10) says B is significantly better."""
    from toolkit.evaluation.report import compare_results
    from toolkit.evaluation.results import Results

    a = [0.20, 0.22, 0.19, 0.21, 0.20, 0.23, 0.18, 0.20, 0.21, 0.20]
    b = [x - 0.01 for x in a[:9]] + [0.50]
    assert np.mean(b) > np.mean(a)
    records = [{"status": "ok", "key": f"{p}{r}", "repetition": r, "dataset": {"name": "d", "n_instances": 100},
                "pipeline": {"name": p}, "protocol": {"name": "random", "repetitions": 10}, "n_train": 90,
                "n_test": 10, "metrics": {"error": v}}
               for p, values in (("A", a), ("B", b)) for r, v in enumerate(values)]
    results = Results(records)
    comp = compare_results(results, metric="error", baseline="A", test="sign")
    cell = comp.cells[("d", "B")]
    assert cell.p_value == pytest.approx(2 * (1 + 10) / 2**10, rel=1e-15)
    assert cell.mark == "v" and comp.wins["B"] == (1, 0, 0)
    reverse = compare_results(results, metric="error", baseline="B", test="sign")
    assert reverse.cells[("d", "A")].mark == "*" and reverse.wins["A"] == (0, 0, 1)
