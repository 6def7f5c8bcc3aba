"""Statistics for comparing results (algorithms.md 5.2), on plain arrays so that they serve outside the
harness too (``toolkit.stats``).

Two pipelines on one dataset, paired by repetition:

* :func:`corrected_ttest` - the corrected resampled paired t-test of Nadeau & Bengio (2003), exactly as
  WEKA's Experimenter computes it (``PairedStatsCorrected``, ``PairedCorrectedTTester``), and
  :func:`paired_ttest`, the plain paired t-test (``PairedStats``, ``PairedTTester``);
  :func:`test_train_ratio` is WEKA's ratio (sum of test sizes over sum of training sizes);
* :func:`bayesian_correlated_ttest` - Benavoli et al. (JMLR 2017): P(A better), P(practically equivalent),
  P(B better) under the correlated Student posterior;
* :func:`sign_test`, :func:`mean_ci`, :func:`lower_confidence_limit`, :func:`thesis_ci`, :func:`normal_ci`.

Several pipelines over several datasets (Demsar, JMLR 2006), on a datasets x pipelines matrix:

* :func:`ranks` (1 = best, ties share the mean rank), :func:`friedman` (chi-square with scipy's tie
  correction, and the Iman-Davenport F), :func:`nemenyi` (q_alpha from the studentized range, the critical
  difference and the cliques of a CD diagram), :func:`wilcoxon` and :func:`sign_test_datasets` for a pair,
  :func:`pairwise_wilcoxon` with :func:`holm` correction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special


def _scipy_stats() -> Any:
    """scipy.stats on first use: importing it costs about a second, which the corrected t-test of every
    ``compare`` does not need (it uses scipy.special); the multi-dataset tests do."""
    from scipy import stats

    return stats

# scipy.special, not scipy.stats: the t functions scipy.stats.t itself calls (stdtr, stdtrit), without the
# second of imports that scipy.stats costs every command

__all__ = ["TestResult", "corrected_ttest", "paired_ttest", "test_train_ratio", "significance", "sign_test",
           "mean_ci", "t_critical", "lower_confidence_limit", "thesis_ci", "normal_ci", "BayesResult",
           "bayesian_correlated_ttest", "ranks", "FriedmanResult", "friedman", "nemenyi_q", "NemenyiResult",
           "nemenyi", "cliques", "holm", "wilcoxon", "sign_test_datasets", "PairTest", "pairwise_wilcoxon",
           "WEKA_SMALL"]

#: WEKA's ``Utils.SMALL``: a standard deviation of the differences at most this is treated as zero
WEKA_SMALL = 1e-6


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float
    mean_difference: float
    n: int


def t_critical(df: int, level: float = 0.95, two_sided: bool = True) -> float:
    """Student's t quantile: t_{0.975, df} for a two-sided 95 % interval."""
    if df <= 0:
        return float("nan")
    q = 1 - (1 - level) / 2 if two_sided else level
    return float(special.stdtrit(df, q))


def _differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values must be two sequences of one length, not {a.shape} and {b.shape}")
    return a - b


def _weka_sd(d: np.ndarray) -> float:
    """WEKA's ``Stats`` standard deviation: sqrt((sumSq - sum^2 / n) / (n - 1)), negative rounding to 0."""
    n = len(d)
    var = (float(np.dot(d, d)) - float(d.sum()) ** 2 / n) / (n - 1)
    return math.sqrt(max(var, 0.0))


def _weka_t(d: np.ndarray, scale: float, tolerance: float) -> TestResult:
    """t = mean / (sd * scale) with p = FProbability(t^2, 1, k - 1), WEKA's two-sided p; an sd at most
    ``tolerance`` counts as 0: then p = 1 when every difference is 0, else p = 0."""
    k = len(d)
    mean = float(d.mean()) if k else float("nan")
    if k < 2:
        return TestResult(float("nan"), float("nan"), mean, k)
    sd = _weka_sd(d)
    if not sd > tolerance:
        if float(np.dot(d, d)) == 0.0:
            return TestResult(0.0, 1.0, mean, k)
        return TestResult(math.copysign(math.inf, mean) if mean else math.inf, 0.0, mean, k)
    t = mean / (sd * scale)
    return TestResult(t, float(special.fdtrc(1, k - 1, t * t)), mean, k)


def corrected_ttest(a: Sequence[float], b: Sequence[float], test_train_ratio: float,
                    tolerance: float = WEKA_SMALL) -> TestResult:
    """Nadeau-Bengio corrected resampled t-test on paired results ``a`` and ``b`` (d = a - b), as WEKA 3.6's
    ``PairedStatsCorrected``: t = mean(d) / sqrt((1/k + n_test/n_train) var(d)), var with k - 1; two-sided
    p with k - 1 degrees of freedom. An sd(d) of at most ``tolerance`` (WEKA's 1e-6) counts as zero:
    p = 1 when every d is 0, else p = 0."""
    d = _differences(a, b)
    k = len(d)
    return _weka_t(d, math.sqrt(1.0 / k + test_train_ratio) if k else 1.0, tolerance)


