"""WEKA's evaluation summary, character for character: ``toolkit predict`` on labelled data against ``java
weka.classifiers.bayes.NaiveBayes -t TRAIN -T TEST -i`` on fixed train/test files of nine bundled datasets
(nominal, numeric, with missing values, mixed), and ``toolkit evaluate --summary`` against one WEKA
Evaluation summed over the harness's ten splits. Golden texts: scripts/weka/make_eval_refs.py."""

from __future__ import annotations

import difflib
import hashlib
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import ROOT
from toolkit.cli import app
from toolkit.data import arff
from toolkit.evaluation.summary import EvaluationSummary, weka_number
from toolkit.loading import resolve_dataset

runner = CliRunner()
GOLDEN = json.loads((ROOT / "tests" / "golden" / "weka_summary.json").read_text())


def _same(ours: str, weka: str, what: str) -> None:
    if ours != weka:
        diff = "\n".join(difflib.unified_diff(weka.splitlines(), ours.splitlines(), "weka", "toolkit", lineterm=""))
        pytest.fail(f"{what} differs from WEKA's:\n{diff}")


def _write_split(tmp_path, case):
    ds = arff.read(resolve_dataset(case["dataset"]))
    rows = np.arange(ds.n_instances)
    train, test = tmp_path / "train.arff", tmp_path / "test.arff"
    arff.write(ds.subset(rows[rows % 3 != 2]), train)
    arff.write(ds.subset(rows[rows % 3 == 2]), test)
    for path, key in ((train, "train_sha256"), (test, "test_sha256")):
        assert hashlib.sha256(path.read_bytes()).hexdigest() == case[key], f"{path.name} is not the file WEKA read"
    return train, test


@pytest.mark.parametrize("case", GOLDEN["fixed"], ids=lambda c: c["dataset"])
def test_predict_prints_wekas_summary_for_train_and_test_files(tmp_path, case):
    train, test = _write_split(tmp_path, case)
    model = tmp_path / "nb.tkm"
    trained = runner.invoke(app, ["train", str(train), "-c", "nb-weka", "--no-tune", "-o", str(model)])
    assert trained.exit_code == 0, trained.output
    for part, path, title in (("test", test, "=== Error on test data ==="),
                              ("train", train, "=== Error on training data ===")):
        result = runner.invoke(app, ["predict", str(model), str(path)])
        assert result.exit_code == 0, result.output
        text = result.stdout
        ours = text[text.index("=== Error on test data ==="):].rstrip() + "\n"
        if part == "train":
            ours = ours.replace("=== Error on test data ===", title, 1)
        _same(ours, case[part], f"{case['dataset']} ({case['kind']}), {part} data")


def test_the_golden_cases_cover_what_the_issue_asks():
    kinds = " ".join(c["kind"] for c in GOLDEN["fixed"])
    assert "nominal" in kinds and "numeric" in kinds and "missing values" in kinds
    assert any("?" in c["test"] for c in GOLDEN["fixed"]), "a class absent from a test set (ROC area '?')"
    assert any("Ignored Class Unknown" in c["test"] or "Relative absolute error" in c["test"] for c in GOLDEN["fixed"])


@pytest.mark.parametrize("case", GOLDEN["harness"], ids=lambda c: c["dataset"])
def test_evaluate_summary_equals_weka_summed_over_the_repetitions(case):
    result = runner.invoke(app, ["evaluate", case["dataset"], "-c", "nb-weka", "--summary", "-q"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    start = text.index(f"=== Summary: {case['dataset']} / nb-weka, 10 repetitions ===")
    ours = "=== Summary ===\n" + text[start:].split("\n", 1)[1]
    weka = case["summary"] + "\n\n" + case["class_details"] + "\n\n" + case["matrix"]
    _same(ours.rstrip() + "\n", weka.rstrip() + "\n", f"{case['dataset']}: evaluate --summary")
    if case["dataset"] == "vote":  # the same numbers in the JSON document
        doc = json.loads(runner.invoke(app, ["evaluate", "vote", "-c", "nb-weka", "--summary", "--json", "-q"]).stdout)
        (summary,) = doc["summary"]
        kappa = next(line for line in case["summary"].splitlines() if line.startswith("Kappa")).split()[-1]
        assert f"{summary['kappa']:.4f}".rstrip("0") == kappa and summary["parts"] == 10


def test_summary_json_and_stderr_for_machine_formats(tmp_path):
    case = GOLDEN["fixed"][2]
    train, test = _write_split(tmp_path, case)
    model = tmp_path / "nb.tkm"
    runner.invoke(app, ["train", str(train), "-c", "nb-weka", "--no-tune", "-o", str(model)])
    doc = json.loads(runner.invoke(app, ["predict", str(model), str(test), "--format", "json"]).stdout)
    weka_correct = next(line for line in case["test"].splitlines() if line.startswith("Correctly"))
    assert float(weka_correct.split()[3]) == doc["summary"]["correct"]
    csv = runner.invoke(app, ["predict", str(model), str(test), "--format", "csv"])
    assert csv.stdout.startswith("instance,actual,predicted") and "=== Error on test data ===" not in csv.stdout
    assert "=== Error on test data ===" in csv.stderr
    quiet = runner.invoke(app, ["predict", str(model), str(test), "--no-summary"])
    assert "Kappa" not in quiet.stdout


#: (value, width, decimals) -> what WEKA 3.6.14's weka.core.Utils.doubleToString printed for it (a few lines of
#: Java against /usr/share/java/weka.jar, run when this table was written)
WEKA_DOUBLE_TO_STRING = [
    (144, 12, 4, "    144     "), (96.0, 12, 4, "     96     "), (0.94, 12, 4, "      0.94  "),
    (7.28832, 12, 4, "      7.2883"), (0.9235, 7, 3, "  0.924"), (1, 7, 3, "  1    "), (0, 2, 0, " 0"),
    (-0.25, 7, 3, " -0.25 "), (123456.5, 7, 3, "123456.5"), (-0.00004, 12, 4, "      0     "), (2.5, 3, 0, "  3"),
    (-2.5, 3, 0, " -3"), (0.0005, 7, 3, "  0.001"), (1e-20, 12, 4, "      0     "), (math.nan, 7, 3, "NaN    ")]


@pytest.mark.parametrize("value, width, decimals, text", WEKA_DOUBLE_TO_STRING)
def test_weka_number_layout(value, width, decimals, text):
    assert weka_number(value, width, decimals) == text


def test_weighted_instances_and_missing_classes():
    """Instance weights count, missing classes are ignored and reported, unclassified rows are counted."""
    s = EvaluationSummary(["a", "b"]).add([0, 1, -1, 1], [0, 0, 1, -1], [[0.9, 0.1], [0.6, 0.4], [0.5, 0.5],
                                                                        [0.0, 0.0]], [2.0, 1.0, 3.0, 0.5], [5, 3])
    v = s.numbers()
    assert (v["correct"], v["incorrect"], v["total"], v["missing_class"], v["unclassified"]) == (2.0, 1.0, 3.5, 3.0, 0.5)
    assert v["mean_absolute_error"] == pytest.approx((2 * 0.1 + 1 * 0.6) / 3.0)
    text = s.summary_text()
    assert "Ignored Class Unknown Instances" in text and "UnClassified Instances" in text
    assert math.isclose(v["pct_correct"], 100 * 2 / 3.5)
