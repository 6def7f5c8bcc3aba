"""Naive Bayes against algorithms.md's hand test vectors (7.1, 7.2) and structural properties."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtr

from conftest import ROOT
from toolkit.api import Schema
from toolkit.data import arff
from toolkit.data.dataset import Attribute
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.naive_bayes.classifiers import GaussianNaiveBayes, NaiveBayes, WekaNaiveBayes


def weather():
    return arff.read(ROOT / "datasets" / "weather.nominal.arff")


def _query(ds, **values):
    row = []
    for attr in ds.features:
        row.append(attr.values.index(values[attr.name]))
    return np.array([row], dtype=float)


def test_playtennis_laplace_is_weka_and_gives_0_735314():
    """algorithms.md 7.1: joint(yes) = 5/726, joint(no) = 15/784, P(no|x) = 0.735314."""
    ds = weather()
    clf = WekaNaiveBayes().fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
    x = _query(ds, outlook="sunny", temperature="cool", humidity="high", windy="TRUE")
    jll = clf.decision_function(x)[0]
    yes, no = ds.classes.index("yes"), ds.classes.index("no")
    assert jll[yes] == pytest.approx(np.log(5 / 726), abs=1e-12)
    assert jll[no] == pytest.approx(np.log(15 / 784), abs=1e-12)
    assert jll[yes] == pytest.approx(-4.978112, abs=1e-6) and jll[no] == pytest.approx(-3.956359, abs=1e-6)
    assert clf.predict_proba(x)[0, no] == pytest.approx(0.735314, abs=1e-6)
    assert clf.predict(x)[0] == no


def test_playtennis_mle_gives_the_lecture_0_795():
    """algorithms.md 7.1 (l = 0, prior mle): joint(yes) = 1/189, joint(no) = 18/875, P(no|x) = 0.795417."""
    ds = weather()
    clf = NaiveBayes(laplace=0.0, prior="mle").fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
    x = _query(ds, outlook="sunny", temperature="cool", humidity="high", windy="TRUE")
    proba = clf.predict_proba(x)[0]
    jll = clf.decision_function(x)[0]
    yes, no = ds.classes.index("yes"), ds.classes.index("no")
    assert np.exp(jll[yes]) == pytest.approx(1 / 189, rel=1e-12)
    assert np.exp(jll[no]) == pytest.approx(18 / 875, rel=1e-12)
    assert proba[no] == pytest.approx(0.795417, abs=1e-6)


# algorithms.md 7.2: rows (x, y, class)
NUM_X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0], [6.0, 5.0], [8.0, 7.0]])
NUM_Y = np.array([0, 0, 0, 1, 1])
NUM_SCHEMA = Schema((Attribute("x", "numeric"), Attribute("y", "numeric")), ("a", "b"))


def test_weka_normal_estimator_parameters():
    clf = WekaNaiveBayes().fit(NUM_X, NUM_Y, schema=NUM_SCHEMA)
    np.testing.assert_allclose(clf.precision_, [1.75, 2.0])
    np.testing.assert_allclose(clf.mean_[0], [2.333333, 7.0], atol=1e-6)
    np.testing.assert_allclose(clf.sigma_[0], [0.824958, 1.75], atol=1e-6)
    # y in class a: 5/2 = 2.5 rounds half to even to 2 -> 4.0, sd 0 -> sigma = 2/6
    np.testing.assert_allclose(clf.mean_[1], [4.0, 6.0])
    np.testing.assert_allclose(clf.sigma_[1], [1 / 3, 2.0])
    assert np.exp(clf.class_log_prior_) == pytest.approx([4 / 7, 3 / 7])


@pytest.mark.parametrize("query, expected", [((2.5, 5.0), 0.998191), ((7.0, 6.0), 2.64076e-08),
                                             ((100.0, 5.0), 0.846175)])
def test_weka_numeric_posteriors(query, expected):
    """The third query hits the 1e-75 clamp: both P(x|.) are exactly 0, as in WEKA."""
    clf = WekaNaiveBayes().fit(NUM_X, NUM_Y, schema=NUM_SCHEMA)
    p = clf.predict_proba(np.array([query]))[0, 0]
    assert p == pytest.approx(expected, rel=1e-5, abs=1e-12)
    replayed = WekaNaiveBayes(replay=True).fit(NUM_X, NUM_Y, schema=NUM_SCHEMA).predict_proba(np.array([query]))
    assert replayed[0, 0] == pytest.approx(expected, rel=1e-5, abs=1e-12)


def test_weka_numeric_factor_values():
    clf = WekaNaiveBayes().fit(NUM_X, NUM_Y, schema=NUM_SCHEMA)
    from toolkit.plugins.naive_bayes.estimators import normal_prob

    p = normal_prob(np.array([[2.5, 5.0]]), clf.precision_, clf.mean_, clf.sigma_)[0]
    np.testing.assert_allclose(p[0], [0.599613, 0.00597704], rtol=1e-5)
    np.testing.assert_allclose(p[1], [0.997300, 0.241730], rtol=1e-5)


def test_plain_gaussian_vectors():
    """algorithms.md 7.2, plain Gaussian: epsilon = 1e-9 * max var = 6.8e-9, prior mle."""
    clf = GaussianNaiveBayes().fit(NUM_X, NUM_Y, schema=NUM_SCHEMA)
    assert clf.epsilon_ == pytest.approx(6.8e-9)
    jll = clf.decision_function(np.array([[2.5, 5.0]]))[0]
    np.testing.assert_allclose(jll, [7.069701, -13.379168], atol=1e-5)
    assert clf.predict_proba(np.array([[2.5, 5.0]]))[0, 0] == pytest.approx(1 - 1.31574e-09, abs=1e-14)
    assert clf.predict_proba(np.array([[7.0, 6.0]]))[0, 1] == pytest.approx(1.0)
    assert clf.predict_proba(np.array([[2.5, 5.001]]))[0, 0] == pytest.approx(8.85073e-24, rel=1e-4)


def _brute_force_weka(X, y, Xq, n_classes, nominal, n_values):
    """WEKA NaiveBayes written out with explicit loops over instances and attributes."""
    n, F = X.shape
    out = np.zeros((len(Xq), n_classes))
    for c in range(n_classes):
        prior = (np.sum(y == c) + 1) / (n + n_classes)
        for q in range(len(Xq)):
            s = np.log(prior)
            for j in range(F):
                v = Xq[q, j]
                if np.isnan(v):
                    continue
                col = X[:, j]
                if nominal[j]:
                    seen = col[(y == c) & ~np.isnan(col)]
                    p = (np.sum(seen == v) + 1) / (len(seen) + n_values[j])
                else:
                    values = np.sort(np.unique(col[~np.isnan(col)]))
                    prec = (values[-1] - values[0]) / (len(values) - 1) if len(values) > 1 else 0.01
                    gaps = np.diff(values)
                    if len(values) > 1:
                        prec = sum(gaps.tolist()) / len(gaps)
                    r = lambda t: np.rint(t / prec) * prec  # noqa: E731
                    seen = np.array([r(t) for t in col[(y == c) & ~np.isnan(col)]])
                    if len(seen):
                        mean = seen.sum() / len(seen)
                        sd = np.sqrt(abs((seen ** 2).sum() - mean * seen.sum()) / len(seen))
                    else:
                        mean, sd = 0.0, 0.0
                    sigma = max(prec / 6, sd) if sd > 1e-10 else prec / 6
                    p = ndtr((r(v) - mean + prec / 2) / sigma) - ndtr((r(v) - mean - prec / 2) / sigma)
                s += np.log(max(1e-75, p))
            out[q, c] = s
    return out


def test_matches_a_brute_force_loop_on_mixed_data_with_missing_values():
    rng = np.random.default_rng(3)
    n = 60
    X = np.column_stack([rng.normal(size=n).round(2), rng.integers(0, 3, n).astype(float),
                         rng.exponential(size=n).round(1), rng.integers(0, 2, n).astype(float)])
    X[rng.random(X.shape) < 0.15] = np.nan
    y = rng.integers(0, 3, n)
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "nominal", ("p", "q", "r")),
                     Attribute("c", "numeric"), Attribute("d", "nominal", ("s", "t"))), ("k0", "k1", "k2"))
    Xq = X[:20] + np.array([0.013, 0, 0.05, 0])
    clf = WekaNaiveBayes().fit(X, y, schema=schema)
    expected = _brute_force_weka(X, y, Xq, 3, [False, True, False, True], [0, 3, 0, 2])
    np.testing.assert_allclose(clf.decision_function(Xq), expected, rtol=1e-10)


def test_sparse_input_gives_the_same_scores_as_dense():
    rng = np.random.default_rng(0)
    X = rng.poisson(0.3, size=(80, 30)).astype(float)
    X[rng.random(X.shape) < 0.02] = np.nan
    y = rng.integers(0, 3, 80)
    schema = Schema.numeric(30, ["a", "b", "c"])
    for cls in (WekaNaiveBayes, GaussianNaiveBayes):
        dense = cls().fit(X, y, schema=schema)
        sparse = cls().fit(_csr_with_nan(X), y, schema=schema)
        np.testing.assert_allclose(sparse.decision_function(_csr_with_nan(X)), dense.decision_function(X),
                                   rtol=1e-9, atol=1e-9)


def _csr_with_nan(X):
    rows, cols = np.nonzero((X != 0) | np.isnan(X))
    return sp.csr_matrix((X[rows, cols], (rows, cols)), shape=X.shape)


def test_training_row_order_does_not_matter_and_weights_equal_duplicates():
    rng = np.random.default_rng(1)
    X = np.column_stack([rng.normal(size=40).round(1), rng.integers(0, 4, 40).astype(float)])
    y = rng.integers(0, 2, 40)
    schema = Schema((Attribute("a", "numeric"), Attribute("b", "nominal", ("w", "x", "y", "z"))), ("p", "n"))
    base = WekaNaiveBayes().fit(X, y, schema=schema)
    perm = rng.permutation(40)
    shuffled = WekaNaiveBayes().fit(X[perm], y[perm], schema=schema)
    np.testing.assert_allclose(base.decision_function(X), shuffled.decision_function(X), rtol=1e-12)
    weights = rng.integers(1, 4, 40)
    weighted = WekaNaiveBayes().fit(X, y, sample_weight=weights, schema=schema)
    duplicated = WekaNaiveBayes().fit(np.repeat(X, weights, axis=0), np.repeat(y, weights), schema=schema)
    np.testing.assert_allclose(weighted.decision_function(X), duplicated.decision_function(X), rtol=1e-9)


def test_absent_class_keeps_laplace_prior_and_uniform_estimates():
    """algorithms.md 2.1: a class absent from training keeps its smoothed prior and 1/J values."""
    schema = Schema((Attribute("b", "nominal", ("u", "v")),), ("p", "n", "absent"))
    X = np.array([[0.0], [1.0], [0.0]])
    clf = WekaNaiveBayes().fit(X, np.array([0, 1, 0]), schema=schema)
    jll = clf.decision_function(np.array([[0.0]]))[0]
    assert jll[2] == pytest.approx(np.log(1 / 6) + np.log(1 / 2))
    assert clf.predict_proba(np.array([[1.0]])).shape == (1, 3)


def test_refusals_are_clear():
    schema = Schema((Attribute("t", "string"),), ("p", "n"))
    with pytest.raises(CapabilityError, match="string attribute 't'"):
        WekaNaiveBayes().fit(np.zeros((2, 1)), np.array([0, 1]), schema=schema)
    with pytest.raises(ParameterError, match="variant"):
        NaiveBayes(variant="kernel").fit(NUM_X, NUM_Y)
    with pytest.raises(CapabilityError, match="no training instance"):
        WekaNaiveBayes().fit(NUM_X, np.array([-1] * 5), schema=NUM_SCHEMA)


def test_without_schema_labels_are_sorted_strings_and_columns_numeric():
    clf = WekaNaiveBayes().fit(NUM_X, np.array(["b", "b", "b", "a", "a"]))
    assert clf.classes_.tolist() == ["a", "b"]
    assert clf.predict(np.array([[2.0, 5.0]]))[0] == "b"


def _weka_precision_loop(column: np.ndarray) -> float:
    """WEKA 3.6 NaiveBayes.buildClassifier's precision, transcribed: instances sorted by the attribute
    (missing last); from the first value on, each value that differs from the last counted one adds its
    gap; the loop stops at the first missing value; no gap leaves the default 0.01."""
    values = sorted(v for v in column.tolist() if v == v)
    if not values:
        return 0.01
    last, delta_sum, distinct = values[0], 0.0, 0
    for current in values[1:]:
        if current != last:
            delta_sum += current - last
            last = current
            distinct += 1
    return delta_sum / distinct if distinct > 0 else 0.01


@pytest.mark.parametrize("seed", range(6))
def test_weka_precision_equals_wekas_loop_bit_for_bit(seed):
    from toolkit.plugins.naive_bayes.estimators import weka_precision

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    columns = [
        rng.integers(0, 5, n).astype(float),                         # few distinct values, many ties
        rng.normal(0.0, 1e3, n),                                      # continuous: every value distinct
        np.round(rng.normal(0.0, 1.0, n), 2),                         # decimals: sums that round
        np.full(n, 3.5),                                              # one value
        np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 4, n)),  # missing values
        np.full(n, np.nan),                                           # all missing
        rng.choice([-np.inf, np.inf, 0.0, 1.0, 1.0], n),              # infinities (inf == inf: no gap)
        2.0 ** 52 - rng.integers(0, 6, n),                            # whole numbers at the exact limit
        2.0 ** 53 + 2.0 * rng.integers(0, 6, n),                      # beyond it: sorted
        -rng.integers(0, 3 * n + 1, n).astype(float),                 # negative whole numbers
        rng.choice([0.0, 1e9, 7.0], n),                               # a range far wider than the column
        np.where(rng.random(n) < 0.5, np.nan, 2.0 ** 40),             # one whole value and missing ones
    ]
    X = np.column_stack(columns)
    expected = np.array([_weka_precision_loop(c) for c in columns])
    for data in (X, sp.csr_matrix(np.where(np.isnan(X), np.nan, X))):
        got = weka_precision(data, np.arange(X.shape[1]))
        np.testing.assert_array_equal(got, expected)  # bits, NaN where WEKA's sum is NaN (inf - inf)
    # few changes of value overall (the gaps gathered) and mostly changes (running sums along the rows)
    for cols in (np.array([4, 1]), np.array([1, 2]), np.array([1, 6]), np.array([0, 3, 5]), np.array([7, 9, 0]),
                 np.array([8, 10, 11])):
        np.testing.assert_array_equal(weka_precision(X, cols), expected[cols])


EDGE = json.loads((Path(__file__).parent / "golden" / "weka_nb_edge.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(EDGE["cases"]))
def test_weka_normal_estimator_corners(name, tmp_path):
    """scripts/weka/make_nb_edge_refs.py: a class in which a column is constant at a large value (WEKA keeps
    the last running standard deviation above 1e-10, not its default) and squares that overflow (inf - inf
    at the last value), and spreads within rounding noise of the mean, whose digits come from the order in
    which WEKA adds the instances (sorted by the last numeric attribute by its quicksort; spread-1e-12 and
    constant-large differed by 0.02-0.05 in row order), also for a constant class with instance weights
    (weighted-constant: 3e-72 instead of 0.567 in row order); classes that tie exactly in log space, where
    WEKA's linear product decides (ties-balance: 16 of 625 labels differed in log space, and with replay=True
    while its prior was exp(log prior)): the probabilities of WEKA 3.6 within 1e-6, the labels equal."""
    case = EDGE["cases"][name]
    (tmp_path / "train.arff").write_text(case["train"], encoding="utf-8")
    (tmp_path / "test.arff").write_text(case["test"], encoding="utf-8")
    train, test = arff.read(tmp_path / "train.arff"), arff.read(tmp_path / "test.arff")
    for replay in (False, True):
        clf = WekaNaiveBayes(replay=replay).fit(train.X, train.y, sample_weight=train.weights,
                                                schema=Schema.from_dataset(train))
        np.testing.assert_allclose(clf.predict_proba(test.X), case["distribution"], atol=1e-6, rtol=0)
        assert clf.predict(test.X).tolist() == case["predicted"]


def test_weka_sort_order_sorts_and_keeps_ties_as_its_quicksort_leaves_them():
    """The port of WEKA 3.6's Utils.quickSort is a sorting permutation (ties in some order) on any input;
    that its tie order is WEKA's is what the corner cases above check against WEKA itself."""
    from toolkit.plugins.naive_bayes.estimators import weka_instance_order, weka_sort_order

    rng = np.random.default_rng(3)
    for n in (0, 1, 2, 3, 4, 7, 50, 1000):
        values = rng.integers(0, 5, n).astype(float)
        order = weka_sort_order(values)
        assert sorted(order.tolist()) == list(range(n))
        assert np.all(np.diff(values[order]) >= 0)
    X = rng.integers(0, 3, (200, 3)).astype(float)
    X[5, 2] = np.nan
    order = weka_instance_order(lambda j: X[:, j], 3, 200)
    last = np.where(np.isnan(X[:, 2]), np.inf, X[:, 2])[order]
    assert np.all(np.diff(last) >= 0) and order[-1] == 5      # sorted by the last column, missing last


