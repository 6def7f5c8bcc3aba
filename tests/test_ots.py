"""OTS and random-STS example selectors (algorithms.md 4.1, 4.2): test vector 7.8 (revision 2's defaults, and
revision 1's values with features="all", evaluate="sts"), the vectorised search against a brute-force loop
that refits for every leave-one-out score, stopping rules, the pipeline."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import bim_reference as ref
import toolkit
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.ots.selectors import OTSSelector, RandomSTSSelector
from toolkit.plugins.ots.search import optimal_training_set, step_size

# algorithms.md 7.8: positives d0-d3, negatives d4-d15
POS78 = [(1, 0, 0, 0, 0, 0), (1, 0, 0, 1, 0, 0), (1, 0, 1, 1, 0, 0), (0, 1, 0, 0, 0, 0)]
NEG78 = [(0, 0, 0, 1, 1, 1), (0, 0, 0, 0, 0, 1), (1, 0, 0, 0, 0, 0), (0, 1, 0, 0, 0, 1), (0, 0, 1, 0, 1, 0),
         (0, 1, 0, 0, 0, 1), (0, 0, 0, 1, 1, 1), (0, 0, 0, 0, 1, 1), (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 1),
         (0, 0, 0, 0, 1, 1), (0, 0, 0, 1, 1, 1)]
X78 = np.array(POS78 + NEG78, dtype=float)
Y78 = np.array([1] * 4 + [0] * 12)
# revision 2 defaults (features="positive", evaluate="wts"): AP over all 16 training documents. At tau = 0 the
# first round's AP is 0.320833, not the 0.300000 that algorithms.md 7.8 prints: after it, d0 (a positive, left-out
# score log 1.5) ties exactly with d7 and d9 (pool scores log 1.5), and the ranking convention of algorithms.md
# 0.2 puts the lower index first (positives at ranks 2, 6, 15, 16). 0.300000 is what putting d0 after d7 and d9
# gives (ranks 2, 8, 15, 16): a tie decided by the last bit of floating-point rounding. The brute-force
# reference below, which rounds ties at 1e-9, agrees with 0.320833.
TRACE78 = {
    0: ([{6, 8}, {4, 10}, {7, 9}, {15, 5}, {11, 12}, {13, 14}],
        [0.320833, 0.408333, 0.541667, 0.541667, 0.541667, 0.541667], [0, 1, 2, 3, 4, 6, 7, 8, 9, 10]),
    1: ([{6, 8}, {4, 10}, {5, 7}, {9, 11}, {12, 13}, {15, 14}],
        [0.302976, 0.679167, 0.622024, 0.604167, 0.590278, 0.570076], [0, 1, 2, 3, 4, 6, 8, 10]),
}
# revision 1 (features="all", evaluate="sts"): the leave-one-out AP of the STS members
TRACE78_REV1 = {
    0: ([{6, 8}, {7, 9}, {4, 10}, {5, 12}, {13, 15}, {11, 14}],
        [0.679167, 0.770833, 0.645833, 0.645833, 0.645833, 0.645833], [0, 1, 2, 3, 6, 7, 8, 9]),
    1: ([{6, 8}, {5, 7}, {4, 10}, {9, 12}, {13, 11}, {15, 14}],
        [0.645833, 0.887500, 0.679167, 0.645833, 0.645833, 0.645833], [0, 1, 2, 3, 5, 6, 7, 8]),
}


@pytest.mark.parametrize("revision", [2, 1])
@pytest.mark.parametrize("tau", [0, 1])
def test_vector_7_8(tau, revision):
    added, ap, ots = (TRACE78 if revision == 2 else TRACE78_REV1)[tau]
    options = {} if revision == 2 else {"features": "all", "evaluate": "sts"}  # revision 2 = the defaults
    r = optimal_training_set(sp.csr_matrix(X78), Y78 == 1, Y78 == 0, threshold=tau, step=2, **options)
    assert r.sizes.tolist() == [6, 8, 10, 12, 14, 16]
    assert [set(r.added[k - 2:k].tolist()) for k in r.n_added] == added
    np.testing.assert_allclose(r.average_precision, ap, atol=5e-7)
    assert r.rows().tolist() == ots
    selector = OTSSelector(threshold=tau, step=2, **options)
    assert selector.select(X78, Y78).tolist() == ots
    assert selector.ots_size_ == len(ots) and selector.trace_["size"] == [6, 8, 10, 12, 14, 16]
    trace, rows = ref.ots(X78, Y78, tau=tau, M=2, **options)
    np.testing.assert_allclose([a for _, _, a in trace], ap, atol=5e-7)
    assert rows == ots


def test_vector_7_8_first_round_tie():
    # the tie behind the 0.320833 above: after round 1 at tau = 0, d0's leave-one-out score equals the pool
    # scores of d7 and d9 (all log 1.5); index order ranks the positives 2, 6, 15, 16, the other order 2, 8, 15, 16
    assert (1 / 2 + 2 / 6 + 3 / 15 + 4 / 16) / 4 == pytest.approx(0.320833, abs=5e-7)
    assert (1 / 2 + 2 / 8 + 3 / 15 + 4 / 16) / 4 == pytest.approx(0.300000, abs=5e-7)
    X = X78
    kept = [True, True, True, True, False, False]
    sts = [0, 1, 2, 3, 6, 8]
    others = [1, 2, 3, 6, 8]
    d0 = ref.score(ref.weights(X[others], Y78[others], fixed=kept), X[0], 0.0)
    w_sts = ref.weights(X[sts], Y78[sts], fixed=kept)
    assert d0 == pytest.approx(np.log(1.5), abs=1e-12)
    assert ref.score(w_sts, X[7], 0.0) == pytest.approx(np.log(1.5), abs=1e-12)
    assert ref.score(w_sts, X[9], 0.0) == pytest.approx(np.log(1.5), abs=1e-12)


def _corpus(seed, n=36, F=9, n_pos=8):
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, n_pos, replace=False)] = 1
    rates = np.where(y[:, None] == 1, rng.uniform(0.2, 0.7, F), rng.uniform(0.05, 0.5, F))
    X = (rng.random((n, F)) < rates).astype(float)
    X[rng.choice(np.flatnonzero(y == 0), 4, replace=False), :3] = 1  # negatives that look positive
    X[y == 1, F - 1] = 0  # a feature of the negatives only: outside the default feature set
    X[y == 1, F - 2] = 0
    X[np.flatnonzero(y == 1)[0], F - 2] = 1  # a feature of one positive (left out, it keeps w(0, n-))
    return X, y


CASES = [dict(seed=0, tau=1.0, M=1, init="wts", scorer="sts", evaluate="wts", features="positive"),
         dict(seed=1, tau=0.0, M=2, init="wts", scorer="sts", evaluate="wts", features="positive"),
         dict(seed=2, tau=0.5, M=3, init="sts", scorer="sts", evaluate="wts", features="positive"),
         dict(seed=3, tau=1.0, M=2, init="wts", scorer="wts_fixed", evaluate="wts", features="positive"),
         dict(seed=4, tau=1.0, M=1, init="wts", scorer="sts", evaluate="sts", features="positive"),
         dict(seed=5, tau=0.0, M=4, init="sts", scorer="wts_fixed", evaluate="sts", features="positive"),
         dict(seed=6, tau=1.0, M=1, init="wts", scorer="sts", evaluate="wts", features="all"),
         dict(seed=7, tau=0.5, M=2, init="sts", scorer="wts_fixed", evaluate="sts", features="all"),
         dict(seed=8, tau=0.0, M=3, init="wts", scorer="sts", evaluate="sts", features="all")]


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_search_equals_brute_force_refitting(case, n_threads):
    X, y = _corpus(case["seed"])
    trace, rows = ref.ots(X, y, tau=case["tau"], M=case["M"], init=case["init"], scorer=case["scorer"],
                          evaluate=case["evaluate"], features=case["features"])
    r = optimal_training_set(sp.csr_matrix(X), y == 1, y == 0, threshold=case["tau"], step=case["M"],
                             init=case["init"], scorer=case["scorer"], evaluate=case["evaluate"],
                             features=case["features"], n_threads=n_threads)
    assert r.sizes.tolist() == [size for size, _, _ in trace]
    expected_added = [i for _, added, _ in trace for i in added]
    assert r.added.tolist() == expected_added  # same documents, in the same rank order
    np.testing.assert_allclose(r.average_precision, [ap for _, _, ap in trace], rtol=0, atol=1e-12)
    assert r.rows().tolist() == rows


def _zipf_corpus(seed, n=3000, F=3000):
    """Binary documents with Zipf-like feature frequencies (many rare features, whose weights cross
    the threshold as the STS grows); positives share a few features."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.05).astype(np.int64)
    rate = 2.0 / (np.arange(F) + 5.0) ** 0.9
    dense = rng.random((n, F)) < rate[rng.permutation(F)]
    dense[np.flatnonzero(y)[:, None], np.arange(10)] |= rng.random((int(y.sum()), 10)) < 0.5
    return sp.csr_matrix(dense.astype(float)), y


