"""Average precision of a ranking (algorithms.md 5.2.3): shared by the ranking metrics and by example
selectors that score a ranking (the OTS search), so that both compute it the same way."""

from __future__ import annotations

import numpy as np

__all__ = ["average_precision_of_ranking", "rank_key", "TIE_RELATIVE"]

#: scores closer than this, relative to the larger (or to the largest score, near 0), tie in a ranking
TIE_RELATIVE = 1e-12


def rank_key(scores: np.ndarray) -> np.ndarray:
    """A key per score for ranking best first: 0 for the highest scores, 1 for the next, ...; scores that
    differ by rounding alone share a key, so that a sort by (key, position) breaks their tie by position.

    Scores equal in exact arithmetic but computed along different paths (the mutual information of a word
    and of its complement, the log-odds of two rows whose other classes' scores are permuted) differ in
    their last bits, and those bits, not the lower index, decided which came first; algorithms.md 0.2
    breaks a tie by the original position. Neighbours in score order within ``TIE_RELATIVE`` of the larger
    magnitude (or of the largest finite magnitude, for scores near 0) tie; equal infinities tie; NaN
    ranks last, each on its own."""
    s = np.asarray(scores, dtype=np.float64)
    key = np.zeros(len(s), dtype=np.int64)
    if len(s) < 2:
        return key
    order = np.argsort(-s, kind="stable")
    ds = s[order]
    finite = np.abs(ds[np.isfinite(ds)])
    scale = float(finite.max()) if len(finite) else 0.0
    a, b = ds[:-1], ds[1:]
    with np.errstate(invalid="ignore"):
        near = np.isfinite(a) & np.isfinite(b) & \
            ((a - b) <= TIE_RELATIVE * np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-3 * scale))
    key[order[1:]] = np.cumsum(~((a == b) | near))
    return key


def average_precision_of_ranking(relevant_in_rank_order: np.ndarray) -> float:
    """AP = mean over relevant ranks k of hits_k / k; NaN when nothing is relevant."""
    rel = np.asarray(relevant_in_rank_order, dtype=bool)
    total = int(rel.sum())
    if total == 0:
        return float("nan")
    hits = np.cumsum(rel)
    ranks = np.arange(1, len(rel) + 1)
    return float(np.sum(hits[rel] / ranks[rel]) / total)
