"""The binary independence model (BIM) of the OTS paper: weights, score, leave-one-out, threshold
(algorithms.md 2.5, 3.3, 4.3).

A document is the set of features present in it (value > 0). With ``n_t^+`` / ``n_t^-`` documents of
each class containing feature t, ``N^+`` / ``N^-`` documents per class and Laplace smoothing alpha,

    p_t = (n_t^+ + a) / (N^+ + 2a),   q_t = (n_t^- + a) / (N^- + 2a),
    w_t = logit(p_t) - logit(q_t) = log(n^+ + a) - log(N^+ - n^+ + a) - log(n^- + a) + log(N^- - n^- + a),

and the paper's score (eq. A.5) of a document d is ``sum of w_t over the t in d with |w_t| > tau``.

Leave-one-out needs only counts: removing a positive document d changes ``n_t^+`` by -1 for t in d
(and ``N^+`` by -1), which gives one leave-one-positive-out weight per feature, the same for every
positive document that contains t; likewise for negatives. So the leave-one-out scores of all
documents are two sparse matrix-vector products, O(nnz), with no refit (the paper's Appendix B).
Everything here works on CSR matrices; there is no loop over documents or features.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import FeatureSelectorBase, ProbabilisticClassifier, Schema, as_matrix
from toolkit.errors import CapabilityError, ParameterError

from toolkit.plugins._metrics_impl import average_precision_of_ranking

__all__ = [
    "presence", "BIMCounts", "bim_counts", "bim_weights", "loo_weights", "thresholded", "loo_scores",
    "ranked_average_precision", "tie_key", "TIE_DECIMALS", "loo_average_precision", "optimal_threshold", "OPTCUT_GRID",
    "BIMNaiveBayes", "BIMThresholdSelector", "check_alpha", "resolve_threshold",
]

#: The paper's "OptCut" search: tau = 0, 0.1, ..., 10 (algorithms.md 2.5).
OPTCUT_GRID = np.round(np.arange(101) * 0.1, 10)


def presence(X: Any) -> sp.csr_matrix:
    """Binary presence matrix (CSR, float64 ones, sorted indices, no duplicates): value > 0 is present.

    Missing values (NaN), zeros and negative values are absent. When ``X`` is already a canonical
    binary CSR matrix it is returned as is (never modified); otherwise the index arrays are shared
    where possible and only a ones array is allocated.
    """
    X = as_matrix(X)
    if not sp.issparse(X):
        with np.errstate(invalid="ignore"):
            return sp.csr_matrix(X > 0, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    data = X.data
    with np.errstate(invalid="ignore"):
        keep = data > 0
    if keep.all():
        if np.all(data == 1.0):
            return X
        return sp.csr_matrix((np.ones(len(data)), X.indices, X.indptr), shape=X.shape)
    kept_before = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    indptr = kept_before[X.indptr]  # entries kept before each row start
    return sp.csr_matrix((np.ones(int(indptr[-1])), X.indices[keep], indptr), shape=X.shape)


class BIMCounts:
    """Document counts per feature and class: ``n_pos``/``n_neg`` (per feature), ``N_pos``/``N_neg``."""

    __slots__ = ("n_pos", "n_neg", "N_pos", "N_neg")

    def __init__(self, n_pos: np.ndarray, n_neg: np.ndarray, N_pos: float, N_neg: float):
        self.n_pos, self.n_neg, self.N_pos, self.N_neg = n_pos, n_neg, float(N_pos), float(N_neg)


def bim_counts(B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray,
               weights: np.ndarray | None = None) -> BIMCounts:
    """Counts from a presence matrix and boolean class masks (rows in neither are left out);
    with ``weights``, each document counts its weight (integer weights = duplicated rows)."""
    wp = positive.astype(np.float64)
    wn = negative.astype(np.float64)
    if weights is not None:
        wp = wp * weights
        wn = wn * weights
    BT = B.T  # CSC view, no copy: B.T @ v is O(nnz)
    return BIMCounts(np.asarray(BT @ wp).ravel(), np.asarray(BT @ wn).ravel(), wp.sum(), wn.sum())


def check_alpha(alpha: Any) -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or not np.isfinite(value):
        raise ParameterError(f"alpha must be a number > 0 (Laplace smoothing of the BIM), not {alpha!r}")
    return value


def _logit(n: np.ndarray, N: float, alpha: float) -> np.ndarray:
    """logit((n + a) / (N + 2a)) = log(n + a) - log(N - n + a), computed from the counts."""
    return np.log(n + alpha) - np.log(np.maximum(N - n, 0.0) + alpha)


def bim_weights(c: BIMCounts, alpha: float) -> np.ndarray:
    """w_t = logit(p_t) - logit(q_t) (Robertson-Sparck Jones relevance weight)."""
    return _logit(c.n_pos, c.N_pos, alpha) - _logit(c.n_neg, c.N_neg, alpha)


def _loo_logit(n: np.ndarray, N: float, alpha: float) -> np.ndarray:
    """logit of the smoothed rate once one document of this class that contains t is removed:
    (n - 1 + a) / (N - 1 + 2a). Only read for features with n >= 1 (a document contains them)."""
    return np.log(np.maximum(n - 1.0, 0.0) + alpha) - np.log(np.maximum(N - n, 0.0) + alpha)


def loo_weights(c: BIMCounts, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(weights seen by a left-out positive document, weights seen by a left-out negative document)."""
    lp, lq = _logit(c.n_pos, c.N_pos, alpha), _logit(c.n_neg, c.N_neg, alpha)
    return _loo_logit(c.n_pos, c.N_pos, alpha) - lq, lp - _loo_logit(c.n_neg, c.N_neg, alpha)