@pytest.mark.parametrize(("evaluate", "scorer", "tau", "features"),
                         [("sts", "sts", 1.0, "all"), ("wts", "sts", 1.0, "all"), ("wts", "wts_fixed", 1.0, "all"),
                          ("wts", "sts", 2.0, "positive"), ("sts", "wts_fixed", 1.0, "positive")])
def test_threads_give_the_same_search(evaluate, scorer, tau, features):
    # row blocks in threads add their counts and merge their best rows: same documents, same AP to the bit
    X, y = _zipf_corpus(5)
    runs = [optimal_training_set(X, y == 1, y == 0, evaluate=evaluate, scorer=scorer, threshold=tau,
                                 features=features, n_threads=threads) for threads in (1, 2, 7)]
    assert len(runs[0].average_precision) > 50
    for other in runs[1:]:
        assert np.array_equal(other.added, runs[0].added)
        assert np.array_equal(other.average_precision, runs[0].average_precision)
        assert other.best == runs[0].best


def test_whole_training_set_evaluation_has_an_interior_peak_where_sts_only_peaks_first():
    # 40 positives, M = 1 (1 % of 40 rounds to 0, at least 1): the STS-only AP of the first round is
    # near 1 whatever the documents, the whole-training-set AP is not
    rng = np.random.default_rng(11)
    n, F = 400, 30
    y = (np.arange(n) < 40).astype(np.int64)
    rates = np.where(y[:, None] == 1, np.r_[np.full(5, 0.6), np.full(F - 5, 0.1)], 0.1)
    rates[40:80, :5] = 0.35  # hard negatives
    X = sp.csr_matrix((rng.random((n, F)) < rates).astype(float))
    sts = optimal_training_set(X, y == 1, y == 0, evaluate="sts")
    wts = optimal_training_set(X, y == 1, y == 0, evaluate="wts")
    assert sts.step == 1 and sts.best == 0
    assert 0 < wts.best < len(wts.average_precision) - 1


