"""CMLS against independent references: scipy.optimize on the same objective, and LIBLINEAR -s 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

import toolkit as tk
from toolkit.api import Schema
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.linear.cmls import CMLS

from conftest import shared_path  # not tests.conftest: baycomp (a test extra) installs a top-level "tests" package


def _loss(z: np.ndarray, kind: str) -> np.ndarray:
    out = np.zeros_like(z)
    for i, zi in enumerate(z):  # written out per case, independently of the plugin
        if kind == "modified_huber" and zi < -1:
            out[i] = -4.0 * zi
        elif zi < 1:
            out[i] = (1.0 - zi) ** 2
    return out


def _reference_fit(X, y, C, kind="mls", reg_bias=True, weights=None):
    """Minimise 1/2 ||w||^2 + C sum s_i h(y_i (w.x_i + b)) with scipy's BFGS on the dense problem."""
    X = np.asarray(X, dtype=float)
    s = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=float)
    ypm = np.where(y == 1, 1.0, -1.0)

    def f(v):
        w, b = v[:-1], v[-1]
        z = ypm * (X @ w + b)
        return 0.5 * w @ w + (0.5 * b * b if reg_bias else 0.0) + C * s @ _loss(z, kind)

    res = minimize(f, np.zeros(X.shape[1] + 1), method="BFGS", options={"gtol": 1e-10, "maxiter": 10000})
    return res.x, res.fun


def _separable(seed: int = 0, n: int = 60, d: int = 5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    margin = X @ w
    keep = np.abs(margin) > 0.3
    return X[keep], (margin[keep] > 0).astype(int)


@pytest.mark.parametrize("kind", ["mls", "modified_huber"])
@pytest.mark.parametrize("reg_bias", [True, False])
def test_optimum_equals_scipy_minimize(kind, reg_bias) -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] - X[:, 1] + rng.normal(size=40) > 0.3).astype(int)
    C = 0.7
    clf = CMLS(C=C, loss=kind, regularize_bias=reg_bias, tol=1e-10).fit(X, y)
    v, fun = _reference_fit(X, y, C, kind, reg_bias)
    np.testing.assert_allclose(clf.coef_[0], v[:-1], atol=1e-5)
    assert clf.intercept_[0] == pytest.approx(v[-1], abs=1e-5)
    assert clf.objective(X, y)[0] <= fun + 1e-9


def test_weights_equal_duplicated_rows() -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    y[:3] = 1 - y[:3]
    counts = rng.integers(1, 4, size=30)
    a = CMLS(C=2.0, tol=1e-10).fit(X, y, sample_weight=counts.astype(float))
    b = CMLS(C=2.0, tol=1e-10).fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-7)
    np.testing.assert_allclose(a.intercept_, b.intercept_, atol=1e-7)


def test_equals_liblinear_l2loss_svc_on_sparse_text() -> None:
    # the same objective as LIBLINEAR -s 2; columns scaled to [0, 1] so that both solvers reach
    # the optimum at a tight tolerance (on raw counts LIBLINEAR stops short of it)
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    ds = tk.load_arff(shared_path("text", "tr11.wc.arff"))
    X = sp.csr_matrix(ds.X.multiply(1.0 / np.maximum(abs(ds.X).max(axis=0).toarray(), 1.0)))
    y = (ds.y == np.bincount(ds.y).argmax()).astype(int)
    for C in (0.1, 1.0):
        clf = CMLS(C=C, tol=1e-9).fit(X, y)
        model = liblinear.train(np.where(y == 1, 1.0, -1.0), X, f"-s 2 -c {C} -B 1 -e 1e-9 -q")
        w, b = model.get_decfun(0)
        sign = 1.0 if model.get_labels()[0] == 1 else -1.0
        np.testing.assert_allclose(clf.coef_[0], sign * np.asarray(w), atol=1e-6)
        assert clf.intercept_[0] == pytest.approx(sign * b, abs=1e-6)


def test_raw_counts_reach_a_lower_objective_than_a_loose_stop() -> None:
    ds = tk.load_arff(shared_path("text", "tr11.wc.arff"))
    y = (ds.y == np.bincount(ds.y).argmax()).astype(int)
    loose = CMLS(C=0.1, tol=1e-2).fit(ds.X, y)
    tight = CMLS(C=0.1, tol=1e-6).fit(ds.X, y)
    assert tight.objective(ds.X, y)[0] < loose.objective(ds.X, y)[0]
    # and the optimum found is no worse than BFGS on a dense copy of a small slice
    rows = np.arange(60)
    Xs, ys = ds.X[rows][:, :40].toarray(), y[rows]
    v, fun = _reference_fit(Xs, ys, 0.1)
    assert CMLS(C=0.1, tol=1e-10).fit(Xs, ys).objective(Xs, ys)[0] <= fun + 1e-9


def test_zero_training_error_on_separable_data() -> None:
    X, y = _separable()
    clf = CMLS(C=100.0).fit(X, y)
    assert np.array_equal(clf.predict(X), y)
    # iris: setosa against the rest is linearly separable
    ds = tk.load_arff(shared_path("uci", "iris.arff"))
    ys = (ds.y == 0).astype(int)
    assert np.array_equal(CMLS(C=10.0).fit(ds.X, ys).predict(ds.X), ys)


