"""Multinomial NB family (algorithms.md 2.4): the 7.5 test vectors, brute-force references with
explicit loops, and scikit-learn's MultinomialNB / ComplementNB as independent implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import toolkit
from toolkit.api import Schema
from toolkit.errors import CapabilityError, ParameterError
from toolkit.plugins.text.multinomial import MultinomialNB

# algorithms.md 7.5
X75 = np.array([[5, 0, 1, 0, 1], [1, 1, 0, 0, 0], [2, 0, 0, 1, 0], [0, 3, 0, 1, 0], [0, 1, 2, 0, 0],
                [1, 0, 0, 4, 2], [0, 0, 0, 6, 0], [0, 1, 0, 0, 1], [0, 0, 1, 2, 1]], dtype=float)
Y75 = np.array([0, 0, 0, 1, 1, 2, 2, 2, 2])
T75 = np.array([[1, 0, 2, 1, 1]], dtype=float)

VECTORS = [
    ("M", 1, (-9.196253, -9.534161, -9.636440), 0),
    ("C-M", 1, (1.044802, 1.000000, 1.046481), 2),
    ("M", 0.01, (-10.324831, -17.569259, -10.830954), 0),
    ("C-M", 0.01, (1.052950, 1.000000, 1.055181), 2),
    ("L-M", 1, (-5.358076, -5.757709, -5.426588), 0),
    ("C-L-M", 1, (0.654452, 0.619713, 0.659663), 2),
    ("L-M", 0.01, (-5.890977, -10.857450, -6.006232), 0),
    ("C-L-M", 0.01, (0.663195, 0.614047, 0.670400), 2),
    ("TW-L-M", 1, (-3.119000, -3.103069, -3.102453), 2),
    ("C-TW-L-M", 1, (0.376883, 0.376009, 0.373496), 0),
    ("TW-L-M", 0.01, (-3.646045, -5.586232, -3.436450), 2),
    ("C-TW-L-M", 0.01, (0.382556, 0.383375, 0.376837), 1),
]


@pytest.mark.parametrize("variant,eps,scores,pred", VECTORS)
def test_algorithms_7_5_vectors(variant, eps, scores, pred):
    clf = MultinomialNB(variant=variant, epsilon=eps).fit(X75, Y75)
    np.testing.assert_allclose(clf.decision_function(T75)[0], scores, atol=1e-6)
    assert clf.predict(T75)[0] == pred
    # the same through sparse input
    clf_sp = MultinomialNB(variant=variant, epsilon=eps).fit(sp.csr_matrix(X75), Y75)
    np.testing.assert_allclose(clf_sp.decision_function(sp.csr_matrix(T75)), clf.decision_function(T75),
                               rtol=1e-12, atol=1e-12)


def test_algorithms_7_5_mle_prior_posterior():
    clf = MultinomialNB(epsilon=1, prior="mle").fit(X75, Y75)
    np.testing.assert_allclose(clf.decision_function(T75)[0], (-10.294866, -11.038239, -10.447371), atol=1e-6)
    np.testing.assert_allclose(clf.predict_proba(T75)[0], (0.428438, 0.203725, 0.367837), atol=1e-6)


def _random_counts(seed, n=40, V=12, K=3):
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.8, size=(n, V)).astype(float)
    X[rng.random((n, V)) < 0.4] = 0
    y = np.arange(n) % K
    return X, y


def _brute_force(X, y, T, eps, transform, complement, normalize, prior):
    """Explicit loops over classes, words and documents (no code shared with the plugin)."""
    n, V = X.shape
    K = int(y.max()) + 1

    def tr(M, idf):
        out = np.array(M, dtype=float)
        if transform in ("L", "TW-L"):
            for i in range(out.shape[0]):
                for j in range(V):
                    out[i, j] = math.log(1 + out[i, j])
        if transform == "TW-L":
            for i in range(out.shape[0]):
                for j in range(V):
                    out[i, j] *= idf[j]
                norm = math.sqrt(sum(v * v for v in out[i]))
                if norm > 0:
                    out[i] /= norm
        return out

    idf = []
    for j in range(V):
        df = sum(1 for i in range(n) if X[i, j] > 0)
        idf.append(math.log(n / df) if df else 0.0)
    Xt, Tt = tr(X, idf), tr(T, idf)
    scores = np.zeros((T.shape[0], K))
    for c in range(K):
        rows = [i for i in range(n) if (y[i] != c if complement else y[i] == c)]
        counts = [sum(Xt[i, j] for i in rows) for j in range(V)]
        total = sum(counts)
        W = [math.log((counts[j] + eps) / (total + eps * V)) for j in range(V)]
        if normalize:
            s = sum(abs(v) for v in W)
            W = [v / s for v in W]
        for d in range(T.shape[0]):
            val = sum(Tt[d, j] * W[j] for j in range(V))
            scores[d, c] = -val if complement else val
            if prior == "mle" and not normalize:
                scores[d, c] += math.log(sum(1 for i in range(n) if y[i] == c) / n)
    return scores


@pytest.mark.parametrize("transform", ["none", "L", "TW-L"])
@pytest.mark.parametrize("complement,normalize", [(False, False), (True, True), (True, False), (False, True)])
@pytest.mark.parametrize("prior", ["uniform", "mle"])
def test_against_brute_force(transform, complement, normalize, prior):
    X, y = _random_counts(3)
    T, _ = _random_counts(4, n=7)
    clf = MultinomialNB(epsilon=0.3, weighting=transform, complement=complement, weight_normalize=normalize,
                        prior=prior).fit(sp.csr_matrix(X), y)
    got = clf.decision_function(sp.csr_matrix(T))
    want = _brute_force(X, y, T, 0.3, transform, complement, normalize, prior)
    # a uniform prior is a constant per document; compare up to it
    np.testing.assert_allclose(got - got[:, :1], want - want[:, :1], atol=1e-10)
    if prior == "mle" or normalize or complement:
        np.testing.assert_allclose(got, want, atol=1e-10)


def test_matches_scikit_learn_multinomial_and_complement_nb():
    sk = pytest.importorskip("sklearn.naive_bayes")
    X, y = _random_counts(7, n=60, V=30, K=4)
    T, _ = _random_counts(8, n=15, V=30)
    for eps in (1.0, 0.01):
        ours = MultinomialNB(epsilon=eps, prior="mle").fit(X, y)
        theirs = sk.MultinomialNB(alpha=eps, fit_prior=True, force_alpha=True).fit(X, y)
        np.testing.assert_allclose(ours.decision_function(T), theirs.predict_joint_log_proba(T), rtol=1e-10)
        np.testing.assert_allclose(ours.predict_proba(T), theirs.predict_proba(T), rtol=1e-9, atol=1e-12)
        # scikit-learn's ComplementNB with norm=True is the chapter's C-M (complement + normalisation)
        ours_c = MultinomialNB(variant="C-M", epsilon=eps).fit(X, y)
        theirs_c = sk.ComplementNB(alpha=eps, norm=True, force_alpha=True).fit(X, y)
        np.testing.assert_allclose(ours_c.decision_function(T), theirs_c.predict_joint_log_proba(T), rtol=1e-10)
        np.testing.assert_array_equal(ours_c.predict(T), theirs_c.predict(T))


def test_transform_test_false_scores_raw_counts():
    clf = MultinomialNB(variant="L-M", epsilon=1, transform_test=False).fit(X75, Y75)
    ref = MultinomialNB(variant="L-M", epsilon=1).fit(X75, Y75)
    np.testing.assert_allclose(clf.decision_function(T75), T75 @ ref.coef_.T, rtol=1e-12)


def test_integer_weights_equal_duplicated_rows():
    X, y = _random_counts(11, n=20)
    w = np.arange(20) % 3 + 1.0
    rows = np.repeat(np.arange(20), w.astype(int))
    for variant in ("M", "C-L-M"):
        a = MultinomialNB(variant=variant, epsilon=0.5, prior="mle").fit(X, y, sample_weight=w)
        b = MultinomialNB(variant=variant, epsilon=0.5, prior="mle").fit(X[rows], y[rows])
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-12)


def test_absent_class_is_never_predicted():
    schema = Schema.numeric(5, ["a", "b", "c", "d"])
    clf = MultinomialNB(epsilon=1).fit(X75, Y75, schema=schema)
    scores = clf.decision_function(T75)
    assert scores.shape == (1, 4) and scores[0, 3] == -np.inf
    assert clf.predict_proba(T75)[0, 3] == 0.0
    clf = MultinomialNB(variant="C-TW-L-M", epsilon=1).fit(X75, Y75, schema=schema)
    assert clf.decision_function(T75)[0, 3] == -np.inf


def test_document_log_likelihood():
    clf = MultinomialNB(epsilon=0.5).fit(X75, Y75)
    theta = np.zeros((3, 5))
    for c in range(3):
        counts = X75[Y75 == c].sum(axis=0)
        theta[c] = (counts + 0.5) / (counts.sum() + 2.5)
    y = np.array([2, 0])
    T = np.array([[1, 0, 2, 1, 1], [0, 3, 0, 0, 1]], dtype=float)
    want = [sum(T[d, w] * math.log(theta[y[d], w]) for w in range(5)) for d in range(2)]
    np.testing.assert_allclose(clf.document_log_likelihood(T, y), want, rtol=1e-12)
    with pytest.raises(CapabilityError, match="perplexity"):
        MultinomialNB(variant="L-M").fit(X75, Y75).document_log_likelihood(T, y)


def test_variant_switches_override_and_name():
    assert MultinomialNB(variant="C-TW-L-M").variant_name == "C-TW-L-M"
    assert MultinomialNB(variant="M", weighting="L").variant_name == "L-M"
    assert MultinomialNB(variant="C-M", weight_normalize=False).variant_name == "C(noW)-M"
    a = MultinomialNB(variant="M", weighting="TW-L", complement=True, weight_normalize=True, epsilon=0.01)
    b = MultinomialNB(variant="C-TW-L-M", epsilon=0.01)
    np.testing.assert_array_equal(a.fit(X75, Y75).decision_function(T75), b.fit(X75, Y75).decision_function(T75))


@pytest.mark.parametrize("params,match", [
    ({"epsilon": 0}, "epsilon"), ({"epsilon": -1}, "epsilon"), ({"variant": "X-M"}, "variant"),
    ({"weighting": "sqrt"}, "weighting"), ({"prior": "laplace"}, "prior"),
])
def test_bad_parameters(params, match):
    with pytest.raises(ParameterError, match=match):
        MultinomialNB(**params).fit(X75, Y75)


def test_negative_or_missing_counts_are_refused():
    with pytest.raises(CapabilityError, match="non-negative"):
        MultinomialNB().fit(-X75, Y75)
    bad = X75.copy()
    bad[0, 0] = np.nan
    with pytest.raises(CapabilityError, match="missing"):
        MultinomialNB().fit(bad, Y75)


def test_registered_and_model_state_round_trip():
    clf = toolkit.get_classifier("nb-multinomial", variant="C-TW-L-M", epsilon=0.01).fit(X75, Y75)
    meta, arrays = clf.get_state()
    again = MultinomialNB.from_state(clf.get_params(), meta, arrays)
    np.testing.assert_array_equal(again.predict_proba(T75), clf.predict_proba(T75))


# algorithms.md 1.2 / 2.4: the vocabulary is the words of the training part; words outside it are dropped,
# from |V| and from the scores. A column that no training document (of positive weight) holds must leave
# the 7.5 vectors unchanged, whatever the test document holds in it.
def _with_unseen_word(X, test_count):
    train = np.column_stack([X, np.zeros(len(X))])
    test = np.column_stack([T75, [[test_count]]])
    return train, test


@pytest.mark.parametrize("variant,eps,scores,pred", VECTORS)
@pytest.mark.parametrize("test_count", [0.0, 3.0])
def test_words_outside_the_training_vocabulary_are_dropped(variant, eps, scores, pred, test_count):
    train, test = _with_unseen_word(X75, test_count)
    for make in (np.asarray, sp.csr_matrix):
        clf = MultinomialNB(variant=variant, epsilon=eps).fit(make(train), Y75)
        np.testing.assert_allclose(clf.decision_function(make(test))[0], scores, atol=1e-6)
        assert clf.predict(make(test))[0] == pred
    # a word held only by a document of weight 0 is outside the vocabulary too
    heavy = np.vstack([train, np.r_[np.ones(5), 7.0]])
    clf = MultinomialNB(variant=variant, epsilon=eps).fit(heavy, np.r_[Y75, 1], sample_weight=np.r_[np.ones(9), 0.0])
    np.testing.assert_allclose(clf.decision_function(test)[0], scores, atol=1e-6)


def test_dropped_words_add_nothing_to_the_document_likelihood():
    train, test = _with_unseen_word(X75, 4.0)
    clf = MultinomialNB(epsilon=0.5).fit(train, Y75)
    ref = MultinomialNB(epsilon=0.5).fit(X75, Y75)
    np.testing.assert_allclose(clf.document_log_likelihood(test, [1]), ref.document_log_likelihood(T75, [1]),
                               rtol=1e-12)


@pytest.mark.parametrize("variant", ["TW-L-M", "C-TW-L-M"])
def test_tw_l_counts_documents_by_their_weights(variant):
    """TW-L's D and df_w weigh documents as the class sums do: weight 0 = the row dropped (the 7.5
    vector), an integer weight = the row repeated."""
    eps = 1
    scores = dict(((v, e), s) for v, e, s, _ in VECTORS)[(variant, eps)]
    extra = np.vstack([X75, [3, 0, 0, 0, 9]])
    clf = MultinomialNB(variant=variant, epsilon=eps).fit(extra, np.r_[Y75, 1], sample_weight=np.r_[np.ones(9), 0])
    np.testing.assert_allclose(clf.decision_function(T75)[0], scores, atol=1e-6)
    w = np.array([1, 2, 1, 3, 1, 1, 2, 1, 1], dtype=float)
    rows = np.repeat(np.arange(9), w.astype(int))
    a = MultinomialNB(variant=variant, epsilon=eps).fit(X75, Y75, sample_weight=w)
    b = MultinomialNB(variant=variant, epsilon=eps).fit(X75[rows], Y75[rows])
    np.testing.assert_allclose(a.idf_, b.idf_, rtol=1e-12)
    np.testing.assert_allclose(a.decision_function(T75), b.decision_function(T75), rtol=1e-12)


@pytest.mark.parametrize("variant", ["M", "C-L-M", "TW-L-M", "C-TW-L-M"])
def test_fit_from_shards_keeps_the_training_vocabulary_and_weights(variant):
    train, test = _with_unseen_word(X75, 2.0)
    w = np.array([1, 2, 0.5, 3, 1, 1, 2, 1, 0], dtype=float)
    whole = MultinomialNB(variant=variant, epsilon=0.1).fit(train, Y75, sample_weight=w)
    schema = Schema.numeric(6, ["0", "1", "2"])
    clf = MultinomialNB(variant=variant, epsilon=0.1)
    parts = [slice(0, 4), slice(4, 9)]
    previous = None
    for _ in range(clf.statistics_passes()):
        shards = [clf.shard_statistics(train[p], Y75[p], w[p], schema, previous=previous) for p in parts]
        previous = shards[0].merge(shards[1])
    clf.fit_from_statistics(previous)
    np.testing.assert_array_equal(clf.vocabulary_, whole.vocabulary_)
    assert not clf.vocabulary_[5]
    np.testing.assert_allclose(clf.decision_function(test), whole.decision_function(test), rtol=1e-10)


@pytest.mark.parametrize("K", [7, 20])
def test_class_sums_of_many_classes_equal_the_indicator_product_bit_for_bit(K, monkeypatch):
    """Without the kernel, class_sums takes one bincount over the entries (or, past _BINCOUNT_ENTRIES, a class
    at a time); both add every class's rows in row order, as the product with the weighted indicator does."""
    from toolkit.plugins.text import multinomial as m

    rng = np.random.default_rng(K)
    X = sp.random(3000, 500, density=0.05, random_state=K, format="csr")
    X.data = np.round(X.data * 10)
    y = rng.integers(0, K, 3000)
    for w in (np.ones(3000), rng.random(3000)):
        Y = np.zeros((3000, K))
        Y[np.arange(3000), y] = w
        want = np.asarray(Y.T @ X)
        got = m.class_sums(X, y, w, K)
        assert np.array_equal(got, want) and got.flags.f_contiguous
        got = m.class_sums_numpy(X, y, w, K)          # the path without the compiled kernel
        assert np.array_equal(got, want) and got.flags.f_contiguous
        with monkeypatch.context() as mp:
            mp.setattr(m, "_BINCOUNT_ENTRIES", -1)
            assert np.array_equal(m.class_sums_numpy(X, y, w, K), want)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("K", [1, 2, 3, 7, 20])