def test_step_size():
    assert step_size(0.01, 150) == 2  # 1.5 rounds half up
    assert step_size(0.01, 250) == 3
    assert step_size(0.01, 40) == 1   # at least 1
    assert step_size(0.01, 100_000) == 1000  # the paper's example
    assert step_size(5, 3) == 5
    for bad in (0, -1, 2.5, "x"):
        with pytest.raises(ParameterError, match="step"):
            step_size(bad, 10)


def test_patience_and_max_size_stop_the_search_early():
    X, y = _corpus(7, n=60, n_pos=6)
    full = optimal_training_set(X, y == 1, y == 0, step=1)
    assert len(full.average_precision) == int((y == 0).sum())
    patient = optimal_training_set(X, y == 1, y == 0, step=1, patience=3)
    ap = full.average_precision
    # the first round after which three rounds bring no strictly better AP
    best, since, stop = -np.inf, 0, None
    for k, value in enumerate(ap):
        if value > best:
            best, since = value, 0
        else:
            since += 1
        if since >= 3:
            stop = k
            break
    assert len(patient.average_precision) == stop + 1
    np.testing.assert_array_equal(patient.average_precision, ap[: stop + 1])
    capped = optimal_training_set(X, y == 1, y == 0, step=2, max_size=15)
    assert capped.sizes.tolist() == [8, 10, 12, 14, 16]


def test_random_sts_has_the_ots_size_and_a_seeded_sample():
    X, y = _corpus(8, n=80, n_pos=10)
    ots_rows = OTSSelector().select(X, y)
    n_neg = int(np.sum(y[ots_rows] == 0))
    a = RandomSTSSelector().select(X, y, random_state=3)
    b = RandomSTSSelector(random_state=3).select(X, y)
    c = RandomSTSSelector().select(X, y, random_state=4)
    assert np.array_equal(a, b) and len(a) == len(ots_rows)
    assert set(np.flatnonzero(y == 1)) <= set(a.tolist()) and int(np.sum(y[a] == 0)) == n_neg
    assert not np.array_equal(a, c)
    expected = np.sort(np.r_[np.flatnonzero(y == 1),
                             np.random.default_rng(3).choice(np.flatnonzero(y == 0), n_neg, replace=False)])
    assert np.array_equal(a, expected)
    fixed = RandomSTSSelector(n_negatives=5, random_state=0).select(X, y)
    assert len(fixed) == 15 and np.all(np.diff(fixed) > 0)


def _dataset(X, y):
    F = X.shape[1]
    attrs = [Attribute(f"w{i}", "numeric") for i in range(F)] + [Attribute("c", "nominal", ("rest", "pos"))]
    return Dataset("ots", attrs, sp.csr_matrix(X), y, F, np.ones(len(y)))


