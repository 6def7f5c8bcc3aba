"""Multinomial naive Bayes and Rennie et al.'s heuristics as composable options (algorithms.md 2.4).

One class covers the DCM chapter's whole family: a transform of the counts (none, L = log(1+x),
TW-L = log(1+x)·idf then L2 length normalisation), complement training (C: each class estimated
from the documents *not* in it), and weight normalisation (W: log-parameters divided by the sum
of their absolute values). ``variant`` names a row of the chapter's tables (M, L-M, TW-L-M, C-M,
C-L-M, C-TW-L-M); the three switches may also be set one by one and override the variant.

Everything stays sparse: class sums are one pass over the entries (``Y.T @ X``) and prediction is
``X @ W.T``; the only dense arrays are the K x |V| parameters.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import CLASSIFIER_STATE, ProbabilisticClassifier, Schema, SufficientStatistics, compute_threads
from toolkit.errors import CapabilityError, ParameterError

from toolkit.plugins.text.counts import as_counts, document_weights, row_of_entry, sparse_class_sums

__all__ = ["MultinomialNB", "VARIANTS", "transform_counts", "multinomial_log_likelihood", "class_sums",
           "class_sums_numpy", "MultinomialStatistics", "DocumentFrequencies", "inverse_document_frequencies"]

#: variant name -> (transform, complement, weight_normalize)
VARIANTS: dict[str, tuple[str, bool, bool]] = {
    "M": ("none", False, False),
    "L-M": ("L", False, False),
    "TW-L-M": ("TW-L", False, False),
    "C-M": ("none", True, True),
    "C-L-M": ("L", True, True),
    "C-TW-L-M": ("TW-L", True, True),
}
_TRANSFORMS = {"none": "none", "l": "L", "log": "L", "tw-l": "TW-L", "twl": "TW-L", "tfidf": "TW-L"}
_PRIORS = ("uniform", "mle")


def transform_counts(X: sp.csr_matrix, transform: str, idf: np.ndarray | None = None) -> sp.csr_matrix:
    """L: log(1+x); TW-L: log(1+x)·idf, then each row divided by its L2 norm (a zero row stays zero)."""
    if transform == "none":
        return X
    out = X.copy()
    out.data = np.log1p(out.data)
    if transform == "TW-L":
        assert idf is not None
        out.data *= idf[out.indices]
        rows = row_of_entry(out)
        norms = np.sqrt(np.bincount(rows, weights=out.data * out.data, minlength=out.shape[0]))
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        out.data *= scale[rows]
    return out


#: up to this many entries, class sums of many classes come from one bincount (its index array is 8 bytes an
#: entry); beyond, a class at a time
_BINCOUNT_ENTRIES = 1 << 23

try:  # the compiled one-pass kernels (plugins/text/_sparse_kernels.c); the numpy paths compute the same bits
    from toolkit.plugins.text import _sparse_kernels
except ImportError:  # pragma: no cover - a source tree without the built extension
    _sparse_kernels = None

#: from this many stored entries on, row scores run on row ranges in threads (below, a thread's start
#: costs more than it saves)
_THREADED_SCORES_NNZ = 1 << 20


def class_sums(X: sp.csr_matrix, y: np.ndarray, w: np.ndarray, K: int) -> np.ndarray:
    """(K, V) weighted sums of the rows of each class, ``Y.T @ X``, each added in row order.

    The compiled kernel takes one pass over the entries whatever K (on 1M documents x 100k words about
    one sparse product, where scipy's ``Y.T @ X`` costs two); without it, ``class_sums_numpy``. Both add
    every class's rows in row order, so the bits agree. The result is Fortran-ordered: ``coef_.T`` stays
    contiguous for the sparse @ dense product at prediction time.
    """
    if _sparse_kernels is None:
        return class_sums_numpy(X, y, w, K)
    n, V = X.shape
    out = np.zeros((V, K))
    _sparse_kernels.class_sums(np.ascontiguousarray(X.indptr), np.ascontiguousarray(X.indices),
                           np.ascontiguousarray(X.data, dtype=np.float64),
                           np.ascontiguousarray(y, dtype=np.intp), np.ascontiguousarray(w, dtype=np.float64),
                           out, V, K)
    return out.T


def row_scores(X: sp.csr_matrix, coef: np.ndarray, threads: int | None = None) -> np.ndarray:
    """(n, K) ``X @ coef.T``: scipy's product, bit for bit (each row's entries added in order from 0.0).

    Two classes (binary text tasks) are scored by the compiled kernel, its two sums in registers: on one
    thread as fast as scipy or faster, on row ranges of about equal entries in ``threads`` threads
    (default: ``toolkit.api.compute_threads()`` from 2^20 stored entries, else one) about twice as fast.
    Three or four classes use it only in threads; one class, or more than four, stay with scipy, which
    was as fast or faster there on one thread and not clearly slower than two (measured on 2 cores).
    """
    n, V = X.shape
    K = coef.shape[0]
    if threads is None:
        threads = compute_threads() if X.nnz >= _THREADED_SCORES_NNZ else 1
    if _sparse_kernels is None or not (K == 2 or (3 <= K <= 4 and threads > 1)):
        return np.asarray(X @ coef.T)
    weights = np.ascontiguousarray(coef.T, dtype=np.float64)
    indptr, indices = np.ascontiguousarray(X.indptr), np.ascontiguousarray(X.indices)
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    out = np.empty((n, K))
    # row ranges of about equal entries: range t ends at the first row whose pointer reaches t/threads of them
    cuts = np.searchsorted(indptr, np.linspace(indptr[0], indptr[-1], max(1, threads) + 1)[1:-1])
    bounds = [0, *(int(c) for c in np.clip(cuts, 0, n)), n]
    ranges = [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]

    failures: list[BaseException] = []

    def score(a: int, b: int) -> None:
        try:
            _sparse_kernels.row_scores(indptr, indices, data, weights, out, V, K, a, b)
        except BaseException as exc:  # raised in the caller: a helper thread's error would only be printed
            failures.append(exc)

    helpers = [threading.Thread(target=score, args=r) for r in ranges[1:]]
    for t in helpers:
        t.start()
    try:
        if ranges:
            score(*ranges[0])
    finally:
        for t in helpers:
            t.join()
    if failures:
        raise failures[0]
    return out


def class_sums_numpy(X: sp.csr_matrix, y: np.ndarray, w: np.ndarray, K: int) -> np.ndarray:
    """``class_sums`` without the compiled kernel. Few classes: one product with the dense (n, K) indicator
    (scipy's kernel costs about one pass per two classes). More: one bincount over the entries (up to
    ``_BINCOUNT_ENTRIES``), else per class its rows taken out and summed by one matrix-vector product,
    about two passes in all whatever K. All add every class's rows in row order, so the bits agree.
    """
    n, V = X.shape
    if K <= 6:
        Y = np.zeros((n, K))                  # (n, K) weighted one-hot: dense, it is small
        Y[np.arange(n), y] = w
        # dense @ sparse gives a Fortran-ordered (K, V) result
        return np.asarray(Y.T @ X, dtype=np.float64)
    if X.nnz <= _BINCOUNT_ENTRIES:
        # one pass over the entries: entry (i, j, v) adds w_i v at (y_i, j), in entry order, i.e. row order
        # within every (class, word): the same sums as below, bit for bit (20 Newsgroups: 20 ms -> 6 ms)
        rows = row_of_entry(X)
        values = X.data * w[rows] if not np.all(w == 1.0) else X.data
        flat = np.bincount(X.indices * K + y[rows], weights=values, minlength=K * V)
        return flat.reshape(V, K).T           # Fortran-ordered, as above, without a copy
    out = np.zeros((V, K)).T                  # Fortran-ordered, as above
    for k in range(K):                        # a loop over classes, each vectorised over its rows
        rows = np.flatnonzero(y == k)
        if len(rows):
            out[k] = X[rows].T @ w[rows]
    return out


def inverse_document_frequencies(df: np.ndarray, n: float) -> np.ndarray:
    """TW-L's idf_w = log(D / df_w) (0 for a word in no document).

    With instance weights D and df_w are sums of weights: df_w may lie below 1 (it was clamped to 1, giving
    negative idfs), and D and df_w of a word in every document are sums of the same weights in another order,
    which may differ in the last bits. Such a word gets exactly 0 (algorithms.md 2.4), not a rounding's
    +-1e-16 that the L2 normalisation would blow up to a whole unit vector: an idf below ``_IDF_ROUNDING``
    is 0 (with unit weights the smallest true idf is log(D / (D - 1)) > 1 / D, far above it)."""
    df = np.asarray(df, dtype=np.float64)
    idf = np.zeros(df.shape)
    seen = df > 0
    idf[seen] = np.log(n / df[seen])
    idf[idf < _IDF_ROUNDING] = 0.0
    return idf


#: idfs below this are rounding (a word in every document); see inverse_document_frequencies
_IDF_ROUNDING = 1e-9


class DocumentFrequencies(SufficientStatistics):
    """TW-L's first pass: the weight of the documents each word occurs in (sparse, 1 x V); D is the
    total weight (the number of documents with unit weights)."""

    def __init__(self, df: sp.csr_matrix):
        super().__init__()
        self.df = df

    def _merge(self, other: DocumentFrequencies) -> DocumentFrequencies:
        return DocumentFrequencies(self.df + other.df)

    def idf(self) -> np.ndarray:
        return inverse_document_frequencies(self.df.toarray().ravel(), float(np.sum(self.class_weight)))

    def vocabulary(self) -> np.ndarray:
        """The words of the training vocabulary: in at least one document of positive weight."""
        return self.df.toarray().ravel() > 0


class MultinomialStatistics(SufficientStatistics):
    """The class sums N_{c,w} of the transformed counts, sparse (K, V), with the idf they were transformed
    with (TW-L); the class weights are the base's."""

    def __init__(self, feature_count: sp.csr_matrix, idf: np.ndarray | None, vocabulary: np.ndarray | None = None):
        super().__init__()
        self.feature_count = feature_count
        self.idf = idf
        self.vocabulary = vocabulary    # TW-L: from the first pass (a word in every document sums to 0)

    def _merge(self, other: MultinomialStatistics) -> MultinomialStatistics:
        return MultinomialStatistics(self.feature_count + other.feature_count, self.idf, self.vocabulary)


