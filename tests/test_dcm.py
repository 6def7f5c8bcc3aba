"""DCM and complement-DCM (algorithms.md 2.7): the 7.6 test vectors, the likelihood against the
Pólya-urn product computed with explicit loops, and the fitted alpha against the likelihood
maximised numerically with scipy.optimize."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import digamma, gammaln

import toolkit
from toolkit.api import Schema
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.text.dcm import DCM, ComplementDCM, dcm_log_likelihood, fit_polya, moment_match
from toolkit.plugins.text.multinomial import MultinomialNB

DATA = np.array([[5, 0, 0], [0, 4, 1], [6, 1, 0], [0, 0, 3]], dtype=float)


def polya_urn(x, alpha):
    """log p(x|alpha) without the multinomial coefficient, as the urn product of rising factorials."""
    A = sum(alpha)
    n = int(sum(x))
    out = 0.0
    for w, count in enumerate(x):
        for j in range(int(count)):
            out += math.log(alpha[w] + j)
    for j in range(n):
        out -= math.log(A + j)
    return out


def test_likelihood_vector():
    x = sp.csr_matrix([[2, 0, 1]], dtype=float)
    got = dcm_log_likelihood(x, np.array([[1.0, 2.0, 0.5]]))[0, 0]
    assert got == pytest.approx(-4.461588, abs=1e-6)
    coefficient = gammaln(4) - gammaln(3) - gammaln(2)           # log(3! / (2! 1!)) = log 3
    assert got + coefficient == pytest.approx(-3.362976, abs=1e-6)
    assert got == pytest.approx(math.log(1 / 86.625), abs=1e-12)


def test_likelihood_matches_the_urn_product():
    rng = np.random.default_rng(5)
    X = rng.integers(0, 5, size=(12, 7)).astype(float)
    X[rng.random(X.shape) < 0.5] = 0
    alpha = rng.uniform(0.05, 3.0, size=(3, 7))
    got = dcm_log_likelihood(sp.csr_matrix(X), alpha)
    want = np.array([[polya_urn(X[d], alpha[k]) for k in range(3)] for d in range(12)])
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-11)


def test_fixed_point_one_step_and_convergence():
    one = fit_polya(DATA, init="ones", max_iter=1)
    np.testing.assert_allclose(one.alpha[0], (1.101283, 0.717385, 0.659219), atol=1e-6)
    fit = fit_polya(DATA, init="ones", tol=1e-10, max_iter=100000)
    np.testing.assert_allclose(fit.alpha[0], (0.215479, 0.174046, 0.169463), atol=1e-6)
    assert fit.converged[0]
    assert dcm_log_likelihood(sp.csr_matrix(DATA), fit.alpha).sum() == pytest.approx(-13.411564, abs=1e-6)
    default = fit_polya(DATA)                       # moment start, tol 1e-6
    np.testing.assert_allclose(default.alpha[0], fit.alpha[0], atol=1e-4)


def test_moment_matching_start():
    p = DATA / DATA.sum(axis=1, keepdims=True)
    start = moment_match(p.mean(axis=0), (p * p).mean(axis=0))
    np.testing.assert_allclose(start[0], (0.109244, 0.055462, 0.070588), atol=1e-6)
    # one document: the precision is undefined, start from 1 on the active words
    single = moment_match(np.array([0.5, 0.5, 0.0]), np.array([0.25, 0.25, 0.0]))
    np.testing.assert_array_equal(single[0], (1.0, 1.0, 0.0))


def _neg_loglik(log_alpha, X):
    a = np.exp(log_alpha)
    A = a.sum()
    n = X.sum(axis=1)
    value = np.sum(gammaln(A) - gammaln(n + A)) + np.sum(gammaln(X + a) - gammaln(a))
    grad = a * (np.sum(digamma(A) - digamma(n + A)) + np.sum(digamma(X + a) - digamma(a), axis=0))
    return -value, -grad


def test_alpha_is_the_numerical_maximum_of_the_likelihood():
    rng = np.random.default_rng(42)
    docs = []
    for _ in range(40):                              # bursty documents: a Dirichlet draw per document
        theta = rng.dirichlet([0.4, 0.3, 0.2, 0.6, 0.1, 0.5])
        docs.append(rng.multinomial(int(rng.integers(5, 40)), theta))
    X = np.array(docs, dtype=float)
    ours = fit_polya(sp.csr_matrix(X), tol=1e-13, max_iter=200000)
    assert ours.converged[0]
    res = minimize(_neg_loglik, np.zeros(6), args=(X,), jac=True, method="BFGS",
                   options={"gtol": 1e-12, "maxiter": 10000})
    best = np.exp(res.x)
    np.testing.assert_allclose(ours.alpha[0], best, rtol=1e-6)
    # and the plugin's classifier uses exactly these (before smoothing)
    clf = DCM(tol=1e-13, max_iter=200000).fit(X, np.zeros(len(X), dtype=int))
    np.testing.assert_allclose(clf.alpha_unsmoothed_[0], best, rtol=1e-6)
    # counts of 9 and more (beyond the reciprocal sums) and non-integer "counts" take the digamma path
    for scale in (3.0, 1.5):
        Xs = X * scale
        ours = fit_polya(sp.csr_matrix(Xs), tol=1e-13, max_iter=200000)
        res = minimize(_neg_loglik, np.zeros(6), args=(Xs,), jac=True, method="BFGS",
                       options={"gtol": 1e-12, "maxiter": 10000})
        np.testing.assert_allclose(ours.alpha[0], np.exp(res.x), rtol=1e-6)


def test_zero_count_word_and_smoothing():
    """algorithms.md 7.6's vector smooths a word no document holds and scores a test document with it: the
    classifier does so with vocabulary="all". By default (1.2) the word is outside the training vocabulary:
    it gets no alpha and is dropped from the test document, which then scores as (2, 0, 1) under the three
    words' smoothed alpha."""
    X = np.column_stack([DATA, np.zeros(4)])
    every = DCM(tol=1e-10, max_iter=100000, vocabulary="all").fit(X, np.zeros(4, dtype=int))
    assert every.alpha_unsmoothed_[0, 3] == 0.0
    np.testing.assert_allclose(every.alpha_[0], (0.217174, 0.175741, 0.171158, 0.001695), atol=1e-6)
    assert every.decision_function(np.array([[2, 0, 1, 1.0]]))[0, 0] == pytest.approx(-11.568422, abs=1e-6)
    clf = DCM(tol=1e-10, max_iter=100000).fit(X, np.zeros(4, dtype=int))
    np.testing.assert_allclose(clf.alpha_[0], (0.217174, 0.175741, 0.171158, 0.0), atol=1e-6)
    a = clf.alpha_[0, :3]   # the Polya-urn product of (2, 0, 1) by hand: 2 draws of word 0, 1 of word 2
    by_hand = np.log(a[0] * (a[0] + 1) * a[2] / (a.sum() * (a.sum() + 1) * (a.sum() + 2)))
    assert clf.decision_function(np.array([[2, 0, 1, 1.0]]))[0, 0] == pytest.approx(by_hand, abs=1e-12)
    assert clf.decision_function(np.array([[2, 0, 1, 1.0]]))[0, 0] == clf.decision_function(
        np.array([[2, 0, 1, 0.0]]))[0, 0]


