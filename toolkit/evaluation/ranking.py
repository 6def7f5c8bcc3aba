"""Average precision of a ranking (algorithms.md 5.2.3): shared by the ranking metrics and by example
selectors that score a ranking (the OTS search), so that both compute it the same way."""

from __future__ import annotations

import numpy as np

__all__ = ["average_precision_of_ranking", "rank_key", "TIE_RELATIVE"]

#: scores closer than this, relative to the larger magnitude, tie in a ranking (about 4,500 ulps)
TIE_RELATIVE = 1e-12


def rank_key(scores: np.ndarray) -> np.ndarray:
    """A key per score for ranking best first: 0 for the highest scores, 1 for the next, ...; scores that
    differ by rounding alone share a key, so that a sort by (key, position) breaks their tie by position.

    Scores equal in exact arithmetic but computed along different paths (the mutual information of a word
    and of its complement, the log-odds of two rows whose other classes' scores are permuted) differ in
    their last bits, and those bits, not the lower index, decided which came first; algorithms.md 0.2
    breaks a tie by the original position. A score ties with the first (highest) score of its group when
    they differ by at most ``TIE_RELATIVE`` of the larger magnitude, so that ties do not chain and a tiny
    score (a probability of 1e-30) is not tied to a larger one (1e-20); scores of rounding noise around 0
    (+-1e-18) stay apart. Equal scores tie, infinities included; NaN ranks last, each on its own."""
    s = np.asarray(scores, dtype=np.float64)
    key = np.zeros(len(s), dtype=np.int64)
    if len(s) < 2:
        return key
    order = np.argsort(-s, kind="stable")
    ds = s[order]
    # equal values first (many words can share a score, -inf for words absent from a training part), then
    # the few near ties among the distinct values, each measured from its group's first value
    first = np.r_[True, ~(ds[1:] == ds[:-1])]
    values = ds[first]
    with np.errstate(invalid="ignore"):
        a, b = values[:-1], values[1:]
        near = np.isfinite(a) & np.isfinite(b) & ((a - b) <= TIE_RELATIVE * np.maximum(np.abs(a), np.abs(b)))
    starts = np.ones(len(values), dtype=bool)
    candidates = np.flatnonzero(near)
    if len(candidates):
        head = values.copy()   # the first value of each distinct value's group
        for j in candidates.tolist():   # only the near ties: few
            g, v = head[j], values[j + 1]
            if g - v <= TIE_RELATIVE * max(abs(g), abs(v)):
                starts[j + 1] = False
                head[j + 1] = g
    group = np.cumsum(starts) - 1
    key[order] = group[np.cumsum(first) - 1]
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