@pytest.mark.parametrize("name", ["nb-weka", "nb-gaussian", "bma-nb", "liblinear-lr", "liblinear-lr:nominal_encoding=index",
                                  "cmls"])
def test_a_nominal_value_outside_its_domain_counts_as_missing(name):
    """algorithms.md 2.1: an array handed to the API may hold a code that is no value of its nominal attribute
    (3 or -1 for three values, 1.7); it counts as missing, in fit and in predict, dense and sparse, and the
    caller's array is left as it was (before: code 3 read the next attribute's table, 99 raised numpy's error)."""
    import toolkit as tk

    ds = weather()
    schema = Schema.from_dataset(ds)
    temperature = [a.name for a in ds.features].index("temperature")
    comp, _, params = name.partition(":")
    kwargs = dict(p.split("=") for p in params.split(",")) if params else {}
    X = np.asarray(ds.X, dtype=float)
    clf = tk.get_classifier(comp, **kwargs).fit(X, ds.y, schema=schema)
    score = clf.decision_function
    missing = X[:3].copy()
    missing[:, temperature] = np.nan
    for bad in (3.0, -1.0, 1.7, 99.0, np.inf):
        query = X[:3].copy()
        query[:, temperature] = bad
        kept = query.copy()
        np.testing.assert_array_equal(score(query), score(missing))
        np.testing.assert_array_equal(score(sp.csr_matrix(query)), score(sp.csr_matrix(missing)))
        np.testing.assert_array_equal(query, kept)
    # in training too: a fit with the code out of its domain is the fit with that value missing
    train_bad, train_missing = X.copy(), X.copy()
    train_bad[::3, temperature] = 7.0
    train_missing[::3, temperature] = np.nan
    a = tk.get_classifier(comp, **kwargs).fit(train_bad, ds.y, schema=schema)
    b = tk.get_classifier(comp, **kwargs).fit(train_missing, ds.y, schema=schema)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))


