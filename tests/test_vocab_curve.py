"""Accuracy against vocabulary size (toolkit.evaluation.curves and ``toolkit vocab-curve``).

The curve must give, for every size k, exactly what the harness gives for the same pipeline with
the selector's own ``k``: the two are computed by different code paths on the same splits.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

import toolkit
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import ParameterError
from toolkit.evaluation.curves import parse_sizes, vocabulary_curve


def counts_dataset(seed=0, n=90, V=40, K=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % K
    rates = rng.gamma(0.5, 1.0, size=(K, V))
    X = rng.poisson(rates[y]).astype(float)
    attrs = tuple(Attribute(f"w{i}", "numeric") for i in range(V)) + (
        Attribute("class", "nominal", tuple(f"c{k}" for k in range(K))),)
    return Dataset("synthetic", attrs, sp.csr_matrix(X), y.astype(np.int64), V, np.ones(n))


def test_curve_equals_the_harness_with_the_selectors_k():
    ds = counts_dataset()
    clf = "nb-multinomial:epsilon=1,prior=mle"
    curve = vocabulary_curve(ds, selectors=["kl", "dkl", "mi"], sizes=[3, 10, None], classifier=clf, runs=2,
                             test_fraction=0.2, seed=4)
    assert len(curve.records) == 3 * 3 * 2
    for sel in ("kl", "dkl", "mi"):
        for size in (3, 10):
            res = toolkit.evaluate(ds, [clf], feature_selector=f"{sel}:k={size}", runs=2, test_fraction=0.2,
                                   seed=4, metrics=["accuracy"], tune=False)
            harness = [r["metrics"]["accuracy"] for r in sorted(res.ok(), key=lambda r: r["repetition"])]
            assert curve.values("synthetic", sel, size) == pytest.approx(harness, abs=1e-12)
    full = toolkit.evaluate(ds, [clf], runs=2, test_fraction=0.2, seed=4, metrics=["accuracy"], tune=False)
    want = [r["metrics"]["accuracy"] for r in sorted(full.ok(), key=lambda r: r["repetition"])]
    for sel in ("kl", "dkl", "mi"):
        assert curve.values("synthetic", sel, None) == pytest.approx(want, abs=1e-12)
    assert curve.n_features("synthetic", None) == 40 and curve.n_features("synthetic", 3) == 3


def test_fixed_split_text_dataset_and_formatting(tmp_path):
    curve = vocabulary_curve("ReutersGrain-train", test="ReutersGrain-test", sizes="20,200,full",
                             text="word-counts:remove_top=10")
    assert {r["n_test"] for r in curve.records} == {604}
    assert curve.protocol["name"] == "fixed"
    table = curve.format("markdown")
    assert table.count("\n| ") == 5 and "| words | kl | dkl | mi | mi:event_model=token |" in table
    csv = curve.format("csv")
    assert csv.splitlines()[0] == "dataset,words,kl,dkl,mi,mi:event_model=token"
    pytest.importorskip("matplotlib")
    png = tmp_path / "curve.png"
    curve.plot(png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_parse_sizes():
    assert parse_sizes("100, 20,full") == [100, 20, None]
    for bad in ("", "0", "ten"):
        with pytest.raises(ParameterError):
            parse_sizes(bad)


def test_cli_vocab_curve(tmp_path):
    from toolkit.cli import app

    path = tmp_path / "syn.arff"
    toolkit.save_arff(counts_dataset(), path)
    runner = CliRunner()
    result = runner.invoke(app, ["vocab-curve", str(path), "--sizes", "5,full", "--runs", "2", "--format", "json",
                                 "-q"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    # the default selectors: kl, dkl and MI of both event models (algorithms.md 3.2, revision 2: both reported)
    assert doc["schema"] == "toolkit.vocab-curve/1" and len(doc["records"]) == 4 * 2 * 2
    assert {r["selector"] for r in doc["records"]} == {"kl", "dkl", "mi", "mi:event_model=token"}
    result = runner.invoke(app, ["vocab-curve", str(path), "--sizes", "5,full", "--runs", "2", "-s", "kl",
                                 "-s", "mi"])
    assert result.exit_code == 0 and "kl" in result.stdout and "mi" in result.stdout
    bad = runner.invoke(app, ["vocab-curve", str(path), "-s", "mii"])
    assert bad.exit_code == 2 and "did you mean 'mi'" in bad.stderr and "Traceback" not in bad.stderr
    grid = runner.invoke(app, ["vocab-curve", str(path), "-c", "nb-multinomial:epsilon=1|2"])
    assert grid.exit_code == 2 and "grid" in grid.stderr


def test_cross_validation_folds_partition_the_data_and_equal_fixed_splits():
    from toolkit.evaluation.resampling import weka_fold

    ds = counts_dataset(seed=2, n=53)
    curve = vocabulary_curve(ds, selectors=["dkl", "mi"], sizes=[4, None], folds=5, seed=7)
    assert curve.protocol["name"] == "cross-validation" and curve.protocol["folds"] == 5
    rows = [r for r in curve.records if r["selector"] == "dkl" and r["size"] == 4]
    assert sorted(r["repetition"] for r in rows) == [0, 1, 2, 3, 4]
    assert sum(r["n_test"] for r in rows) == 53 and all(r["n_train"] + r["n_test"] == 53 for r in rows)
    # each fold by hand: the seeded permutation cut as WEKA cuts folds, run as a fixed train/test split
    perm = np.random.default_rng(7).permutation(53)
    for f in range(5):
        held_out = perm[weka_fold(53, 5, f)]
        fit = np.setdiff1d(perm, held_out)
        fixed = vocabulary_curve(ds.subset(perm[np.isin(perm, fit)]), test=ds.subset(held_out),
                                 selectors=["dkl", "mi"], sizes=[4, None], seed=7 + f)
        for sel in ("dkl", "mi"):
            for size in (4, None):
                assert curve.values("synthetic", sel, size)[f] == pytest.approx(
                    fixed.values("synthetic", sel, size)[0], abs=1e-12)
    with pytest.raises(ParameterError, match="folds"):
        vocabulary_curve(ds, folds=1)
    with pytest.raises(ParameterError, match="not both"):
        vocabulary_curve(ds, folds=3, test=ds)


def test_a_function_can_be_the_metric():
    ds = counts_dataset(seed=3)

    def share_correct(p):  # accuracy written out
        return float(np.mean(p.y_pred == p.y_true))

    by_name = vocabulary_curve(ds, selectors=["kl"], sizes=[5, 20], runs=2, seed=1)
    by_function = vocabulary_curve(ds, selectors=["kl"], sizes=[5, 20], runs=2, seed=1, metric=share_correct)
    assert by_function.metric == "share_correct"
    for size in (5, 20):
        assert by_function.values("synthetic", "kl", size) == by_name.values("synthetic", "kl", size)


def test_vocab_curve_checks_its_data_before_the_first_split(tmp_path):
    """evaluate refuses fractional counts for kl and negative values before anything runs; vocab-curve ran kl
    on iris's measurements and failed later with numpy's repr (np.float64(-2.3)) and no dataset name."""
    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    fractional = runner.invoke(app, ["vocab-curve", "iris", "-s", "kl"])
    assert fractional.exit_code == 2 and "iris: kl needs whole-number counts and found 5.1" in fractional.stderr
    (tmp_path / "neg.arff").write_text("@relation neg\n@attribute a numeric\n@attribute c {x,y}\n@data\n"
                                       "-2.3,x\n1,y\n3,x\n0,y\n")
    negative = runner.invoke(app, ["vocab-curve", str(tmp_path / "neg.arff"), "-s", "mi"])
    assert negative.exit_code == 2 and negative.stderr.startswith("Error: neg: mi needs non-negative values")


@pytest.mark.parametrize("metric", ["bep-macro", "average-precision"])
def test_curve_ranks_like_the_harness(metric):
    """The curve gave the ranking evaluators no probabilities, so with more than two classes they ranked by
    the margin over the best other class while the harness ranks by the log posterior odds (both are the
    same order only when one other class dominates): on these short documents of 8 classes they differed."""
    ds = counts_dataset(seed=4, n=150, V=40, K=8)
    ds = Dataset("synthetic", ds.attributes, ds.X.multiply(0.1).ceil(), ds.y, ds.class_index, ds.weights)
    clf = "nb-multinomial:epsilon=1,prior=mle"
    curve = vocabulary_curve(ds, selectors=["kl"], sizes=[None], classifier=clf, runs=3, test_fraction=0.3,
                             seed=2, metric=metric)
    res = toolkit.evaluate(ds, [clf], runs=3, test_fraction=0.3, seed=2, metrics=[metric], tune=False)
    records = sorted(res.ok(), key=lambda r: r["repetition"])
    assert curve.values("synthetic", "kl", None) == pytest.approx([r["metrics"][metric] for r in records],
                                                                 abs=1e-12)


def test_runs_are_checked_before_loading_and_splits_hold_one_copy_at_a_time(monkeypatch):
    """A run count beyond what a run holds is refused at once; and a curve of many repetitions makes each
    split's two datasets when it runs (they were all made up front: a copy of the data per repetition)."""
    ds = counts_dataset()
    for bad in (0, 10**9, 2.5, True):
        with pytest.raises(ParameterError, match="runs must be a whole number from 1 to 1,000,000"):
            vocabulary_curve(ds, selectors=["kl"], sizes=[3], runs=bad)
    alive, most = [0], [0]
    original = Dataset.subset

    def subset(self, rows):
        import weakref

        out = original(self, rows)
        alive[0] += 1
        most[0] = max(most[0], alive[0])
        weakref.finalize(out, lambda: alive.__setitem__(0, alive[0] - 1))
        return out

    monkeypatch.setattr(Dataset, "subset", subset)
    curve = vocabulary_curve(ds, selectors=["kl"], sizes=[3], runs=12, test_fraction=0.2, seed=2,
                             classifier="nb-multinomial")
    assert len(curve.records) == 12
    assert most[0] <= 4, most[0]          # a train and a test part alive at a time (plus one being made)
