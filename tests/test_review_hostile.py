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


def test_summary_of_more_classes_than_a_confusion_matrix_may_have_leaves_the_matrix_out(tmp_path):
    """--summary built a K x K matrix before any check: 20,000 classes and one numeric attribute asked for
    3 GiB, 200,000 for 320 GB (a MemoryError). Then it failed after the run; now the summary is written
    without the matrix (as the report leaves it out): every other number needs only O(K) counts."""
    path = tmp_path / "many.arff"
    labels = ",".join(f"c{k}" for k in range(9_000))
    rows = "".join(f"{r},c{r % 5}\n" for r in range(60))
    path.write_text(f"@relation many\n@attribute x numeric\n@attribute class {{{labels}}}\n@data\n{rows}", encoding="utf-8")
    result = runner.invoke(app, ["evaluate", str(path), "-c", "nb-gaussian", "--runs", "1", "-q", "--summary"])
    assert result.exit_code == 0, result.output
    assert "left out: 9,000 classes, more than 8,192 (the matrix has K x K cells)" in result.stdout
    assert "Kappa statistic" in result.stdout and "Weighted Avg." in result.stdout


def _many_class_predictions(K: int = 12, n: int = 400):
    rng = np.random.default_rng(7)
    y_true = rng.integers(0, K, n)
    y_pred = np.where(rng.random(n) < 0.5, y_true, rng.integers(0, K, n))
    y_pred[y_true == 3] = 4   # a class never predicted right; class K - 1 never predicted at all
    y_pred[y_pred == K - 1] = 0
    return y_true, y_pred, rng.random(n) * 3


def test_measures_past_the_confusion_limit_need_no_matrix_and_agree_with_scikit_learn(monkeypatch):
    """kappa, mcc, the averaged and per-class measures built the K x K matrix and so failed past
    MAX_CONFUSION_CLASSES (here lowered to 5) although they need only per-class counts."""
    from sklearn import metrics as sk

    from toolkit.api import Predictions
    from toolkit.evaluation.summary import EvaluationSummary
    from toolkit.plugins.metrics import classification as c

    monkeypatch.setattr(measures, "MAX_CONFUSION_CLASSES", 5)
    K = 12
    y_true, y_pred, w = _many_class_predictions(K)
    labels = list(range(K))
    with pytest.raises(ToolkitError, match="past the limit of 5 classes"):
        measures.confusion_matrix(y_true, y_pred, K)
    p = Predictions(y_true=y_true, y_pred=y_pred, proba=None, scores=None, classes=tuple(f"c{k}" for k in labels))
    assert c.kappa(p) == pytest.approx(sk.cohen_kappa_score(y_true, y_pred, labels=labels), abs=1e-12)
    assert c.mcc(p) == pytest.approx(sk.matthews_corrcoef(y_true, y_pred), abs=1e-12)
    seen = sorted(set(y_true) | set(y_pred))   # macro: the classes in the test part or the predictions
    for measure, fn in (("precision", sk.precision_score), ("recall", sk.recall_score), ("f1", sk.f1_score)):
        assert c.averaged_measure(measure, "macro")(p) == pytest.approx(
            fn(y_true, y_pred, labels=seen, average="macro", zero_division=0), abs=1e-12)
        assert c.averaged_measure(measure, "weighted")(p) == pytest.approx(
            fn(y_true, y_pred, labels=labels, average="weighted", zero_division=0), abs=1e-12)
    precision, recall, f1, support = sk.precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
    rates = measures.class_rates(measures.ClassCounts.of(y_true, y_pred, K, w))
    sk_w = sk.precision_recall_fscore_support(y_true, y_pred, labels=labels, sample_weight=w, zero_division=0)
    for got, want in zip((rates["precision"], rates["recall"], rates["f1"], rates["support"]), sk_w):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    summary = EvaluationSummary([f"c{k}" for k in labels])
    summary.add(y_true, y_pred, None, w)
    numbers = summary.numbers()
    assert summary.confusion is None and numbers["confusion"] is None
    assert numbers["kappa"] == pytest.approx(sk.cohen_kappa_score(y_true, y_pred, labels=labels, sample_weight=w),
                                             abs=1e-12)
    assert numbers["correct"] == pytest.approx(w[y_true == y_pred].sum(), rel=1e-12)
    np.testing.assert_allclose(numbers["per_class"]["precision"], sk_w[0], rtol=1e-12, atol=1e-12)
    assert "left out: 12 classes, more than 5" in summary.format()
    assert recall[3] == 0 and precision[K - 1] == 0 and support.sum() == len(y_true)   # the edge classes are there


def test_an_evaluator_with_a_class_limit_refuses_a_wider_dataset_before_any_repetition(tmp_path, monkeypatch):
    """-m confusion-matrix on 9,000 classes fitted, then failed each repetition (exit 1); the evaluator
    is registered with its limit and the dataset refused up front (exit 2)."""
    import toolkit.evaluation.harness as harness

    def forbidden(*args, **kwargs):
        raise AssertionError("a repetition ran")

    monkeypatch.setattr(harness, "_execute", forbidden)
    path = tmp_path / "many.arff"
    labels = ",".join(f"c{k}" for k in range(8_193))
    rows = "".join(f"{r},c{r % 5}\n" for r in range(60))
    path.write_text(f"@relation many\n@attribute x numeric\n@attribute class {{{labels}}}\n@data\n{rows}", encoding="utf-8")
    _one_error_line(runner.invoke(app, ["evaluate", str(path), "-c", "nb-gaussian", "--runs", "1", "-q",
                                        "-m", "error", "-m", "confusion-matrix"]),
                    "many: 8,193 classes are more than evaluator 'confusion-matrix' takes (8,192")
    with pytest.raises(AssertionError, match="a repetition ran"):   # kappa has no limit: it runs
        runner.invoke(app, ["evaluate", str(path), "-c", "nb-gaussian", "--runs", "1", "-q", "-m", "kappa"],
                      catch_exceptions=False)


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
        # left out with a word, not silently (the report's own note, in HTML and Markdown alike)
        md = tmp_path / f"r{extra}.md"
        assert runner.invoke(app, ["report", str(wide), "-o", str(md)]).exit_code == 0
        note = f"left out: more than {detail.MAX_SHOWN_CLASSES:,} classes"
        assert (note in html.read_text(encoding="utf-8")) is not shown
        assert (f"left out, more than {detail.MAX_SHOWN_CLASSES:,} classes" in md.read_text(encoding="utf-8")) is not shown
