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
