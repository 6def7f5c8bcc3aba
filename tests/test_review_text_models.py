"""Adversarial review of the text classifiers (nb-multinomial, dcm, c-dcm; algorithms.md 2.4, 2.7).

Every expected value comes from a brute-force reference written here from algorithms.md's formulas (plain
loops over documents, words and classes, no code of the plugins), from algorithms.md's test vectors, or
from scikit-learn's independent implementations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from scipy.special import digamma

from toolkit.api import Schema
from toolkit.plugins.text.dcm import DCM, ComplementDCM
from toolkit.plugins.text.multinomial import MultinomialNB


# ---------------------------------------------------------------------------------------------- references
def mnb_reference(X, y, w, T, K, eps, transform, complement, normalize, prior):
    """algorithms.md 2.4 with instance weights, by loops. The vocabulary is the words with a count in a
    training document of positive weight (1.2); D and df_w are sums of weights (D = the number of
    documents with unit weights); a word outside the vocabulary adds nothing."""
    X = np.asarray(X, dtype=float)
    T = np.asarray(T, dtype=float)
    n, V = X.shape
    w = [1.0] * n if w is None else [float(v) for v in w]
    vocab = [any(X[i, j] > 0 and w[i] > 0 for i in range(n)) for j in range(V)]
    D = math.fsum(w)
    idf = []
    for j in range(V):
        df = math.fsum(w[i] for i in range(n) if X[i, j] > 0)
        idf.append(math.log(D / df) if df > 0 else 0.0)

    def tr(M):
        out = [[float(M[i, j]) if vocab[j] else 0.0 for j in range(V)] for i in range(M.shape[0])]
        for row in out:
            if transform in ("L", "TW-L"):
                row[:] = [math.log(1 + v) for v in row]
            if transform == "TW-L":
                row[:] = [v * idf[j] for j, v in enumerate(row)]
                norm = math.sqrt(math.fsum(v * v for v in row))
                if norm > 0:
                    row[:] = [v / norm for v in row]
        return out

    Xt, Tt = tr(X), tr(T)
    Vn = sum(vocab)
    scores = np.zeros((T.shape[0], K))
    for c in range(K):
        weight_c = math.fsum(w[i] for i in range(n) if y[i] == c)
        rows = [i for i in range(n) if (y[i] != c if complement else y[i] == c)]
        counts = [math.fsum(w[i] * Xt[i][j] for i in rows) for j in range(V)]
        total = math.fsum(counts)
        W = [math.log((counts[j] + eps) / (total + eps * Vn)) if vocab[j] else 0.0 for j in range(V)]
        if normalize:
            s = math.fsum(abs(v) for v in W)
            W = [v / s if s > 0 else 0.0 for v in W]
        for d in range(T.shape[0]):
            val = math.fsum(Tt[d][j] * W[j] for j in range(V))
            scores[d, c] = -val if complement else val
            if prior == "mle" and not normalize:
                scores[d, c] += math.log(weight_c / D) if weight_c > 0 else -math.inf
        if weight_c == 0:
            scores[:, c] = -math.inf
    return scores


def moment_start_reference(X):
    """fastfit's polya_moment_match (algorithms.md 2.7) by loops over the non-empty documents, with the
    fallback alpha_w = 1 on active words when s is not finite or not > 0."""
    docs = [row for row in np.asarray(X, dtype=float) if row.sum() > 0]
    V = len(docs[0])
    m = [math.fsum(d[j] / d.sum() for d in docs) / len(docs) for j in range(V)]
    m2 = [math.fsum((d[j] / d.sum()) ** 2 for d in docs) / len(docs) for j in range(V)]
    s_w = []
    for j in range(V):
        if m[j] > 0:
            num, den = m[j] - m2[j], m2[j] - m[j] ** 2
            s_w.append(num / den if den != 0 else (math.inf if num > 0 else math.nan))
    s = float(np.median(s_w))
    return [s * m[j] if (math.isfinite(s) and s > 0) else (1.0 if m[j] > 0 else 0.0) for j in range(V)]


def minka_reference(X, alpha, tol=1e-6, max_iter=1000):
    """Minka's fixed point (algorithms.md 2.7) with loops and scipy's digamma; returns (alpha, iterations,
    converged)."""
    docs = [row for row in np.asarray(X, dtype=float) if row.sum() > 0]
    alpha = [float(a) for a in alpha]
    for it in range(1, max_iter + 1):
        A = math.fsum(alpha)
        den = math.fsum(digamma(d.sum() + A) - digamma(A) for d in docs)
        new = [a * math.fsum(digamma(d[j] + a) - digamma(a) for d in docs if d[j] > 0) / den if a > 0 else 0.0
               for j, a in enumerate(alpha)]
        change = max(abs(u - v) for u, v in zip(new, alpha))
        alpha = new
        if change < tol:
            return alpha, it, True
    return alpha, max_iter, False


def _schema(V, K):
    return Schema.numeric(V, [f"c{k}" for k in range(K)])


# ---------------------------------------------------------------------------------------------- nb-multinomial
@pytest.mark.parametrize("variant", ["TW-L-M", "C-TW-L-M"])
def test_tw_l_idf_with_fractional_weights_below_one(variant):
    """Instance weights below 1 give document frequencies below 1: idf = log(D / df_w) stays >= 0. Before the
    fix df_w was clamped to 1, so idf went negative (log of negative class sums: NaN scores)."""
    X = np.array([[2, 0, 2, 0, 1, 1], [5, 4, 4, 0, 0, 0], [0, 0, 3, 0, 2, 0], [0, 3, 0, 1, 0, 0],
                  [1, 1, 0, 0, 0, 2]], dtype=float)
    y = np.array([1, 1, 0, 0, 1])
    w = np.array([0.5, 0.25, 0.3, 0.2, 0.4])
    T = np.array([[1, 0, 2, 1, 1, 0], [0, 1, 0, 0, 0, 3], [0, 0, 0, 0, 0, 0]], dtype=float)
    for eps in (1.0, 0.01):
        clf = MultinomialNB(variant=variant, epsilon=eps).fit(sp.csr_matrix(X), y, sample_weight=w,
                                                              schema=_schema(6, 2))
        want = mnb_reference(X, y, w, T, 2, eps, "TW-L", variant.startswith("C"), variant.startswith("C"),
                             "uniform")
        got = clf.decision_function(T)
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_tw_l_word_in_every_document_has_idf_zero_with_fractional_weights():
    """A word in every training document has idf 0 (algorithms.md 2.4). With fractional weights D and df_w
    are the same weights summed in different orders; before the fix a rounding's 2e-16 idf survived, and the
    L2 normalisation turned a document made of that word into a unit vector (scores of order 1, not 0)."""
    rng = np.random.default_rng(4)
    w = rng.uniform(0, 3, size=11)
    X = rng.poisson(1.0, size=(11, 5)).astype(float)
    X[:, 0] += 1                       # word 0 in every document
    y = np.arange(11) % 3
    T = np.array([[3, 0, 0, 0, 0], [1, 2, 0, 0, 1]], dtype=float)
    for variant in ("TW-L-M", "C-TW-L-M"):
        clf = MultinomialNB(variant=variant, epsilon=0.01).fit(X, y, sample_weight=w, schema=_schema(5, 3))
        want = mnb_reference(X, y, w, T, 3, 0.01, "TW-L", variant.startswith("C"), variant.startswith("C"),
                             "uniform")
        got = clf.decision_function(T)
        np.testing.assert_array_equal(got[0], [0.0, 0.0, 0.0])
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------------------- dcm, c-dcm
def test_identical_documents_start_from_the_fallback_and_run_to_the_cap():
    """Identical documents: every word's proportion has variance 0, s = inf, and algorithms.md 2.7 starts
    from alpha = 1; the data are under-dispersed, so the iteration runs to the cap. Before the fix, seven
    copies gave a rounding's variance of 1e-17, alpha ~ 1e15 and "converged" after one step (five copies
    ran to the cap), so the model depended on the number of copies."""
    doc = np.array([2, 0, 3, 1, 1, 0], dtype=float)
    want, _, converged = minka_reference(doc[None, :], moment_start_reference(doc[None, :]), max_iter=1000)
    assert not converged
    for copies in (1, 5, 7, 10):
        X = np.tile(doc, (copies, 1))
        clf = DCM().fit(X, np.zeros(copies, dtype=int), schema=_schema(6, 1))
        assert not clf.converged_[0] and clf.n_iter_[0] == 1000
        np.testing.assert_allclose(clf.alpha_unsmoothed_[0], want, rtol=1e-9)


def test_complement_fit_equals_the_direct_fit_of_the_same_documents():
    """C-DCM's alpha~_k is the DCM fit of the documents outside k (algorithms.md 2.7). The complement's
    moments come by subtraction (all documents minus class k); before the fix, when every document outside k
    holds a single word (m1 = m2, s = 0: the fallback start 1), the subtraction's 1e-17 gave s ~ 1e-16 and
    alpha ~ 1e-16, "converged" after one step, where the direct fit starts from 1."""
    X = np.array([[0, 0], [0, 1], [0, 0], [0, 1], [2, 0], [4, 3], [0, 3], [0, 0]], dtype=float)
    y = np.array([2, 0, 2, 2, 2, 1, 2, 1])
    comp = ComplementDCM().fit(X, y, schema=_schema(2, 3))
    outside = X[y != 1]
    start = moment_start_reference(outside)
    assert start == [1.0, 1.0]
    want, iterations, converged = minka_reference(outside, start)
    np.testing.assert_allclose(comp.alpha_unsmoothed_[1], want, rtol=1e-9)
    assert comp.n_iter_[1] == iterations and bool(comp.converged_[1]) == converged
    # and the two-class case: C-DCM's alpha~_0 is DCM's alpha_1, the same fit
    y2 = (y == 1).astype(int)
    comp2 = ComplementDCM().fit(X, y2, schema=_schema(2, 2))
    plain = DCM().fit(X, y2, schema=_schema(2, 2))
    np.testing.assert_allclose(comp2.alpha_unsmoothed_[1], plain.alpha_unsmoothed_[0], rtol=1e-9)
    np.testing.assert_allclose(comp2.alpha_unsmoothed_[0], plain.alpha_unsmoothed_[1], rtol=1e-9)


@pytest.mark.parametrize("name,params,match", [
    ("nb-multinomial", {"epsilon": math.inf}, "nb-multinomial: epsilon must be a finite number > 0, not inf"),
    ("dcm", {"smoothing": math.inf}, "dcm: smoothing must be a finite number >= 0, not inf"),
    ("c-dcm", {"smoothing": math.inf}, "c-dcm: smoothing must be a finite number >= 0, not inf"),
])
def test_infinite_smoothing_is_refused_naming_the_parameter(name, params, match):
    """An infinite epsilon or smoothing was accepted and every score was NaN; predict_proba then blamed the
    data ("rescale the data"), not the parameter."""
    import toolkit
    from toolkit.errors import ParameterError

    with pytest.raises(ParameterError, match=match):
        toolkit.get_classifier(name, **params)
    cls = {"nb-multinomial": MultinomialNB, "dcm": DCM, "c-dcm": ComplementDCM}[name]
    with pytest.raises(ParameterError, match=match):
        cls(**params).fit(np.array([[1.0, 2.0], [0.0, 1.0]]), [0, 1])
