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

from toolkit.api import Schema
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
