"""The corrected resampled t-test and the plain paired t-test against WEKA 3.6's own Experimenter testers
(PairedCorrectedTTester, PairedTTester), run by scripts/weka/make_ttest_refs.py on toolkit results written
in WEKA's ARFF result format: t, p, the test/train ratio, the v / * marks and the (v/ /*) counts."""

from __future__ import annotations

import json
import math
import re

import numpy as np
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


# ------------------------------------------------------------------ missing and failed runs (B1, B3)

PAIRING = json.loads((ROOT / "tests" / "golden" / "weka_ttest_pairing.json").read_text())


def _pairing_records(metric: str) -> list[dict]:
    """The golden sets as toolkit records: None an undefined value (null), "FAIL" a failed repetition."""
    out = []
    for s in PAIRING["sets"]:
        for p, values in s["values"].items():
            for r, v in enumerate(values):
                rec = {"status": "ok", "key": f"{s['dataset']}/{p}/{r}", "repetition": r,
                       "dataset": {"name": s["dataset"], "n_instances": 100}, "pipeline": {"name": p},
                       "protocol": {"name": "random", "repetitions": len(values)},
                       "n_train": PAIRING["n_train"], "n_test": PAIRING["n_test"], "metrics": {metric: v}}
                if v == "FAIL":
                    rec.update(status="failed", metrics={}, error="made up for this test")
                out.append(rec)
    return out


def _weka_cells(table: str, n_others: int) -> tuple[dict[str, list[str | None]], list[tuple[int, int, int]]]:
    """Per dataset row of a WEKA command-line table, each non-baseline column's mark ('v', '*', '' or None
    for an empty cell), and the (v/ /*) footer. The columns have a fixed width."""
    rows, footer = {}, []
    for line in table.splitlines():
        m = re.match(r"^(\S+)\s+\(\d+\)[^|]*\|(.*)$", line)
        if m and m.group(1) != "Dataset":
            tail = m.group(2)
            width = len(tail) // n_others
            assert width * n_others == len(tail), line
            chunks = [tail[i * width:(i + 1) * width] for i in range(n_others)]
            rows[m.group(1)] = [c[-1].strip() if c.strip() else None for c in chunks]
        elif line.strip().startswith("(v/ /*)"):
            footer = [tuple(map(int, t)) for t in re.findall(r"\((\d+)/(\d+)/(\d+)\)", line)]
    return rows, footer


@pytest.mark.parametrize("tester, significance", [("corrected", "corrected-t"), ("plain", "paired-t")])
@pytest.mark.parametrize("metric", ["accuracy", "error"])
def test_marks_and_counts_with_missing_and_failed_runs_equal_weka(tester, significance, metric):
    """The mark's direction comes from the paired values (a cell's own mean may hold runs the baseline has
    no value for, and point the other way), and a dataset without a paired value is no tie in (v/ /*):
    WEKA's own tables. WEKA's v is 'greater'; for error (lower is better) that is the toolkit's *."""
    results = Results(_pairing_records(metric))
    schemes = PAIRING["schemes"]
    flip = {"v": "*", "*": "v", "": ""} if metric == "error" else {"v": "v", "*": "*", "": ""}
    for base in schemes:
        comp = compare_results(results, metric=metric, baseline=base, test=significance, alpha=PAIRING["alpha"])
        others = [p for p in schemes if p != base]
        rows, footer = _weka_cells(PAIRING["weka_tables"][tester][base], len(others))
        assert set(rows) == {s["dataset"] for s in PAIRING["sets"]} and len(footer) == len(others)
        for d, weka in rows.items():
            for p, mark in zip(others, weka):
                cell = comp.cells.get((d, p))
                ours = "" if cell is None else cell.mark
                assert ours == ("" if mark is None else flip[mark]), (tester, metric, base, d, p)
        expected = [(l, t, w) if metric == "error" else (w, t, l) for w, t, l in footer]
        assert [comp.wins[p] for p in others] == expected, (tester, metric, base)


def test_the_pairing_golden_file_holds_the_cases_it_is_for():
    """Its sets do disagree: a cell's own mean against the baseline's points one way, WEKA's mark the other."""
    rows, footer = _weka_cells(PAIRING["weka_tables"]["corrected"]["A"], 2)
    values = {s["dataset"]: s["values"] for s in PAIRING["sets"]}

    def own_mean(v):
        return float(np.mean([x for x in v if isinstance(x, float)]))

    for d in ("nan-run", "failed-run"):
        assert own_mean(values[d]["B"]) > own_mean(values[d]["A"]) and rows[d][0] == "*"
    assert own_mean(values["nan-baseline-run"]["B"]) < own_mean(values["nan-baseline-run"]["A"])
    assert rows["nan-baseline-run"][0] == "v"
    assert rows["all-missing"] == [None, None] and rows["other-missing"][0] is None
    assert sum(footer[0]) == 4 and sum(footer[1]) == 6  # B: 3 datasets without a pair; C: 1