def thresholded(w: np.ndarray, tau: float) -> np.ndarray:
    """The scoring vector: w_t where |w_t| > tau (strict), else 0."""
    return np.where(np.abs(w) > tau, w, 0.0)


def loo_scores(B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray, alpha: float, tau: float,
               counts: BIMCounts | None = None) -> np.ndarray:
    """Leave-one-out score of every row in ``positive`` or ``negative`` (others: NaN), exactly as if
    the BIM were retrained without that row, with the threshold applied to the leave-one-out weights."""
    c = counts if counts is not None else bim_counts(B, positive, negative)
    w_pos, w_neg = loo_weights(c, alpha)
    out = np.full(B.shape[0], np.nan)
    for mask, w in ((positive, w_pos), (negative, w_neg)):
        rows = np.flatnonzero(mask)
        if len(rows):
            out[rows] = B[rows] @ thresholded(w, tau)
    return out


#: Scores are compared after rounding to this many decimals: equal sums of the same weights added in
#: a different order (common, since features with equal counts have equal weights) then tie, and a
#: tie goes to the lower row index as algorithms.md 0.2 says, instead of to the last bit of rounding.
TIE_DECIMALS = 9


def tie_key(scores: np.ndarray) -> np.ndarray:
    """Scores rounded to ``TIE_DECIMALS`` decimals, for ranking."""
    return np.round(scores, TIE_DECIMALS)


