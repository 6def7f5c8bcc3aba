"""Review of the linear family (liblinear-lr, liblinear-svm, cmls, features.py): regression tests for the
bugs found. Expected values come from arithmetic written out here, from liblinear-official called
directly, or from an equivalent input (duplicated rows), never from the code under test."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.api import Schema
from toolkit.errors import CapabilityError
from toolkit.plugins.linear.cmls import CMLS
from toolkit.plugins.linear.features import Preprocessing
from toolkit.plugins.linear.liblinear import LiblinearLR


def _standardised(X: np.ndarray) -> np.ndarray:
    return (X - X.mean(axis=0)) / X.std(axis=0)


# ---------------------------------------------------------------------------------------------
# huge and tiny values under scaling


@pytest.mark.parametrize("k", [1e-200, 1e-160, 1e160, 1e200, 1e300])
def test_standard_scaling_keeps_columns_of_huge_and_tiny_values(k: float) -> None:
    """(x - mean) / sd does not change when a column is multiplied by k > 0. The standard deviation of
    values beyond 1e154 overflowed (their squares) and below 1e-154 underflowed to 0: the factor became 0 and
    the column was silently replaced by zeros."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) * [1.0, 3.0, 0.5] + [0.0, 2.0, -1.0]
    expected = _standardised(X)                       # computed on ordinary magnitudes
    Xk = X * [1.0, k, 1.0]
    got = Preprocessing.fit(Xk, Schema.numeric(3, ["a", "b"]), np.ones(30), scale="standard").transform(Xk)
    np.testing.assert_allclose(got.toarray(), expected, rtol=1e-12, atol=1e-12)


def test_minmax_scaling_of_a_column_spanning_more_than_the_largest_double() -> None:
    """hi - lo = 2e308 overflows: the factor 1/inf = 0 wiped the column, and (x - lo) overflowed too."""
    X = np.array([[-1e308, 1.0], [0.0, 2.0], [1e308, 3.0], [5e307, 5.0]])
    got = Preprocessing.fit(X, Schema.numeric(2, ["a", "b"]), np.ones(4), scale="minmax").transform(X).toarray()
    expected = np.array([[0.0, 0.0], [0.5, 0.25], [1.0, 0.5], [0.75, 1.0]])   # (x - min) / (max - min) by hand
    np.testing.assert_allclose(got, expected, rtol=1e-15, atol=1e-15)


