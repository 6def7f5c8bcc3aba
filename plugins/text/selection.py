"""Feature scores for text: Schneider's KL and dKL (algorithms.md 3.1) and mutual information (3.2).

All three need only per-class word counts ``N_cw``, per-class document frequencies ``N_jt`` and
class sizes, i.e. two sparse products ``Y.T @ X`` and ``Y.T @ (X > 0)``: O(nnz + K·|V|). The
exact average divergence (eq. 8) needs one more pass over the stored entries.

KL and dKL differ in the estimate of p(w|c) (revision 2 of algorithms.md 3.1): KL uses the
maximum-likelihood estimate in both of its terms, so that a word spread identically over the classes
scores exactly 0 (the paper's check K~_t = KL~_t); dKL uses Schneider's Laplace estimate (eq. 2) in
both. Revision 1 mixed the two in KL, which left a class-independent residual that dominated the
scores of frequent words.

Selection keeps the ``k`` best words (an int, or a share of the vocabulary as a float in (0, 1]),
ties broken by the lower column index; a word absent from the training part scores -inf.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import FeatureSelectorBase, Schema
from toolkit.errors import ParameterError
from toolkit.evaluation.ranking import TIE_RELATIVE, rank_key

from toolkit.plugins.text.counts import as_counts, class_indicator, row_of_entry, row_sums

__all__ = ["TextStatistics", "k_tilde", "kl_scores", "dkl_scores", "exact_kl", "mutual_information",
           "KLSelector", "DKLSelector", "MISelector"]


class TextStatistics:
    """Counts a text feature score needs, from a training part.

    ``N`` (K, V) word counts per class, ``Ndoc`` (K, V) documents of class j containing w,
    ``class_docs`` (K,) documents per class, ``n_docs`` |S|; ``vocabulary_size`` the words that occur in
    the training part (|V| of eq. 2; ``V`` is the number of columns).
    """

    def __init__(self, X: Any, y: np.ndarray, K: int | None = None):
        X = as_counts(X, "feature selection")
        y = np.asarray(y, dtype=np.int64)
        K = int(K if K is not None else (y.max() + 1 if len(y) else 1))
        self.X = X
        self.y = y
        Y = class_indicator(y, np.ones(len(y)), K)
        B = sp.csr_matrix((np.ones(X.nnz), X.indices, X.indptr), shape=X.shape)
        B.data[X.data <= 0] = 0.0
        self.N = np.asarray((Y.T @ X).toarray(), dtype=np.float64)
        self.Ndoc = np.asarray((Y.T @ B).toarray(), dtype=np.float64)
        self.class_docs = np.bincount(y, minlength=K).astype(np.float64)
        self.n_docs = float(len(y))
        self.K = K
        self.V = X.shape[1]
        # |V| of eq. 2: the words of the training part, not the columns (algorithms.md 1.2)
        self.vocabulary_size = int(np.count_nonzero(self.Ndoc.sum(axis=0)))

    @property
    def p_class(self) -> np.ndarray:
        return self.class_docs / self.n_docs if self.n_docs else np.zeros(self.K)

    @property
    def p_word_given_class(self) -> np.ndarray:
        """Schneider's eq. 2: Laplace over the full training vocabulary."""
        return self.word_given_class("laplace")

    def word_given_class(self, estimator: str = "laplace") -> np.ndarray:
        """p(w|c_j), (K, V): ``laplace`` = eq. 2, (1 + N_jw) / (|V| + T_j); ``ml`` = N_jw / T_j (0 for a
        class without tokens)."""
        class_tokens = self.N.sum(axis=1, keepdims=True)
        if estimator == "laplace":   # no token at all in the training part: every word scores -inf anyway
            with np.errstate(divide="ignore", invalid="ignore"):
                return (1.0 + self.N) / (self.vocabulary_size + class_tokens)
        if estimator == "ml":
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(class_tokens > 0, self.N / np.where(class_tokens > 0, class_tokens, 1.0), 0.0)
        raise ParameterError(f"estimator must be 'laplace' or 'ml', not '{estimator}'")

    def kl_tilde(self, estimator: str = "laplace") -> np.ndarray:
        """KL~_t = -sum_{j: N_jt > 0} p(c_j) p(w_t|c_j) log q(w_t|c_j), q = N_jt / |c_j|, with p(w|c_j)
        from ``estimator`` (``laplace``: eq. 2, as dKL uses it; ``ml``: as KL uses it)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(self.class_docs[:, None] > 0, self.Ndoc / self.class_docs[:, None], 0.0)
            log_q = np.where(self.Ndoc > 0, np.log(np.where(q > 0, q, 1.0)), 0.0)
        return -(self.p_class[:, None] * self.word_given_class(estimator) * log_q).sum(axis=0)

    def word_share(self) -> np.ndarray:
        """p(w_t): the unsmoothed share of the training tokens (the ML estimate K~_t uses)."""
        total = self.N.sum()
        return self.N.sum(axis=0) / total if total > 0 else np.zeros(self.V)

    def log_doc_share(self) -> np.ndarray:
        """log(N_t / |S|); -inf for words in no training document."""
        Nt = self.Ndoc.sum(axis=0)
        with np.errstate(divide="ignore"):
            return np.log(Nt) - np.log(self.n_docs)


def _rounded_to_zero(score: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``score`` with values within rounding of 0 set to exactly 0: at most TIE_RELATIVE of ``scale``, the
    magnitude of the terms it was computed from. A score 0 in exact arithmetic (a word spread alike over
    the classes, every word of a one-class training part) came out as +-1e-17, and that noise, not the
    lower column index (algorithms.md 0.2), ordered the words that tie at 0."""
    with np.errstate(invalid="ignore"):
        return np.where(np.abs(score) <= TIE_RELATIVE * scale, 0.0, score)