def paired_ttest(a: Sequence[float], b: Sequence[float], alternative: str = "two-sided",
                 tolerance: float = WEKA_SMALL) -> TestResult:
    """Plain paired t-test (WEKA's ``PairedStats``): t = mean(d) / (sd(d)/sqrt(m)); ``alternative``
    'two-sided' or 'greater' (a > b). A zero sd(d) is treated as WEKA does (see :func:`corrected_ttest`)."""
    if alternative not in ("two-sided", "greater"):
        raise ValueError(f"alternative must be 'two-sided' or 'greater', not {alternative!r}")
    d = _differences(a, b)
    m = len(d)
    result = _weka_t(d, 1.0 / math.sqrt(m) if m else 1.0, tolerance)
    if alternative == "greater" and math.isfinite(result.statistic):
        return TestResult(result.statistic, float(special.stdtr(m - 1, -result.statistic)), result.mean_difference, m)
    if alternative == "greater" and not math.isnan(result.statistic):
        return TestResult(result.statistic, 0.0 if result.statistic > 0 else 1.0, result.mean_difference, m)
    return result


def test_train_ratio(n_test: Sequence[float], n_train: Sequence[float]) -> float:
    """WEKA's ratio for the corrected test: the sum of the test sizes over the sum of the training sizes of
    the paired runs (``PairedCorrectedTTester``)."""
    train = float(np.sum(n_train))
    return float(np.sum(n_test)) / train if train > 0 else 0.0


def significance(result: TestResult, alpha: float) -> int:
    """WEKA's verdict: +1 when a is significantly greater than b (p <= alpha), -1 when smaller, 0 otherwise."""
    if not result.p_value <= alpha or result.mean_difference == 0 or math.isnan(result.mean_difference):
        return 0
    return 1 if result.mean_difference > 0 else -1


def sign_test(wins: int, losses: int, alternative: str = "greater") -> float:
    """P(X >= wins | X ~ Binomial(wins + losses, 1/2)); ties are dropped before calling.

    ``alternative='two-sided'`` doubles the smaller tail, capped at 1. algorithms.md 5.2.8 says "twice the
    one-sided p": the same whenever ``wins >= losses``, but read literally it gives 1 for 3 wins of 20, as if
    losing 17 of 20 were no difference; the test is symmetric in wins and losses.
    """
    m = wins + losses
    if m == 0:
        return 1.0
    # exact: sums of binomial coefficients over 2^m, one correctly rounded division
    upper = sum(math.comb(m, i) for i in range(max(wins, 0), m + 1)) / 2 ** m
    if alternative == "greater":
        return upper
    if alternative == "two-sided":
        lower = sum(math.comb(m, i) for i in range(0, min(wins, m) + 1)) / 2 ** m
        return min(1.0, 2 * min(upper, lower))
    raise ValueError(f"alternative must be 'greater' or 'two-sided', not {alternative!r}")


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float, float]:
    """(mean, sample standard deviation, half-width t_{(1+level)/2, R-1} s / sqrt(R))."""
    v = np.asarray([x for x in values if x == x], dtype=np.float64)
    r = len(v)
    if r == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(v.mean())
    if r == 1:
        return mean, float("nan"), float("nan")
    sd = float(v.std(ddof=1))
    return mean, sd, t_critical(r - 1, level) * sd / math.sqrt(r)


def lower_confidence_limit(values: Sequence[float], level: float = 0.95, two_sided: bool = False) -> float:
    """mean - t s / sqrt(R): one-sided t_{0.95} by default (the OTS paper's Table 2)."""
    v = np.asarray(values, dtype=np.float64)
    r = len(v)
    if r < 2:
        return float("nan")
    return float(v.mean() - t_critical(r - 1, level, two_sided) * v.std(ddof=1) / math.sqrt(r))


def thesis_ci(error_rate: float, n_total: int) -> float:
    """The thesis's "95 % CI": 2.228 * sqrt(e (1 - e) / N) with N the whole dataset (algorithms.md 5.1.3)."""
    return 2.228 * math.sqrt(error_rate * (1 - error_rate) / n_total)


def normal_ci(error_rate: float, n_test: int, z: float = 1.959963984540054) -> float:
    """Half-width of the normal-approximation interval on one test set."""
    return z * math.sqrt(error_rate * (1 - error_rate) / n_test)


# ------------------------------------------------------------------ Bayesian correlated t-test

@dataclass(frozen=True)
class BayesResult:
    """Posterior probabilities that A is better, that the two are practically equivalent (|difference| <=
    rope), that B is better; the posterior is Student t (df, loc, scale) on the mean difference."""

    p_a_better: float
    p_equivalent: float
    p_b_better: float
    mean: float
    scale: float
    df: int
    rope: float


