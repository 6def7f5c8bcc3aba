"""Review of the text feature selectors, perplexity and the word-counts step (rev-select).

Every expected value comes from algorithms.md (formulas or test vectors) written out again here as
plain loops, or from scikit-learn; never from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from toolkit.api import Predictions
from toolkit.plugins.text.dcm import DCM
from toolkit.plugins.text.perplexity import perplexity


def _predictions(model, X, y):
    y = np.asarray(y)
    return Predictions(y_true=y, y_pred=y, proba=None, scores=None, classes=("a", "b"), model=model, X=X)


def _dcm_log_p(x, alpha):
    """algorithms.md 5.2.6, DCM without the multinomial coefficient, written out."""
    A, n = float(np.sum(alpha)), float(np.sum(x))
    return (math.lgamma(A) - math.lgamma(n + A)
            + sum(math.lgamma(xw + aw) - math.lgamma(aw) for xw, aw in zip(x, alpha) if xw > 0))


def test_perplexity_of_dcm_scoring_every_column_counts_every_token():
    """dcm:vocabulary=all gives the words of no training document a positive alpha and scores their tokens;
    the perplexity divided by the training-vocabulary tokens only (3 of 6 here: 324.5 instead of 18.0)."""
    X = np.array([[3, 1, 0], [1, 2, 0], [2, 2, 0], [0, 1, 0]], dtype=float)
    y = np.array([0, 1, 0, 1])
    test = np.array([[2.0, 1.0, 3.0]])
    model = DCM(vocabulary="all").fit(X, y)
    alpha = model.alpha_[0]
    assert np.all(alpha > 0)                 # every column is scored, the unseen word too
    expected = math.exp(-_dcm_log_p(test[0], alpha) / test.sum())
    assert perplexity(_predictions(model, test, [0])) == pytest.approx(expected, rel=1e-10)
    # and with the training vocabulary (the default) the unseen word counts in neither term
    model = DCM().fit(X, y)
    alpha = model.alpha_[0]
    assert alpha[2] == 0
    expected = math.exp(-_dcm_log_p(test[0, :2], alpha[:2]) / test[0, :2].sum())
    assert perplexity(_predictions(model, test, [0])) == pytest.approx(expected, rel=1e-10)


# ----------------------------------------------------------------------------------------------------------------
# kl, dkl, mi against algorithms.md 3.1 / 3.2 written out as dense loops over words, classes and documents

def _brute_scores(X, y, K):
    """(kl, dkl, mi-document, mi-token) per word, straight from the formulas of algorithms.md 3.1-3.2."""
    X = np.asarray(X, dtype=float)
    n, V = X.shape
    S = n
    docs = [sum(1 for d in range(n) if y[d] == j) for j in range(K)]
    vocabulary = sum(1 for t in range(V) if any(X[d, t] > 0 for d in range(n)))
    T = [sum(X[d, w] for d in range(n) if y[d] == j for w in range(V)) for j in range(K)]
    total = sum(T)
    out = {"kl": [], "dkl": [], "mi": [], "mi-token": []}
    for t in range(V):
        Nt = sum(1 for d in range(n) if X[d, t] > 0)
        if Nt == 0:
            for key in out:
                out[key].append(-math.inf)
            continue
        p_w = sum(X[d, t] for d in range(n)) / total
        k_tilde = -p_w * math.log(Nt / S)
        kl_ml = kl_laplace = p_mix = 0.0
        for j in range(K):
            pc = docs[j] / S
            tokens = sum(X[d, t] for d in range(n) if y[d] == j)
            Njt = sum(1 for d in range(n) if y[d] == j and X[d, t] > 0)
            p_laplace = (1 + tokens) / (vocabulary + T[j])
            p_ml = tokens / T[j] if T[j] > 0 else 0.0
            p_mix += pc * p_laplace
            if Njt > 0:
                q = Njt / docs[j]
                kl_ml -= pc * p_ml * math.log(q)
                kl_laplace -= pc * p_laplace * math.log(q)
        out["kl"].append(k_tilde - kl_ml)
        out["dkl"].append(-p_mix * math.log(Nt / S) - kl_laplace)
        mi = 0.0
        for j in range(K):
            for e in (False, True):
                joint = sum(1 for d in range(n) if y[d] == j and (X[d, t] > 0) == e) / S
                marginal = sum(1 for d in range(n) if (X[d, t] > 0) == e) / S
                if joint > 0:
                    mi += joint * math.log(joint / (docs[j] / S * marginal))
        out["mi"].append(mi)
        mi = 0.0
        Nw = sum(X[d, t] for d in range(n))
        for j in range(K):
            Njw = sum(X[d, t] for d in range(n) if y[d] == j)
            for e in (False, True):
                joint = (Njw if e else T[j] - Njw) / total
                marginal = (Nw if e else total - Nw) / total
                if joint > 0:
                    mi += joint * math.log(joint / (T[j] / total * marginal))
        out["mi-token"].append(mi)
    return {key: np.array(v) for key, v in out.items()}


def _selectors():
    from toolkit.plugins.text.selection import DKLSelector, KLSelector, MISelector
    return {"kl": KLSelector(k=None), "dkl": DKLSelector(k=None), "mi": MISelector(k=None),
            "mi-token": MISelector(k=None, event_model="token")}


def _split_entries(D):
    """The same counts as a CSR matrix that stores every non-zero twice (halves, duplicated entries)."""
    C = sp.coo_matrix(D)
    rows, cols = np.r_[C.row, C.row], np.r_[C.col, C.col]
    vals = np.r_[C.data / 2, C.data / 2]
    order = np.lexsort((cols, rows))
    indptr = np.r_[0, np.cumsum(np.bincount(rows, minlength=D.shape[0]))]
    X = sp.csr_matrix((vals[order], cols[order], indptr), shape=D.shape)
    assert np.array_equal(X.toarray(), D) and not X.has_canonical_format
    return X


def test_scores_against_the_formulas_on_random_counts():
    """Absent words, words in every document, empty documents, one class, absent classes (schema), dense
    and CSR input."""
    from toolkit.api import Schema
    rng = np.random.default_rng(20261207)
    for trial in range(60):
        n, V, K = int(rng.integers(1, 8)), int(rng.integers(1, 6)), int(rng.integers(1, 4))
        D = rng.poisson(rng.uniform(0.3, 2.0), size=(n, V)).astype(float)
        D[rng.random((n, V)) < 0.3] = 0.0
        if trial % 4 == 0:
            D[0] = 0.0                                  # an empty document
        if trial % 5 == 0:
            D[:, 0] = np.maximum(D[:, 0], 1.0)          # a word in every document
        y = rng.integers(0, K, size=n)
        expected = _brute_scores(D, y, K)
        schema = Schema.numeric(V, [f"c{j}" for j in range(K)])
        for X in (D, sp.csr_matrix(D)):
            for name, selector in _selectors().items():
                selector.fit(X, y, schema=schema)
                np.testing.assert_allclose(selector.scores_, expected[name], rtol=1e-12, atol=1e-14,
                                           err_msg=f"{name}, trial {trial}")


def test_duplicated_csr_entries_are_one_count():
    """A CSR matrix may store a (document, word) entry more than once (scipy sums them in toarray()); the
    document frequencies counted each stored entry, so a document counted twice: document-event MI came out
    at 1.46 nats with two classes (above H(class) = 0.64), KL and dKL were off as well."""
    rng = np.random.default_rng(5)
    D = rng.poisson(1.0, size=(9, 5)).astype(float)
    y = rng.integers(0, 3, size=9)
    X = _split_entries(D)
    expected = _brute_scores(D, y, int(y.max()) + 1)
    for name, selector in _selectors().items():
        np.testing.assert_allclose(selector.fit(X, y).scores_, expected[name], rtol=1e-12, atol=1e-14,
                                   err_msg=name)
    # the caller's matrix is not modified
    assert not X.has_canonical_format


def test_duplicated_csr_entries_in_the_text_classifiers():
    """The same shared count check feeds nb-multinomial's TW-L document frequencies (NaN scores) and dcm's
    count histograms (scores off by 0.01)."""
    from toolkit.plugins.text.multinomial import MultinomialNB
    rng = np.random.default_rng(3)
    D = rng.poisson(1.0, size=(8, 5)).astype(float)
    y = rng.integers(0, 2, size=8)
    X = _split_entries(D)
    for make in (lambda: MultinomialNB(variant="TW-L-M"), DCM):
        np.testing.assert_allclose(make().fit(X, y).decision_function(D), make().fit(D, y).decision_function(D),
                                   rtol=1e-12, atol=1e-12)


def test_a_numpy_float_share_keeps_its_share():
    """k=np.float32(0.5) passed the parameter check as a share but top_k took it for the count int(0.5) = 0:
    no word was kept."""
    from toolkit.plugins.text.selection import KLSelector
    D = np.array([[2, 1, 0, 0], [1, 0, 1, 0], [3, 0, 0, 1], [0, 2, 0, 1], [0, 1, 1, 3]], dtype=float)
    y = np.array([0, 0, 0, 1, 1])
    # algorithms.md 7.4: KL ranks w0, w3, w1, w2; half of the 4 words = w0 and w3
    for k in (0.5, np.float32(0.5), np.float64(0.5)):
        assert KLSelector(k=k).fit(D, y).support_.tolist() == [0, 3]
    assert KLSelector(k=np.int64(1)).fit(D, y).support_.tolist() == [0]


# ----------------------------------------------------------------------------------------------------------------
# word-counts

_UNLABELLED_ARFF = """@relation t
@attribute text string
@attribute class {a,b}
@data
'apple apple banana',a
'cherry banana',b
'zzz zzz zzz zzz zzz zzz',?
'banana',?
"""


def test_a_document_without_class_does_not_shape_the_vocabulary(tmp_path):
    """algorithms.md 0.2 drops rows with a missing class from training and 1.2 takes the vocabulary from the
    training documents; the text step learned from the unlabelled rows too: 'zzz' (only in one) entered the
    vocabulary, and remove_top=1 removed it instead of the most frequent labelled word."""
    import toolkit
    from toolkit.models.pipeline import Pipeline
    from toolkit.models.text_step import WordCounts
    path = tmp_path / "t.arff"
    path.write_text(_UNLABELLED_ARFF, encoding="utf-8")
    ds = toolkit.load_arff(path)
    # labelled rows: apple 2, banana 2, cherry 1 (df: apple 1, banana 2, cherry 1)
    assert Pipeline("nb-multinomial").fit(ds).vectorizer.vocabulary_ == ["apple", "banana", "cherry"]
    vec = WordCounts(remove_top=1)       # apple and banana tie at 2: the smaller word goes
    X, _ = vec.fit_transform_dataset(ds)
    assert vec.vocabulary_ == ["banana", "cherry"]
    assert vec.document_frequency_.tolist() == [2, 1]
    # every row is still transformed, the unlabelled ones too
    assert X.toarray().tolist() == [[1, 0], [1, 1], [0, 0], [1, 0]]
    vec = WordCounts(min_df=2)
    vec.fit_transform_dataset(ds)
    assert vec.vocabulary_ == ["banana"]


def test_a_training_part_without_tokens_scores_every_word_minus_infinity_quietly():
    """Only empty documents: every word is absent (-inf, algorithms.md 3.1) and no RuntimeWarning
    (dkl divided 1 by |V| + T = 0, token MI 0 by 0 total tokens)."""
    import warnings
    X = sp.csr_matrix((3, 4))
    y = np.array([0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, selector in _selectors().items():
            assert np.all(selector.fit(X, y).scores_ == -np.inf), name
