"""Found by a numerical-robustness review (2026-12-07, afternoon): degenerate data that crashed a
classifier or gave a silent zero, NaN or prior-only answer."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

import toolkit
from toolkit.cli import app
from toolkit.errors import CapabilityError, ParameterError

runner = CliRunner()
XC = np.array([[3, 0, 1], [2, 1, 0], [4, 0, 0], [0, 3, 1], [1, 2, 0], [0, 4, 1]], dtype=np.float64)
YC = np.array([0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("weights", [None, np.array([1.0, 2.0, 1.0, 1.0])])
def test_bma_nb_fits_sparse_data_without_a_stored_entry_as_dense_zeros(weights):
    """np.bincount of no entries is int64 whatever its weights: adding the implicit zeros' float terms to
    it raised UFuncTypeError (every document of a sparse file empty)."""
    y = np.array([0, 0, 1, 1])
    sparse = toolkit.get_classifier("bma-nb").fit(sp.csr_matrix((4, 3)), y, sample_weight=weights)
    dense = toolkit.get_classifier("bma-nb").fit(np.zeros((4, 3)), y, sample_weight=weights)
    probe = np.array([[0.0, 0, 0], [1, 0, 2]])
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(probe)), dense.predict_proba(probe), rtol=1e-12)


@pytest.mark.parametrize("name", ["liblinear-lr", "liblinear-svm", "cmls"])
def test_linear_models_refuse_values_whose_squares_overflow(name):
    """|x| >= ~1e154 made LIBLINEAR return coef 0 (or NaN with the dual solver) and CMLS w = 0, predicting
    one class, without a word; scaled, the same data is learned."""
    X = np.array([[1], [1.1], [1.2], [3], [3.1], [3.2]]) * 1e154
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.raises(CapabilityError, match=r"attribute 'x0' holds values past 1e\+150 .* scale=standard"):
        toolkit.get_classifier(name).fit(X, y)
    scaled = toolkit.get_classifier(f"{name}:scale=standard").fit(X, y)
    assert scaled.predict(X).tolist() == y.tolist()
    toolkit.get_classifier(name).fit(X / 1e10, y)   # 1e144: within range


def test_the_overflow_refusal_comes_before_any_repetition(tmp_path):
    import toolkit.evaluation.harness as harness

    path = tmp_path / "big.arff"
    rows = "".join(f"{v}e154,{c}\n" for v, c in ((1, "a"), (1.1, "a"), (1.2, "a"), (3, "b"), (3.1, "b"), (3.2, "b")) * 3)
    path.write_text(f"@relation big\n@attribute big numeric\n@attribute class {{a,b}}\n@data\n{rows}", encoding="utf-8")
    real = harness._execute
    harness._execute = lambda *a, **k: (_ for _ in ()).throw(AssertionError("a repetition ran"))
    try:
        result = runner.invoke(app, ["evaluate", str(path), "-c", "liblinear-lr", "--runs", "2"])
    finally:
        harness._execute = real
    assert result.exit_code == 2 and "attribute 'big' holds values past 1e+150" in result.stderr, result.output


def test_cmls_with_a_c_that_overflows_the_objective_is_refused():
    """C = 1e300 overflowed the objective at w = 0: the search stopped at once and returned w = 0 (50 %
    error on separable data)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 5))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ParameterError, match="cmls: the objective overflows at w = 0"):
        toolkit.get_classifier("cmls:C=1e300").fit(X, y)
    assert (toolkit.get_classifier("cmls:C=1e100").fit(X, y).predict(X) == y).mean() > 0.99


def test_nb_gaussian_counts_a_value_no_class_can_score_as_missing():
    """A finite test value whose squared distance overflows (1e155) or an infinite one scored -inf in
    every class, and the row fell back to the prior alone, its other attributes ignored."""
    clf = toolkit.get_classifier("nb-gaussian").fit(XC, YC)
    rows = np.array([[1e155, 0, 0], [np.inf, 0, 0], [-np.inf, 0, 0], [np.nan, 0, 0], [5, 0, 0]])
    proba = clf.predict_proba(rows)
    for k in (0, 1, 2):
        np.testing.assert_allclose(proba[k], proba[3], rtol=1e-12)
    assert proba[3, 0] > 0.99 and np.allclose(proba.sum(axis=1), 1.0)
    # a brute-force reference: the Gaussian terms of the two scored attributes and the prior
    var = np.array([XC[YC == k].var(axis=0) for k in (0, 1)]) + clf.epsilon_
    mean = np.array([XC[YC == k].mean(axis=0) for k in (0, 1)])
    log = np.log(0.5) - 0.5 * (np.log(2 * np.pi * var[:, 1:]) + (0 - mean[:, 1:]) ** 2 / var[:, 1:]).sum(axis=1)
    np.testing.assert_allclose(proba[0], np.exp(log - np.logaddexp.reduce(log)), rtol=1e-9)


def test_a_subnormal_precision_raises_no_numpy_warning():
    """WEKA's precision of a column of subnormals is itself subnormal: value / precision overflowed with a
    RuntimeWarning shown to the user (and under -W error the model file check called the plugin buggy)."""
    X = np.arange(1, 9, dtype=np.float64)[:, None] * 1e-310
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for name in ("nb-weka", "bma-nb"):
            clf = toolkit.get_classifier(name).fit(X, y)
            assert clf.predict(X).tolist() == y.tolist()
            clf.predict(np.array([[1.0], [0.0]]))


def test_predict_refuses_an_undefined_log_likelihood_as_predict_proba_does():
    """dcm with counts of 1e308: decision_function NaN, predict_proba refused, but predict took argmax over
    the NaN row and answered class 0."""
    clf = toolkit.get_classifier("dcm").fit(XC, YC)
    huge = np.array([[1e308, 0, 0]])
    assert np.isnan(clf.decision_function(huge)).any()
    for method in (clf.predict_proba, clf.predict):
        with pytest.raises(CapabilityError, match="log-likelihood of some instances is undefined"):
            method(huge)
    assert clf.predict(np.array([[3.0, 0, 0]])).tolist() == [0]


def test_nb_gaussian_refuses_a_column_whose_variance_underflows():
    """Values ~1e-310: every variance underflowed to 0, epsilon fell back to an absolute 1e-9, and the model
    gave 0.5 everywhere (50 % error where nb-weka, bma-nb and WEKA give 0 %), without a word."""
    X = np.arange(1, 9, dtype=np.float64)[:, None] * 1e-310
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    with pytest.raises(CapabilityError, match="attribute 'x0' has values too small for a Gaussian model"):
        toolkit.get_classifier("nb-gaussian").fit(X, y)
    assert toolkit.get_classifier("nb-gaussian").fit(X * 1e300, y).predict(X * 1e300).tolist() == y.tolist()
    constant = toolkit.get_classifier("nb-gaussian").fit(np.ones((8, 1)), y)   # no spread at all: the prior
    np.testing.assert_allclose(constant.predict_proba(np.ones((1, 1))), [[0.5, 0.5]])