def bayesian_correlated_ttest(a: Sequence[float], b: Sequence[float], rope: float = 0.0,
                              test_train_ratio: float = 1 / 9, greater_is_better: bool = True) -> BayesResult:
    """Bayesian correlated t-test (Corani & Benavoli 2015; Benavoli et al., JMLR 2017) on paired results of
    the resampled repetitions of one dataset.

    The mean difference d = a - b has the posterior Student t with k - 1 degrees of freedom, location
    mean(d) and scale sqrt((1/k + rho/(1 - rho)) var(d)), rho/(1 - rho) = n_test/n_train being the
    correlation correction (k-fold cross-validation: 1/(folds - 1)). With ``rope`` r: P(A better) = P(d >
    r), P(equivalent) = P(|d| <= r), P(B better) = P(d < -r) when greater is better (mirrored otherwise).
    A zero variance puts the whole posterior on mean(d).
    """
    if rope < 0:
        raise ValueError(f"rope must be >= 0, not {rope}")
    d = _differences(a, b)
    k = len(d)
    if k < 2:
        raise ValueError("the Bayesian correlated t-test needs at least 2 paired values")
    mean = float(d.mean())
    var = float(d.var(ddof=1)) * (1.0 / k + test_train_ratio)
    scale = math.sqrt(var)
    if scale == 0.0:   # the whole posterior at mean(d): identical results are equivalent, even with rope 0
        above, below = float(mean > rope), float(mean < -rope)
    else:
        above = float(_scipy_stats().t.sf(rope, k - 1, loc=mean, scale=scale))
        below = float(_scipy_stats().t.cdf(-rope, k - 1, loc=mean, scale=scale))
    equivalent = max(0.0, 1.0 - above - below)
    if not greater_is_better:
        above, below = below, above
    return BayesResult(above, equivalent, below, mean, scale, k - 1, rope)


# ------------------------------------------------------------------ several datasets (Demsar 2006)

def _matrix(scores: Any) -> np.ndarray:
    m = np.asarray(scores, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] < 1 or m.shape[1] < 2:
        raise ValueError(f"scores must be a datasets x methods matrix with at least 2 methods, not shape {m.shape}")
    if np.isnan(m).any():
        raise ValueError("scores hold NaN; leave out the datasets where a method has no result")
    return m


def ranks(scores: Any, greater_is_better: bool = True) -> np.ndarray:
    """Rank of every method on every dataset (rows), 1 = best; tied methods share the mean of their ranks."""
    m = _matrix(scores)
    return _scipy_stats().rankdata(-m if greater_is_better else m, axis=1)


@dataclass(frozen=True)
class FriedmanResult:
    average_ranks: np.ndarray
    chi2: float
    p_value: float
    iman_davenport: float
    iman_davenport_p: float
    n_datasets: int
    n_methods: int

    @property
    def df(self) -> tuple[int, int]:
        """Degrees of freedom of the Iman-Davenport F: (k - 1, (k - 1)(N - 1))."""
        return self.n_methods - 1, (self.n_methods - 1) * (self.n_datasets - 1)


def friedman(scores: Any, greater_is_better: bool = True) -> FriedmanResult:
    """Friedman's test over datasets (rows) and methods (columns): chi2_F = 12 N / (k (k+1)) [sum_j R_j^2 -
    k (k+1)^2 / 4] on the average ranks R_j, divided by scipy's tie correction 1 - sum(t^3 - t) / (N k
    (k^2 - 1)), with k - 1 degrees of freedom; and Iman and Davenport's F_F = (N - 1) chi2_F / (N (k - 1) -
    chi2_F) with (k - 1, (k - 1)(N - 1)) degrees of freedom (Demsar 2006, section 3.2.2)."""
    r = ranks(scores, greater_is_better)
    N, k = r.shape
    avg = r.mean(axis=0)
    chi2 = 12.0 * N / (k * (k + 1)) * (float(np.sum(avg ** 2)) - k * (k + 1) ** 2 / 4.0)
    ties = 0.0
    for row in r:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts ** 3 - counts))
    correction = 1.0 - ties / (N * k * (k * k - 1))
    if correction <= 0:  # every dataset ties every method
        return FriedmanResult(avg, float("nan"), float("nan"), float("nan"), float("nan"), N, k)
    chi2 /= correction
    p = float(_scipy_stats().chi2.sf(chi2, k - 1))
    den = N * (k - 1) - chi2
    if N < 2:
        ff, pf = float("nan"), float("nan")
    elif den <= 0:  # every dataset ranks the methods alike: F_F's denominator vanishes, the F approximation
        ff, pf = float("nan"), float("nan")     # says nothing (it gave p = 0 on 2 datasets); Friedman's p stands
    else:
        ff = (N - 1) * chi2 / den
        pf = float(_scipy_stats().f.sf(ff, k - 1, (k - 1) * (N - 1)))
    return FriedmanResult(avg, chi2, p, ff, pf, N, k)