def multinomial_log_likelihood(X: sp.csr_matrix, log_theta: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``sum_w x_dw log theta_{y_d,w}`` per document (no multinomial coefficient), in O(nnz)."""
    rows = row_of_entry(X)
    with np.errstate(invalid="ignore"):
        terms = X.data * log_theta[y[rows], X.indices]
    return np.bincount(rows, weights=terms, minlength=X.shape[0])


def _seen(feature_count: np.ndarray) -> np.ndarray:
    """The training vocabulary from class sums of counts (none, L): the words with a positive sum."""
    return np.asarray(feature_count.sum(axis=0)).ravel() > 0


class MultinomialNB(ProbabilisticClassifier):
    """Multinomial NB with Lidstone smoothing ``epsilon`` and Rennie's heuristics.

    Scores: standard ``log P(c) + sum_w x_w log theta_cw``; complement ``-sum_w x_w W_cw`` (plus
    ``log P(c)`` when the prior is not uniform and weights are not normalised), where ``W`` is the
    log of the complement estimate, normalised when ``weight_normalize``. A class without training
    documents is never predicted.

    :param variant: M, L-M, TW-L-M, C-M, C-L-M or C-TW-L-M (algorithms.md 2.4 table).
    :param epsilon: smoothing constant (> 0); the chapter uses 1 and 0.01.
    :param weighting: count transform none, L or TW-L (None: the variant's).
    :param complement: complement training (None: the variant's).
    :param weight_normalize: divide log-parameters by the sum of their absolute values (None: the variant's).
    :param prior: uniform (the chapter) or mle (|c|/|S|, Schneider).
    :param transform_test: transform test documents as the training ones (Rennie's pseudo-code: no).
    """

    checks_infinite_values = True   # as_counts refuses them in its one pass over the values
    #: model files written before the rename to algorithms.md 2.4's name
    renamed_parameters = {"weight_test": "transform_test"}

    _state_schema = {**CLASSIFIER_STATE, "transform_": "str", "complement_": "bool", "weight_normalize_": "bool",
                     "idf_": "array:f1|none", "class_count_": "array:f1", "feature_count_": "array:f2",
                     "feature_log_prob_": "array:f2", "coef_": "array:f2", "intercept_": "array:f1",
                     "vocabulary_": "?array:b1"}


    def __init__(self, *, variant: str = "M", epsilon: float = 1.0, weighting: str | None = None,
                 complement: bool | None = None, weight_normalize: bool | None = None,
                 prior: str = "uniform", transform_test: bool = True):
        self.variant = variant
        self.epsilon = epsilon
        self.weighting = weighting
        self.complement = complement
        self.weight_normalize = weight_normalize
        self.prior = prior
        self.transform_test = transform_test

    # ------------------------------------------------------------------ settings
    def _check_params(self) -> None:
        self._settings()

    def _settings(self) -> tuple[str, bool, bool]:
        key = str(self.variant).upper()
        if key not in VARIANTS:
            raise ParameterError(f"nb-multinomial: variant must be one of {', '.join(VARIANTS)}, not '{self.variant}'")
        transform, complement, normalize = VARIANTS[key]
        if self.weighting is not None:
            t = _TRANSFORMS.get(str(self.weighting).lower())
            if t is None:
                raise ParameterError(f"nb-multinomial: weighting must be none, L or TW-L, not '{self.weighting}'")
            transform = t
        if self.complement is not None:
            complement = bool(self.complement)
        if self.weight_normalize is not None:
            normalize = bool(self.weight_normalize)
        eps = self.epsilon
        if (isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)) or not eps > 0
                or not np.isfinite(eps)):   # inf: every theta inf / inf, NaN scores
            raise ParameterError(f"nb-multinomial: epsilon must be a finite number > 0, not {eps!r}")
        if self.prior not in _PRIORS:
            raise ParameterError(f"nb-multinomial: prior must be uniform or mle, not '{self.prior}'")
        return transform, complement, normalize

    @property
    def variant_name(self) -> str:
        """The chapter's name of the effective settings (``C-TW-L-M``; ``W`` marks normalisation
        without complement, ``C(noW)`` complement without it)."""
        transform, complement, normalize = self._settings()
        prefix = ""
        if complement:
            prefix = "C-" if normalize else "C(noW)-"
        elif normalize:
            prefix = "W-"
        middle = {"none": "", "L": "L-", "TW-L": "TW-L-"}[transform]
        return f"{prefix}{middle}M"

    # ------------------------------------------------------------------ fit / predict
    #: epsilon and prior only turn the class sums into parameters; the sums themselves stay
    grid_params = ("epsilon", "prior")

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> MultinomialNB:
        self._apply_params(self._fit_statistics(X, y, sample_weight, schema))
        return self

    def _fit_statistics(self, X: Any, y: Any, sample_weight: Any, schema: Schema | None) -> None:
        """The class sums N_{c,w} of the transformed counts (and the idf of TW-L)."""
        transform, complement, normalize = self._settings()
        X, y, w = self._validate_fit(X, y, sample_weight, schema)
        X = as_counts(X, "nb-multinomial")
        K = len(self.classes_)
        self.transform_ = transform
        self.complement_ = complement
        self.weight_normalize_ = normalize
        if transform == "TW-L":   # D and df_w count documents by their weights, as the class sums do
            df = document_weights(X, w)
            self.idf_ = inverse_document_frequencies(df, float(w.sum()))
        else:
            self.idf_ = np.zeros(0)
        Xt = transform_counts(X, transform, self.idf_)
        self.class_count_ = np.bincount(y, weights=w, minlength=K).astype(np.float64)
        self.feature_count_ = class_sums(Xt, y, w, K)
        self.vocabulary_ = df > 0 if transform == "TW-L" else _seen(self.feature_count_)

    # ------------------------------------------------------------------ fitting from shards
    def statistics_passes(self) -> int:
        """TW-L takes two: the document frequencies of every shard come before the class sums."""
        return 2 if self._settings()[0] == "TW-L" else 1

    def _shard_statistics(self, X: Any, y: np.ndarray, w: np.ndarray, schema: Schema,
                          previous: Any) -> SufficientStatistics:
        transform = self._settings()[0]
        X = as_counts(X, "nb-multinomial")
        K = len(schema.classes)
        if transform == "TW-L" and previous is None:
            stats: SufficientStatistics = DocumentFrequencies(sp.csr_matrix(document_weights(X, w)[None, :]))
            stats.settings = ("nb-multinomial", "document-frequencies")
            return stats
        if transform == "TW-L" and not isinstance(previous, DocumentFrequencies):
            raise CapabilityError("nb-multinomial TW-L: the first pass's statistics are document frequencies")
        idf = previous.idf() if transform == "TW-L" else None
        Xt = transform_counts(X, transform, idf)
        stats = MultinomialStatistics(sparse_class_sums(Xt, y, w, K), idf,
                                      previous.vocabulary() if transform == "TW-L" else None)
        digest = "" if idf is None else hashlib.sha256(idf.tobytes()).hexdigest()[:16]
        stats.settings = ("nb-multinomial", transform, digest)
        return stats

    def _state_from_statistics(self, statistics: Any) -> None:
        """What _fit_statistics sets, from the merged class sums."""
        transform, complement, normalize = self._settings()
        if not isinstance(statistics, MultinomialStatistics) or statistics.settings[1] != transform:
            raise CapabilityError(f"nb-multinomial with transform {transform} is fitted from its own class sums, "
                                  f"not {getattr(statistics, 'settings', type(statistics).__name__)}")
        self.transform_ = transform
        self.complement_ = complement
        self.weight_normalize_ = normalize
        self.idf_ = statistics.idf if statistics.idf is not None else np.zeros(0)
        self.class_count_ = np.asarray(statistics.class_weight, dtype=np.float64)
        self.feature_count_ = np.asfortranarray(statistics.feature_count.toarray())
        self.vocabulary_ = (statistics.vocabulary if statistics.vocabulary is not None
                            else _seen(self.feature_count_))

    def _apply_params(self, state: Any) -> None:
        """log theta (Lidstone epsilon), the complement and normalisation, and the prior."""
        self._settings()
        counts = self.feature_count_
        complement, normalize = self.complement_, self.weight_normalize_
        vocabulary = getattr(self, "vocabulary_", None)   # None: a model file of before 2026-12-03
        V = counts.shape[1] if vocabulary is None else int(np.count_nonzero(vocabulary))
        eps = float(self.epsilon)
        if complement:   # a new array: transform it in place
            work = counts.sum(axis=0, keepdims=True) - counts
            np.maximum(work, 0.0, out=work)     # cancellation must not give tiny negatives
            totals = work.sum(axis=1, keepdims=True)
            work += eps
            log_theta = np.log(work, out=work)
        else:            # keep feature_count_ intact
            totals = counts.sum(axis=1, keepdims=True)
            log_theta = np.log(counts + eps)
        with np.errstate(divide="ignore"):       # an empty vocabulary: every column is dropped below
            log_theta -= np.log(totals + eps * V)
        if vocabulary is not None and V < counts.shape[1]:
            # words outside the training vocabulary are dropped (algorithms.md 1.2): they add 0 to every
            # score and to the normalisation's sum
            log_theta[:, ~vocabulary] = 0.0
        self.feature_log_prob_ = log_theta
        if normalize:
            # every log theta is <= 0, so sum |W| = -sum W, and -W / sum|W| = W / sum W
            norm = log_theta.sum(axis=1, keepdims=True)
            norm[norm == 0] = -np.inf           # a single-word vocabulary: all weights 0
            self.coef_ = log_theta / (norm if complement else -norm)
        else:
            self.coef_ = -log_theta if complement else log_theta
        K = len(self.class_count_)
        present = self.class_count_ > 0
        intercept = np.zeros(K)
        if not normalize and self.prior == "mle":  # a uniform prior adds the same constant to every class
            with np.errstate(divide="ignore"):
                intercept = np.log(self.class_count_) - np.log(self.class_count_.sum())
        intercept[~present] = -np.inf
        self.intercept_ = intercept

    def _test_counts(self, X: Any) -> sp.csr_matrix:
        X = as_counts(X, "nb-multinomial")
        if self.transform_test:
            return transform_counts(X, self.transform_, self.idf_)
        return X

    def _prepare_scoring(self, X: Any) -> sp.csr_matrix:
        return self._test_counts(self._validate_predict(X))

    def _score_prepared(self, Xt: sp.csr_matrix) -> np.ndarray:
        scores = row_scores(Xt, self.coef_)
        if np.any(self.intercept_ != 0):    # the uniform prior adds nothing: skip the pass
            scores += self.intercept_       # in place: no second (n, K) array
        return scores

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        return self._score_prepared(self._test_counts(X))

    def document_log_likelihood(self, X: Any, y: Any) -> np.ndarray:
        """log p(x_d | theta_{y_d}) without the multinomial coefficient (for perplexity).

        Only the plain multinomial is a normalised model; the heuristic variants raise
        :class:`CapabilityError` (the chapter gives no perplexity for them).
        """
        X = self._validate_predict(X)
        if self.transform_ != "none" or self.complement_ or self.weight_normalize_:
            raise CapabilityError(f"nb-multinomial variant {self.variant_name} is not a normalised model; "
                                  f"perplexity is defined for variant M only")
        y = np.asarray(y, dtype=np.int64)
        return multinomial_log_likelihood(as_counts(X, "nb-multinomial"), self.feature_log_prob_, y)
