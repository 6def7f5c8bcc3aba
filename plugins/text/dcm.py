"""Dirichlet compound multinomial (DCM / Pólya) classifiers (algorithms.md 2.7).

Each class k has parameters alpha_k (one per vocabulary word). ``log p(x | alpha)`` without the
multinomial coefficient is ``lgamma(A) - lgamma(n + A) + sum_{w: x_w > 0} [lgamma(x_w + alpha_w) -
lgamma(alpha_w)]`` with ``A = sum alpha``; it costs O(nnz(x)).

Fitting is Minka's fixed point for the Pólya distribution, run for all classes at once:
``alpha_w <- alpha_w * sum_d [psi(x_dw + alpha_w) - psi(alpha_w)] / sum_d [psi(n_d + A) - psi(A)]``.
The sums only need how many documents have each (word, count) pair and each length, so the data
are first reduced to those histograms (far fewer entries than nnz); a count of 1 contributes
exactly ``1/alpha_w`` and needs no digamma at all. Only words that occur in a class are iterated;
the others stay 0 until smoothing adds ``smoothing * min{alpha_w > 0}`` to every word of the training
vocabulary. Words outside it (no training document holds them) are dropped from test documents
(algorithms.md 1.2), so columns a corpus declares but the training part never uses change nothing.

Complement-DCM fits alpha~_k on the documents *not* in k (the histograms of all documents minus
those of class k) and predicts the class whose complement explains the document worst.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import digamma, gammaln

from toolkit.api import CLASSIFIER_STATE, ProbabilisticClassifier, Schema
from toolkit.errors import CapabilityError, ParameterError

from toolkit.plugins.text.counts import as_counts, class_indicator, row_of_entry, row_sums

_RECIPROCAL_TERMS = 8

__all__ = ["DCM", "ComplementDCM", "dcm_log_likelihood", "fit_polya", "PolyaFit", "moment_match"]


def dcm_log_likelihood(X: sp.csr_matrix, alpha: np.ndarray) -> np.ndarray:
    """(n, K) ``log p(x_d | alpha_k)`` without the multinomial coefficient; alpha is (K, V).

    Entries with ``alpha_kw = 0`` and ``x_dw > 0`` give -inf (the word is impossible). A class with
    ``A = 0`` (no word seen in training) gives the limit of the urn product: 0 for an empty document,
    whose probability is 1 under any alpha, and -inf for any other (not lgamma(0) - lgamma(0) = NaN).
    """
    X = sp.csr_matrix(X)
    if X.nnz and not X.data.all():       # explicit zeros: x_w = 0 contributes nothing (and never lgamma(0))
        X = X.copy()
        X.eliminate_zeros()
    alpha = np.atleast_2d(np.asarray(alpha, dtype=np.float64))
    lengths = row_sums(X)
    A = alpha.sum(axis=1)
    empty_class = A == 0
    with np.errstate(invalid="ignore"):
        out = gammaln(A)[None, :] - gammaln(lengths[:, None] + A[None, :])
    if X.nnz:
        _add_word_terms(out, X, alpha, np.flatnonzero(~empty_class))
    if empty_class.any():
        out[:, empty_class] = np.where(lengths == 0, 0.0, -np.inf)[:, None]
    return out


def _add_word_terms(out: np.ndarray, X: sp.csr_matrix, alpha: np.ndarray, classes: np.ndarray) -> None:
    """Add ``sum_{w: x_w > 0} [lgamma(x_w + alpha_kw) - lgamma(alpha_kw)]`` to the columns ``classes`` of ``out``."""
    n = X.shape[0]
    rows = row_of_entry(X)
    cols = X.indices
    x = X.data
    ones = x == 1.0
    rest = ~ones
    x_rest = x[rest]
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in classes:          # a loop over classes, each vectorised over the entries
            a = alpha[k, cols]
            terms = np.empty_like(x)
            terms[ones] = np.log(a[ones])                      # lgamma(1 + a) - lgamma(a) = log a
            a_rest = a[rest]
            terms[rest] = gammaln(x_rest + a_rest) - gammaln(a_rest)
            out[:, k] += np.bincount(rows, weights=terms, minlength=n)


#: a difference m1 - m2 or m2 - m1^2 at or below this share of the size of the numbers it is computed from
#: is rounding, i.e. 0 (see moment_match)
_MOMENT_ROUNDING = 1e-12


def moment_match(m1: np.ndarray, m2: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """fastfit's ``polya_moment_match`` from the mean proportions ``m1`` and mean squared
    proportions ``m2`` (one row per group); rows where the precision is undefined get 1 on
    active words (algorithms.md 2.7).

    ``s_w = (m1 - m2) / (m2 - m1^2)`` divides two differences that are exactly 0 in the degenerate cases
    (m2 = m1^2: the word's proportion is the same in every document, identical documents; m1 = m2: every
    document holds the word alone or not at all), where computed they are a rounding's 1e-17: s_w came out
    1e15 or 1e-16, not inf or 0, and the fixed point started from that alpha and stopped "converged" after
    one step (seven copies of a document gave alpha ~ 1e15, five ran to the cap from alpha = 1; a complement
    computed by subtraction started at 1e-16 where the same documents fitted directly started at 1). A
    difference at or below ``_MOMENT_ROUNDING`` times ``scale`` (the size of the numbers m1 was computed
    from, which bounds those of m2 and m1^2: m1 itself, or for a complement the all-documents sum it was
    subtracted from, over the complement's weight) is taken as 0."""
    m1 = np.atleast_2d(m1)
    m2 = np.atleast_2d(m2)
    scale = m1 if scale is None else np.atleast_2d(scale)
    out = np.zeros_like(m1)
    for g in range(m1.shape[0]):
        active = m1[g] > 0
        if not active.any():
            continue
        rounding = _MOMENT_ROUNDING * scale[g, active]
        spread = m1[g, active] - m2[g, active]
        spread[spread <= rounding] = 0.0
        variance = m2[g, active] - m1[g, active] ** 2
        variance[variance <= rounding] = 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            s_w = spread / variance
        s = float(np.median(s_w))
        out[g, active] = s * m1[g, active] if (np.isfinite(s) and s > 0) else 1.0
    return out


def _drop_empty_evidence(X: sp.csr_matrix, groups: np.ndarray,
                         w: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Rows of weight 0 and stored zero counts removed: either would make a word *active* (a cell of the
    fixed point, whose alpha then stays at its start) without any evidence for it. Training with weight-0
    rows is then exactly training without them. Copies only when there is something to remove."""
    if w.size and not w.all():
        keep = w != 0
        X, groups, w = X[keep], groups[keep], w[keep]
    if X.nnz and not X.data.all():
        X = X.copy()
        X.eliminate_zeros()
    return X, groups, w


class PolyaFit:
    """Result of :func:`fit_polya`: alpha (G, V) before smoothing, iterations and convergence per group."""

    def __init__(self, alpha: np.ndarray, n_iter: np.ndarray, converged: np.ndarray):
        self.alpha = alpha
        self.n_iter = n_iter
        self.converged = converged


def _histograms(X: sp.csr_matrix, groups: np.ndarray, w: np.ndarray, G: int, complement: bool):
    """Per group: weighted numbers of documents with each (word, count) pair and each length,
    and the weighted mean proportions (for the moment-matching start)."""
    V = X.shape[1]
    rows = row_of_entry(X)
    lengths = row_sums(X)
    nonempty = lengths > 0
    # (word, count) pairs over all documents
    key = np.lexsort((X.data, X.indices))
    cols_sorted, data_sorted = X.indices[key], X.data[key]
    new = np.ones(len(key), dtype=bool)
    new[1:] = (cols_sorted[1:] != cols_sorted[:-1]) | (data_sorted[1:] != data_sorted[:-1])
    pair_word = cols_sorted[new].astype(np.int64)
    pair_count = data_sorted[new]
    inverse = np.empty(len(key), dtype=np.int64)
    inverse[key] = np.cumsum(new) - 1
    P = len(pair_word)
    entry_group = groups[rows]
    entry_weight = w[rows]
    H = sp.csr_matrix((entry_weight, (entry_group, inverse)), shape=(G, P))
    H.sum_duplicates()
    # document lengths
    len_values, len_inverse = np.unique(lengths[nonempty], return_inverse=True)
    L = np.zeros((G, len(len_values)))
    np.add.at(L, (groups[nonempty], len_inverse), w[nonempty])
    # proportions p_dw = x_dw / n_d and their squares
    with np.errstate(divide="ignore", invalid="ignore"):
        p = X.data / lengths[rows]
    Yg = class_indicator(groups, w, G)
    Pm = sp.csr_matrix((p, X.indices, X.indptr), shape=X.shape)
    P2 = sp.csr_matrix((p * p, X.indices, X.indptr), shape=X.shape)
    M1 = np.asarray((Yg.T @ Pm).toarray())
    M2 = np.asarray((Yg.T @ P2).toarray())
    D = np.bincount(groups[nonempty], weights=w[nonempty], minlength=G).astype(np.float64)
    M1_scale = M1                    # the size of the numbers behind m1, for moment_match's rounding test
    if complement:
        M1_scale = np.broadcast_to(M1.sum(axis=0, keepdims=True), M1.shape)
        H = sp.csr_matrix(np.asarray(H.sum(axis=0)).ravel()[None, :] - H.toarray())
        H.data[H.data < 1e-12 * max(1.0, float(w.max(initial=1.0)))] = 0.0
        H.eliminate_zeros()
        L = L.sum(axis=0, keepdims=True) - L
        M1 = M1.sum(axis=0, keepdims=True) - M1
        M2 = M2.sum(axis=0, keepdims=True) - M2
        D = D.sum() - D
    with np.errstate(divide="ignore", invalid="ignore"):
        m1 = np.where(D[:, None] > 0, M1 / D[:, None], 0.0)
        m2 = np.where(D[:, None] > 0, M2 / D[:, None], 0.0)
        m1_scale = np.where(D[:, None] > 0, M1_scale / D[:, None], 0.0)
    np.maximum(m1, 0.0, out=m1)
    np.maximum(m2, 0.0, out=m2)
    return pair_word, pair_count, sp.csr_matrix(H), len_values, L, m1, m2, m1_scale, V


def fit_polya(X: Any, groups: Any | None = None, *, n_groups: int | None = None, sample_weight: Any = None,
              complement: bool = False, tol: float = 1e-6, max_iter: int = 1000, init: str = "moment",
              alpha0: np.ndarray | None = None) -> PolyaFit:
    """Maximum-likelihood Pólya (DCM) parameters per group of rows of a count matrix.

    :param groups: group code of every row (default: one group); ``complement=True`` fits every
        group on the rows *outside* it.
    :param tol: stop a group when ``max_w |alpha_new - alpha_old| < tol``.
    :param max_iter: iteration cap (reached when a group is less bursty than a multinomial and
        alpha grows without bound).
    :param init: ``moment`` (fastfit's moment matching) or ``ones``; ``alpha0`` (G, V) overrides.
    """
    X = as_counts(X, "dcm")
    n, V = X.shape
    groups = np.zeros(n, dtype=np.int64) if groups is None else np.asarray(groups, dtype=np.int64)
    G = int(n_groups if n_groups is not None else (groups.max() + 1 if n else 1))
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    X, groups, w = _drop_empty_evidence(X, groups, w)
    pair_word, pair_count, H, len_values, L, m1, m2, m1_scale, _ = _histograms(X, groups, w, G, complement)
    Hc = H.tocoo()
    pair_group = Hc.row.astype(np.int64)
    pair_index = Hc.col.astype(np.int64)
    pair_h = Hc.data
    gw = pair_group * V + pair_word[pair_index]
    active_gw, pair_active = np.unique(gw, return_inverse=True)   # active (group, word) cells
    active_group = active_gw // V
    active_word = active_gw % V
    counts = pair_count[pair_index]
    n_cells = len(active_gw)
    # psi(c + a) - psi(a) = sum_{j<c} 1/(a + j) for an integer count c (Minka's di_pochhammer):
    # with G_j = weight of documents where the word occurs more than j times, the numerator is
    # sum_j G_j / (a + j) for j < _RECIPROCAL_TERMS, plus psi(c + a) - psi(cap + a) for larger c.
    # Counts of 1-3 are the bulk of text, so few digamma calls remain.
    integer = counts == np.round(counts)
    cap = _RECIPROCAL_TERMS
    recip: list[tuple[int, np.ndarray, np.ndarray]] = []
    for j in range(cap):           # a fixed number of terms, not a loop over data
        sel = integer & (counts > j)
        if not sel.any():
            break
        g = np.bincount(pair_active[sel], weights=pair_h[sel], minlength=n_cells)
        cells = np.flatnonzero(g)
        recip.append((j, cells, g[cells]))
    tail = integer & (counts > cap)
    odd = ~integer                 # non-integer "counts": the digamma difference itself
    tail_cells, tail_count, tail_h = pair_active[tail], counts[tail], pair_h[tail]
    odd_cells, odd_count, odd_h = pair_active[odd], counts[odd], pair_h[odd]
    len_group, len_index = np.nonzero(L)
    len_m = L[len_group, len_index]
    len_n = len_values[len_index]

    if alpha0 is not None:
        alpha_full = np.array(np.broadcast_to(np.asarray(alpha0, dtype=np.float64), (G, V)))
        start = alpha_full[active_group, active_word]
    elif init == "moment":
        start = moment_match(m1, m2, m1_scale)[active_group, active_word]
    elif init == "ones":
        start = np.ones(len(active_gw))
    else:
        raise ParameterError(f"dcm: init must be 'moment' or 'ones', not '{init}'")
    alpha = np.where(start > 0, start, 1.0)
    n_iter = np.zeros(G, dtype=np.int64)
    converged = np.zeros(G, dtype=bool)
    has_data = np.bincount(active_group, minlength=G) > 0
    groups_with_data = np.flatnonzero(has_data)
    starts = np.searchsorted(active_group, groups_with_data)
    converged[~has_data] = True
    running = ~converged

    for it in range(1, int(max_iter) + 1):
        if not running.any():
            break
        A = np.bincount(active_group, weights=alpha, minlength=G)
        den = np.bincount(len_group, weights=len_m * (digamma(len_n + A[len_group]) - digamma(A[len_group])),
                          minlength=G)
        num = np.zeros(n_cells)
        for j, cells, g in recip:
            if len(cells) == n_cells:          # j = 0: every active cell, no gather needed
                num += g / (alpha + j)
            else:
                num[cells] += g / (alpha[cells] + j)
        if len(tail_cells):
            a = alpha[tail_cells]
            num += np.bincount(tail_cells, weights=tail_h * (digamma(tail_count + a) - digamma(cap + a)),
                               minlength=n_cells)
        if len(odd_cells):
            a = alpha[odd_cells]
            num += np.bincount(odd_cells, weights=odd_h * (digamma(odd_count + a) - digamma(a)), minlength=n_cells)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = alpha * num / den[active_group]
        upd = running[active_group] & np.isfinite(new) & (new > 0)
        diff = np.where(upd, np.abs(new - alpha), 0.0)
        change = np.zeros(G)
        change[groups_with_data] = np.maximum.reduceat(diff, starts)   # cells are sorted by group
        alpha = np.where(upd, new, alpha)
        n_iter[running] = it
        done = running & (change < tol)
        converged |= done
        running &= ~done
    out = np.zeros((G, V))
    out[active_group, active_word] = alpha
    return PolyaFit(out, n_iter, converged)


class DCM(ProbabilisticClassifier):
    """Dirichlet compound multinomial classifier (Madsen, Kauchak & Elkan 2005), uniform prior.

    :param smoothing: after fitting, add ``smoothing * min{alpha_w > 0}`` to every alpha of a class.
    :param tol: fixed-point stopping tolerance on ``max |alpha_new - alpha_old|`` (fastfit: 1e-6).
    :param max_iter: iteration cap (fastfit: 1000).
    :param init: ``moment`` (moment matching) or ``ones``.
    :param prior: ``uniform`` (the chapter) or ``mle``.
    :param vocabulary: ``training`` (algorithms.md 1.2: the words of the training documents; the others
        are dropped from test documents and get no alpha) or ``all`` (every column is a word and smoothing
        gives each one an alpha, as algorithms.md 7.6's zero-count vector reads; predictions then depend on
        columns the training part never uses).
    """

    checks_infinite_values = True   # as_counts refuses them in its one pass over the values

    _state_schema = {**CLASSIFIER_STATE, "class_count_": "array:f1", "alpha_unsmoothed_": "array:f2",
                     "alpha_": "array:f2", "fitted_groups_": "array:b1", "n_iter_": "array:i1",
                     "converged_": "array:b1", "intercept_": "array:f1", "vocabulary_": "?array:b1"}


    _complement = False
    _name = "dcm"

    def __init__(self, *, smoothing: float = 0.01, tol: float = 1e-6, max_iter: int = 1000, init: str = "moment",
                 prior: str = "uniform", vocabulary: str = "training"):
        self.smoothing = smoothing
        self.vocabulary = vocabulary
        self.tol = tol
        self.max_iter = max_iter
        self.init = init
        self.prior = prior

    def _check_params(self) -> None:
        self._check()

    def _check(self) -> None:
        for name in ("smoothing", "tol"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not v >= 0:
                raise ParameterError(f"{self._name}: {name} must be a number >= 0, not {v!r}")
        if not np.isfinite(self.smoothing):   # inf added to every alpha: NaN scores
            raise ParameterError(f"{self._name}: smoothing must be a finite number >= 0, not {self.smoothing!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1:
            raise ParameterError(f"{self._name}: max_iter must be a positive integer, not {self.max_iter!r}")
        if self.init not in ("moment", "ones"):
            raise ParameterError(f"{self._name}: init must be 'moment' or 'ones', not '{self.init}'")
        if self.prior not in ("uniform", "mle"):
            raise ParameterError(f"{self._name}: prior must be 'uniform' or 'mle', not '{self.prior}'")
        if self.vocabulary not in ("training", "all"):
            raise ParameterError(f"{self._name}: vocabulary must be 'training' or 'all', not {self.vocabulary!r}")

    #: smoothing is added after the fixed point, prior only sets the intercept and vocabulary only masks:
    #: one fit serves them all
    grid_params = ("smoothing", "prior", "vocabulary")

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> DCM:
        self._apply_params(self._fit_statistics(X, y, sample_weight, schema))
        return self

    def _fit_statistics(self, X: Any, y: Any, sample_weight: Any, schema: Schema | None) -> None:
        """Minka's fixed point per class (tol, max_iter and init shape it; smoothing and prior do not)."""
        self._check()
        X, y, w = self._validate_fit(X, y, sample_weight, schema)
        X = as_counts(X, self._name)
        K = len(self.classes_)
        self.class_count_ = np.bincount(y, weights=w, minlength=K).astype(np.float64)
        res = fit_polya(X, y, n_groups=K, sample_weight=w, complement=self._complement, tol=float(self.tol),
                        max_iter=int(self.max_iter), init=self.init)
        self.alpha_unsmoothed_ = res.alpha
        # the training vocabulary (algorithms.md 1.2): words with a count in a training document of weight > 0
        evidence = (X.data != 0) & (w[row_of_entry(X)] != 0)
        self.vocabulary_ = np.zeros(X.shape[1], dtype=bool)
        self.vocabulary_[X.indices[evidence]] = True
        self.fitted_groups_ = (res.alpha > 0).any(axis=1)     # (K, 0) alpha: an empty vocabulary
        self.n_iter_ = res.n_iter
        self.converged_ = res.converged

    def _apply_params(self, state: Any) -> None:
        """Smoothing (``smoothing * min{alpha_w > 0}`` added to every alpha of a class, over the training
        vocabulary: a word no training document holds keeps alpha 0 and is dropped from test documents) and
        the prior."""
        self._check()
        alpha = self.alpha_unsmoothed_
        smallest = np.where(alpha > 0, alpha, np.inf).min(axis=1, initial=np.inf)
        smallest[~self.fitted_groups_] = 0.0
        vocabulary = self._vocabulary()
        added = (float(self.smoothing) * smallest)[:, None]
        self.alpha_ = alpha + (added if vocabulary is None else added * vocabulary[None, :])
        K = len(self.class_count_)
        present = self.class_count_ > 0
        if self.prior == "mle" and not self._complement:
            with np.errstate(divide="ignore"):
                intercept = np.log(self.class_count_) - np.log(self.class_count_.sum())
        else:
            intercept = np.zeros(K)
        intercept[~present] = -np.inf
        self.intercept_ = intercept

    def _vocabulary(self) -> np.ndarray | None:
        """The training vocabulary; None for every column (``vocabulary="all"``, or a model file written
        before the vocabulary was kept)."""
        return getattr(self, "vocabulary_", None) if self.vocabulary == "training" else None

    def _in_vocabulary(self, X: Any) -> sp.csr_matrix:
        """Test counts with the words outside the training vocabulary dropped (algorithms.md 1.2): they add
        nothing to a document's words or to its length."""
        X = as_counts(X, self._name)
        vocabulary = self._vocabulary()
        if vocabulary is None or vocabulary.all() or not X.nnz:
            return X
        outside = ~vocabulary[X.indices]
        if not outside.any():
            return X
        X = X.copy()
        X.data[outside] = 0.0
        X.eliminate_zeros()
        return X

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        """``log P(k) + log p(x | alpha_k)`` for the classes with training documents (-inf for the others).

        A class whose documents were all empty has alpha = 0: it scores an empty document 0 and any other
        -inf. With no word in any training document the vocabulary is empty, every test word lies outside
        it and is dropped (algorithms.md 1.2): the prior alone decides, as in nb-multinomial.
        """
        X = self._in_vocabulary(X)
        present = self.class_count_ > 0
        scores = np.full((X.shape[0], len(self.classes_)), -np.inf)
        if not self.fitted_groups_.any():
            scores[:, present] = self.intercept_[present]
        elif present.any():
            scores[:, present] = dcm_log_likelihood(X, self.alpha_[present]) + self.intercept_[present]
        return scores

    def document_log_likelihood(self, X: Any, y: Any) -> np.ndarray:
        """log p(x_d | alpha_{y_d}) without the multinomial coefficient (for perplexity).

        A class without a fitted alpha (no training document, or only empty ones) has no model: its
        documents get -inf (perplexity inf), an empty one 0, as :func:`dcm_log_likelihood` defines for A = 0.
        """
        X = self._in_vocabulary(self._validate_predict(X))
        y = np.asarray(y, dtype=np.int64)
        out = np.empty(X.shape[0])
        for k in np.unique(y):
            rows = np.flatnonzero(y == k)
            out[rows] = dcm_log_likelihood(X[rows], self.alpha_[k:k + 1])[:, 0]
        return out


class ComplementDCM(DCM):
    """Complement-DCM: alpha~_k fitted on the documents not in k; predicts ``argmin_k log p(x | alpha~_k)``."""

    _complement = True
    _name = "c-dcm"

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        X = self._in_vocabulary(X)
        present = self.class_count_ > 0
        scores = np.full((X.shape[0], len(self.classes_)), -np.inf)
        usable = present & self.fitted_groups_
        if present.sum() == 1 or not usable.any():       # one training class: it is the only answer
            scores[:, present] = 0.0
            return scores
        scores[:, usable] = -dcm_log_likelihood(X, self.alpha_[usable])
        return scores

    def document_log_likelihood(self, X: Any, y: Any) -> np.ndarray:
        raise CapabilityError("c-dcm models the complement of each class, not the class; perplexity is "
                              "defined for dcm")
