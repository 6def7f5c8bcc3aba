"""The optimal-training-set (OTS) search (algorithms.md 4.1, 4.3).

OTS (Sohn, Kim, Comeau & Wilbur 2008): the small training set (STS) starts as all positive documents;
each iteration moves the M pool negatives that the current BIM scores highest into the STS, scores
the STS by the average precision of every training document (STS members by their leave-one-out
scores, the others by the BIM trained on the STS; ``evaluate="sts"`` ranks the STS members only), and
retrains the scorer on the STS. The OTS is the STS with the best AP (the smaller one among equals).
Every BIM here weights only the features of the positives (``features="positive"``, algorithms.md
2.5), a set fixed once: every STS holds all the positives.

Cost. Nothing refits per document: leave-one-out weights come from the counts (algorithms.md 4.3),
one per feature and class. A round updates the counts of the added documents' features, recomputes
the weights over the task's feature set, and runs one pass over the entries of the features that carry
weight (``rounds.py``, ``kernel.py``): every training document's tie key, the positives' ranks (the AP
needs nothing else) and the pool's M best documents. Scores are the plain sums, bit for bit.
``run_rounds`` drives the rounds over any set of row blocks with the same two messages (the rows chosen
and the change of the counts): one block in this process, or one per partition on a Dask cluster
(``cluster.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from toolkit.api import compute_threads
from toolkit.errors import ParameterError

from toolkit.plugins.ots.bim import check_alpha, check_features, presence, resolve_threshold
from toolkit.plugins.ots.kernel import average_precision_from_counts
from toolkit.plugins.ots.rounds import (
    ColumnIndex, RoundEngine, RoundResult, TaskSpec, TaskWeights, initial_kind, segments,
)

__all__ = ["OTSResult", "optimal_training_set", "step_size", "task_spec", "run_rounds", "pool_step", "ColumnIndex"]

_INITS = ("wts", "sts")
_SCORERS = ("sts", "wts_fixed")
_EVALUATE = ("wts", "sts")
_PARALLEL_MIN_NNZ = 4_000_000  # below this a pass takes a few ms and threads do not pay


@dataclass
class OTSResult:
    """The OTS search: positives, negatives in the order they were added, and the trace."""

    positives: np.ndarray         # row indices of the positive documents
    added: np.ndarray             # negative row indices in the order they entered the STS
    n_added: np.ndarray           # negatives in the STS after each iteration
    average_precision: np.ndarray  # AP of the STS's evaluation after each iteration
    step: int
    best: int                     # index of the best iteration (-1: no iteration ran)

    @property
    def sizes(self) -> np.ndarray:
        return len(self.positives) + self.n_added

    @property
    def n_negatives(self) -> int:
        """Negatives in the OTS."""
        return int(self.n_added[self.best]) if self.best >= 0 else 0

    def rows(self) -> np.ndarray:
        """The OTS, as sorted row indices."""
        return np.sort(np.concatenate([self.positives, self.added[: self.n_negatives]]))

    def trace(self) -> dict[str, Any]:
        return {"size": self.sizes.tolist(), "n_negatives": self.n_added.tolist(),
                "average_precision": self.average_precision.tolist(), "step": self.step,
                "best_size": int(self.sizes[self.best]) if self.best >= 0 else len(self.positives),
                "best_average_precision": float(self.average_precision[self.best]) if self.best >= 0 else None}


def step_size(step: float, n_positive: int) -> int:
    """M: ``step`` >= 1 is a count; 0 < ``step`` < 1 is a share of the positives, rounded half up,
    at least 1 (the paper: 1 % of the C1 documents)."""
    try:
        value = float(step)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or not np.isfinite(value):
        raise ParameterError(f"step must be a share in (0, 1) of the positives or a count >= 1, not {step!r}")
    if value >= 1:
        if value != int(value):
            raise ParameterError(f"step >= 1 is a number of documents and must be whole, not {step!r}")
        return int(value)
    # in decimal, as the share was written: 0.29 * 50 is 14.499999999999998 in binary floating point
    return max(1, int(Fraction(repr(value)) * int(n_positive) + Fraction(1, 2)))


def task_spec(positive_count: int, *, alpha: float = 1.0, threshold: float = 1.0, step: float = 0.01,
              init: str = "wts", scorer: str = "sts", evaluate: str = "wts", features: str = "positive") -> TaskSpec:
    """The checked parameters of one search (M from ``step`` and the number of positives)."""
    features = check_features(features, "ots")
    if init not in _INITS:
        raise ParameterError(f"init must be one of {', '.join(_INITS)}, not '{init}'")
    if evaluate not in _EVALUATE:
        raise ParameterError(f"evaluate must be one of {', '.join(_EVALUATE)}, not '{evaluate}'")
    if scorer not in _SCORERS:
        raise ParameterError(f"scorer must be one of {', '.join(_SCORERS)}, not '{scorer}'")
    tau = resolve_threshold(threshold, "ots")
    if tau == "loo":
        raise ParameterError("ots: threshold must be a number here (the OTS replaces the threshold search)")
    return TaskSpec(check_alpha(alpha), float(tau), step_size(step, positive_count), init, scorer, evaluate,
                    features)


def _check_stops(patience: int | None, max_size: int | None) -> None:
    if patience is not None and (int(patience) != patience or patience < 1):
        raise ParameterError(f"patience must be a whole number >= 1 or None, not {patience!r}")
    if max_size is not None and (int(max_size) != max_size or max_size < 1):
        raise ParameterError(f"max_size must be a whole number >= 1 or None, not {max_size!r}")


def _chosen(results: Sequence[RoundResult], m: int) -> tuple[np.ndarray, np.ndarray]:
    """The m best of the blocks' best pool rows (key descending, row ascending), and their features."""
    keys = np.concatenate([r.top_keys for r in results])
    rows = np.concatenate([r.top_rows for r in results])
    best = np.lexsort((rows, -keys))[:m]
    # every block's features one after the other, and where each candidate's begin and end in them
    offsets = np.cumsum([0] + [len(r.features) for r in results])
    starts = np.concatenate([o + r.feature_ptr[:-1] for o, r in zip(offsets, results)])
    ends = np.concatenate([o + r.feature_ptr[1:] for o, r in zip(offsets, results)])
    features = np.concatenate([r.features for r in results])
    where, _ = segments(starts[best], ends[best])
    return rows[best], features[where].astype(np.int32)