def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    """The Nemenyi test's q_alpha for k methods: the studentized range quantile (k means, infinite degrees
    of freedom) over sqrt(2). Demsar's Table 5 rounds the range quantile to 3 decimals first."""
    if k < 2:
        raise ValueError("the Nemenyi test needs at least 2 methods")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie between 0 and 1, not {alpha}")
    return float(_scipy_stats().studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2))


def cliques(average_ranks: Sequence[float], cd: float) -> list[tuple[int, ...]]:
    """The groups of a CD diagram: maximal runs of methods, in rank order, whose average ranks all lie
    within less than ``cd`` of each other (not significantly different); methods as column indices,
    best-ranked first; single methods are not groups."""
    r = np.asarray(average_ranks, dtype=np.float64)
    order = np.argsort(r, kind="stable")
    groups: list[tuple[int, ...]] = []
    last_end = -1
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and r[order[j + 1]] - r[order[i]] < cd:
            j += 1
        if j > i and j > last_end:
            groups.append(tuple(int(x) for x in order[i:j + 1]))
            last_end = j
    return groups


@dataclass(frozen=True)
class NemenyiResult:
    average_ranks: np.ndarray
    q_alpha: float
    critical_difference: float
    alpha: float
    n_datasets: int
    cliques: list[tuple[int, ...]] = field(default_factory=list)

    def different(self, i: int, j: int) -> bool:
        """Methods i and j differ significantly: their average ranks are at least the CD apart."""
        return bool(abs(self.average_ranks[i] - self.average_ranks[j]) >= self.critical_difference)


def nemenyi(scores: Any, greater_is_better: bool = True, alpha: float = 0.05) -> NemenyiResult:
    """The Nemenyi post-hoc test: CD = q_alpha sqrt(k (k+1) / (6 N)); two methods differ when their average
    ranks differ by at least CD."""
    r = ranks(scores, greater_is_better)
    N, k = r.shape
    avg = r.mean(axis=0)
    q = nemenyi_q(k, alpha)
    cd = q * math.sqrt(k * (k + 1) / (6.0 * N))
    return NemenyiResult(avg, q, cd, alpha, N, cliques(avg, cd))


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values: p_(i) -> max_{j <= i} min(1, (m - j + 1) p_(j)) in ascending
    order; reject where the adjusted p is at most alpha."""
    p = np.asarray(p_values, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return out


def wilcoxon(a: Sequence[float], b: Sequence[float]) -> TestResult:
    """Wilcoxon's signed-rank test on paired per-dataset values (scipy.stats.wilcoxon, two-sided, zero
    differences dropped); p = 1 when every difference is 0."""
    d = _differences(a, b)
    mean = float(d.mean()) if len(d) else float("nan")
    if not np.any(d != 0):
        return TestResult(0.0, 1.0, mean, len(d))
    res = _scipy_stats().wilcoxon(d, zero_method="wilcox", alternative="two-sided")
    return TestResult(float(res.statistic), float(res.pvalue), mean, int(np.sum(d != 0)))


def sign_test_datasets(a: Sequence[float], b: Sequence[float], greater_is_better: bool = True) -> tuple[int, int, int, float]:
    """(wins of a, ties, losses of a, two-sided exact binomial p) over datasets; ties are dropped from the
    test, as in the usual sign test. Demsar (2006, section 3.1.3) counts them instead, half for each side
    (one left out when their number is odd), which makes the test more conservative: 6 wins, 4 ties and
    no loss give p = 0.031 here and 0.109 by that rule."""
    d = _differences(a, b)
    if not greater_is_better:
        d = -d
    wins, losses = int(np.sum(d > 0)), int(np.sum(d < 0))
    return wins, len(d) - wins - losses, losses, sign_test(wins, losses, "two-sided")


@dataclass(frozen=True)
class PairTest:
    a: int
    b: int
    statistic: float
    p_value: float
    p_holm: float
    significant: bool


def pairwise_wilcoxon(scores: Any, alpha: float = 0.05) -> list[PairTest]:
    """Wilcoxon signed-rank tests of every pair of methods (columns) over the datasets (rows), with Holm's
    correction for the k (k - 1) / 2 comparisons."""
    m = _matrix(scores)
    k = m.shape[1]
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    results = [wilcoxon(m[:, i], m[:, j]) for i, j in pairs]
    adjusted = holm([r.p_value for r in results])
    return [PairTest(i, j, r.statistic, r.p_value, float(h), bool(h <= alpha))
            for (i, j), r, h in zip(pairs, results, adjusted)]
