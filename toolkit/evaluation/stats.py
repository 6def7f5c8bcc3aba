"""Statistics for comparing results: confidence intervals and significance tests (algorithms.md 5.2).

* :func:`corrected_ttest` - the corrected resampled paired t-test of Nadeau & Bengio (2003), as
  WEKA's Experimenter computes it (``PairedStatsCorrected``).
* :func:`paired_ttest`, :func:`sign_test`, :func:`mean_ci`, :func:`lower_confidence_limit`,
  :func:`thesis_ci`, :func:`normal_ci`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import special

# scipy.special, not scipy.stats: the t functions scipy.stats.t itself calls (stdtr, stdtrit), without the
# second of imports that scipy.stats costs every command

__all__ = ["TestResult", "corrected_ttest", "paired_ttest", "sign_test", "mean_ci", "t_critical",
           "lower_confidence_limit", "thesis_ci", "normal_ci"]


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


def corrected_ttest(a: Sequence[float], b: Sequence[float], test_train_ratio: float) -> TestResult:
    """Nadeau-Bengio corrected resampled t-test on paired results ``a`` and ``b``.

    t = mean(d) / sqrt((1/k + n_test/n_train) var(d)), var with k-1; two-sided p with k-1
    degrees of freedom. With var(d) = 0: p = 1 when every d is 0, else p = 0 (as WEKA).
    """
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    k = len(d)
    if k < 2:
        return TestResult(float("nan"), float("nan"), float(d.mean()) if k else float("nan"), k)
    mean = float(d.mean())
    var = float(d.var(ddof=1))
    if var == 0.0:
        if mean == 0.0:
            return TestResult(0.0, 1.0, 0.0, k)
        return TestResult(math.copysign(math.inf, mean), 0.0, mean, k)
    t = mean / math.sqrt((1.0 / k + test_train_ratio) * var)
    p = float(2 * special.stdtr(k - 1, -abs(t)))
    return TestResult(t, p, mean, k)


def paired_ttest(a: Sequence[float], b: Sequence[float], alternative: str = "two-sided") -> TestResult:
    """Plain paired t-test: t = mean(d) / (sd(d)/sqrt(m)); ``alternative`` 'two-sided' or 'greater'."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    m = len(d)
    sd = float(d.std(ddof=1)) if m > 1 else float("nan")
    mean = float(d.mean()) if m else float("nan")
    if not sd > 0:
        return TestResult(float("nan"), float("nan"), mean, m)
    t = mean / (sd / math.sqrt(m))
    if alternative == "greater":
        p = float(special.stdtr(m - 1, -t))
    elif alternative == "two-sided":
        p = float(2 * special.stdtr(m - 1, -abs(t)))
    else:
        raise ValueError(f"alternative must be 'two-sided' or 'greater', not {alternative!r}")
    return TestResult(t, p, mean, m)


def sign_test(wins: int, losses: int, alternative: str = "greater") -> float:
    """P(X >= wins | X ~ Binomial(wins + losses, 1/2)); ties are dropped before calling.

    ``alternative='two-sided'`` doubles the smaller tail, capped at 1.
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
