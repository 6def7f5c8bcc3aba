"""BMA naive Bayes against algorithms.md 7.3 (the thesis's Table 1 toy data) and a brute-force sum
over every feature subset."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp

from toolkit.api import Schema
from toolkit.data.dataset import Attribute
from toolkit.plugins.naive_bayes.bma import BMANaiveBayes, zh_bases
from toolkit.plugins.naive_bayes.classifiers import WekaNaiveBayes


def toy():
    """Thesis Table 1: class T rows i=0..9 have A=[i<6], B=[i<6], C=[i<7]; F rows A=[i<6], B=[i<4], C=[i<3]."""
    rows, labels = [], []
    for cls, (a, b, c) in ((0, (6, 6, 7)), (1, (6, 4, 3))):
        for i in range(10):
            rows.append([float(i < a), float(i < b), float(i < c)])
            labels.append(cls)
    schema = Schema(tuple(Attribute(n, "nominal", ("0", "1")) for n in "ABC"), ("T", "F"))
    return np.array(rows), np.array(labels), schema


def test_resubstitution_likelihoods():
    X, y, schema = toy()
    clf = BMANaiveBayes().fit(X, y, schema=schema)
    np.testing.assert_allclose(clf.sc_, [-13.471708, -13.471708, -12.268185], atol=1e-6)
    np.testing.assert_allclose(clf.sac_, [-13.463660, -13.862944, -13.862944], atol=1e-6)
    assert clf.n_observed_.tolist() == [20, 20, 20]


@pytest.mark.parametrize("x, scores, pred", [
    ((1, 1, 1), {1.0: (-40.085657, -40.854241), 1.1: (-42.825862, -43.149447), 0.9: (-34.566562, -35.556356)}, 0),
    ((0, 0, 0), {1.0: (-41.206381, -40.437797), 1.1: (-43.513469, -43.189884), 0.9: (-35.895925, -34.906131)}, 1),
    ((1, 0, 1), {1.0: (-40.285176, -40.654722), 1.1: (-42.881393, -43.093916), 0.9: (-34.879459, -35.243459)}, 0),
    ((0, 1, 0), {1.0: (-41.006862, -40.637316), 1.1: (-43.457938, -43.245415), 0.9: (-35.583029, -35.219028)}, 1),
])
def test_toy_scores_and_predictions(x, scores, pred):
    X, y, schema = toy()
    for H, expected in scores.items():
        clf = BMANaiveBayes(H=H).fit(X, y, schema=schema)
        q = np.array([x], dtype=float)
        np.testing.assert_allclose(clf.decision_function(q)[0], expected, atol=1e-6)
        assert clf.predict(q)[0] == pred


def test_toy_posteriors_and_feature_weights():
    X, y, schema = toy()
    q = np.array([[1.0, 1.0, 1.0]])
    at1 = BMANaiveBayes(H=1.0).fit(X, y, schema=schema)
    at11 = BMANaiveBayes(H=1.1).fit(X, y, schema=schema)
    assert at1.predict_proba(q)[0, 0] == pytest.approx(0.683215, abs=1e-6)
    assert at11.predict_proba(q)[0, 0] == pytest.approx(0.580198, abs=1e-6)
    np.testing.assert_allclose(at1.feature_weights(q, k=0)[0], [0.494762, 0.633065, 0.867891], atol=1e-6)
    np.testing.assert_allclose(at11.feature_weights(q, k=0)[0], [0.116864, 0.189060, 0.470267], atol=1e-6)


def test_plain_weka_nb_on_the_toy_data():
    X, y, schema = toy()
    nb = WekaNaiveBayes().fit(X, y, schema=schema)
    expected = {(1, 1, 1): (-2.176605, -3.206225), (0, 0, 0): (-3.542697, -2.513078),
                (1, 0, 1): (-2.513078, -2.869752), (0, 1, 0): (-3.206225, -2.849550)}
    for x, value in expected.items():
        np.testing.assert_allclose(nb.decision_function(np.array([x], dtype=float))[0], value, atol=1e-6)


def test_the_55_zh_bases():
    expected = [0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.675, 0.7, 0.7375, 0.75, 0.76875, 0.775, 0.8, 0.83125, 0.8375,
                0.85, 0.8625, 0.86875, 0.875, 0.9, 0.925, 0.93125, 0.9375, 0.95, 0.9625, 0.96875, 0.975, 1.0, 1.025,
                1.03125, 1.0375, 1.05, 1.0625, 1.06875, 1.075, 1.1, 1.125, 1.13125, 1.1375, 1.15, 1.1625, 1.16875,
                1.2, 1.225, 1.23125, 1.25, 1.2625, 1.3, 1.325, 1.35, 1.4, 1.45, 1.5, 1.6, 1.7]
    assert zh_bases() == pytest.approx(expected)
    assert len(zh_bases()) == 55


def _brute_force(clf, X, y, x, H):
    """log P(y) + log sum over all 2^F subsets S of (1/C)^|S| prod_{j in S} prod_i P(x_ij|y_i)
    prod_{j not in S} prod_i P(x_ij), the test point being instance N+1 with label k. Written with
    explicit loops; only the fitted per-value estimators are reused."""
    F = X.shape[1]
    K = len(clf.classes_)
    out = np.zeros(K)
    for k in range(K):
        data = np.vstack([X, x])
        labels = np.append(y, k)
        total = []
        for subset in itertools.product([0, 1], repeat=F):
            log_term = 0.0
            for j in range(F):
                observed = [i for i in range(len(data)) if not np.isnan(data[i, j])]
                n_j = len(observed) - 1  # training rows where j is observed (the test point is observed)
                if np.isnan(x[j]):
                    continue  # a missing test value: feature j contributes no factor
                for i in observed:
                    pair, _, cond, uncond = clf._pairs(np.array([j]), np.array([data[i, j]]))
                    log_term += cond[pair[0], labels[i]] if subset[j] else uncond[pair[0]]
                if subset[j]:
                    log_term -= (n_j + 1) * np.log(H)
            total.append(log_term)
        out[k] = clf.class_log_prior_[k] + logsumexp(total)
    return out


def test_linear_time_formula_equals_the_sum_over_all_subsets():
    rng = np.random.default_rng(7)
    n = 25
    X = np.column_stack([rng.integers(0, 3, n).astype(float), rng.normal(size=n).round(1),
                         rng.integers(0, 2, n).astype(float), rng.exponential(size=n).round(2)])
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 2, n)
    schema = Schema((Attribute("a", "nominal", ("p", "q", "r")), Attribute("b", "numeric"),
                     Attribute("c", "nominal", ("s", "t")), Attribute("d", "numeric")), ("k0", "k1"))
    for H in (0.7, 1.0, 1.3):
        clf = BMANaiveBayes(H=H).fit(X, y, schema=schema)
        for x in (X[3], X[10], np.array([2.0, np.nan, 1.0, 0.4])):
            expected = _brute_force(clf, X, y, x, H)
            # scores differ from the full-data sums by a constant (the training-only factor of
            # features the test instance does not observe), so compare normalised posteriors
            got = clf.predict_log_proba(x[None, :])[0]
            np.testing.assert_allclose(got, expected - logsumexp(expected), atol=1e-9)


def test_sparse_equals_dense_and_weights_equal_duplicates():
    rng = np.random.default_rng(2)
    X = rng.poisson(0.4, size=(60, 12)).astype(float)
    X[rng.random(X.shape) < 0.03] = np.nan
    y = rng.integers(0, 3, 60)
    schema = Schema.numeric(12, ["a", "b", "c"])
    rows, cols = np.nonzero((X != 0) | np.isnan(X))
    Xs = sp.csr_matrix((X[rows, cols], (rows, cols)), shape=X.shape)
    dense = BMANaiveBayes(H=0.9).fit(X, y, schema=schema)
    sparse = BMANaiveBayes(H=0.9).fit(Xs, y, schema=schema)
    np.testing.assert_allclose(sparse.sc_, dense.sc_, rtol=1e-10)
    np.testing.assert_allclose(sparse.sac_, dense.sac_, rtol=1e-10)
    np.testing.assert_allclose(sparse.decision_function(Xs), dense.decision_function(X), rtol=1e-9, atol=1e-9)
    w = rng.integers(1, 4, 60)
    weighted = BMANaiveBayes().fit(X, y, sample_weight=w, schema=schema)
    duplicated = BMANaiveBayes().fit(np.repeat(X, w, axis=0), np.repeat(y, w), schema=schema)
    np.testing.assert_allclose(weighted.decision_function(X), duplicated.decision_function(X), rtol=1e-9)


def test_noise_feature_gets_low_model_weight_and_explain_lists_it():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    informative = (y + (rng.random(400) < 0.1)) % 2
    noise = rng.integers(0, 2, 400)
    X = np.column_stack([informative, noise]).astype(float)
    schema = Schema((Attribute("signal", "nominal", ("0", "1")), Attribute("noise", "nominal", ("0", "1"))), ("a", "b"))
    # at H = 1 resubstitution favours the richer class-conditional model even for noise; a small
    # penalty (H > 1) removes the noise feature and keeps the informative one
    uniform = BMANaiveBayes(H=1.0).fit(X, y, schema=schema).model_feature_weights()
    clf = BMANaiveBayes(H=1.05).fit(X, y, schema=schema)
    weights = clf.model_feature_weights()
    assert weights[0] > 0.99 and weights[1] < 0.01
    assert uniform[1] > weights[1]
    report = clf.explain()
    assert [row[0] for row in report["rows"]] == ["signal", "noise"]


def test_explain_command_and_refusal():
    import json

    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["explain", "vote", "-c", "bma-nb:H=1.1", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    weights = [row[1] for row in report["rows"]]
    assert len(weights) == 16 and weights == sorted(weights, reverse=True)
    assert report["rows"][0][0] == "physician-fee-freeze" or weights[0] > 0.999
    assert report["model"] == "bma-nb"
    zh = json.loads(runner.invoke(app, ["explain", "vote", "-c", "bma-nb-zh", "--json"]).stdout)
    assert zh["model"] == "bma-nb-zh"   # the class serves both names; the report said bma-nb
    refused = runner.invoke(app, ["explain", "vote", "-c", "nb-weka"])
    assert refused.exit_code == 2 and "has no explanation" in refused.stderr
    # a grid was dropped without a word and the default H explained (explain does not tune)
    grid = runner.invoke(app, ["explain", "vote", "-c", "bma-nb:H=0.5|1"])
    assert grid.exit_code == 2 and "give H one value, not a grid" in grid.stderr
    negative = runner.invoke(app, ["explain", "vote", "-c", "bma-nb", "--top", "-1"])
    assert negative.exit_code == 2 and "--top must be 0 (all rows) or more, not -1" in negative.stderr


@pytest.mark.parametrize("seed", range(4))
def test_distinct_pairs_table_equals_sorting(seed):
    # the direct table (small ranges) and the sort (any range) number the (column, value) pairs alike
    from toolkit.plugins.naive_bayes.estimators import distinct_pairs

    rng = np.random.default_rng(seed)
    m = 500
    cols = rng.choice([0, 2, 3, 7], m)  # columns 1, 4, 5, 6 unused: zero-width table sections
    per_column = np.array([0.1, 1.0, 0.25, 1e-3, 1.0, 1.0, 1.0, 3.0])
    precision = per_column[cols]
    steps = rng.integers(-20, 20, m).astype(float)
    steps[cols == 3] *= 7  # a wider, sparse range
    rounded = steps * precision
    table = distinct_pairs(cols, steps, rounded)
    huge = steps.copy()
    huge[0] = 2.0 ** 60  # forces the sorting path; compare on the other entries
    order = np.lexsort((rounded, cols))
    distinct = np.unique(np.column_stack([cols, steps]), axis=0)
    assert len(table[1]) == len(distinct)
    assert np.array_equal(table[1], distinct[:, 0])
    assert np.array_equal(table[2], distinct[:, 1] * per_column[distinct[:, 0].astype(int)])
    assert np.all(np.diff(table[0][order]) >= 0)  # numbered in (column, value) order
    assert np.array_equal(table[1][table[0]], cols) and np.array_equal(table[2][table[0]], rounded)
    sorted_path = distinct_pairs(cols, huge, rounded)
    assert np.array_equal(sorted_path[0], table[0])
    assert np.array_equal(sorted_path[1], table[1]) and np.array_equal(sorted_path[2], table[2])


@pytest.mark.parametrize("seed", range(4))
def test_distinct_pairs_dense_block_equals_the_entry_list(seed):
    # a dense block (rounded given, or computed from the precision for the pairs only) numbers the pairs
    # as the same entries listed row-major with their columns
    from toolkit.plugins.naive_bayes.estimators import distinct_pairs

    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(1, 40)), int(rng.integers(1, 6))
    precision = rng.choice([0.1, 1.0, 0.25, 3.0], F)
    steps = rng.integers(-15, 15, (n, F)).astype(float)
    if seed == 3:
        steps[0, 0] = 2.0 ** 60  # the sorting path
    rounded = steps * precision
    listed = distinct_pairs(np.tile(np.arange(F), n), steps.ravel(), rounded.ravel())
    for block in (distinct_pairs(None, steps, rounded), distinct_pairs(None, steps.copy(), None, precision)):
        for got, want in zip(block, listed):
            assert np.array_equal(got, want)


@pytest.mark.parametrize("weights,n", [("unit", 300), ("random", 300), ("with zeros", 300), ("unit", 40_000),
                                       ("random", 40_000)])
def test_dense_numeric_short_path_gives_the_general_paths_bits(weights, n, monkeypatch):
    # 40,000 rows x 4 columns run in three chunks of the short path: the running sums cross chunks
    rng = np.random.default_rng(7)
    F, K = 4, 3
    X = np.column_stack([rng.integers(0, 9, n), rng.normal(0, 1, n), np.round(rng.normal(5, 2, n), 1),
                         rng.exponential(3.0, n)]).astype(float)
    y = rng.integers(0, K, n)
    w = {"unit": np.ones(n), "random": rng.uniform(0.1, 3.0, n),
         "with zeros": np.where(rng.random(n) < 0.2, 0.0, rng.uniform(0.5, 2.0, n))}[weights]
    schema = Schema(tuple(Attribute(f"x{j}", "numeric") for j in range(F)), ("a", "b", "c"))
    taken = []
    short_sums = BMANaiveBayes._dense_numeric_sums
    monkeypatch.setattr(BMANaiveBayes, "_dense_numeric_sums",
                        lambda self, *args: taken.append(short_sums(self, *args)) or taken[-1])
    short = BMANaiveBayes().fit(X, y, sample_weight=w, schema=schema)
    assert taken == [True]  # the short path ran (it declines steps too wide for its table)
    monkeypatch.setattr(BMANaiveBayes, "_dense_numeric", lambda self, X: False)
    general = BMANaiveBayes().fit(X, y, sample_weight=w, schema=schema)
    for name in ("sc_", "sac_", "n_observed_"):
        assert np.array_equal(getattr(short, name), getattr(general, name)), name
    assert np.array_equal(short.predict_proba(X), general.predict_proba(X))


def test_explain_table_keeps_rows_and_columns_with_odd_feature_names(tmp_path):
    # a feature name with a line break split its row in two, and a wide (CJK) name misaligned the columns
    from typer.testing import CliRunner

    from toolkit.cli import app

    path = tmp_path / "odd.arff"
    rng = np.random.default_rng(3)
    rows = "\n".join(f"{a},{b},{c}" for a, b, c in zip(rng.choice(["x", "y"], 40), rng.choice(["u", "v"], 40),
                                                        rng.choice(["p", "n"], 40)))
    path.write_text("@relation odd\n@attribute 'line\\nbreak' {x,y}\n@attribute '\u6f22\u5b57' {u,v}\n"
                    f"@attribute class {{p,n}}\n@data\n{rows}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["explain", str(path), "-c", "bma-nb"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    body = [line for line in lines if line.startswith(("line", "\u6f22"))]
    assert len(body) == 2 and any(line.startswith("line\\nbreak") for line in body)
    header = lines[0]
    # every row's second column ends where the header's does (a CJK character takes two columns)
    from toolkit.evaluation.report import display_width

    end = display_width(header.split("weight_used")[0]) + len("weight_used")
    for line in body:
        first, _, rest = line.partition("  ")
        cell = rest.lstrip().split("  ")[0]
        assert display_width(line[:line.index(cell)]) + len(cell) == end, (line, header)