def test_compiled_class_sums_equal_the_indicator_product_bit_for_bit(K, index_dtype):
    """The one-pass kernel adds every (word, class) sum's rows in row order, as scipy's ``Y.T @ X`` does:
    the same bits, with unsorted and duplicate column indices and empty rows, for both index widths."""
    from toolkit.plugins.text import multinomial as m

    if m._sparse_kernels is None:
        pytest.skip("the compiled class-sums kernel is not built in this tree")
    rng = np.random.default_rng(100 + K)
    n, V = 2000, 300
    X = sp.random(n, V, density=0.04, random_state=K, format="csr")
    X.data = rng.random(X.nnz) * rng.choice([1.0, 1e-8, 1e8], X.nnz)   # magnitudes that make order matter
    X.data[: X.nnz // 3] = np.round(X.data[: X.nnz // 3])
    X.indices = X.indices[::-1].copy()            # unsorted within rows (and across, which is harmless)
    X.has_sorted_indices = False
    extra = sp.csr_matrix((np.full(5, 2.5), ([0, 0, 7, 7, 7], [3, 3, 9, 9, 3])), shape=(n, V))
    X = sp.csr_matrix((np.concatenate([X.data, extra.data]), np.concatenate([X.indices, extra.indices]),
                       X.indptr + extra.indptr), shape=(n, V))   # duplicates: rows 0 and 7 hold them twice
    X.indptr = X.indptr.astype(index_dtype)
    X.indices = X.indices.astype(index_dtype)
    y = rng.integers(0, K, n)
    for w in (np.ones(n), rng.random(n) * 3):
        Y = np.zeros((n, K))
        Y[np.arange(n), y] = w
        want = np.asarray(Y.T @ X)
        got = m.class_sums(X, y, w, K)
        assert got.shape == (K, V) and got.flags.f_contiguous
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, m.class_sums_numpy(X, y, w, K))


