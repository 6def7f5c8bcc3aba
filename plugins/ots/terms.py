"""Many OTS searches over one corpus (the paper's setting: one search per MeSH term, algorithms.md 4.1).

The searches share the loaded corpus (its presence pattern) and its column-major index, which is
built once; each search keeps only its own small state (counts, weights, the entries of its weighted
features). They run in threads (the round kernel releases the GIL), in forked processes (the corpus
and the index are shared copy-on-write), or on a Dask cluster one term per task (``cluster.py``).
Each search is exactly the one ``optimal_training_set`` runs alone: the same trace, term by term.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from toolkit.errors import ParameterError

from toolkit.plugins.ots.bim import presence
from toolkit.plugins.ots.rounds import ColumnIndex
from toolkit.plugins.ots.search import OTSResult, optimal_training_set

__all__ = ["term_masks", "search_terms", "BACKENDS"]

BACKENDS = ("threads", "processes")


def term_masks(y: Any, positives: Sequence[int] | None = None,
               labels: Any = None) -> dict[Hashable, tuple[np.ndarray, np.ndarray]]:
    """(positive, negative) masks per term: from class codes ``y`` (each code in ``positives`` against
    every other labelled row; a code < 0 or NaN is unlabelled), or from a multi-label indicator matrix
    ``labels`` (column j > 0: positive for term j, else negative)."""
    if labels is not None:
        L = labels.toarray() if hasattr(labels, "toarray") else np.asarray(labels)
        if L.ndim != 2:
            raise ParameterError(f"labels must be a documents x terms matrix, not of shape {L.shape}")
        cols = range(L.shape[1]) if positives is None else positives
        out: dict[Hashable, tuple[np.ndarray, np.ndarray]] = {}
        for j in cols:
            pos = np.asarray(L[:, int(j)] > 0)
            out[int(j)] = (pos, ~pos)
        return out
    codes = np.asarray(y)
    if codes.dtype.kind == "f":
        codes = np.where(np.isnan(codes), -1, codes)
    codes = codes.astype(np.int64)
    wanted = sorted(set(codes[codes >= 0].tolist())) if positives is None else [int(c) for c in positives]
    return {c: (codes == c, (codes >= 0) & (codes != c)) for c in wanted}


# the corpus a forked worker inherits (set in the parent just before the pool starts)
_FORKED: dict[str, Any] = {}


def _forked_search(term: Hashable) -> tuple[Hashable, OTSResult]:
    B, columns, masks, params = _FORKED["B"], _FORKED["columns"], _FORKED["masks"], _FORKED["params"]
    pos, neg = masks[term]
    return term, optimal_training_set(B, pos, neg, columns=columns, n_threads=1, **params)


def search_terms(X: Any, masks: dict[Hashable, tuple[np.ndarray, np.ndarray]], *, n_jobs: int | None = None,
                 backend: str = "threads", **params: Any) -> dict[Hashable, OTSResult]:
    """One OTS search per term of ``masks`` (``term_masks``) on the corpus ``X``, ``n_jobs`` at a time
    (default: the available cores) in ``backend`` ("threads" or "processes"); ``params`` are
    ``optimal_training_set``'s. Results in the order of ``masks``."""
    if backend not in BACKENDS:
        raise ParameterError(f"backend must be one of {', '.join(BACKENDS)}, not '{backend}'")
    if n_jobs is not None and (int(n_jobs) != n_jobs or n_jobs < 1):
        raise ParameterError(f"n_jobs must be a whole number >= 1, not {n_jobs!r}")
    B = presence(X)
    columns = ColumnIndex.of(B)
    columns.column_nnz  # built once here, before the searches share it
    terms = list(masks)
    if n_jobs is None:
        try:
            n_jobs = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            n_jobs = os.cpu_count() or 1
    n_jobs = max(1, min(int(n_jobs), len(terms)))
    if n_jobs == 1 or len(terms) <= 1:
        return {t: optimal_training_set(B, *masks[t], columns=columns, **params) for t in terms}
    if backend == "processes" and hasattr(os, "fork"):
        import multiprocessing

        _FORKED.update(B=B, columns=columns, masks=masks, params=params)
        try:
            # the workers fork with Ctrl-C blocked: the terminal sends it to the whole group, and each worker
            # printed its traceback; the parent alone stops (the pool's exit terminates them)
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                pool = multiprocessing.get_context("fork").Pool(n_jobs)
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            with pool:
                done = dict(pool.map(_forked_search, terms, chunksize=1))
        finally:
            _FORKED.clear()
        return {t: done[t] for t in terms}
    with ThreadPoolExecutor(n_jobs) as executor:
        results = executor.map(lambda t: optimal_training_set(B, *masks[t], columns=columns, n_threads=1, **params),
                               terms)
        return dict(zip(terms, results))