def k_tilde(stats: TextStatistics) -> np.ndarray:
    """K~_t = -p(w_t) log(N_t/|S|), p(w_t) the unsmoothed token share (-inf-safe: 0 for absent words)."""
    log_share = stats.log_doc_share()
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(log_share), -stats.word_share() * log_share, 0.0)


def kl_scores(stats: TextStatistics) -> np.ndarray:
    """KL(w_t) = K~_t - KL~_t^ML: maximum-likelihood estimates in both terms (algorithms.md 3.1,
    revision 2), so a word distributed identically over the classes scores 0."""
    first, second = k_tilde(stats), stats.kl_tilde("ml")
    score = _rounded_to_zero(first - second, np.abs(first) + np.abs(second))
    return np.where(np.isfinite(stats.log_doc_share()), score, -np.inf)


def dkl_scores(stats: TextStatistics) -> np.ndarray:
    """dKL(w_t) = -p'(w_t) log(N_t/|S|) - KL~_t with p'(w_t) = sum_j p(c_j) p(w_t|c_j): Schneider's
    Laplace estimate (eq. 2) in both terms."""
    log_share = stats.log_doc_share()
    with np.errstate(invalid="ignore"):
        p_w = (stats.p_class[:, None] * stats.word_given_class("laplace")).sum(axis=0)
        first, second = -p_w * log_share, stats.kl_tilde("laplace")
        score = _rounded_to_zero(first - second, np.abs(first) + np.abs(second))
    return np.where(np.isfinite(log_share), score, -np.inf)


def exact_kl(stats: TextStatistics, estimator: str = "laplace") -> np.ndarray:
    """Eq. 8: (1/|S|) sum_d p(w|d) log[p(w|d) / p(w|c(d))], over the stored entries only, with p(w|c)
    from ``estimator`` (eq. 2's Laplace by default; ``ml`` is positive wherever p(w|d) is)."""
    X = stats.X
    rows = row_of_entry(X)
    lengths = row_sums(X)
    keep = X.data > 0
    rows, cols, x = rows[keep], X.indices[keep], X.data[keep]
    p_wd = x / lengths[rows]
    p_wc = stats.word_given_class(estimator)[stats.y[rows], cols]
    terms = p_wd * np.log(p_wd / p_wc)
    return np.bincount(cols, weights=terms, minlength=stats.V) / stats.n_docs