@pytest.mark.parametrize("cls", [DCM, ComplementDCM])
def test_columns_the_training_part_never_uses_change_nothing(cls):
    """Columns no training document holds (a corpus's global vocabulary, padding) got a smoothed alpha in
    every class and a word term for each test word in them: predictions moved with their number."""
    rng = np.random.default_rng(5)
    X = rng.poisson(0.6, size=(40, 12)).astype(float)
    y = np.arange(40) % 3
    T = rng.poisson(0.6, size=(15, 12)).astype(float)
    base = cls(smoothing=0.5).fit(X, y)
    for extra in (1, 50, 3000):
        pad_train = np.hstack([X, np.zeros((40, extra))])
        pad_test = np.hstack([T, rng.poisson(2.0, size=(15, extra)).astype(float)])  # test words outside it
        padded = cls(smoothing=0.5).fit(pad_train, y)
        np.testing.assert_allclose(padded.decision_function(pad_test), base.decision_function(T), rtol=0, atol=1e-9)
        np.testing.assert_array_equal(padded.predict(pad_test), base.predict(T))
    # a weight-0 row's words are no evidence either
    heavy = np.vstack([X, np.hstack([np.zeros(6), np.full(6, 4.0)])])
    weighted = cls(smoothing=0.5).fit(np.hstack([heavy, np.zeros((41, 1))]), np.append(y, 0),
                                      sample_weight=np.append(np.ones(40), 0.0))
    seen = (X[:, 6:] > 0).any(axis=0)
    np.testing.assert_array_equal(weighted.vocabulary_, np.concatenate([np.ones(6, bool), seen, [False]]))