def ranked_average_precision(scores: np.ndarray, relevant: np.ndarray) -> float:
    """Average precision of ranking rows by score, descending, ties (at 1e-9) in row order
    (algorithms.md 5.2.3), exactly, without sorting the non-relevant rows.

    AP needs only each relevant row's rank. Non-relevant rows below the lowest relevant one cannot
    precede it. The others are counted into equal-width score buckets (bucket order is score order):
    a bucket above a relevant row's bucket counts whole, and only the few non-relevant rows that share
    a bucket with a relevant row are ranked exactly, together with the relevant rows. Cost O(n) plus a
    sort of about twice the number of relevant rows.
    """
    relevant = np.asarray(relevant, dtype=bool)
    if not relevant.any():
        return float("nan")
    keys = tie_key(np.asarray(scores, dtype=np.float64))
    pos = np.flatnonzero(relevant)
    kp = keys[pos]
    lowest = kp.min()
    neg = np.flatnonzero(~relevant & (keys >= lowest))
    kn = keys[neg]
    if len(neg) <= 4 * len(pos) + 1024:  # small: sort everything that matters
        rows = np.concatenate([pos, neg])
        order = np.lexsort((rows, -keys[rows]))
        return average_precision_of_ranking(relevant[rows[order]])
    top = max(kp.max(), kn.max())
    n_buckets = len(kn)
    width = (top - lowest) / n_buckets
    if not width > 0:  # every candidate has the same score: rank by row alone
        rows = np.sort(np.concatenate([pos, neg]))
        return average_precision_of_ranking(relevant[rows])
    # (k - lowest) / width is non-decreasing in k, so buckets keep the score order
    bp = np.minimum(((kp - lowest) / width).astype(np.int64), n_buckets - 1)
    bn = np.minimum(((kn - lowest) / width).astype(np.int64), n_buckets - 1)
    shared = np.zeros(n_buckets, dtype=bool)
    shared[bp] = True
    in_shared = shared[bn]
    # non-relevant rows outside the shared buckets that lie above each bucket
    counts = np.bincount(bn[~in_shared], minlength=n_buckets)
    above = int(counts.sum()) - np.cumsum(counts)  # rows in buckets > b
    # exact order of the relevant rows and the non-relevant rows that share their buckets
    rows = np.concatenate([pos, neg[in_shared]])
    is_rel = np.concatenate([np.ones(len(pos), dtype=bool), np.zeros(int(in_shared.sum()), dtype=bool)])
    buckets = np.concatenate([bp, bn[in_shared]])
    order = np.lexsort((rows, -keys[rows]))
    rel_sorted = is_rel[order]
    neg_before = np.cumsum(~rel_sorted)[rel_sorted]  # shared non-relevant rows ranked above
    rank_among_relevant = np.arange(1, len(pos) + 1)
    ranks = rank_among_relevant + neg_before + above[buckets[order][rel_sorted]]
    return float(np.mean(rank_among_relevant / ranks))


def loo_average_precision(B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray, alpha: float,
                          taus: np.ndarray) -> np.ndarray:
    """Leave-one-out AP on the training rows for each threshold in ``taus``."""
    c = bim_counts(B, positive, negative)
    w_pos, w_neg = loo_weights(c, alpha)
    rows = np.flatnonzero(positive | negative)
    Bp, Bn = B[np.flatnonzero(positive)], B[np.flatnonzero(negative)]
    relevant = positive[rows]
    out = np.empty(len(taus))
    scores = np.empty(len(rows))
    for i, tau in enumerate(taus):
        scores[relevant] = Bp @ thresholded(w_pos, tau)
        scores[~relevant] = Bn @ thresholded(w_neg, tau)
        out[i] = ranked_average_precision(scores, relevant)
    return out


def optimal_threshold(B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray, alpha: float,
                      taus: np.ndarray = OPTCUT_GRID) -> tuple[float, np.ndarray]:
    """The paper's "OptCut": the threshold with the best leave-one-out AP on the training rows
    (the first in ``taus`` order among equals), and the AP of every threshold."""
    ap = loo_average_precision(B, positive, negative, alpha, taus)
    if not np.isfinite(ap).any():
        return float(taus[0]), ap
    return float(taus[int(np.nanargmax(ap))]), ap


def resolve_threshold(threshold: Any, who: str) -> float | str:
    """A threshold >= 0, or the string 'loo' (chosen by leave-one-out AP)."""
    if isinstance(threshold, str):
        if threshold.strip().lower() in ("loo", "optcut"):
            return "loo"
        try:
            threshold = float(threshold)
        except ValueError:
            raise ParameterError(f"{who}: threshold must be a number >= 0 or 'loo', not '{threshold}'") from None
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        value = float("nan")
    if not value >= 0:
        raise ParameterError(f"{who}: threshold must be a number >= 0 or 'loo', not {threshold!r}")
    return value


def _binary_codes(y: np.ndarray, n_classes: int, who: str) -> tuple[np.ndarray, np.ndarray]:
    """(positive mask, negative mask) from class codes: code 1 is positive, code 0 negative."""
    if n_classes > 2:
        raise CapabilityError(f"{who} handles two classes only, got {n_classes}; make a binary task "
                              f"(one class against the rest) with --positive CLASS")
    if n_classes < 2:
        return np.zeros(len(y), dtype=bool), y == 0
    return y == 1, y == 0