def pool_step(spec: TaskSpec, pool_size: int) -> TaskSpec:
    """``spec`` with M at most the pool's size: a round cannot move more negatives than the pool holds, and
    the kernels size their candidate buffers by M (a huge M, say 10**9, would otherwise allocate gigabytes
    and fail with MemoryError). The search is the same: the first round takes the whole pool either way."""
    return dataclasses.replace(spec, step=max(1, min(spec.step, int(pool_size))))


def run_rounds(call: Callable[..., list[RoundResult]], spec: TaskSpec, positives: np.ndarray, pool_size: int,
               patience: int | None = None, max_size: int | None = None) -> OTSResult:
    """The OTS loop over row blocks: ``call("first")`` and ``call("step", chosen, changed, increment)``
    run the first scorer and a round on every block and return their ``RoundResult``s; a round sends
    only the rows chosen and the change of the counts (compact feature ids, how many more). The trace depends only
    on what the blocks return, so any split of the rows gives the same search."""
    M = min(spec.step, max(int(pool_size), 1))
    chosen, feats = _chosen(call("first"), M)
    added: list[np.ndarray] = []
    n_added: list[int] = []
    ap_trace: list[float] = []
    best, best_ap, since_best = -1, -np.inf, 0
    total, left = 0, pool_size
    while left > 0 and len(chosen):
        added.append(chosen)
        total += len(chosen)
        left -= len(chosen)
        changed, increment = np.unique(feats, return_counts=True)
        results = call("step", chosen, changed.astype(np.int64), increment.astype(np.float64))
        counts = np.sum([r.counts for r in results], axis=0)
        ap = average_precision_from_counts(counts)
        ap_trace.append(ap)
        n_added.append(total)
        if ap > best_ap:
            best, best_ap, since_best = len(ap_trace) - 1, ap, 0
        else:
            since_best += 1
        if patience is not None and since_best >= patience:
            break
        if max_size is not None and len(positives) + total >= max_size:
            break
        chosen, feats = _chosen(results, M)
    return OTSResult(positives, np.concatenate(added) if added else np.zeros(0, np.int64),
                     np.asarray(n_added, dtype=np.int64), np.asarray(ap_trace), spec.step, best)


def optimal_training_set(X: Any, positive: np.ndarray, negative: np.ndarray, *, alpha: float = 1.0,
                         threshold: float = 1.0, step: float = 0.01, init: str = "wts", scorer: str = "sts",
                         patience: int | None = None, max_size: int | None = None,
                         evaluate: str = "wts", features: str = "positive",
                         n_threads: int | None = None, columns: ColumnIndex | None = None) -> OTSResult:
    """Run the OTS search (algorithms.md 4.1) on the rows in ``positive`` and ``negative`` (boolean masks).

    ``evaluate`` says which documents the AP of a candidate STS ranks: "wts" (algorithms.md 4.1 step
    3c, revision 2) ranks every training document, the STS documents by their leave-one-out scores
    and the others by the STS-trained BIM (each document scored by a model that did not see it);
    "sts" (revision 1) ranks the STS documents only. ``features`` is the BIM feature set
    (algorithms.md 2.5): "positive" (the features of the positives) or "all". ``n_threads`` (default:
    the available cores when the corpus has millions of non-zeros, else 1) only splits the work; the
    result is the same. ``columns`` is the corpus's column index when several searches share it.
    """
    positive = np.asarray(positive, dtype=bool)
    negative = np.asarray(negative, dtype=bool)
    pos_rows = np.flatnonzero(positive)
    spec = task_spec(len(pos_rows), alpha=alpha, threshold=threshold, step=step, init=init, scorer=scorer,
                     evaluate=evaluate, features=features)
    _check_stops(patience, max_size)
    B = presence(X)
    pool_size = int(np.sum(negative & ~positive))
    if pool_size == 0 or len(pos_rows) == 0:
        return OTSResult(pos_rows, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), spec.step, -1)
    weights = TaskWeights.of(B, positive, negative, pool_step(spec, pool_size))
    if n_threads is None:
        n_threads = compute_threads() if B.nnz >= _PARALLEL_MIN_NNZ else 1
    engine = RoundEngine(B.indptr, B.indices, weights, columns if columns is not None else ColumnIndex.of(B),
                         initial_kind(positive, negative), pos_rows, pos_rows, n_threads=n_threads)

    def call(name: str, *args: Any) -> list[RoundResult]:
        return [getattr(engine, name)(*args)]

    try:
        return run_rounds(call, spec, pos_rows, pool_size, patience, max_size)
    finally:
        engine.close()