def test_pipeline_keeps_the_selected_rows_and_the_trace():
    X, y = _corpus(9, n=90, n_pos=12)
    ds = _dataset(X, y)
    fitted = toolkit.Pipeline("nb-bim", example_selector="ots", tune=False).fit(ds)
    assert fitted.selected_rows.tolist() == OTSSelector().select(X, y).tolist()
    trace = fitted.example_selector.trace_
    assert trace["best_size"] == len(fitted.selected_rows)
    assert len(trace["size"]) == len(trace["average_precision"]) == int((y == 0).sum())
    results = toolkit.evaluate(ds, ["nb-bim"], example_selector="ots", runs=2, stratified=True,
                               test_fraction=1 / 3, metrics=["average-precision"], tune=False)
    for record in results.records:
        assert record["status"] == "ok"
        assert record["extra"]["n_selected_examples"] >= 8  # two thirds of the 12 positives, at least


def test_no_positive_document_is_a_clear_refusal():
    X, y = _corpus(10)
    with pytest.raises(CapabilityError, match="positive"):
        OTSSelector().select(X, np.zeros_like(y))
    with pytest.raises(ParameterError, match="evaluate"):
        OTSSelector(evaluate="test").select(X, y)
    with pytest.raises(ParameterError, match="threshold"):
        OTSSelector(threshold="loo").select(X, y)


def test_ots_trace_and_pr_plot_commands(tmp_path):
    import json

    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["ots-trace", "iris", "-p", "Iris-versicolor", "--es", "ots:step=5", "--json"])
    assert result.exit_code == 0, result.stderr
    trace = json.loads(result.stdout)["traces"]["iris:Iris-versicolor"]
    assert trace["step"] == 5 and trace["size"][:2] == [55, 60] and trace["size"][-1] == 150
    table = runner.invoke(app, ["ots-trace", "iris", "--positive-below", "0.5", "--es", "ots:step=10"])
    assert table.exit_code == 0 and len(table.stdout.strip().splitlines()) == 4  # header + 3 classes
    # a class name with a line break split its row of the table (it is shown escaped)
    odd = tmp_path / "odd.arff"
    from conftest import ROOT

    odd.write_text((ROOT / "datasets" / "iris.arff").read_text(encoding="utf-8").replace("Iris-setosa", "'Iris\\nsetosa'"),
                   encoding="utf-8")
    escaped = runner.invoke(app, ["ots-trace", str(odd), "--positive-below", "0.5", "--es", "ots:step=10"])
    assert escaped.exit_code == 0, escaped.output
    lines = escaped.stdout.strip().splitlines()
    assert len(lines) == 4 and lines[1].startswith("odd:Iris\\nsetosa  "), lines
    both = runner.invoke(app, ["ots-trace", "iris", "-p", "Iris-setosa", "--es", "ots:positive=2"])
    assert both.exit_code == 2 and "given once" in both.stderr  # the selector's positive would be ignored
    out = tmp_path / "r.jsonl"
    runner.invoke(app, ["evaluate", "iris", "-c", "nb-bim", "-c", "nb-gaussian", "-p", "Iris-virginica", "--runs", "1",
                        "-m", "pr-curve", "-m", "average-precision", "--no-tune", "-o", str(out), "-q"])
    pytest.importorskip("matplotlib")
    png = tmp_path / "pr.png"
    plotted = runner.invoke(app, ["pr-plot", str(out), "-o", str(png)])
    assert plotted.exit_code == 0, plotted.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    missing = runner.invoke(app, ["pr-plot", str(out), "--dataset", "nope"])
    assert missing.exit_code == 2 and "no precision-recall curve for dataset 'nope'" in missing.stderr


KINDS = ["continuous", "ties", "heavy-tailed", "constant-block", "few-above-zero"]