BURSTY_X = np.array([[5, 0, 0, 1], [0, 4, 0, 0], [6, 1, 0, 0], [0, 0, 3, 0],
                     [0, 0, 4, 0], [1, 0, 0, 5], [0, 0, 0, 3], [0, 2, 0, 4]], dtype=float)
BURSTY_Y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
BURSTY_T = np.array([[2, 0, 0, 1], [0, 0, 2, 2], [1, 1, 1, 1]], dtype=float)


def test_bursty_two_class_corpus():
    clf = DCM(tol=1e-10, max_iter=100000).fit(BURSTY_X, BURSTY_Y)
    np.testing.assert_allclose(clf.alpha_unsmoothed_[0], (0.206877, 0.168219, 0.082521, 0.073953), atol=1e-6)
    np.testing.assert_allclose(clf.alpha_unsmoothed_[1], (0.102588, 0.113004, 0.123961, 0.518102), atol=1e-6)
    np.testing.assert_allclose(clf.alpha_[0], (0.207617, 0.168958, 0.083260, 0.074692), atol=1e-6)
    np.testing.assert_allclose(clf.alpha_[1], (0.103614, 0.114030, 0.124986, 0.519128), atol=1e-6)
    np.testing.assert_allclose(clf.decision_function(BURSTY_T),
                               [[-4.709648, -4.348274], [-6.922589, -5.074547], [-10.424764, -10.048832]],
                               atol=1e-6)
    np.testing.assert_array_equal(clf.predict(BURSTY_T), [1, 1, 1])
    mnb = MultinomialNB(epsilon=0.01).fit(BURSTY_X, BURSTY_Y)
    np.testing.assert_array_equal(mnb.predict(BURSTY_T), [0, 1, 0])


X75 = np.array([[5, 0, 1, 0, 1], [1, 1, 0, 0, 0], [2, 0, 0, 1, 0], [0, 3, 0, 1, 0], [0, 1, 2, 0, 0],
                [1, 0, 0, 4, 2], [0, 0, 0, 6, 0], [0, 1, 0, 0, 1], [0, 0, 1, 2, 1]], dtype=float)
Y75 = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
T75 = np.array([[1, 0, 2, 1, 1]], dtype=float)


def test_complement_dcm_vector():
    clf = ComplementDCM(tol=1e-10, max_iter=100000).fit(X75, Y75)
    np.testing.assert_allclose(clf.alpha_unsmoothed_, [
        (0.203104, 0.751986, 0.471265, 1.622198, 0.692407),
        (1.164398, 0.391460, 0.391460, 1.543391, 0.874218),
        (2.191284, 1.564173, 0.962075, 0.772647, 0.386323)], atol=1e-4)
    loglik = dcm_log_likelihood(sp.csr_matrix(T75), clf.alpha_)[0]
    np.testing.assert_allclose(loglik, (-10.411610, -9.273882, -10.015699), atol=1e-4)
    np.testing.assert_allclose(clf.decision_function(T75)[0], -loglik, rtol=1e-12)
    assert clf.predict(T75)[0] == 0


