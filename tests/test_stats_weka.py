"""The corrected resampled t-test and the plain paired t-test against WEKA 3.6's own Experimenter testers
(PairedCorrectedTTester, PairedTTester), run by scripts/weka/make_ttest_refs.py on toolkit results written
in WEKA's ARFF result format: t, p, the test/train ratio, the v / * marks and the (v/ /*) counts."""

from __future__ import annotations

import json
import math
import re

import pytest

from conftest import ROOT
from toolkit.evaluation import stats
from toolkit.evaluation.report import compare_results
from toolkit.evaluation.results import Results

GOLDEN = json.loads((ROOT / "tests" / "golden" / "weka_ttest.json").read_text())
SETS = GOLDEN["sets"]
CASES = [(s["dataset"], b, j) for s in SETS for b in s["values"] for j in s["values"] if j != b]


def _set(name):
    return next(s for s in SETS if s["dataset"] == name)


def test_the_golden_file_covers_wins_losses_ties_and_corner_cases():
    verdicts = {v["significance"] for s in SETS for b in s["weka"]["corrected"].values() for v in b.values()}
    assert verdicts == {-1, 0, 1}
    real = [s for s in SETS if s["source"] == "toolkit harness"]
    real_verdicts = {v["significance"] for s in real for b in s["weka"]["corrected"].values() for v in b.values()}
    assert real_verdicts == {-1, 0, 1}, "toolkit results alone hold a win, a loss and a tie"
    assert len(CASES) >= 3 * 12


@pytest.mark.parametrize("dataset, base, other", CASES)
def test_corrected_and_plain_t_equal_weka(dataset, base, other):
    s = _set(dataset)
    # WEKA: x = baseline, y = the other, d = x - y; a run missing on either side is skipped
    pairs = [(y, x) for y, x in zip(s["values"][other], s["values"][base]) if x is not None and y is not None]
    a, b = [y for y, _x in pairs], [x for _y, x in pairs]
    for tester in ("corrected", "plain"):
        weka = s["weka"][tester][base][other]
        if tester == "corrected":
            ratio = stats.test_train_ratio(s["n_test"], s["n_train"])
            assert ratio == pytest.approx(weka["ratio"], rel=1e-15)
            ours = stats.corrected_ttest(b, a, ratio)
        else:
            ours = stats.paired_ttest(b, a)
        assert ours.n == weka["count"]
        assert ours.mean_difference == pytest.approx(weka["mean_difference"], rel=1e-12, abs=1e-15)
        assert ours.p_value == pytest.approx(weka["p_value"], rel=1e-9, abs=1e-14), tester
        if not math.isnan(weka["t"]):
            assert ours.statistic == pytest.approx(weka["t"], rel=1e-9, abs=1e-12), tester
        # WEKA's differencesSignificance: +1 when the baseline is significantly greater
        assert stats.significance(ours, GOLDEN["alpha"]) == weka["significance"], tester


def _records(s):
    out = []
    for p, values in s["values"].items():
        for r, v in enumerate(values):
            out.append({"status": "ok", "key": f"{s['dataset']}/{p}/{r}", "dataset": {"name": s["dataset"],
                                                                                  "n_instances": 100},
                        "pipeline": {"name": p}, "repetition": r, "protocol": {"name": "random", "repetitions": 10},
                        "n_train": s["n_train"][r], "n_test": s["n_test"][r], "metrics": {GOLDEN["metric"]: v}})
    return out


def _weka_marks(table: str, pipelines: list[str]) -> tuple[dict[str, list[str]], list[tuple[int, int, int]]]:
    """Marks per dataset row (one per non-baseline column) and the (v/ /*) footer of a WEKA table."""
    marks, footer = {}, []
    for line in table.splitlines():
        m = re.match(r"^(\S+)\s+\(\d+\)\s+\S+\s*\|(.*)$", line)
        if m and m.group(1) != "Dataset":
            cells = re.findall(r"\d\.\d+\(\d\.\d+\)\s?([v*]?)", m.group(2))
            marks[m.group(1)] = cells
        elif line.strip().startswith("(v/ /*)"):
            footer = [tuple(map(int, t)) for t in re.findall(r"\((\d+)/(\d+)/(\d+)\)", line)]
    return marks, footer


@pytest.mark.parametrize("tester, significance", [("corrected", "corrected-t"), ("plain", "paired-t")])
def test_compare_marks_and_counts_equal_weka_tables(tester, significance):
    names = list(SETS[0]["values"])
    results = Results([r for s in SETS for r in _records(s)])
    for b, base in enumerate(names):
        comp = compare_results(results, metric=GOLDEN["metric"], baseline=base, test=significance,
                               alpha=GOLDEN["alpha"])
        marks, footer = _weka_marks(GOLDEN["weka_tables"][tester][str(b)], names)
        others = [p for p in names if p != base]
        assert len(marks) == len(SETS) and len(footer) == len(others)
        for s in SETS:
            ours = [comp.cells[(s["dataset"], p)].mark for p in others]
            assert ours == marks[s["dataset"]], (base, s["dataset"])
            for p in others:
                assert comp.cells[(s["dataset"], p)].p_value == pytest.approx(
                    s["weka"][tester][base][p]["p_value"], rel=1e-9, abs=1e-14)
        assert [comp.wins[p] for p in others] == footer, base