@pytest.mark.parametrize("prior, expected", [("laplace", [2 / 6, 4 / 6]), ("mle", [1 / 4, 3 / 4]),
                                             ("uniform", [1 / 2, 1 / 2])])
def test_laplace_0_and_a_value_no_class_has_seen_fall_back_to_the_prior(prior, expected, tmp_path):
    """algorithms.md 2.1: with l = 0 a value seen in no class scores -inf for every class, and then the prior
    alone decides (one c0, three c1; the prior's probabilities written out by hand)."""
    head = "@relation l0\n@attribute a {x,y,z}\n@attribute class {c0,c1}\n@data\n"
    (tmp_path / "t.arff").write_text(head + "x,c0\ny,c1\ny,c1\ny,c1\n", encoding="utf-8")
    ds = arff.read(tmp_path / "t.arff")
    for cls in (WekaNaiveBayes, GaussianNaiveBayes):
        clf = cls(laplace=0.0, prior=prior).fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
        query = np.array([[2.0], [0.0]])                  # z: seen in no class; x: seen in c0 only
        with np.errstate(divide="ignore"):
            proba = clf.predict_proba(query)
        np.testing.assert_allclose(proba[0], expected, rtol=1e-12)
        assert clf.predict(query).tolist() == [int(np.argmax(expected)), 0]