def test_under_dispersed_class_stops_at_the_cap():
    clf = DCM(max_iter=50).fit(X75, Y75)
    assert (clf.n_iter_ == 50).all() and not clf.converged_.any()
    scores = clf.decision_function(T75)
    assert np.isfinite(scores).all()


def test_integer_weights_equal_duplicated_rows():
    w = np.array([1, 2, 1, 3, 1, 1, 2, 1, 1.0, 2, 1, 1])[: len(BURSTY_Y)]
    rows = np.repeat(np.arange(len(w)), w.astype(int))
    for cls in (DCM, ComplementDCM):
        a = cls(tol=1e-12, max_iter=100000).fit(BURSTY_X, BURSTY_Y, sample_weight=w)
        b = cls(tol=1e-12, max_iter=100000).fit(BURSTY_X[rows], BURSTY_Y[rows])
        np.testing.assert_allclose(a.alpha_, b.alpha_, rtol=1e-8)


def test_sparse_and_dense_agree_and_absent_class_is_excluded():
    schema = Schema.numeric(4, ["a", "b", "c"])
    a = DCM().fit(BURSTY_X, BURSTY_Y, schema=schema)
    b = DCM().fit(sp.csr_matrix(BURSTY_X), BURSTY_Y, schema=schema)
    np.testing.assert_array_equal(a.decision_function(BURSTY_T), b.decision_function(sp.csr_matrix(BURSTY_T)))
    assert (a.decision_function(BURSTY_T)[:, 2] == -np.inf).all()
    c = ComplementDCM().fit(BURSTY_X, BURSTY_Y, schema=schema)
    assert (c.decision_function(BURSTY_T)[:, 2] == -np.inf).all()
    assert set(c.predict(BURSTY_T)) <= {0, 1}


def test_single_training_class():
    y = np.zeros(len(BURSTY_X), dtype=int)
    schema = Schema.numeric(4, ["a", "b"])
    for cls in (DCM, ComplementDCM):
        clf = cls().fit(BURSTY_X, y, schema=schema)
        np.testing.assert_array_equal(clf.predict(BURSTY_T), [0, 0, 0])


def test_document_log_likelihood_uses_each_documents_class():
    clf = DCM().fit(BURSTY_X, BURSTY_Y)
    y = np.array([1, 0, 1])
    want = [polya_urn(BURSTY_T[d], clf.alpha_[y[d]]) for d in range(3)]
    np.testing.assert_allclose(clf.document_log_likelihood(BURSTY_T, y), want, rtol=1e-11)
    with pytest.raises(CapabilityError, match="perplexity"):
        ComplementDCM().fit(BURSTY_X, BURSTY_Y).document_log_likelihood(BURSTY_T, y)


@pytest.mark.parametrize("params,match", [({"tol": -1}, "tol"), ({"max_iter": 0}, "max_iter"),
                                          ({"init": "random"}, "init"), ({"smoothing": "x"}, "smoothing"),
                                          ({"prior": "laplace"}, "prior")])
def test_bad_parameters(params, match):
    with pytest.raises(ParameterError, match=match):
        DCM(**params).fit(BURSTY_X, BURSTY_Y)


def test_registered_names_and_state_round_trip():
    for name in ("dcm", "c-dcm"):
        clf = toolkit.get_classifier(name).fit(BURSTY_X, BURSTY_Y)
        meta, arrays = clf.get_state()
        again = type(clf).from_state(clf.get_params(), meta, arrays)
        np.testing.assert_array_equal(again.predict_proba(BURSTY_T), clf.predict_proba(BURSTY_T))


# ---------------------------------------------------------------- weight 0, empty vocabulary, absent classes

def _fitted_state(clf):
    return (clf.class_count_, clf.alpha_unsmoothed_, clf.alpha_, clf.fitted_groups_, clf.n_iter_, clf.converged_)


