"""Found by a hostile-input review (2026-12-07, afternoon): memory that grew with the square or the
product of declared sizes, not with the input's bytes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from test_trust import _one_error_line
from toolkit.cli import app
from toolkit.errors import ToolkitError
from toolkit.evaluation import measures

runner = CliRunner()


def _wide(path, n_values: int, n_classes: int) -> None:
    head = ["@relation wide", "@attribute a {" + ",".join(f"v{i}" for i in range(n_values)) + "}",
            "@attribute x numeric", "@attribute class {" + ",".join(f"c{i}" for i in range(n_classes)) + "}", "@data"]
    rows = [f"v{r},{r},c{r % 3}" for r in range(40)]
    path.write_text("\n".join(head + rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize("classifier", ["nb-weka", "bma-nb", "liblinear-lr"])
def test_class_by_value_tables_past_the_limit_are_refused_before_any_repetition(tmp_path, classifier, monkeypatch):
    """A 100,000-value attribute with a 100,000-value class (a 1.3 MB file) made the first repetition ask
    for 75 GiB (MemoryError, exit 1); now exit 2 before any repetition, naming the attribute."""
    import toolkit.evaluation.harness as harness

    def forbidden(*args, **kwargs):
        raise AssertionError("a repetition ran")

    monkeypatch.setattr(harness, "_execute", forbidden)
    path = tmp_path / "wide.arff"
    _wide(path, 20_000, 20_000)   # 4e8 cells: past 2^28
    _one_error_line(runner.invoke(app, ["evaluate", str(path), "-c", classifier, "--runs", "2"]),
                    classifier, "20,000 classes x 20,000 nominal values", "'a'", "400,000,000 cells")


def test_class_by_value_tables_within_the_limit_run(tmp_path):
    path = tmp_path / "wide.arff"
    _wide(path, 20_000, 10)
    result = runner.invoke(app, ["evaluate", str(path), "-c", "nb-weka", "--runs", "2", "-q"])
    assert result.exit_code == 0, result.output


def test_a_confusion_matrix_past_the_class_limit_is_an_error_not_an_allocation():
    K = measures.MAX_CONFUSION_CLASSES
    cm = measures.confusion_matrix(np.array([0, K - 1]), np.array([K - 1, K - 1]), K)
    assert cm.shape == (K, K) and cm[0, K - 1] == 1 and cm[K - 1, K - 1] == 1 and cm.sum() == 2
    del cm
    with pytest.raises(ToolkitError, match="confusion matrix of 200,000 classes"):
        measures.confusion_matrix(np.array([0]), np.array([1]), 200_000)


def test_report_of_records_with_more_classes_than_a_confusion_matrix_may_have(tmp_path):
    """report summed K x K matrices: a 2 MB results file whose records declare 200,000 classes ran out
    of memory. The matrix is left out; the rest of the report is written."""
    good = tmp_path / "good.jsonl"
    assert runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--runs", "2", "-q", "-o", str(good)]).exit_code == 0
    lines = good.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record.get("schema") == "toolkit.result/1":
            record["dataset"]["classes"] += [f"extra{k}" for k in range(200_000)]
            record["dataset"]["n_classes"] = len(record["dataset"]["classes"])
            record["train_class_counts"] += [0.0] * 200_000   # consistent: one count per class
            lines[i] = json.dumps(record)
    wide = tmp_path / "wide.jsonl"
    wide.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for out in ("r.html", "r.md", "r.json"):
        result = runner.invoke(app, ["report", str(wide), "-o", str(tmp_path / out)])
        assert result.exit_code == 0, result.output
        assert (tmp_path / out).stat().st_size > 0


def test_summary_of_more_classes_than_a_confusion_matrix_may_have_is_one_error_line(tmp_path):
    """--summary built a K x K matrix before any check: 20,000 classes and one numeric attribute asked for
    3 GiB, 200,000 for 320 GB (a MemoryError)."""
    path = tmp_path / "many.arff"
    labels = ",".join(f"c{k}" for k in range(200_000))   # 320 GB of K x K: refused at once by the allocator
    rows = "".join(f"{r},c{r % 5}\n" for r in range(60))
    path.write_text(f"@relation many\n@attribute x numeric\n@attribute class {{{labels}}}\n@data\n{rows}", encoding="utf-8")
    _one_error_line(runner.invoke(app, ["evaluate", str(path), "-c", "nb-gaussian", "--runs", "1", "-q", "--summary"]),
                    "a confusion matrix of 200,000 classes")


def test_a_report_leaves_out_confusion_matrices_past_the_shown_limit(tmp_path):
    """A K x K table of 2,000 classes was a 76 MB HTML file, of 8,192 past 2.8 GB of memory."""
    from toolkit.evaluation import detail

    good = tmp_path / "good.jsonl"
    assert runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--runs", "2", "-q", "-o", str(good)]).exit_code == 0
    lines = good.read_text(encoding="utf-8").splitlines()
    for extra, shown in ((detail.MAX_SHOWN_CLASSES - 3, True), (detail.MAX_SHOWN_CLASSES - 2, False)):
        out = []
        for line in lines:
            record = json.loads(line)
            if record.get("schema") == "toolkit.result/1":
                record["dataset"]["classes"] += [f"extra{k}" for k in range(extra)]
                record["dataset"]["n_classes"] = len(record["dataset"]["classes"])
                record["train_class_counts"] += [0.0] * extra   # consistent: one count per class
            out.append(json.dumps(record))
        wide = tmp_path / f"wide{extra}.jsonl"
        wide.write_text("\n".join(out) + "\n", encoding="utf-8")
        html = tmp_path / f"r{extra}.html"
        assert runner.invoke(app, ["report", str(wide), "-o", str(html)]).exit_code == 0
        assert ("extra0" in html.read_text(encoding="utf-8")) is shown   # the matrix's labels
