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
    assert table.count("\n| ") == 5 and "| words | kl | dkl | mi |" in table
    csv = curve.format("csv")
    assert csv.splitlines()[0] == "dataset,words,kl,dkl,mi"
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
    assert doc["schema"] == "toolkit.vocab-curve/1" and len(doc["records"]) == 3 * 2 * 2
    result = runner.invoke(app, ["vocab-curve", str(path), "--sizes", "5,full", "--runs", "2", "-s", "kl",
                                 "-s", "mi"])
    assert result.exit_code == 0 and "kl" in result.stdout and "mi" in result.stdout
    bad = runner.invoke(app, ["vocab-curve", str(path), "-s", "mii"])
    assert bad.exit_code == 2 and "did you mean 'mi'" in bad.stderr and "Traceback" not in bad.stderr
    grid = runner.invoke(app, ["vocab-curve", str(path), "-c", "nb-multinomial:epsilon=1|2"])
    assert grid.exit_code == 2 and "grid" in grid.stderr