@pytest.mark.parametrize("cls", [DCM, ComplementDCM])
def test_weight_zero_rows_are_exactly_rows_dropped(cls):
    """A word seen only in weight-0 documents is a word never seen: the fit must equal the fit without them
    (before the fix it stayed an active cell, alpha held at its start, and the other alphas moved with A)."""
    extra = np.array([[0, 0, 0, 0, 7, 0], [2, 0, 0, 0, 0, 3], [0, 1, 0, 0, 4, 0]], dtype=float)
    X = np.vstack([np.column_stack([BURSTY_X, np.zeros((8, 2))]), extra])
    y = np.concatenate([BURSTY_Y, [0, 1, 0]])
    w = np.concatenate([np.array([1, 2, 1, 1, 3, 1, 1, 2.0]), [0.0, 0.0, 0.0]])
    keep = w > 0
    schema = Schema.numeric(6, ["a", "b"])
    for init in ("moment", "ones"):
        a = cls(init=init, prior="mle").fit(sp.csr_matrix(X), y, sample_weight=w, schema=schema)
        b = cls(init=init, prior="mle").fit(sp.csr_matrix(X[keep]), y[keep], sample_weight=w[keep], schema=schema)
        for got, want in zip(_fitted_state(a), _fitted_state(b)):
            np.testing.assert_array_equal(got, want)
        assert (a.alpha_unsmoothed_[:, 4:] == 0).all()            # words 4 and 5: never seen with weight > 0
        T = np.vstack([np.column_stack([BURSTY_T, np.zeros((3, 2))]), extra])
        np.testing.assert_array_equal(a.predict_proba(T), b.predict_proba(T))
    # a class whose only documents have weight 0 is a class without documents
    w2 = np.where(y == 1, 0.0, 1.0)
    a = cls().fit(X, y, sample_weight=w2, schema=schema)
    b = cls().fit(X[y == 0], y[y == 0], schema=schema)
    for got, want in zip(_fitted_state(a), _fitted_state(b)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("cls", [DCM, ComplementDCM])
def test_stored_zero_counts_are_no_evidence(cls):
    """A sparse matrix with explicitly stored zeros is the same data as without them."""
    X = sp.csr_matrix(np.column_stack([BURSTY_X, np.zeros(8)]))
    rows, cols = X.nonzero()
    extra_rows, extra_cols = np.array([0, 5]), np.array([4, 2])   # (0, 4) and (5, 2) stored as 0
    r = np.concatenate([rows, extra_rows])
    c = np.concatenate([cols, extra_cols])
    v = np.concatenate([np.asarray(X[rows, cols]).ravel(), [0.0, 0.0]])
    stored = sp.coo_matrix((v, (r, c)), shape=X.shape).tocsr()
    assert stored.nnz == X.nnz + 2 and (stored.data == 0).sum() == 2
    a = cls().fit(stored, BURSTY_Y)
    b = cls().fit(X, BURSTY_Y)
    for got, want in zip(_fitted_state(a), _fitted_state(b)):
        np.testing.assert_array_equal(got, want)
    T = sp.coo_matrix((np.array([2.0, 0.0, 1.0]), (np.array([0, 0, 1]), np.array([0, 4, 3]))), shape=(2, 5)).tocsr()
    assert np.isfinite(a.decision_function(T)[:, :2]).all()
    np.testing.assert_array_equal(a.decision_function(T), b.decision_function(sp.csr_matrix(T.toarray())))


@pytest.mark.parametrize("n_words", [0, 3])
@pytest.mark.parametrize("prior", ["uniform", "mle"])
def test_empty_vocabulary_predicts_from_the_prior_as_multinomial_nb(n_words, prior):
    """No word in any training document: every word is outside the vocabulary and dropped (1.2), so the
    posterior is the prior (uniform, or the class frequencies 3/5 and 2/5), as nb-multinomial gives."""
    y = np.array([0, 1, 0, 1, 0])
    X = sp.csr_matrix((5, n_words))
    T = sp.csr_matrix(np.ones((2, n_words)))
    want = np.tile([0.5, 0.5] if prior == "uniform" else [3 / 5, 2 / 5], (2, 1))
    mnb = MultinomialNB(prior=prior).fit(X, y)
    np.testing.assert_allclose(mnb.predict_proba(T), want, rtol=1e-12)
    dcm = DCM(prior=prior).fit(X, y)
    np.testing.assert_allclose(dcm.predict_proba(T), want, rtol=1e-12)
    np.testing.assert_array_equal(dcm.predict(T), [0, 0])
    # complement models ignore the prior (uniform), as nb-multinomial's C-M does
    cdcm = ComplementDCM(prior=prior).fit(X, y)
    np.testing.assert_allclose(cdcm.predict_proba(T), 0.5, rtol=1e-12)
    np.testing.assert_allclose(MultinomialNB(variant="C-M", prior=prior).fit(X, y).predict_proba(T), 0.5, rtol=1e-12)


def test_empty_vocabulary_evaluates_without_failure(tmp_path):
    """The reviewer's novocab.arff: a string attribute whose documents hold no word (digits and
    punctuation only), and one whose documents are all empty."""
    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    for name, text in (("novocab", "'123 456 {i} !!! ...'"), ("allempty", "''")):
        rows = "\n".join(f"{text.format(i=i)},{'ab'[i % 2]}" for i in range(40))
        path = tmp_path / f"{name}.arff"
        path.write_text(f"@relation h\n@attribute text string\n@attribute class {{a,b}}\n@data\n{rows}\n")
        for clf in ("dcm", "c-dcm"):
            result = runner.invoke(app, ["evaluate", str(path), "-c", clf, "--runs", "3", "--json"])
            assert result.exit_code == 0, result.output
            assert "Traceback" not in result.output and "Error" not in result.stderr
            records = json.loads(result.stdout)["records"]
            assert len(records) == 3 and all(r["status"] == "ok" for r in records)


def test_class_with_only_empty_documents():
    """alpha = 0 (A = 0): the urn product gives an empty document probability 1 and any other 0."""
    X = np.vstack([BURSTY_X, np.zeros((3, 4))])
    y = np.concatenate([BURSTY_Y, [2, 2, 2]])
    clf = DCM(prior="mle").fit(X, y)
    assert not clf.fitted_groups_[2] and (clf.alpha_[2] == 0).all()
    T = np.vstack([BURSTY_T, np.zeros(4)])
    jll = clf.decision_function(T)
    assert (jll[:3, 2] == -np.inf).all()
    # the empty document carries no evidence: every class scores its log prior
    np.testing.assert_allclose(jll[3], np.log(np.array([4, 4, 3]) / 11), rtol=1e-12)
    assert not np.isnan(clf.predict_proba(T)).any()


def test_document_log_likelihood_of_a_class_without_documents():
    """B5: a class absent from training has no alpha; its documents get -inf (an empty one 0), never NaN,
    as the urn product with A = 0 gives and as its joint score (-inf) says."""
    schema = Schema.numeric(4, ["a", "b", "c"])
    clf = DCM().fit(BURSTY_X, BURSTY_Y, schema=schema)
    T = np.vstack([BURSTY_T, np.zeros(4)])
    got = clf.document_log_likelihood(T, [2, 2, 2, 2])
    np.testing.assert_array_equal(got, [-np.inf, -np.inf, -np.inf, 0.0])
    want_b = [polya_urn(T[d], clf.alpha_[1]) for d in range(4)]
    np.testing.assert_allclose(clf.document_log_likelihood(T, [1, 1, 1, 1]), want_b, rtol=1e-11)
    np.testing.assert_array_equal(dcm_log_likelihood(sp.csr_matrix(T), np.zeros((1, 4)))[:, 0], got)
    assert not np.isnan(clf.decision_function(T)).any()
