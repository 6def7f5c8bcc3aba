"""The shard-statistics protocol (toolkit.api): for every count model (nb-multinomial in all six variants,
nb-bim, nb-weka, nb-gaussian, bma-nb), the statistics of a file read as 7 byte ranges and merged equal the
statistics of one pass over the whole file (exactly for sums of whole numbers, to 1e-12 otherwise), and
the model fitted from them predicts what ``fit`` on the whole data predicts. Also: instance weights and
missing values, partial_fit (core and scikit-learn adapter), and refusals."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse as sp

import toolkit
from conftest import ROOT, shared_path
from shard_data import (COUNT_MODELS, EXACT_WITH_COUNTS, NB_FAMILY, assert_statistics_equal, ranges,
                        word_count_arff)
from toolkit.api import Schema, SufficientStatistics, statistics_support
from toolkit.data import arff
from toolkit.errors import CapabilityError
from toolkit.models.pipeline import Pipeline


def _classifier(name: str):
    return Pipeline(name, tune=False).classifier.build({})


def _task(ds, name: str):
    return ds.one_vs_rest(ds.classes[1]) if name == "nb-bim" else ds


def _shard_stats(clf, parts, previous=None) -> SufficientStatistics:
    stats = [clf.shard_statistics(p.X, p.y, None if np.all(p.weights == 1) else p.weights, Schema.from_dataset(p),
                                  previous=previous) for p in parts]
    return functools.reduce(lambda a, b: a.merge(b), stats)


def _all_passes(clf, parts) -> SufficientStatistics:
    stats = None
    for _ in range(clf.statistics_passes()):
        stats = _shard_stats(clf, parts, stats)
    return stats


def _check_model(name: str, whole, parts, exact: bool) -> None:
    whole, parts = _task(whole, name), [_task(p, name) for p in parts]
    clf = _classifier(name)
    merged = _all_passes(clf, parts)
    single = _all_passes(clf, [whole])
    assert merged.n_rows == single.n_rows == whole.n_instances
    assert_statistics_equal(merged, single, exact)
    kwargs = {"sample_weight": whole.weights} if np.any(whole.weights != 1) else {}
    reference = _classifier(name).fit(whole.X, whole.y, schema=Schema.from_dataset(whole), **kwargs)
    fitted = _classifier(name).fit_from_statistics(merged)
    assert np.array_equal(fitted.predict(whole.X), reference.predict(whole.X))
    np.testing.assert_allclose(fitted.decision_function(whole.X), reference.decision_function(whole.X),
                               rtol=1e-9, atol=1e-9)


def _exact(name: str, sparse_counts: bool) -> bool:
    # nb-gaussian's sparse statistics are means and squared deviations (Chan's merge), not sums of whole
    # numbers: sums of the values and squares were exact on counts but cancelled on large values
    return name in EXACT_WITH_COUNTS


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    path = word_count_arff(tmp_path_factory.mktemp("counts") / "counts.arff")
    return arff.read(path), ranges(path)


@pytest.mark.parametrize("name", COUNT_MODELS)
def test_seven_ranges_of_a_generated_word_count_file(generated, name):
    whole, parts = generated
    assert len(parts) == 7 and sum(p.n_instances for p in parts) == whole.n_instances
    _check_model(name, whole, parts, _exact(name, True))


@pytest.mark.parametrize("name", COUNT_MODELS)
def test_seven_ranges_of_a_shared_word_count_file(name):
    path = shared_path("text", "oh0.wc.arff")
    _check_model(name, arff.read(path), ranges(path), _exact(name, True))


@pytest.mark.parametrize("dataset", ["labor", "vote", "soybean", "iris", "credit-g"])
@pytest.mark.parametrize("name", NB_FAMILY)
def test_mixed_data_with_missing_values_in_seven_ranges(dataset, name):
    """Nominal and numeric attributes, missing values (labor, vote, soybean), dense rows: the value counts
    and histograms are whole numbers; the Gaussian moments (Chan et al.'s merge) agree to 1e-12."""
    path = ROOT / "datasets" / f"{dataset}.arff"
    _check_model(name, arff.read(path), ranges(path), name != "nb-gaussian")


@pytest.mark.parametrize("name", ["nb-multinomial:variant=M", "nb-multinomial:variant=C-TW-L-M", "nb-bim",
                                  *NB_FAMILY])
def test_instance_weights(tmp_path, name):
    path = word_count_arff(tmp_path / "weighted.arff", n_docs=400, weights=True)
    whole = arff.read(path)
    assert len(np.unique(whole.weights)) == 3
    _check_model(name, whole, ranges(path), exact=False)


def test_the_histogram_gives_wekas_precision_bit_for_bit():
    """nb-weka's precision comes from the distinct values of all shards (algorithms.md 2.3): from the
    merged histogram it is the same float as from one pass, though no shard sees every value."""
    ds = toolkit.load_arff("diabetes")
    schema = Schema.from_dataset(ds)
    order = np.argsort(ds.X[:, 1], kind="stable")      # shards of disjoint value ranges
    clf = _classifier("nb-weka")
    parts = np.array_split(order, 5)
    merged = functools.reduce(lambda a, b: a.merge(b),
                              [clf.shard_statistics(ds.X[p], ds.y[p], schema=schema) for p in parts])
    reference = _classifier("nb-weka").fit(ds.X, ds.y, schema=schema)
    fitted = _classifier("nb-weka").fit_from_statistics(merged)
    assert fitted.precision_.tobytes() == reference.precision_.tobytes()
    one_shard = _classifier("nb-weka").fit_from_statistics(clf.shard_statistics(ds.X[parts[0]], ds.y[parts[0]],
                                                                                schema=schema))
    assert not np.array_equal(one_shard.precision_, reference.precision_)   # a shard alone would differ
    assert np.array_equal(fitted.predict(ds.X), reference.predict(ds.X))


def test_chan_merge_against_a_brute_force_variance():
    """The Gaussian moments of many uneven shards, merged pairwise, against numpy's two-pass variance."""
    rng = np.random.default_rng(3)
    X = rng.normal(1e4, 3.0, size=(500, 4))
    y = rng.integers(0, 2, 500)
    schema = Schema.numeric(4, ["a", "b"])
    clf = _classifier("nb-gaussian:var_smoothing=0")
    cuts = np.sort(rng.choice(np.arange(1, 500), 12, replace=False))
    stats = [clf.shard_statistics(X[a:b], y[a:b], schema=schema) for a, b in zip([0, *cuts], [*cuts, 500])]
    merged = functools.reduce(lambda a, b: a.merge(b), stats)
    fitted = _classifier("nb-gaussian:var_smoothing=0").fit_from_statistics(merged)
    for k in range(2):
        np.testing.assert_allclose(fitted.mean_[:, k], X[y == k].mean(axis=0), rtol=1e-14)
        np.testing.assert_allclose(fitted.var_[:, k], X[y == k].var(axis=0), rtol=1e-11)


def test_statistics_stay_sparse_where_the_data_are():
    """A shard's class sums and document counts hold only the words that occur in it."""
    rng = np.random.default_rng(0)
    X = sp.random(50, 100_000, density=0.0005, format="csr", random_state=1)
    X.data = np.ceil(X.data * 4)
    y = rng.integers(0, 2, 50)
    schema = Schema.numeric(X.shape[1], ["n", "p"])
    words = len(np.unique(X.indices))
    mnb = _classifier("nb-multinomial").shard_statistics(X, y, schema=schema)
    assert sp.issparse(mnb.feature_count) and mnb.feature_count.nnz <= 2 * words
    bim = _classifier("nb-bim").shard_statistics(X, y, schema=schema)
    assert bim.n_pos.nnz + bim.n_neg.nnz <= 2 * words
    df = _classifier("nb-multinomial:variant=TW-L-M").shard_statistics(X, y, schema=schema)
    assert df.df.nnz == words
    gauss = _classifier("nb-gaussian").shard_statistics(X, y, schema=schema)
    assert len(gauss.numeric.cells) <= 2 * words and gauss.numeric.missing.nnz == 0


def test_an_empty_shard_merges_as_nothing(generated):
    whole, parts = generated
    clf = _classifier("nb-weka")
    schema = Schema.from_dataset(whole)
    empty = clf.shard_statistics(whole.X[:0], whole.y[:0], schema=schema)
    assert empty.n_rows == 0
    a = clf.shard_statistics(whole.X, whole.y, schema=schema)
    assert_statistics_equal(a.merge(empty), a, exact=True)
    with pytest.raises(CapabilityError, match="no training instance"):
        _classifier("nb-weka").fit_from_statistics(empty)


def test_merges_of_other_models_settings_or_schemas_are_refused(generated):
    whole, _ = generated
    schema = Schema.from_dataset(whole)
    m = _classifier("nb-multinomial").shard_statistics(whole.X, whole.y, schema=schema)
    with pytest.raises(CapabilityError, match="other models or settings"):
        m.merge(_classifier("nb-multinomial:variant=L-M").shard_statistics(whole.X, whole.y, schema=schema))
    with pytest.raises(CapabilityError, match="other models or settings"):
        m.merge(_classifier("nb-weka").shard_statistics(whole.X, whole.y, schema=schema))
    other = Schema(schema.features, tuple(reversed(schema.classes)))
    with pytest.raises(CapabilityError, match="different attributes or classes"):
        m.merge(_classifier("nb-multinomial").shard_statistics(whole.X, whole.y, schema=other))
    # without a schema, shards that saw other classes do not merge
    a = _classifier("nb-multinomial").shard_statistics(whole.X[:50], np.zeros(50, int))
    b = _classifier("nb-multinomial").shard_statistics(whole.X[:50], np.ones(50, int))
    with pytest.raises(CapabilityError, match="different classes"):
        a.merge(b)
    # TW-L: the first pass's statistics are not a model
    df = _classifier("nb-multinomial:variant=TW-L-M").shard_statistics(whole.X, whole.y, schema=schema)
    with pytest.raises(CapabilityError, match="pass 2 of 2"):
        _classifier("nb-multinomial:variant=TW-L-M").fit_from_statistics(df)
    # the multinomial's statistics fit its complement variant too (the same class sums)
    fitted = _classifier("nb-multinomial:variant=C-M").fit_from_statistics(m)
    reference = _classifier("nb-multinomial:variant=C-M").fit(whole.X, whole.y, schema=schema)
    assert np.array_equal(fitted.predict(whole.X), reference.predict(whole.X))


def test_models_without_the_protocol_say_why():
    for name in ["liblinear-lr", "dcm", "cmls"]:
        reason = statistics_support(_classifier(name))
        assert reason and "no shard-statistics protocol" in reason
    assert "leave-one-out" in statistics_support(_classifier("nb-bim:threshold=loo"))
    for name in COUNT_MODELS:
        assert statistics_support(_classifier(name)) is None


def test_partial_fit_equals_fit_on_all_batches(generated):
    whole, parts = generated
    labels = np.array(whole.classes)[whole.y]
    for name in ["nb-multinomial:variant=C-L-M", "nb-weka", "bma-nb", "nb-gaussian"]:
        clf = _classifier(name)
        for p in parts:
            clf.partial_fit(p.X, np.array(whole.classes)[p.y], classes=whole.classes)
        reference = _classifier(name).fit(whole.X, labels)
        assert list(clf.classes_) == list(reference.classes_) == sorted(whole.classes)
        assert np.array_equal(clf.predict(whole.X), reference.predict(whole.X))
    clf = _classifier("nb-weka")
    with pytest.raises(CapabilityError, match="give classes="):
        clf.partial_fit(whole.X, labels)
    clf.partial_fit(whole.X[:10], labels[:10], classes=whole.classes)
    with pytest.raises(CapabilityError, match="not among the classes"):
        clf.partial_fit(whole.X[:10], np.array(["other"] * 10))
    with pytest.raises(CapabilityError, match="fitted by fit"):
        _classifier("nb-weka").fit(whole.X, labels).partial_fit(whole.X, labels, classes=whole.classes)
    with pytest.raises(CapabilityError, match="2"):
        _classifier("nb-multinomial:variant=TW-L-M").partial_fit(whole.X, labels, classes=whole.classes)


def test_scikit_learn_partial_fit(generated):
    pytest.importorskip("sklearn")
    from toolkit.models.sklearn_adapter import estimator

    whole, parts = generated
    labels = np.array(whole.classes)[whole.y]
    for name in ["nb-multinomial", "nb-bim", "nb-weka", "nb-gaussian", "bma-nb"]:
        assert hasattr(estimator(name), "partial_fit")
        y = (whole.y == 1).astype(int) if name == "nb-bim" else labels
        batches = np.array_split(np.arange(len(y)), 4)
        incremental = estimator(name)()
        for b in batches:
            incremental.partial_fit(whole.X[b], y[b], classes=np.unique(y))
        fitted = estimator(name)().fit(whole.X, y)
        assert np.array_equal(incremental.predict(whole.X), fitted.predict(whole.X))
        assert np.array_equal(incremental.classes_, fitted.classes_)
    assert not hasattr(estimator("liblinear-lr"), "partial_fit")
    with pytest.raises(ValueError, match="first call"):
        estimator("nb-weka")().partial_fit(whole.X, labels)


def test_sparse_shards_of_large_values_against_a_brute_force_variance():
    """Sparse shards kept sums of the values and of their squares: the variance from them cancelled
    (2.0 for 0.67 around 1e8). Uneven CSR shards of large values, zeros and NaN, merged pairwise, against
    numpy's two-pass mean and variance of each class's observed values."""
    rng = np.random.default_rng(5)
    n = 600
    y = rng.integers(0, 3, n)
    X = np.column_stack([1e8 + rng.normal(size=n) * (1 + y), np.where(rng.random(n) < 0.3, 1e6 + y, 0.0),
                         np.where(rng.random(n) < 0.05, rng.normal(size=n), 0.0)])
    X[rng.random(X.shape) < 0.05] = np.nan
    schema = Schema.numeric(3, ["a", "b", "c"])
    clf = _classifier("nb-gaussian:var_smoothing=0")
    cuts = np.sort(rng.choice(np.arange(1, n), 9, replace=False))
    stats = [clf.shard_statistics(sp.csr_matrix(X[a:b]), y[a:b], schema=schema)
             for a, b in zip([0, *cuts], [*cuts, n])]
    assert all(s.numeric.is_sparse for s in stats)
    merged = functools.reduce(lambda a, b: a.merge(b), stats)
    fitted = _classifier("nb-gaussian:var_smoothing=0").fit_from_statistics(merged)
    for k in range(3):
        for j in range(3):
            observed = X[y == k, j][~np.isnan(X[y == k, j])]
            assert fitted.mean_[j, k] == pytest.approx(observed.mean(), rel=1e-14, abs=1e-14)
            # rel 1e-8: the means of ~1e8 hold ~1e-8 (their ulp), which Chan's update carries into the spread
            assert fitted.var_[j, k] == pytest.approx(observed.var(), rel=1e-8, abs=1e-12)