def test_compiled_class_sums_refuse_malformed_input_without_writing_outside():
    from toolkit.plugins.text import multinomial as m

    if m._sparse_kernels is None:
        pytest.skip("the compiled class-sums kernel is not built in this tree")
    kernel = m._sparse_kernels.class_sums
    indptr, indices, data = np.array([0, 2, 3]), np.array([0, 4, 1]), np.ones(3)
    y, w = np.array([0, 1]), np.ones(2)

    def call(indptr=indptr, indices=indices, data=data, y=y, w=w, out=None, V=5, K=2):
        out = np.zeros((V, K)) if out is None else out
        kernel(indptr, indices, data, y, w, out, V, K)
        return out

    np.testing.assert_array_equal(call(), [[1, 0], [0, 1], [0, 0], [0, 0], [1, 0]])
    with pytest.raises(ValueError, match="row 0: a column index"):
        call(V=4, out=np.zeros((4, 2)))
    with pytest.raises(ValueError, match="row 1: the label"):
        call(y=np.array([0, 2]))
    with pytest.raises(ValueError, match="row 1: the label"):
        call(y=np.array([0, -1]))
    with pytest.raises(ValueError, match="indptr"):
        call(indptr=np.array([0, 3, 2]))
    with pytest.raises(ValueError, match="indptr"):
        call(indptr=np.array([4, 4, 4]))
    # a pointer that starts past 0 (scipy's are 0): the entries before it belong to no row, as in scipy
    np.testing.assert_array_equal(call(indptr=np.array([1, 2, 3])), [[0, 0], [0, 1], [0, 0], [0, 0], [1, 0]])
    with pytest.raises(ValueError, match="lengths"):
        call(out=np.zeros((5, 3)))                       # out not (V, K)
    with pytest.raises(ValueError, match="lengths"):
        call(w=np.ones(3))
    with pytest.raises(TypeError, match="float64"):
        call(data=np.ones(3, dtype=np.float32))
    with pytest.raises(TypeError, match="int32 or int64"):
        call(y=np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match="writable"):
        out = np.zeros((5, 2))
        out.flags.writeable = False
        call(out=out)


