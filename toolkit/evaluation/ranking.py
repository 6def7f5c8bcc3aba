"""Average precision of a ranking (algorithms.md 5.2.3): shared by the ranking metrics and by example
selectors that score a ranking (the OTS search), so that both compute it the same way."""

from __future__ import annotations

import numpy as np

__all__ = ["average_precision_of_ranking"]


def average_precision_of_ranking(relevant_in_rank_order: np.ndarray) -> float:
    """AP = mean over relevant ranks k of hits_k / k; NaN when nothing is relevant."""
    rel = np.asarray(relevant_in_rank_order, dtype=bool)
    total = int(rel.sum())
    if total == 0:
        return float("nan")
    hits = np.cumsum(rel)
    ranks = np.arange(1, len(rel) + 1)
    return float(np.sum(hits[rel] / ranks[rel]) / total)