@pytest.mark.parametrize("kind", KINDS)
def test_fast_ranking_paths_equal_a_full_sort(kind):
    from toolkit.plugins.ots.leave_one_out import ranked_average_precision

    rng = np.random.default_rng(KINDS.index(kind))
    n = 150_000
    scores = {"continuous": rng.normal(size=n), "ties": rng.integers(0, 40, n).astype(float),
              "heavy-tailed": np.round(rng.standard_cauchy(n), 3), "constant-block": np.zeros(n),
              "few-above-zero": np.zeros(n)}[kind]
    if kind == "constant-block":
        scores[: n // 4] = rng.exponential(size=n // 4)
    if kind == "few-above-zero":  # most documents contain no weighted feature: the top m end in a tie
        scores[rng.choice(n, 200, replace=False)] = rng.exponential(size=200)
        scores[rng.choice(n, 2000, replace=False)] = -rng.exponential(size=2000)
    relevant = np.zeros(n, dtype=bool)
    relevant[rng.choice(n, 300, replace=False)] = True
    scores = scores + np.where(relevant, rng.normal(1.0, 1.0, n), 0.0) * (kind not in ("ties", "few-above-zero"))
    keys = np.round(scores, 9)
    order = np.lexsort((np.arange(n), -keys))  # descending score, ties by position
    rel = relevant[order]
    expected_ap = np.mean(np.cumsum(rel)[rel] / (np.flatnonzero(rel) + 1))
    assert ranked_average_precision(scores, relevant) == pytest.approx(expected_ap, abs=1e-12)


def _cli():
    from typer.testing import CliRunner

    from toolkit.cli import app

    return CliRunner(), app


@pytest.mark.parametrize("options, needle", [
    (["-c", "nb-bim:alpha=0"], "nb-bim: alpha must be a number > 0"),
    (["-c", "nb-bim:threshold=-1"], "nb-bim: threshold must be a number >= 0"),
    (["-c", "nb-bim:threshold=inf"], "nb-bim: threshold must be a number >= 0"),
    (["-c", "nb-bim:features=x"], "nb-bim: features must be"),
    (["-c", "nb-bim", "--fs", "kl:k=0"], "kl: k must be positive"),
    (["-c", "nb-bim", "--fs", "kl:variant=foo"], "kl: variant must be"),
    (["-c", "nb-bim", "--fs", "mi:event_model=foo"], "mi: event_model must be"),
    (["-c", "nb-bim", "--fs", "bim-threshold:threshold=-1"], "bim-threshold: threshold must be"),
    (["-c", "nb-bim", "--es", "ots:step=0"], "ots: step must be"),
    (["-c", "nb-bim", "--es", "ots:patience=0"], "ots: patience must be"),
    (["-c", "nb-bim", "--es", "ots:init=foo"], "ots: init must be"),
    (["-c", "nb-bim", "--es", "random-sts:max_size=0"], "random-sts: max_size must be"),
    (["-c", "nb-bim", "--es", "random-sts:n_negatives=-2"], "random-sts: n_negatives must be"),
])
def test_out_of_range_parameters_are_refused_before_the_first_repetition(options, needle, tmp_path):
    """README: every component and parameter of an experiment is checked before its first repetition: a value
    out of its range is one line and exit 2, and no results file is started (before: an error inside
    repetition 0, exit 1)."""
    runner, app = _cli()
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", "iris", "-p", "Iris-setosa", "--runs", "1", "-o", str(out), *options])
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and needle in lines[0], result.stderr
    assert not out.exists()


def test_ots_trace_refuses_another_selector_and_a_class_without_documents(tmp_path):
    runner, app = _cli()
    other = runner.invoke(app, ["ots-trace", "iris", "-p", "Iris-setosa", "--es", "random-sts"])
    assert other.exit_code == 2 and "give ots[:k=v,...], not 'random-sts'" in other.stderr
    assert "Traceback" not in other.stderr and len(other.stderr.strip().splitlines()) == 1
    binary = runner.invoke(app, ["ots-trace", "vote", "--es", "random-sts:n_negatives=5"])
    assert binary.exit_code == 2 and "not 'random-sts'" in binary.stderr
    head = "@relation nopos\n@attribute a numeric\n@attribute b numeric\n@attribute class {x,y,z}\n@data\n"
    (tmp_path / "nopos.arff").write_text(head + "".join(f"{i},{i % 3},{'xy'[i % 2]}\n" for i in range(20)))
    absent = runner.invoke(app, ["ots-trace", str(tmp_path / "nopos.arff"), "-p", "z"])
    assert absent.exit_code == 2 and "class 'z' has no document in nopos" in absent.stderr


def test_bim_threshold_without_schema_leaves_unlabelled_rows_out():
    from toolkit.plugins.ots.bim_threshold import BIMThresholdSelector

    rng = np.random.default_rng(5)
    X = (rng.random((60, 12)) < 0.3).astype(float)
    y = (rng.random(60) < 0.4).astype(float)
    with_nan = y.copy()
    with_nan[::7] = np.nan
    a = BIMThresholdSelector(threshold=0.5).fit(X, with_nan)
    b = BIMThresholdSelector(threshold=0.5).fit(X[~np.isnan(with_nan)], y[~np.isnan(with_nan)])
    np.testing.assert_array_equal(a.weights_, b.weights_)
    np.testing.assert_array_equal(a.support_, b.support_)
