"""Found by a statistics review (2026-12-07, afternoon), checked against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from toolkit.evaluation.curves import CurveResult


def _curve(metric: str, kl: list[float], mi: list[float]) -> CurveResult:
    records = [{"dataset": "d", "selector": sel, "size": 100, "repetition": r, "value": v, "n_features": 100}
               for sel, values in (("kl", kl), ("mi", mi)) for r, v in enumerate(values)]
    return CurveResult(records, ["kl", "mi"], [100], metric)


@pytest.mark.parametrize("metric, greater", [("error", False), ("accuracy", True)])
def test_vocab_curve_marks_the_better_selector_whatever_the_metrics_direction(metric, greater):
    """The one-sided test always asked 'a higher than b': with --metric error the selector of lower error
    was marked '*' (worse than the baseline)."""
    low, high = [0.10, 0.12, 0.11, 0.09, 0.10], [0.20, 0.22, 0.19, 0.21, 0.20]
    curve = _curve(metric, low, high)     # kl low, mi (the baseline) high
    p_kl_beats_mi = curve.paired_test("d", "kl", "mi", 100)
    expected = sps.ttest_rel(low, high, alternative="greater" if greater else "less").pvalue
    assert p_kl_beats_mi == pytest.approx(expected, rel=1e-9)
    row = [line for line in curve.format("table", baseline="mi").splitlines() if line.startswith("100")][0]
    kl_cell = row.split()[1:5]
    assert kl_cell[-1] == ("*" if greater else "v"), row   # kl is worse by accuracy-like reading, better by error


def test_identical_results_are_equivalent_in_the_bayesian_test_even_with_rope_zero():
    """Zero variance puts the whole posterior on mean(d) (the docstring): for identical pipelines with rope 0
    that is P(equivalent) = 1, not 'equally likely better or worse' (0.5 / 0 / 0.5)."""
    from toolkit.evaluation.stats import bayesian_correlated_ttest

    same = bayesian_correlated_ttest([0.1, 0.2, 0.3], [0.1, 0.2, 0.3], rope=0.0)
    assert (same.p_a_better, same.p_equivalent, same.p_b_better) == (0.0, 1.0, 0.0)
    shifted = bayesian_correlated_ttest([2.0, 3.0, 4.0], [1.0, 2.0, 3.0], rope=0.0)   # d = 1 every time, exactly
    assert (shifted.p_a_better, shifted.p_equivalent, shifted.p_b_better) == (1.0, 0.0, 0.0)
    # a non-degenerate case stays scipy's Student t posterior
    a, b = np.array([0.1, 0.25, 0.3, 0.2]), np.array([0.12, 0.2, 0.31, 0.1])
    r = bayesian_correlated_ttest(a, b, rope=0.01)
    d = a - b
    post = sps.t(len(d) - 1, loc=d.mean(), scale=np.sqrt(d.var(ddof=1) * (1 / len(d) + 1 / 9)))
    assert r.p_a_better == pytest.approx(post.sf(0.01), rel=1e-12)
    assert r.p_b_better == pytest.approx(post.cdf(-0.01), rel=1e-12)


def test_the_bayesian_test_pairs_the_repetitions_with_values_as_the_t_tests_do(tmp_path):
    """A cell with one repetition without a value (null) lost its Bayesian test altogether, while the
    t-tests and the sign test paired the other repetitions."""
    import json

    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    good = tmp_path / "good.jsonl"
    assert runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-c", "nb-gaussian", "--runs", "6", "-q",
                               "-o", str(good)]).exit_code == 0
    lines = good.read_text(encoding="utf-8").splitlines()
    holed = 0
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("pipeline", {}).get("name") == "nb-gaussian" and record.get("repetition") in (1, 4):
            record["metrics"]["error"] = None
            lines[i] = json.dumps(record)
            holed += 1
    assert holed == 2
    path = tmp_path / "holed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "r.json"
    assert runner.invoke(app, ["report", str(path), "-o", str(out), "--rope", "0.01"]).exit_code == 0
    cells = json.loads(out.read_text(encoding="utf-8"))["bayesian"]["cells"]
    assert [(c["dataset"], c["pipeline"], c["df"]) for c in cells] == [("iris", "nb-gaussian", 3)]   # 4 pairs
