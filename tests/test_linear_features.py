"""Preprocessing for the linear classifiers against explicit-loop references (WEKA's filters)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from toolkit.api import Schema
from toolkit.data.dataset import Attribute
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.linear.features import Preprocessing

NAN = float("nan")


def _schema() -> Schema:
    return Schema((Attribute("num", "numeric"), Attribute("colour", "nominal", ("r", "g", "b")),
                   Attribute("flag", "nominal", ("no", "yes")), Attribute("num2", "numeric")), ("a", "b"))


def _data() -> np.ndarray:
    return np.array([
        [1.0, 0.0, 1.0, 5.0],
        [3.0, 2.0, NAN, 1.0],
        [NAN, 2.0, 0.0, NAN],
        [8.0, NAN, 1.0, 2.0],
        [2.0, 1.0, 1.0, NAN],
    ])


def _reference(X: np.ndarray, train: np.ndarray, schema: Schema, weights: np.ndarray, onehot: bool) -> np.ndarray:
    """ReplaceMissingValues then NominalToBinary, by explicit loops over rows and columns."""
    n, d = X.shape
    fills = []
    for j, att in enumerate(schema.features):
        if att.kind == "nominal":
            counts = [0.0] * len(att.values)
            for i in range(train.shape[0]):
                if not math.isnan(train[i, j]):
                    counts[int(train[i, j])] += weights[i]
            best = 0
            for v in range(len(counts)):
                if counts[v] > counts[best]:
                    best = v
            fills.append(float(best))
        else:
            s = tot = 0.0
            for i in range(train.shape[0]):
                if not math.isnan(train[i, j]):
                    s += weights[i] * train[i, j]
                    tot += weights[i]
            fills.append(s / tot if tot > 0 else 0.0)
    rows = []
    for i in range(n):
        row = []
        for j, att in enumerate(schema.features):
            v = fills[j] if math.isnan(X[i, j]) else X[i, j]
            if onehot and att.kind == "nominal" and len(att.values) > 2:
                row.extend(1.0 if int(v) == k else 0.0 for k in range(len(att.values)))
            else:
                row.append(v)
        rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("onehot", [True, False])
def test_imputation_and_encoding_match_loops(onehot: bool) -> None:
    X, schema = _data(), _schema()
    w = np.array([1.0, 2.0, 1.0, 0.5, 1.0])
    prep = Preprocessing.fit(X, schema, w, "onehot" if onehot else "index")
    got = prep.transform(X)
    assert sp.isspmatrix_csr(got)
    np.testing.assert_allclose(got.toarray(), _reference(X, X, schema, w, onehot), rtol=0, atol=1e-15)
    # a test row is imputed with the training statistics
    test = np.array([[NAN, NAN, NAN, NAN]])
    np.testing.assert_allclose(prep.transform(test).toarray(), _reference(test, X, schema, w, onehot), atol=1e-15)


def test_mode_ties_and_all_missing() -> None:
    schema = Schema((Attribute("c", "nominal", ("x", "y", "z")), Attribute("m", "nominal", ("p", "q", "r")),
                     Attribute("v", "numeric")), ("a", "b"))
    X = np.array([[2.0, NAN, NAN], [1.0, NAN, NAN], [NAN, NAN, NAN]])
    prep = Preprocessing.fit(X, schema, np.ones(3), "index")
    # value counts y=1, z=1: the tie goes to the first declared value (y); nothing known -> value 0 / 0.0
    assert prep.fill.tolist() == [1.0, 0.0, 0.0]


def test_sparse_input_stays_sparse_and_counts_implicit_zeros() -> None:
    rng = np.random.default_rng(0)
    dense = rng.poisson(0.3, size=(40, 30)).astype(float)
    dense[3, 4] = NAN
    X = sp.csr_matrix(dense)
    schema = Schema.numeric(30, ["a", "b"])
    prep = Preprocessing.fit(X, schema, np.ones(40), "onehot")
    col = dense[:, 4]
    assert prep.fill[4] == pytest.approx(np.nanmean(col))  # implicit zeros are values
    out = prep.transform(X)
    assert sp.isspmatrix_csr(out)
    ref = np.where(np.isnan(dense), prep.fill[None, :], dense)
    np.testing.assert_array_equal(out.toarray(), ref)
    assert out.nnz == np.count_nonzero(ref)


def test_sparse_and_dense_give_the_same_encoding() -> None:
    # in sparse data an implicit zero of a nominal column is its first value, so it gets an indicator
    X, schema = _data(), _schema()
    X[1, 1] = 0.0
    Xs = sp.csr_matrix(np.where(np.isnan(X), 0.0, X))
    Xs.data[Xs.data == 0] = 1.0  # keep csr_matrix from having explicit zeros ...
    dense = Xs.toarray()
    dense[2, 0] = NAN
    Xs = sp.csr_matrix(dense)  # ... and one explicit NaN
    for enc in ("onehot", "index"):
        a = Preprocessing.fit(dense, schema, np.ones(5), enc).transform(dense)
        b = Preprocessing.fit(Xs, schema, np.ones(5), enc).transform(Xs)
        np.testing.assert_array_equal(a.toarray(), b.toarray())
        np.testing.assert_array_equal(a.toarray(), _reference(dense, dense, schema, np.ones(5), enc == "onehot"))


def test_scalings_match_their_formulas() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3)) * [1, 10, 100] + [0, 5, -3]
    X[:, 2] = 7.0  # constant column
    schema = Schema.numeric(3, ["a", "b"])
    lo, hi = X.min(0), X.max(0)
    got = Preprocessing.fit(X, schema, np.ones(20), scale="minmax").transform(X).toarray()
    np.testing.assert_allclose(got[:, :2], (X[:, :2] - lo[:2]) / (hi[:2] - lo[:2]))
    assert np.all(got[:, 2] == 0.0)  # WEKA Normalize: a constant column becomes 0
    got = Preprocessing.fit(X, schema, np.ones(20), scale="standard").transform(X).toarray()
    np.testing.assert_allclose(got[:, :2], (X[:, :2] - X[:, :2].mean(0)) / X[:, :2].std(0))
    got = Preprocessing.fit(X, schema, np.ones(20), scale="maxabs").transform(X).toarray()
    np.testing.assert_allclose(got, X / np.abs(X).max(0))


def test_sparse_refuses_densifying_scalings() -> None:
    X = sp.csr_matrix(np.eye(4))
    with pytest.raises(ParameterError, match="maxabs"):
        Preprocessing.fit(X, Schema.numeric(4, ["a", "b"]), np.ones(4), scale="minmax")
    out = Preprocessing.fit(X * 4, Schema.numeric(4, ["a", "b"]), np.ones(4), scale="maxabs").transform(X * 2)
    np.testing.assert_array_equal(out.toarray(), np.eye(4) * 0.5)


@pytest.mark.parametrize("scale", ["minmax", "standard", "maxabs"])
def test_a_dense_fit_transforms_sparse_rows_as_dense_ones(scale: str) -> None:
    """Fitted on dense data, a shifting scaling crashed on sparse test rows (np.asarray of a sparse matrix
    is a 0-d object array): a sparse-format test file could not be predicted."""
    X = _data()
    prep = Preprocessing.fit(X, _schema(), np.ones(5), scale=scale)
    T = np.array([[0.0, 0.0, 1.0, 0.0], [4.0, 1.0, 0.0, 0.0], [0.0, NAN, 0.0, 3.0]])
    dense = prep.transform(T).toarray()
    np.testing.assert_array_equal(prep.transform(sp.csr_matrix(T)).toarray(), dense)
    # the formula by hand on the encoded rows (mode / mean filled, colour one-hot)
    encoded = _reference(T, X, _schema(), np.ones(5), onehot=True)
    np.testing.assert_allclose(dense, (encoded - prep.shift) * prep.factor, rtol=0, atol=1e-15)


def test_string_attributes_are_refused() -> None:
    schema = Schema((Attribute("text", "string"),), ("a", "b"))
    with pytest.raises(CapabilityError, match="text"):
        Preprocessing.fit(np.zeros((2, 1)), schema, np.ones(2))


@pytest.mark.parametrize("sparse", [False, True])
def test_infinite_values_are_refused_by_name(sparse: bool) -> None:
    """An infinite training or test value gave NaN weights or NaN probabilities (liblinear-lr's
    predict_proba of a row with +inf and -inf); refused, naming the attribute, at fit and at predict."""
    import toolkit

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    schema = Schema((Attribute("alpha", "numeric"), Attribute("beta", "numeric"), Attribute("gamma", "numeric")),
                    ("a", "b"))
    wrap = sp.csr_matrix if sparse else np.asarray
    bad = X.copy()
    bad[4, 2] = -np.inf
    for name in ("liblinear-lr", "liblinear-svm", "cmls"):
        with pytest.raises(CapabilityError, match=r"attribute 'gamma' \(column 2\) holds an infinite value"):
            toolkit.get_classifier(name).fit(wrap(bad), y, schema=schema)
        model = toolkit.get_classifier(name).fit(wrap(X), y, schema=schema)
        with pytest.raises(CapabilityError, match=r"attribute 'beta' \(column 1\) holds an infinite value"):
            model.predict(wrap(np.array([[0.0, np.inf, 0.0]])))
