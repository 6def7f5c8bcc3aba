"""One-vs-rest binary tasks (Dataset.one_vs_rest, --positive, --positive-below), splits that keep each
class's share, and the lower confidence limit in reports."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import toolkit
from conftest import shared_path
from toolkit.cli import app
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import DatasetError, ParameterError
from toolkit.evaluation.api import binary_tasks, compare
from toolkit.evaluation.report import format_comparison
from toolkit.evaluation.resampling import random_splits

runner = CliRunner()


def _labelled(y, labels=("a", "b", "c", "d")):
    y = np.asarray(y, dtype=np.int64)
    attrs = [Attribute("x", "numeric"), Attribute("class", "nominal", labels)]
    return Dataset("toy", attrs, np.arange(len(y), dtype=float)[:, None], y, 1, np.ones(len(y)))


def test_one_vs_rest_recodes_the_class():
    ds = _labelled([0, 1, 2, 1, -1, 3, 1])
    task = ds.one_vs_rest("b")
    assert task.classes == ("rest", "b")
    assert task.y.tolist() == [0, 1, 0, 1, -1, 0, 1]
    assert task.name == "toy:b" and task.task == "b"
    assert task.class_attribute.name == "class" and task.features.names() == ["x"]
    assert ds.y.tolist() == [0, 1, 2, 1, -1, 3, 1]  # the source is untouched
    assert task.subset([0, 1]).name == "toy:b"
    with pytest.raises(DatasetError, match="did you mean 'b'"):
        ds.one_vs_rest("B")


def test_rare_classes_and_binary_tasks():
    y = [0] * 50 + [1] * 30 + [2] * 9 + [3] * 11  # shares 0.5, 0.3, 0.09, 0.11
    ds = _labelled(y)
    assert ds.class_counts().tolist() == [50, 30, 9, 11]
    assert ds.rare_classes(0.1) == ["c"]
    assert ds.rare_classes(0.31) == ["b", "c", "d"]
    names = [t.name for t in binary_tasks([ds], positive=["a"], positive_below=0.1)]
    assert names == ["toy:a", "toy:c"]
    with pytest.raises(DatasetError, match="share"):
        ds.rare_classes(0)


def test_stratified_splits_keep_two_thirds_of_each_class_for_training():
    y = np.array([0] * 200 + [1] * 7 + [2] * 31)
    for split in random_splits(len(y), 5, 1, 1 / 3, 0.1, y=y):
        for k in range(3):
            n_k = int((y == k).sum())
            in_train = int((y[split.train] == k).sum())
            assert abs(in_train - 2 * n_k / 3) <= 1, (k, in_train, n_k)
        assert len(np.intersect1d(split.train, split.test)) == 0
        assert len(split.train) + len(split.test) == len(y)


def test_cli_positive_runs_one_task_per_class():
    result = runner.invoke(app, ["evaluate", "iris", "-c", "nb-bim", "--positive", "Iris-setosa", "--positive",
                                 "Iris-virginica", "--stratified", "--test-fraction", "0.3333333333333333",
                                 "--runs", "2", "-m", "average-precision", "--no-tune", "--json", "-q"])
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)["records"]
    assert sorted({r["dataset"]["name"] for r in records}) == ["iris:Iris-setosa", "iris:Iris-virginica"]
    assert all(r["status"] == "ok" and r["dataset"]["n_classes"] == 2 for r in records)
    assert all(r["n_test"] == 50 for r in records)  # a third of 150, stratified: 17 + 33 (or 16 + 34)


def test_cli_errors_for_an_unknown_class_and_a_multiclass_binary_learner():
    bad = runner.invoke(app, ["evaluate", "iris", "-c", "nb-bim", "--positive", "setosa", "--runs", "1"])
    assert bad.exit_code == 2
    assert "class 'setosa' is not a value of 'class'" in bad.stderr and "Traceback" not in bad.stderr
    multi = runner.invoke(app, ["evaluate", "iris", "-c", "nb-bim", "--runs", "1", "-m", "error"])
    assert "--positive CLASS" in multi.stderr


def test_lower_confidence_limit_in_the_report():
    ds = _labelled([0] * 30 + [1] * 30)
    results = toolkit.evaluate(ds.one_vs_rest("b"), ["nb-gaussian"], runs=5, metrics=["accuracy"], tune=False)
    comp = compare(results, metric="accuracy")
    cell = comp.cells[("toy:b", "nb-gaussian")]
    values = np.array(cell.values)
    from scipy import stats

    expected = values.mean() - stats.t.ppf(0.95, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    assert cell.lcl == pytest.approx(expected, abs=1e-12)
    assert comp.as_dict()["rows"][0]["nb-gaussian"]["lcl"] == pytest.approx(expected, abs=1e-12)
    assert "lower 95% confidence limit" in format_comparison(comp, "markdown", interval="lcl")


def test_one_vs_rest_on_a_shared_word_count_corpus():
    ds = toolkit.load_arff(shared_path("text", "oh0.wc.arff"))
    rare = ds.rare_classes(0.1)
    assert rare and all(ds.class_counts()[ds.classes.index(c)] < 0.1 * ds.n_instances for c in rare)
    results = toolkit.evaluate(ds, ["nb-bim"], example_selector="ots", positive=rare[0], runs=2, stratified=True,
                               test_fraction=1 / 3, metrics=["average-precision"], tune=False)
    for record in results.records:
        assert record["status"] == "ok"
        n_pos = int(ds.class_counts()[ds.classes.index(rare[0])])
        assert record["extra"]["n_selected_examples"] > round(2 * n_pos / 3)


def test_positive_with_a_fixed_test_set():
    iris = toolkit.load_arff("iris")
    order = np.random.default_rng(0).permutation(iris.n_instances)
    train, test = iris.subset(order[:100]), iris.subset(order[100:])
    train.path, test.path = "iris-train.arff", "iris-test.arff"
    results = toolkit.evaluate(train, ["nb-bim"], test=test, positive=["Iris-setosa", "Iris-virginica"],
                               metrics=["average-precision"], tune=False)
    records = results.records
    assert [r["dataset"]["name"] for r in records] == ["iris-train:Iris-setosa", "iris-train:Iris-virginica"]
    for r in records:
        assert r["status"] == "ok" and r["n_test"] == 50 and r["protocol"]["name"] == "fixed"
        positive = r["dataset"]["name"].split(":")[1]
        expected = (iris.y[order[100:]] == iris.classes.index(positive)).astype(int).tolist()
        assert r["predictions"]["y_true"] == expected


def test_positive_below_leaves_out_a_dataset_without_a_rare_class():
    """One dataset without a class under the share is warned about, not fatal to the others' tasks."""
    from dataclasses import replace

    rare = replace(_labelled([0] * 18 + [1] * 2, ("big", "small")), relation="rare")
    even = replace(_labelled([0] * 10 + [1] * 10, ("a", "b")), relation="even")
    with pytest.warns(Warning, match="even: no class has a share below 0.2"):
        res = toolkit.evaluate([rare, even], ["nb-gaussian"], runs=2, positive_below=0.2)
    assert res.datasets() == ["rare:small"]
    with pytest.raises(ParameterError, match="no binary task"), pytest.warns(Warning, match="even: no class"):
        toolkit.evaluate([even], ["nb-gaussian"], runs=2, positive_below=0.2)