def _order_sensitive_csr(n, V, seed, index_dtype=np.int32):
    """Unsorted indices, a duplicated entry, empty rows and magnitudes that make the adding order matter."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, V, density=0.05, random_state=seed, format="csr")
    X.data = rng.random(X.nnz) * rng.choice([1.0, 1e-8, 1e8], X.nnz)
    X.indices = X.indices[::-1].copy()
    X.has_sorted_indices = False
    extra = sp.csr_matrix((np.full(3, 2.5), ([0, 0, 0], [3, 3, 9])), shape=(n, V))
    X = sp.csr_matrix((np.concatenate([X.data, extra.data]), np.concatenate([X.indices, extra.indices]),
                       X.indptr + extra.indptr), shape=(n, V))
    X.indptr, X.indices = X.indptr.astype(index_dtype), X.indices.astype(index_dtype)
    return X


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("K", [1, 2, 3, 20])
def test_row_scores_equal_scipys_product_bit_for_bit_in_any_number_of_threads(K, index_dtype):
    """nb-multinomial's scores ``X @ coef.T`` from the compiled kernel on row ranges in threads: scipy's
    product to the last bit (each row's entries added in order from 0.0) whatever the number of threads,
    also with more threads than rows and with no rows."""
    from toolkit.plugins.text import multinomial as m

    if m._sparse_kernels is None:
        pytest.skip("the compiled kernels are not built in this tree")
    rng = np.random.default_rng(K)
    for n in (0, 3, 1500):
        X = _order_sensitive_csr(max(n, 1), 200, seed=n + K, index_dtype=index_dtype)[:n]
        coef = rng.normal(size=(K, 200)) * rng.choice([1.0, 1e6, 1e-6], (K, 200))
        want = np.asarray(X @ coef.T)
        for threads in (1, 2, 3, 7):
            got = m.row_scores(X, coef, threads=threads)
            assert got.shape == (n, K)
            np.testing.assert_array_equal(got, want)
        # the kernel itself for every K (row_scores leaves some K to scipy), on uneven row ranges
        out = np.full((n, K), np.nan)
        for a, b in ((0, n // 3), (n // 3, n // 3), (n // 3, n)):
            m._sparse_kernels.row_scores(X.indptr, X.indices, np.ascontiguousarray(X.data),
                                         np.ascontiguousarray(coef.T), out, 200, K, a, b)
        np.testing.assert_array_equal(out, want)
        # a Fortran-ordered coef_ (what class_sums gives) reads the same
        np.testing.assert_array_equal(m.row_scores(X, np.asfortranarray(coef), threads=2), want)


def test_row_scores_refuse_malformed_input_also_from_a_helper_thread():
    """An index outside the columns is an error naming the row, raised in the caller also when a helper
    thread met it (an exception in a thread would otherwise be printed and the rows left unset)."""
    from toolkit.plugins.text import multinomial as m

    if m._sparse_kernels is None:
        pytest.skip("the compiled kernels are not built in this tree")
    n, V = 10, 4
    X = sp.csr_matrix(np.ones((n, V)))
    bad = X.copy()
    bad.indices = bad.indices.copy()
    bad.indices[-1] = V + 3               # in the last row: the second of two ranges
    coef = np.ones((2, V))
    with pytest.raises(ValueError, match="row 9: a column index"):
        m.row_scores(bad, coef, threads=2)
    with pytest.raises(ValueError, match="row 9: a column index"):
        m.row_scores(bad, coef, threads=1)
    kernel = m._sparse_kernels.row_scores
    out = np.zeros((n, 2))
    with pytest.raises(ValueError, match="lengths"):
        kernel(X.indptr, X.indices, X.data, np.ones((V, 2)), out, V, 2, 0, n + 1)   # rows past the end
    with pytest.raises(ValueError, match="lengths"):
        kernel(X.indptr, X.indices, X.data, np.ones((V, 3)), out, V, 2, 0, n)       # weights not (V, K)
    with pytest.raises(ValueError, match="indptr"):
        kernel(np.array([0, 5, 2]), np.zeros(5, dtype=np.int32), np.ones(5), np.ones((V, 2)), np.zeros((2, 2)),
               V, 2, 0, 2)
    with pytest.raises(ValueError, match="row 9: a column index"):   # more classes: the other loop
        kernel(bad.indptr, bad.indices, bad.data, np.ones((V, 3)), np.zeros((n, 3)), V, 3, 0, n)
    with pytest.raises(ValueError, match="row 0: a column index"):   # no column at all, entries all the same
        kernel(X.indptr, X.indices, X.data, np.ones((0, 2)), np.zeros((n, 2)), 0, 2, 0, n)
    # sizes whose products wrap around to the buffers' lengths (2**61 * 8 = 2**64 = 0): refused, not read
    with pytest.raises(ValueError, match="lengths"):
        kernel(np.array([0, 1]), np.array([2**40]), np.ones(1), np.zeros(0), np.zeros(8), 2**61, 8, 0, 1)
    with pytest.raises(ValueError, match="lengths"):
        kernel(np.zeros(5, np.int64), np.zeros(0, np.int32), np.zeros(0), np.zeros(0), np.zeros(0), 4, 2**62, 0, 4)
    with pytest.raises(ValueError, match="lengths"):
        m._sparse_kernels.class_sums(np.array([0, 1]), np.array([2**40]), np.ones(1), np.zeros(1, np.int64),
                                     np.ones(1), np.zeros(0), 2**61, 8)
    with pytest.raises(TypeError, match="row_scores: out must be a contiguous writable"):
        out.flags.writeable = False
        kernel(X.indptr, X.indices, X.data, np.ones((V, 2)), out, V, 2, 0, n)


def test_compute_threads_follows_the_cores_and_omp_num_threads(monkeypatch):
    """Threads a computation may run: the usable cores, capped by OMP_NUM_THREADS (each --jobs worker sets
    it to its share); a value that is not a positive whole number is ignored."""
    import os

    from toolkit.api import compute_threads

    cores = len(os.sched_getaffinity(0))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert compute_threads() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert compute_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", str(cores + 5))
    assert compute_threads() == cores
    for junk in ("abc", "0", "-2", "", "1_6", "\u00b2", " "):
        monkeypatch.setenv("OMP_NUM_THREADS", junk)
        assert compute_threads() == cores
    for nested in ("1,2", " 1 , 4", "1,"):   # OpenMP's list form: the outer level first
        monkeypatch.setenv("OMP_NUM_THREADS", nested)
        assert compute_threads() == 1
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert compute_threads() == 3


def test_multinomial_scores_in_threads_are_the_scipy_paths(monkeypatch):
    """Above the size where scoring runs in threads, nb-multinomial's decision values and predictions are
    those of the scipy product (the path without the compiled kernels), bit for bit."""
    from toolkit.plugins.text import multinomial as m

    X = _order_sensitive_csr(3000, 300, seed=11) * 1.0
    X.data = np.round(X.data * 1e-6 + 1)
    X.sum_duplicates()
    y = np.random.default_rng(11).integers(0, 3, 3000)
    model = m.MultinomialNB(variant="M").fit(X, y)
    monkeypatch.setattr(m, "_THREADED_SCORES_NNZ", 0)
    monkeypatch.setattr(m, "compute_threads", lambda: 2)
    threaded = model.decision_function(X), model.predict(X)
    monkeypatch.setattr(m, "_sparse_kernels", None)
    plain = model.decision_function(X), model.predict(X)
    np.testing.assert_array_equal(threaded[0], plain[0])
    np.testing.assert_array_equal(threaded[1], plain[1])


def test_multinomial_fit_is_the_same_without_the_compiled_kernel(monkeypatch):
    from toolkit.plugins.text import multinomial as m

    rng = np.random.default_rng(5)
    X = sp.random(400, 120, density=0.1, random_state=5, format="csr") * 7
    y = rng.integers(0, 4, 400)
    w = rng.random(400)
    with_kernel = m.MultinomialNB(variant="C-TW-L-M").fit(X, y, sample_weight=w)
    monkeypatch.setattr(m, "_sparse_kernels", None)
    without = m.MultinomialNB(variant="C-TW-L-M").fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(with_kernel.feature_count_, without.feature_count_)
    np.testing.assert_array_equal(with_kernel.predict_proba(X), without.predict_proba(X))
