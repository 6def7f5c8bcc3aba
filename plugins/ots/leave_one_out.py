"""Leave-one-out scores of the BIM from counts alone, and the threshold they choose (algorithms.md 4.3, 2.5).

Removing a positive document d changes ``n_t^+`` by -1 for t in d (and ``N^+`` by -1), which gives
one leave-one-positive-out weight per feature, the same for every positive document that contains
t; likewise for negatives. So the leave-one-out scores of all documents are two sparse
matrix-vector products, O(nnz), with no refit (the paper's Appendix B).

The BIM feature set (``features="positive"``, algorithms.md 2.5) is fixed from the whole training
part: a feature whose only positive document is the one left out stays in the set, with the
leave-one-out weight w(0, n^-).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from toolkit.evaluation.ranking import average_precision_of_ranking
from toolkit.plugins.ots.bim import (
    BIMCounts, bim_counts, feature_mask, neutral, restricted, smoothed_logit, thresholded,
)

__all__ = ["loo_weights", "loo_scores", "ranked_average_precision", "tie_key", "TIE_DECIMALS",
           "loo_average_precision", "optimal_threshold", "OPTCUT_GRID"]

#: The paper's "OptCut" search: tau = 0, 0.1, ..., 10 (algorithms.md 2.5).
OPTCUT_GRID = np.round(np.arange(101) * 0.1, 10)


def loo_smoothed_logit(n: np.ndarray, N: float, alpha: float) -> np.ndarray:
    """logit of the smoothed rate once one document of this class that contains t is removed:
    (n - 1 + a) / (N - 1 + 2a). Only read for features with n >= 1 (a document contains them)."""
    return np.log(np.maximum(n - 1.0, 0.0) + alpha) - np.log(np.maximum(N - n, 0.0) + alpha)


def loo_weights(c: BIMCounts, alpha: float, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(weights seen by a left-out positive document, weights seen by a left-out negative document),
    0 outside the feature set ``mask`` (fixed from the counts with every document in)."""
    lp, lq = smoothed_logit(c.n_pos, c.N_pos, alpha), smoothed_logit(c.n_neg, c.N_neg, alpha)
    w_pos = loo_smoothed_logit(c.n_pos, c.N_pos, alpha) - lq
    w_neg = lp - loo_smoothed_logit(c.n_neg, c.N_neg, alpha)
    w_pos[neutral(c.n_pos, c.N_pos, c.n_neg, c.N_neg, alpha, left_out_pos=1.0)] = 0.0
    w_neg[neutral(c.n_pos, c.N_pos, c.n_neg, c.N_neg, alpha, left_out_neg=1.0)] = 0.0
    return restricted(w_pos, mask), restricted(w_neg, mask)


def loo_scores(B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray, alpha: float, tau: float,
               counts: BIMCounts | None = None, features: str = "positive") -> np.ndarray:
    """Leave-one-out score of every row in ``positive`` or ``negative`` (others: NaN), exactly as if
    the BIM were retrained without that row on the feature set of all the rows, with the threshold
    applied to the leave-one-out weights."""
    c = counts if counts is not None else bim_counts(B, positive, negative)
    w_pos, w_neg = loo_weights(c, alpha, feature_mask(c, features))
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
                          taus: np.ndarray, features: str = "positive") -> np.ndarray:
    """Leave-one-out AP on the training rows for each threshold in ``taus``."""
    c = bim_counts(B, positive, negative)
    w_pos, w_neg = loo_weights(c, alpha, feature_mask(c, features))
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
                      taus: np.ndarray = OPTCUT_GRID, features: str = "positive") -> tuple[float, np.ndarray]:
    """The paper's "OptCut": the threshold with the best leave-one-out AP on the training rows
    (the first in ``taus`` order among equals), and the AP of every threshold."""
    ap = loo_average_precision(B, positive, negative, alpha, taus, features)
    if not np.isfinite(ap).any():
        return float(taus[0]), ap
    return float(taus[int(np.nanargmax(ap))]), ap