class BIMNaiveBayes(ProbabilisticClassifier):
    """Binary naive Bayes on feature presence, scored as the OTS paper does (algorithms.md 2.5).

    ``decision_function`` gives columns (-b, score): ``score`` is eq. A.5 (the sum of the selected
    weights in the document), so ranking by the margin is ranking by the paper's score, and
    ``score + b > 0`` is the Bernoulli decision with b = sum over selected t of
    log((1 - p_t)/(1 - q_t)) + log(N^+/N^-). ``predict_proba`` is the Bernoulli posterior over the
    selected features. ``threshold="loo"`` picks tau in {0, 0.1, ..., 10} by leave-one-out AP on the
    training data (the paper's OptCut).
    """

    def __init__(self, *, alpha: float = 1.0, threshold: float | str = 1.0):
        self.alpha = alpha
        self.threshold = threshold

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> BIMNaiveBayes:
        alpha = check_alpha(self.alpha)
        threshold = resolve_threshold(self.threshold, "nb-bim")
        X, codes, w = self._validate_fit(X, y, sample_weight, schema)
        positive, negative = _binary_codes(codes, len(self.classes_), "nb-bim")
        B = presence(X)
        unit = bool(np.all(w == 1.0))
        counts = bim_counts(B, positive, negative, None if unit else w)
        if threshold == "loo":
            if not unit:
                raise CapabilityError("nb-bim: threshold='loo' (leave-one-out) needs unit instance weights")
            tau, self.loo_ap_ = optimal_threshold(B, positive, negative, alpha)
        else:
            tau = float(threshold)
        weights = bim_weights(counts, alpha)
        selected = np.abs(weights) > tau
        self.threshold_ = tau
        self.weights_ = weights
        self.coef_ = np.where(selected, weights, 0.0)
        # log((1 - p)/(1 - q)) over the selected features, plus the prior log-odds
        log1m_p = np.log(np.maximum(counts.N_pos - counts.n_pos, 0.0) + alpha) - np.log(counts.N_pos + 2 * alpha)
        log1m_q = np.log(np.maximum(counts.N_neg - counts.n_neg, 0.0) + alpha) - np.log(counts.N_neg + 2 * alpha)
        if counts.N_pos > 0 and counts.N_neg > 0:
            prior = np.log(counts.N_pos) - np.log(counts.N_neg)
        else:  # one class absent: keep the scores finite so that they still rank
            prior = np.log(counts.N_pos + 1.0) - np.log(counts.N_neg + 1.0)
        self.intercept_ = float(np.sum((log1m_p - log1m_q)[selected]) + prior)
        self.n_selected_features_ = int(selected.sum())
        return self

    def score_documents(self, X: Any) -> np.ndarray:
        """The paper's score (eq. A.5) of each row: the sum of the selected weights present in it."""
        return np.asarray(presence(self._validate_predict(X)) @ self.coef_).ravel()

    def _joint_log_likelihood(self, X: Any) -> np.ndarray:
        s = np.asarray(presence(X) @ self.coef_).ravel()
        if len(self.classes_) < 2:
            return np.zeros((X.shape[0], 1))
        return np.column_stack([np.full(len(s), -self.intercept_), s])


class BIMThresholdSelector(FeatureSelectorBase):
    """Keep the features whose BIM weight satisfies |w_t| > threshold (algorithms.md 3.3); with
    ``threshold="loo"`` the threshold maximises the leave-one-out AP on the training part."""

    def __init__(self, *, threshold: float | str = 1.0, alpha: float = 1.0):
        self.threshold = threshold
        self.alpha = alpha

    def fit(self, X: Any, y: Any, schema: Schema | None = None) -> BIMThresholdSelector:
        alpha = check_alpha(self.alpha)
        threshold = resolve_threshold(self.threshold, "bim-threshold")
        X = as_matrix(X)
        y = np.asarray(y)
        if schema is not None:
            codes = np.where(np.isnan(y.astype(np.float64)), -1, y).astype(np.int64)
            n_classes = len(schema.classes)
        else:
            labels = np.unique(y)
            codes = np.searchsorted(labels, y)
            n_classes = len(labels)
        positive, negative = _binary_codes(codes, n_classes, "bim-threshold")
        B = presence(X)
        if threshold == "loo":
            tau, self.loo_ap_ = optimal_threshold(B, positive, negative, alpha)
        else:
            tau = float(threshold)
        weights = bim_weights(bim_counts(B, positive, negative), alpha)
        self.threshold_ = tau
        self.weights_ = weights
        self.scores_ = np.abs(weights)
        self.support_ = np.flatnonzero(self.scores_ > tau)
        return self