def test_liblinear_lr_with_standard_scaling_ignores_the_unit_of_a_huge_column() -> None:
    """End to end: only the second column separates the classes; in units of 1e200 it was dropped (training
    accuracy fell to that of the first column alone). Standardised, the model must be the same in any unit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 1] > 0).astype(int)
    ref = LiblinearLR(scale="standard").fit(X, y)
    Xk = X * [1.0, 1e200]
    clf = LiblinearLR(scale="standard").fit(Xk, y)
    np.testing.assert_allclose(clf.decision_function(Xk), ref.decision_function(X), rtol=1e-9, atol=1e-9)
    assert np.array_equal(clf.predict(Xk), ref.predict(X))


# ---------------------------------------------------------------------------------------------
# instance weights under scaling (CMLS: "integer weights equal duplicated rows", docs/plugins.md)


@pytest.mark.parametrize("scale", ["minmax", "standard", "maxabs"])
def test_cmls_integer_weights_equal_duplicated_rows_with_scaling(scale: str) -> None:
    """The scaling ignored the instance weights (the imputation used them): the mean and standard deviation
    were those of the unweighted rows, and rows of weight 0 still set the minimum, maximum and largest
    absolute value, so weights and copies gave different models (decision values differed by 0.05-0.07)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) * [1.0, 5.0, 0.2] + [0.0, 3.0, 1.0]
    X[4, 1] = 40.0                       # an outlier with weight 0 below: it must not set max or maxabs
    y = (X[:, 0] + 0.3 * X[:, 1] > 1).astype(int)
    counts = rng.integers(0, 4, size=30)
    counts[4] = 0
    rows = np.repeat(np.arange(30), counts)
    weighted = CMLS(scale=scale, tol=1e-10).fit(X, y, sample_weight=counts.astype(float))
    copies = CMLS(scale=scale, tol=1e-10).fit(X[rows], y[rows])
    np.testing.assert_allclose(weighted.decision_function(X), copies.decision_function(X), rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------------------------------------
# liblinear-lr probabilities when every one-vs-rest sigmoid underflows


def _iris_lr():
    import toolkit as tk
    from conftest import shared_path

    ds = tk.load_arff(shared_path("uci", "iris.arff"))
    return LiblinearLR(C=100.0).fit(ds.X, ds.y, schema=Schema.from_dataset(ds))


@pytest.mark.parametrize("target", [[-800.0, -800.0, -800.0], [-800.0, -801.0, -900.0], [-760.0, -750.0, -746.0]])
def test_lr_probabilities_are_finite_when_every_sigmoid_underflows(target) -> None:
    """A test row far outside the training range (here solved for w_k.x + b_k = target) gives decision values
    below -745 for every class: exp(-d) overflows, every sigmoid is 0 and LIBLINEAR's normalisation 0/0 gave
    NaN probabilities (liblinear-official's own predict -b 1 does too). sigma(d) = e^d / (1 + e^d) and
    1 + e^d = 1 in doubles there, so the normalised sigmoids are e^(d_k - max d) / sum_j e^(d_j - max d)."""
    clf = _iris_lr()
    x = np.linalg.lstsq(clf.coef_, np.asarray(target) - clf.intercept_, rcond=None)[0]
    d = clf.decision_function(x[None, :])[0]
    assert np.all(d < -745.0)
    e = np.exp(d - d.max())
    p = clf.predict_proba(x[None, :])[0]
    np.testing.assert_allclose(p, e / e.sum(), rtol=1e-12, atol=1e-300)
    assert p.argmax() == clf.predict(x[None, :])[0]


def test_lr_probabilities_elsewhere_are_still_liblinears() -> None:
    """The fallback touches only rows whose sigmoids all underflow: others equal liblinear-official's -b 1."""
    import ctypes

    import scipy.sparse as sp
    from liblinear.liblinearutil import predict, train

    import toolkit as tk
    from conftest import shared_path

    ds = tk.load_arff(shared_path("uci", "iris.arff"))
    clf = LiblinearLR(C=100.0).fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
    ctypes.CDLL(None).srand(0)
    model = train(ds.y.astype(float), sp.csr_matrix(ds.X), "-s 0 -c 100 -B 1 -q")
    ref = np.asarray(predict([], sp.csr_matrix(ds.X), model, "-b 1 -q")[2])
    np.testing.assert_allclose(clf.predict_proba(ds.X)[:, model.get_labels()], ref, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# parameter types: numpy scalars are numbers, bools are not (as the core's check of float/int hints)


def test_numpy_scalar_parameters_are_accepted_and_bools_refused() -> None:
    """LiblinearLR(C=np.float32(0.5)) was refused with 'C must be a positive number, not np.float32(0.5)' and
    CMLS(max_iter=np.int64(3)) likewise (numpy grids give such values), while C=True passed as C=1."""
    import ctypes

    import scipy.sparse as sp
    from liblinear.liblinearutil import train

    from toolkit.errors import ParameterError
    from toolkit.plugins.linear.liblinear import LiblinearSVM

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    clf = LiblinearLR(C=np.float32(0.5), B=np.float64(2.0), tol=np.float32(0.25)).fit(X, y)
    ctypes.CDLL(None).srand(0)
    model = train(y.astype(float), sp.csr_matrix(X), "-s 0 -c 0.5 -B 2 -e 0.25 -q")
    w, b = model.get_decfun(0)
    sign = 1.0 if model.get_labels()[0] == clf.labels_[0] else -1.0
    np.testing.assert_array_equal(clf.coef_[0], sign * np.asarray(w))
    assert LiblinearSVM(solver=np.int64(1)).fit(X, y).solver_ == 1
    it = CMLS(max_iter=np.int64(2), tol=1e-12, C=np.float32(0.5)).fit(X, y).n_iter_
    assert it.tolist() == [2]                         # the cap holds: 2 Newton steps, not more
    for bad in [dict(C=True), dict(B=np.bool_(True)), dict(tol=True)]:
        with pytest.raises(ParameterError):
            LiblinearLR(**bad).fit(X, y)
    with pytest.raises(ParameterError):
        LiblinearSVM(solver=np.bool_(True)).fit(X, y)
    for bad in [dict(C=True), dict(max_iter=True), dict(regularize_bias="no")]:
        with pytest.raises(ParameterError):
            CMLS(**bad).fit(X, y)


# ---------------------------------------------------------------------------------------------
# CMLS.objective on rows that hold only some of the classes


def test_cmls_objective_reads_labels_as_the_fitted_classes() -> None:
    """objective() recoded the labels it was given from scratch: on rows holding only 'b' and 'c', 'b' became
    code 0 and was scored as the positive class of the 'a'-versus-rest problem. Expected: F written out."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.array(["a", "b", "c"])[rng.integers(0, 3, 60)]
    clf = CMLS(C=0.7).fit(X, y)
    sub = y != "a"
    Z = np.c_[X[sub], np.ones(sub.sum())]
    expected = []
    for row, name in enumerate(["a", "b", "c"]):
        w = np.r_[clf.coef_[row], clf.intercept_[row]]
        z = np.where(y[sub] == name, 1.0, -1.0) * (Z @ w)
        expected.append(0.5 * w @ w + 0.7 * np.sum(np.where(z < 1, (1 - z) ** 2, 0.0)))
    np.testing.assert_allclose(clf.objective(X[sub], y[sub]), expected, rtol=1e-12)
    from toolkit.errors import ParameterError
    with pytest.raises(ParameterError, match="'d'"):
        clf.objective(X[:3], np.array(["a", "d", "b"]))


# ---------------------------------------------------------------------------------------------
# imputation of a column whose sum overflows


@pytest.mark.parametrize("sparse", [False, True])
def test_missing_value_in_a_column_of_huge_values_gets_a_finite_mean(sparse: bool) -> None:
    """The mean of (1e308, 1e308, -1e308) is 1e308/3, but the running sum overflowed: the missing value was
    replaced by inf after the finiteness check, and LIBLINEAR gave NaN probabilities for that row."""
    import scipy.sparse as sp

    X = np.array([[1e308, 0.0], [1e308, 1.0], [np.nan, 2.0], [-1e308, 3.0]])
    y = np.array([0, 1, 0, 1])
    Xin = sp.csr_matrix(X) if sparse else X
    prep = Preprocessing.fit(Xin, Schema.numeric(2, ["a", "b"]), np.ones(4))
    np.testing.assert_allclose(prep.fill, [1e308 / 3, 1.5], rtol=1e-15)
    p = LiblinearLR(scale="maxabs").fit(Xin, y).predict_proba(Xin)
    assert np.all(np.isfinite(p))
    # unscaled, such values square to inf in the solver (a zero model): refused, naming the attribute
    with pytest.raises(CapabilityError, match="attribute 'x0' holds values past 1e\\+150"):
        LiblinearLR().fit(Xin, y)