def test_stops_at_the_relative_gradient_tolerance() -> None:
    X, y = _separable(seed=3, n=80)
    y[:5] = 1 - y[:5]
    for tol in (1e-2, 1e-3, 1e-6):
        clf = CMLS(C=1.0, tol=tol).fit(X, y)
        w, b = clf.coef_[0], clf.intercept_[0]
        ypm = np.where(y == 1, 1.0, -1.0)
        z = ypm * (X @ w + b)
        dh = np.where(z < 1, -2 * (1 - z), 0.0)
        g = np.concatenate([w + X.T @ (ypm * dh), [b + np.sum(ypm * dh)]])
        g0 = np.concatenate([X.T @ (ypm * -2.0), [np.sum(ypm * -2.0)]])  # gradient at w = 0
        assert np.linalg.norm(g) <= tol * np.linalg.norm(g0) * (1 + 1e-9)


def test_one_vs_rest_rows_equal_binary_fits_and_sparse_equals_dense() -> None:
    ds = tk.load_arff(shared_path("uci", "iris.arff"))
    schema = Schema.from_dataset(ds)
    clf = CMLS(C=1.0, tol=1e-8).fit(ds.X, ds.y, schema=schema)
    assert clf.coef_.shape == (3, 4)
    for k in range(3):
        one = CMLS(C=1.0, tol=1e-8).fit(ds.X, (ds.y == k).astype(int))
        np.testing.assert_allclose(clf.coef_[k], one.coef_[0], atol=1e-9)
    sparse = CMLS(C=1.0, tol=1e-8).fit(sp.csr_matrix(ds.X), ds.y, schema=schema)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(ds.X)), clf.decision_function(ds.X),
                               atol=1e-12)
    scores = clf.decision_function(ds.X)
    assert scores.shape == (150, 3)
    assert np.mean(np.argmax(scores, axis=1) == ds.y) > 0.8


def test_single_class_training_scores_take_its_sign() -> None:
    X = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    two = CMLS().fit(X, np.array([1, 1, 1]), schema=Schema.numeric(2, ["a", "b"]))
    assert np.all(two.decision_function(X)[:, 1] > 0)
    neg = CMLS().fit(X, np.array([0, 0, 0]), schema=Schema.numeric(2, ["a", "b"]))
    assert np.all(neg.decision_function(X)[:, 1] < 0)
    many = CMLS().fit(X, np.array([2, 2, 2]), schema=Schema.numeric(2, ["a", "b", "c"]))
    assert list(many.predict(X)) == [2, 2, 2]


def test_no_probabilities_and_bad_parameters() -> None:
    X, y = _separable()
    clf = CMLS().fit(X, y)
    with pytest.raises(CapabilityError):
        clf.predict_proba(X)
    for params, match in [({"C": -1.0}, "C must"), ({"loss": "hinge"}, "loss"), ({"tol": 2.0}, "tol"),
                          ({"max_iter": 0}, "max_iter")]:
        with pytest.raises(ParameterError, match=match):
            CMLS(**params).fit(X, y)


def test_nominal_and_missing_values_through_the_harness() -> None:
    path = shared_path("uci", "vote.arff")
    res = tk.evaluate(path, ["cmls"], runs=2, seed=1, metrics=["error", "average-precision"])
    for rec in res.records:
        assert rec["status"] == "ok"
        assert len(rec["tuning"]) == 5
        assert rec["metrics"]["error"] < 0.15


def test_state_round_trip() -> None:
    X, y = _separable()
    clf = CMLS(C=3.0).fit(X, y)
    meta, arrays = clf.get_state()
    again = CMLS.from_state(clf.get_params(), json.loads(json.dumps(meta)), arrays)
    np.testing.assert_array_equal(again.decision_function(X), clf.decision_function(X))


def test_transforms_equal_transformed_input() -> None:
    rng = np.random.default_rng(6)
    X = sp.csr_matrix(rng.poisson(0.5, size=(50, 12)).astype(float))
    y = (X[:, :3].toarray().sum(1) > 1).astype(int)
    binary = CMLS(weighting="binary", tol=1e-9).fit(X, y)
    ref = CMLS(tol=1e-9).fit((X > 0).astype(float), y)
    np.testing.assert_allclose(binary.coef_, ref.coef_, atol=1e-10)
    dense = X.toarray()
    norms = np.array([np.sqrt(sum(v * v for v in row)) or 1.0 for row in dense])
    unit = CMLS(weighting="l2", tol=1e-9).fit(X, y)
    ref = CMLS(tol=1e-9).fit(dense / norms[:, None], y)
    np.testing.assert_allclose(unit.coef_, ref.coef_, atol=1e-10)
    np.testing.assert_allclose(unit.decision_function(X), ref.decision_function(dense / norms[:, None]), atol=1e-10)
    with pytest.raises(ParameterError, match="weighting"):
        CMLS(weighting="tfidf").fit(X, y)