def test_values_whose_squares_overflow_are_named_in_a_warning():
    """A numeric attribute of values beyond ~1e154: WEKA's NormalEstimator's sums overflow, and WEKA 3.6.14
    itself falls from 85.5 % to 51 % accuracy on such a file (a two-class file scaled by 1e160, 5-fold); nb-weka
    and bma-nb follow WEKA, so they say which attribute to rescale instead of failing silently."""
    import warnings

    import toolkit as tk
    from toolkit.errors import ToolkitWarning

    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=60), rng.normal(size=60)])
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    schema = Schema.numeric(2, ["p", "q"])
    for name in ("nb-weka", "bma-nb"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tk.get_classifier(name).fit(X, y, schema=schema)
            tk.get_classifier(name).fit(sp.csr_matrix(X), y, schema=schema)
        assert not [w for w in caught if issubclass(w.category, ToolkitWarning)]
        scaled = X * np.array([1e160, 1.0])
        for data in (scaled, sp.csr_matrix(scaled)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                tk.get_classifier(name).fit(data, y, schema=schema)
            texts = [str(w.message) for w in caught if issubclass(w.category, ToolkitWarning)]
            assert len(texts) == 1 and f"{name}: attribute 'x0' holds values so large that their squares" in texts[0], \
                texts


def test_a_date_attribute_is_the_numeric_attribute_of_its_milliseconds(tmp_path):
    """WEKA 3.6's NaiveBayes refuses DATE attributes ("Cannot handle date attributes!"); nb-weka takes them
    as the numbers WEKA stores for them (milliseconds since 1970 UTC), as docs/plugins.md says: the model
    is the one fitted on those numbers written as a numeric attribute (whose path the parity tests check)."""
    dates = ["2020-01-01", "2020-02-01", "2021-01-01", "2021-03-01", "2020-01-05", "2021-05-01", "2020-07-09"]
    labels = ["a", "a", "b", "b", "a", "b", "a"]
    ms = [int(np.datetime64(d, "ms").astype(np.int64)) for d in dates]
    (tmp_path / "d.arff").write_text("@relation d\n@attribute t date yyyy-MM-dd\n@attribute c {a,b}\n@data\n" +
                                     "".join(f"{d},{c}\n" for d, c in zip(dates, labels)))
    (tmp_path / "n.arff").write_text("@relation d\n@attribute t numeric\n@attribute c {a,b}\n@data\n" +
                                     "".join(f"{m},{c}\n" for m, c in zip(ms, labels)))
    as_date, as_number = arff.read(tmp_path / "d.arff"), arff.read(tmp_path / "n.arff")
    assert as_date.features[0].kind == "date" and np.array_equal(as_date.X, as_number.X)
    query = np.array([[ms[0] + 86_400_000 * k] for k in (-400, 0, 200, 500, 700)], dtype=float)
    fitted = [WekaNaiveBayes().fit(ds.X, ds.y, schema=Schema.from_dataset(ds)) for ds in (as_date, as_number)]
    assert np.array_equal(fitted[0].predict_proba(query), fitted[1].predict_proba(query))
    assert len(set(fitted[0].predict(query))) == 2


def _nominal_reference(X, y, w, J, K, query, estimate, l=1.0, m=None, c0=0.5):
    """algorithms.md 1.1 by hand: log prior (laplace) + the sum over observed values of log P(v|c)."""
    n = w.sum()
    out = np.zeros((len(query), K))
    for c in range(K):
        n_c = w[y == c].sum()
        out[:, c] = np.log((n_c + 1) / (n + K))
        for j, Jj in enumerate(J):
            seen = (y == c) & ~np.isnan(X[:, j])
            observed = w[seen].sum()
            for r, row in enumerate(query):
                if np.isnan(row[j]):
                    continue
                n_vc = w[seen & (X[:, j] == row[j])].sum()
                if estimate == "additive":
                    p = (n_vc + l) / (observed + l * Jj)
                elif estimate == "m-estimate":
                    mm = Jj if m is None else m
                    p = (n_vc + mm / Jj) / (observed + mm)
                else:
                    p = c0 / n if n_vc == 0 else n_vc / observed
                out[r, c] += np.log(p)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_nominal_estimates_of_algorithms_1_1_equal_a_reference_by_hand(seed):
    """Additive (Lidstone), m-estimate and no-match (algorithms.md 1.1) on random nominal data with missing
    values and weights, against the formulas evaluated value by value; the m-estimate with m = J is Laplace."""
    rng = np.random.default_rng(seed)
    J, K, n = [2, 3, 5, 4], 3, 40
    X = np.column_stack([rng.integers(0, Jj, n) for Jj in J]).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, K, n)
    y[:K] = np.arange(K)
    w = rng.choice([0.5, 1.0, 2.0], n)
    attrs = [Attribute(f"a{j}", "nominal", tuple(f"v{v}" for v in range(Jj))) for j, Jj in enumerate(J)]
    schema = Schema(attrs, tuple(f"c{k}" for k in range(K)))
    query = np.column_stack([rng.integers(0, Jj, 25) for Jj in J]).astype(float)
    query[rng.random(query.shape) < 0.1] = np.nan
    for params in [dict(estimate="additive", l=0.3), dict(estimate="m-estimate", m=None),
                   dict(estimate="m-estimate", m=2.5), dict(estimate="no-match", c0=0.5),
                   dict(estimate="no-match", c0=1.0)]:
        kwargs = {("laplace" if k == "l" else k): v for k, v in params.items()}
        clf = WekaNaiveBayes(**kwargs).fit(X, y, sample_weight=w, schema=schema)
        np.testing.assert_allclose(clf.decision_function(query), _nominal_reference(X, y, w, J, K, query, **params),
                                   rtol=1e-12, atol=1e-12)
    laplace = WekaNaiveBayes().fit(X, y, sample_weight=w, schema=schema).decision_function(query)
    m_is_J = WekaNaiveBayes(estimate="m-estimate").fit(X, y, sample_weight=w, schema=schema).decision_function(query)
    np.testing.assert_allclose(m_is_J, laplace, rtol=1e-13)
    with pytest.raises(ParameterError, match="estimate"):
        WekaNaiveBayes(estimate="lidstone").fit(X, y, schema=schema)
    with pytest.raises(ParameterError, match="m must"):
        WekaNaiveBayes(estimate="m-estimate", m=-1).fit(X, y, schema=schema)


def test_gaussian_weights_are_duplicated_rows_epsilon_included():
    """nb-gaussian's epsilon is var_smoothing times the largest weighted variance, so that a weight of 2 is
    the row twice (scikit-learn's GaussianNB takes the unweighted variance there; docs/plugins.md says so)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3)) * [1.0, 5.0, 0.2]
    y = np.arange(30) % 2
    w = rng.integers(1, 4, 30)
    attrs = [Attribute(f"x{j}", "numeric") for j in range(3)]
    schema = Schema(attrs, ("a", "b"))
    weighted = GaussianNaiveBayes(var_smoothing=0.1).fit(X, y, sample_weight=w.astype(float), schema=schema)
    twice = GaussianNaiveBayes(var_smoothing=0.1).fit(np.repeat(X, w, axis=0), np.repeat(y, w), schema=schema)
    assert weighted.epsilon_ == pytest.approx(twice.epsilon_, rel=1e-12)
    assert weighted.epsilon_ == pytest.approx(0.1 * np.var(np.repeat(X, w, axis=0), axis=0).max(), rel=1e-12)
    np.testing.assert_allclose(weighted.decision_function(X), twice.decision_function(X), rtol=1e-10)


@pytest.mark.parametrize("name", ["breast-cancer", "soybean", "vote"])
def test_estimates_that_give_a_value_probability_0_score_sparse_input_as_dense(name):
    """laplace=0, the m-estimate with m=0 and no-match with c0=0 give some value 0 a probability 0: the
    sparse path added log P(0|c) = -inf to every row and took it back at the stored entries (-inf + inf =
    NaN); and l = 0 or m = 0 with nothing observed in a class made 0/0 (every class NaN on soybean)."""
    ds = arff.read(ROOT / "datasets" / f"{name}.arff")
    schema = Schema.from_dataset(ds)
    X = np.asarray(ds.X, dtype=float)
    for params in [dict(laplace=0.0), dict(estimate="m-estimate", m=0.0), dict(estimate="no-match", c0=0.0)]:
        dense = WekaNaiveBayes(**params).fit(X, ds.y, schema=schema)
        sparse = WekaNaiveBayes(**params).fit(sp.csr_matrix(X), ds.y, schema=schema)
        a, b = dense.decision_function(X), sparse.decision_function(sp.csr_matrix(X))
        assert not np.isnan(a).any() and not np.isnan(b).any(), params
        np.testing.assert_array_equal(np.isinf(a), np.isinf(b))
        np.testing.assert_allclose(np.where(np.isinf(a), 0, a), np.where(np.isinf(b), 0, b), rtol=1e-10, atol=1e-9)
        np.testing.assert_array_equal(dense.predict(X), sparse.predict(sp.csr_matrix(X)))
        assert np.mean(dense.predict(X) == ds.y) > 0.7, params


def test_a_class_with_nothing_observed_gets_uniform_value_probabilities_at_l_or_m_0():
    """algorithms.md 2.1: an absent class keeps uniform value probabilities 1/J; at l = 0 (or m = 0) that is
    the estimate's limit, where the formula is 0/0."""
    ds = weather()
    schema = Schema.from_dataset(ds)
    keep = ds.y == 0                                   # the second class is absent from training
    for params in [dict(laplace=0.0), dict(estimate="m-estimate", m=0.0)]:
        clf = WekaNaiveBayes(**params).fit(ds.X[keep], ds.y[keep], schema=schema)
        absent = clf.nominal_prob_[:, 1]
        J = np.repeat(schema.n_values[clf.nominal_columns_], schema.n_values[clf.nominal_columns_])
        np.testing.assert_allclose(absent, 1.0 / J, rtol=1e-15)
        assert not np.isnan(clf.decision_function(ds.X)).any()