def _xlogx_ratio(joint: np.ndarray, marg: np.ndarray) -> np.ndarray:
    """joint * log(joint / marg) with 0 log 0 = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(joint > 0, joint * np.log(np.where(joint > 0, joint, 1.0) / np.where(marg > 0, marg, 1.0)),
                        0.0)


def mutual_information(stats: TextStatistics, event_model: str = "document") -> np.ndarray:
    """MI between the class and a word event (algorithms.md 3.2), maximum-likelihood estimates."""
    if event_model == "document":
        S = stats.n_docs
        p_c = stats.p_class[:, None]
        p1 = stats.Ndoc / S                                    # P(c, w occurs)
        p0 = (stats.class_docs[:, None] - stats.Ndoc) / S      # P(c, w absent)
        e1 = stats.Ndoc.sum(axis=0)[None, :] / S
    elif event_model == "token":
        total = stats.N.sum() or 1.0         # no token: every word is absent (-inf below)
        class_tokens = stats.N.sum(axis=1, keepdims=True)
        p_c = class_tokens / total
        p1 = stats.N / total
        p0 = (class_tokens - stats.N) / total
        e1 = stats.N.sum(axis=0)[None, :] / total
    else:
        raise ParameterError(f"mi: event_model must be 'document' or 'token', not '{event_model}'")
    e0 = 1.0 - e1
    terms = _xlogx_ratio(p1, p_c * e1) + _xlogx_ratio(p0, p_c * e0)
    # x log(x / y) carries the rounding of x / y (~1e-16 of x) even where the term itself is that small
    mi = _rounded_to_zero(terms.sum(axis=0), (np.abs(terms) + np.abs(p1) + np.abs(p0)).sum(axis=0))
    absent = stats.Ndoc.sum(axis=0) == 0
    return np.where(absent, -np.inf, mi)


def _check_k(name: str, k: Any) -> None:
    if k is None:
        return
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{name}: k must be a number of words, a share in (0, 1], or None; not {k!r}")
    if isinstance(k, (float, np.floating)) and not float(k).is_integer() and not 0 < k <= 1:
        raise ParameterError(f"{name}: a fractional k must be a share in (0, 1], not {k!r}")
    if k <= 0:
        raise ParameterError(f"{name}: k must be positive, not {k!r}")


class _TextSelector(FeatureSelectorBase):
    _name = "text-selector"
    _state_schema = {"n_features_in_": "int", "scores_": "array:f1", "support_": "array:i1"}

    def _scores(self, stats: TextStatistics) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _k(self) -> Any:
        k = self.k
        if isinstance(k, (float, np.floating)) and float(k).is_integer() and k > 1:
            return int(k)
        if isinstance(k, np.floating):      # a share: top_k recognises Python floats only (np.float32 kept 0 words)
            return float(k)
        if isinstance(k, np.integer):
            return int(k)
        return k

    def _check_params(self) -> None:
        """k's range (and the variant's choices), checked before any data (toolkit.api.validate_component)."""
        _check_k(self._name, self.k)

    def fit(self, X: Any, y: Any, schema: Schema | None = None) -> _TextSelector:
        _check_k(self._name, self.k)
        y = np.asarray(y)
        codes = np.asarray(y, dtype=np.float64)
        known = ~np.isnan(codes) & (codes >= 0)
        X = as_counts(X, self._name)
        if not known.all():
            X = X[np.flatnonzero(known)]
        codes = codes[known].astype(np.int64)
        K = len(schema.classes) if schema is not None else (int(codes.max()) + 1 if len(codes) else 1)
        stats = TextStatistics(X, codes, K)
        self.scores_ = self._scores(stats)
        self.support_ = self.top_k(self.scores_, self._k())
        self.n_features_in_ = int(X.shape[1])
        return self

    def ranking(self) -> np.ndarray:
        """Column indices from best to worst score (ties to the lower index)."""
        n = len(self.scores_)
        s = np.asarray(self.scores_, dtype=np.float64)
        return np.lexsort((np.arange(n), rank_key(np.where(np.isnan(s), -np.inf, s))))


class KLSelector(_TextSelector):
    """Schneider's KL score, ML estimates in both terms; ``variant="exact"`` ranks by K~_t minus the
    exact eq. 8 divergence (with the same ML p(w|c)).

    :param k: words to keep (int), a share of the vocabulary (float in (0, 1]), or None for all.
    """

    _name = "kl"

    def __init__(self, *, k: int | float | None = 1000, variant: str = "approx", allow_fractional: bool = False):
        self.k = k
        self.variant = variant
        self.allow_fractional = allow_fractional

    def _check_params(self) -> None:
        super()._check_params()
        if self.variant not in ("approx", "exact"):
            raise ParameterError(f"kl: variant must be 'approx' or 'exact', not '{self.variant}'")

    def _scores(self, stats: TextStatistics) -> np.ndarray:
        if self.variant == "approx":
            return kl_scores(stats)
        if self.variant == "exact":
            first, second = k_tilde(stats), exact_kl(stats, "ml")
            score = _rounded_to_zero(first - second, np.abs(first) + np.abs(second))
            return np.where(np.isfinite(stats.log_doc_share()), score, -np.inf)
        raise ParameterError(f"kl: variant must be 'approx' or 'exact', not '{self.variant}'")


class DKLSelector(_TextSelector):
    """Schneider's dKL score (p(w) replaced by the smoothed class mixture).

    :param k: words to keep (int), a share of the vocabulary (float in (0, 1]), or None for all.
    """

    _name = "dkl"

    def __init__(self, *, k: int | float | None = 1000, allow_fractional: bool = False):
        self.k = k
        self.allow_fractional = allow_fractional

    def _scores(self, stats: TextStatistics) -> np.ndarray:
        return dkl_scores(stats)


class MISelector(_TextSelector):
    """Mutual information between the class and a word event (document presence by default).

    :param k: words to keep (int), a share of the vocabulary (float in (0, 1]), or None for all.
    :param event_model: ``document`` (w occurs in the document) or ``token``.
    """

    _name = "mi"

    def __init__(self, *, k: int | float | None = 1000, event_model: str = "document",
                 allow_fractional: bool = False):
        self.k = k
        self.event_model = event_model
        self.allow_fractional = allow_fractional

    def _check_params(self) -> None:
        super()._check_params()
        if self.event_model not in ("document", "token"):
            raise ParameterError(f"mi: event_model must be 'document' or 'token', not '{self.event_model}'")

    def _scores(self, stats: TextStatistics) -> np.ndarray:
        return mutual_information(stats, self.event_model)
