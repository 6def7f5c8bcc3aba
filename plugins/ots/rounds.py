"""The OTS search's rounds over a block of rows (algorithms.md 4.1, 4.3): the state one machine keeps.

A round (after M negatives moved into the STS) needs the weights of the STS-trained BIM, the
leave-one-out weights of STS negatives and of positives, every training document's tie key, the
positives' ranks (for the AP) and the pool's M best documents. What is fixed per task and what changes:

* The BIM feature set (``features="positive"``: the features of the positives) is fixed, so weights are
  kept only for those features, renumbered 0..Fm-1 in column order (``TaskWeights``); an entry of
  another feature never carries weight and is never read.
* A round changes the negative counts of the added documents' features only, and N^-: the weights are
  recomputed from cached logarithms with one new logarithm per feature (log(N^- - n + a), shared by the
  STS weight and the leave-one-out weight of negatives). Values are those of the plain formulas, bit
  for bit (the same float operations on the same numbers).
* Most features have |w| <= tau at any time, so a document's score is the sum over a few of its entries.
  ``RestrictedRows`` keeps only the entries of features with weight, plus those likely to gain one
  within ``LOOKAHEAD`` rounds; a feature that gains weight is added from the column-major index of the
  corpus (``ColumnIndex``, shared by all the tasks on a corpus) into a small extra part, merged by
  column as the sum runs, so nothing is rebuilt; the parts are combined when the extra part grows.
* ``kernel.round_pass`` then runs over row blocks in threads: gap counts for the AP, the M best pool rows.

``RoundEngine`` holds all this for a block of rows; the search (``search.py``) drives one engine in one
process, or one per partition on a Dask cluster (``cluster.py``), with the same messages: the rows chosen
last round and the change of the counts.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.plugins.ots.bim import (
    BIMCounts, bim_counts, bim_weights, feature_mask, restricted, smoothed_logit, thresholded,
)
from toolkit.plugins.ots.kernel import (
    NOT_TRAINING, POOL, POSITIVE, STS_NEGATIVE, PositiveOrder, Rows, column_index, filter_rows, gather_columns,
    merge_rows, positive_order, restrict_rows, round_pass, round_weights, row_keys,
)
from toolkit.plugins.ots.leave_one_out import loo_smoothed_logit

__all__ = ["ColumnIndex", "TaskSpec", "TaskWeights", "RestrictedRows", "RoundEngine", "RoundResult", "LOOKAHEAD",
           "segments"]

LOOKAHEAD = 25  # rounds: features predicted to gain weight this soon enter the restricted rows together
_FILTER_EVERY = 64  # rounds between checks whether the restricted rows hold many features no longer needed
# the restricted rows are filtered when they hold more than _FILTER_RATIO x the entries needed + _FILTER_SLACK:
# every pass reads them all, and a feature filtered out too early comes back by a cheap gather
_FILTER_SLACK = 100_000
_FILTER_RATIO = 1.2
# the extra part joins the base when it exceeds this and a 16th of the base: every pass merges the parts
# row by row, which costs more than the sum itself when many rows have entries in both
_COMBINE_MIN = 100_000
_COMBINE_SHARE = 16


class ColumnIndex:
    """For each feature, the rows that contain it (a column-major copy of a presence pattern, int32 rows).
    Built once per corpus, on first use, and shared by every task (term) searched on it."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, n_columns: int):
        self._source = (indptr, indices, n_columns)
        self._built: tuple[np.ndarray, np.ndarray] | None = None

    @classmethod
    def of(cls, B: sp.csr_matrix) -> ColumnIndex:
        return cls(B.indptr, B.indices, B.shape[1])

    def _build(self) -> tuple[np.ndarray, np.ndarray]:
        if self._built is None:
            indptr, indices, F = self._source
            self._built = column_index(indptr, indices, F)
        return self._built

    @property
    def column_nnz(self) -> np.ndarray:
        return np.diff(self._build()[0])

    def rows_of(self, features: np.ndarray, ids: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
        """The row-major pattern (``n_rows`` rows) of ``features`` (ascending), renumbered ``ids``."""
        colptr, rows = self._build()
        return gather_columns(colptr, rows, features, ids, n_rows)


@dataclass(frozen=True)
class TaskSpec:
    """One OTS search's parameters (algorithms.md 4.1), already checked."""

    alpha: float
    tau: float
    step: int
    init: str
    scorer: str
    evaluate: str
    features: str


class TaskWeights:
    """The weights of a task over its feature set, renumbered 0..Fm-1 (``feature`` maps back), and the
    round's weight vector: block 0 the STS-trained weights (pool documents; the first scorer before
    round 1), block 1 the leave-one-out weights of STS negatives, block 2 those of positives, block 3
    the first scorer's weights (chosen by with ``scorer="wts_fixed"``). Every value is thresholded."""

    def __init__(self, pos_counts: BIMCounts, wts_counts: BIMCounts | None, n_features: int, spec: TaskSpec):
        """From the positives' counts (``n_pos``, ``N_pos``) and, for ``init="wts"``, the counts of the
        whole training set: sums over row blocks give the same (whole) numbers as one count."""
        alpha, tau = spec.alpha, spec.tau
        self.spec = spec
        F = n_features
        pc = pos_counts
        mask = feature_mask(pc, spec.features)
        self.feature = np.flatnonzero(mask) if mask is not None else np.arange(F)
        self.Fm = Fm = len(self.feature)
        self.compact = np.full(F, -1, dtype=np.int32)  # feature id -> compact id (-1: no weight ever)
        self.compact[self.feature] = np.arange(Fm, dtype=np.int32)
        f = self.feature
        self.lp = smoothed_logit(pc.n_pos, pc.N_pos, alpha)[f]
        self.llp = loo_smoothed_logit(pc.n_pos, pc.N_pos, alpha)[f]
        if spec.init == "wts":
            if wts_counts is None:
                raise ValueError("init='wts' needs the counts of the whole training set")
            v0 = thresholded(bim_weights(wts_counts, alpha, mask), tau)
        else:  # the positives alone: q_t = 1/2, so w_t = logit(p_t)
            v0 = thresholded(restricted(smoothed_logit(pc.n_pos, pc.N_pos, alpha), mask), tau)
        self.v0 = np.ascontiguousarray(v0[f])
        self.n = np.zeros(Fm)  # negative counts in the STS
        self.N = 0.0
        self.log_na = np.log(self.n + alpha)  # log(n + a): changes only where n does
        self.log_n1a = np.log(np.maximum(self.n - 1.0, 0.0) + alpha)  # log(max(n - 1, 0) + a)
        self.vec = np.zeros(4 * Fm)
        self.vec[:Fm] = self.v0
        self.vec[3 * Fm:] = self.v0
        self.w_sts, self.w_loo_neg, self.w_loo_pos = np.zeros(Fm), np.zeros(Fm), np.zeros(Fm)
        self._active = np.zeros(Fm, dtype=bool)  # written each round (update's result)

    @classmethod
    def of(cls, B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray, spec: TaskSpec) -> TaskWeights:
        pc = bim_counts(B, positive, np.zeros(len(positive), dtype=bool))
        return cls(pc, bim_counts(B, positive, negative) if spec.init == "wts" else None, B.shape[1], spec)

    @property
    def sel_offset(self) -> int:
        """Where the pool's choosing weights start in the vector (-1: block 0 itself)."""
        return 3 * self.Fm if self.spec.scorer == "wts_fixed" else -1

    def add(self, changed: np.ndarray, increment: np.ndarray, n_docs: int) -> None:
        """Counts of the documents that entered the STS: ``increment`` more negatives contain each of the
        features ``changed`` (compact ids, distinct)."""
        alpha = self.spec.alpha
        self.n[changed] += increment
        self.N += n_docs
        n = self.n[changed]
        self.log_na[changed] = np.log(n + alpha)
        self.log_n1a[changed] = np.log(np.maximum(n - 1.0, 0.0) + alpha)

    def update(self) -> np.ndarray:
        """This round's vector; returns the features with a weight in any block."""
        alpha = self.spec.alpha
        log_rest = np.log(np.maximum(self.N - self.n, 0.0) + alpha)  # log(max(N - n, 0) + a)
        active = self._active
        round_weights(self.lp, self.llp, self.log_na, self.log_n1a, log_rest, self.spec.tau, self.vec, self.w_sts,
                      self.w_loo_neg, self.w_loo_pos, active)
        if self.spec.scorer == "wts_fixed":
            active = active | (self.v0 != 0)
        return active

    def initial_active(self) -> np.ndarray:
        return self.v0 != 0

    def about_to_gain_weight(self, left: int) -> np.ndarray:
        """Features without weight that may gain one soon, so that they enter the restricted rows
        together. With n fixed every weight rises with N, by log((N' - n + a)/(N - n + a)) over the
        documents of the next ``LOOKAHEAD`` rounds; one more added negative containing t lowers its
        weights by at most log((n + a)/(n - 1 + a)), which is forecast for the features already in an STS
        negative (a feature in none gains its first rarely, and is added when it does). Only a forecast:
        a feature that gains weight unforeseen is added then; the sums never miss a weight."""
        alpha, tau = self.spec.alpha, self.spec.tau
        highest = np.maximum(np.maximum(self.w_sts, self.w_loo_neg), self.w_loo_pos)
        lowest = np.minimum(np.minimum(self.w_sts, self.w_loo_neg), self.w_loo_pos)
        room = np.maximum(self.N - self.n, 0.0) + alpha
        below = np.maximum(self.n - 1.0, 0.0) + alpha
        # documents to come within LOOKAHEAD rounds, but at most a quarter of N more: while the STS is small,
        # a few rounds move the weights of nearly every feature, and a long forecast would take them all
        step = min(self.spec.step * LOOKAHEAD, 0.25 * self.N + self.spec.step, max(left, 0)) if LOOKAHEAD else 0
        return (highest + np.log1p(step / room) > tau) | ((self.n >= 1) & (lowest - np.log1p(1.0 / below) < -tau))


class RestrictedRows:
    """The entries of a block of rows whose feature is in ``kept`` (compact ids), as ``kernel.Rows``."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, columns: ColumnIndex, compact: np.ndarray,
                 feature: np.ndarray):
        self.indptr, self.indices, self.columns = indptr, indices, columns
        self.compact, self.feature = compact, feature
        self.n_rows = len(indptr) - 1
        self.feature_nnz = columns.column_nnz[feature]  # entries per compact feature
        self.kept = np.zeros(len(feature), dtype=bool)
        self.rows = Rows.of(np.zeros(self.n_rows + 1, dtype=np.int64), np.zeros(0, dtype=np.int32))
        self._in_extra = np.zeros(len(feature), dtype=bool)  # kept features whose entries are in the extra part
        self.changes = {"build": 0, "add": 0, "combine": 0, "filter": 0}

    def nnz_of(self, features: np.ndarray) -> int:
        return int(self.feature_nnz[features].sum())

    def build(self, kept: np.ndarray) -> None:
        """The entries of ``kept`` features, read from the corpus in one pass."""
        mapping = np.full(len(self.compact), -1, dtype=np.int32)
        mapping[self.feature[kept]] = np.flatnonzero(kept).astype(np.int32)
        self.rows = Rows(*restrict_rows(self.indptr, self.indices, mapping, self.nnz_of(kept)),
                         np.zeros(self.n_rows + 1, dtype=np.int64), np.zeros(0, dtype=np.int32))
        self.kept = kept.copy()
        self._in_extra[:] = False
        self.changes["build"] += 1

    def add(self, features: np.ndarray) -> None:
        """Add the entries of ``features`` (compact ids, none of them kept) to the extra part."""
        if len(features) == 0:
            return
        in_extra = np.union1d(np.flatnonzero(self._in_extra), features)
        r = self.rows
        self.rows = Rows(r.indptr, r.indices, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32))
        del r  # the old extra part goes before the new one is built
        extra_indptr, extra_indices = self.columns.rows_of(self.feature[in_extra], in_extra, self.n_rows)
        self.rows = Rows(self.rows.indptr, self.rows.indices, extra_indptr, extra_indices)
        self.kept[features] = True
        self._in_extra[in_extra] = True
        self.changes["add"] += 1
        if len(extra_indices) > max(len(self.rows.indices) // _COMBINE_SHARE, _COMBINE_MIN):
            self._combine()

    def _combine(self) -> None:
        """Move the extra part into the base (a linear merge of two sorted patterns)."""
        indptr, indices = merge_rows(self.rows)
        self.rows = Rows.of(indptr, indices)
        self._in_extra[:] = False
        self.changes["combine"] += 1

    def filter(self, keep: np.ndarray) -> None:
        """Keep only the entries of ``keep`` (a subset of ``kept``)."""
        r = self.rows
        self.rows = None  # the parts are filtered in place
        base = filter_rows(r.indptr, r.indices, keep)
        extra = filter_rows(r.extra_indptr, r.extra_indices, keep)
        del r
        self.rows = Rows(base[0], base[1], extra[0], extra[1])
        self.kept = keep.copy()
        self._in_extra &= keep
        self.changes["filter"] += 1


@dataclass
class RoundResult:
    """What a block of rows returns each round: the gap counts (AP), its best pool rows (keys, global
    rows) and their features (compact ids, concatenated; ``feature_ptr`` delimits them)."""

    counts: np.ndarray | None
    top_keys: np.ndarray
    top_rows: np.ndarray
    features: np.ndarray
    feature_ptr: np.ndarray


class RoundEngine:
    """The rounds of one task over a block of rows ``B`` (presence pattern, original feature ids).

    ``row_base`` is the global id of B's first row; ``kind`` says what each row is (kernel.POOL, ...).
    ``positive_rows`` (global ids, ascending) and ``positive_local`` (their rows in B, which may be extra
    rows appended after the block's own, ``n_own`` of them) give the positives' keys. Row blocks of
    about equal non-zeros run in ``n_threads`` threads."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, weights: TaskWeights, columns: ColumnIndex,
                 kind: np.ndarray, positive_rows: np.ndarray, positive_local: np.ndarray, row_base: int = 0,
                 n_own: int | None = None, pool_size: int | None = None, n_threads: int = 1):
        self.indptr, self.indices = indptr, indices
        self.weights, self.spec = weights, weights.spec
        self.kind = kind
        self.row_base = int(row_base)
        self.n_own = len(kind) if n_own is None else int(n_own)
        self.positive_rows = np.ascontiguousarray(positive_rows, dtype=np.int64)
        self.positive_local = np.ascontiguousarray(positive_local, dtype=np.int64)
        self.sub = RestrictedRows(indptr, indices, columns, weights.compact, weights.feature)
        # the whole pool's size (a partition's own pool is part of it)
        self.pool_left = int(np.sum(kind[:self.n_own] == POOL)) if pool_size is None else int(pool_size)
        self.rounds = 0
        n_threads = max(1, int(n_threads))
        cuts = np.searchsorted(indptr[:self.n_own + 1], np.linspace(0, indptr[self.n_own], n_threads + 1)[1:-1])
        bounds = np.unique(np.r_[0, np.clip(cuts, 0, self.n_own), self.n_own])
        self.blocks = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        self.executor = ThreadPoolExecutor(len(self.blocks) - 1) if len(self.blocks) > 1 else None

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()

    # ------------------------------------------------------------------ the rows the sums run over

    def _ensure(self, active: np.ndarray) -> None:
        sub = self.sub
        if sub.changes["build"] == 0:
            later = (active | self.weights.about_to_gain_weight(self.pool_left)) if self.rounds else active
            sub.build(later)
            return
        missing = active & ~sub.kept
        if missing.any():
            later = self.weights.about_to_gain_weight(self.pool_left)
            sub.add(np.flatnonzero((later | active) & ~sub.kept))
        elif self.rounds % _FILTER_EVERY == 0:
            needed = active | self.weights.about_to_gain_weight(self.pool_left)
            held, wanted = sub.nnz_of(np.flatnonzero(sub.kept)), sub.nnz_of(np.flatnonzero(needed))
            if held > _FILTER_RATIO * wanted + _FILTER_SLACK:
                sub.filter(sub.kept & needed)

    # ------------------------------------------------------------------ rounds

    def _pass(self, order: PositiveOrder, count: bool, m: int) -> RoundResult:
        w = self.weights
        count_pool = count and self.spec.evaluate == "wts"
        sel = w.sel_offset if count else -1  # before round 1 block 0 holds the first scorer

        def run(block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            return round_pass(self.sub.rows, self.kind, w.vec, w.Fm, block[0], block[1], self.row_base, sel,
                              count_pool, count, order, m)

        if self.executor is None:
            parts = [run(b) for b in self.blocks]
        else:  # the first block in this thread, the others in the pool
            futures = [self.executor.submit(run, b) for b in self.blocks[1:]]
            parts = [run(self.blocks[0])] + [f.result() for f in futures]
        counts = np.sum([p[0] for p in parts], axis=0) if count else None
        keys = np.concatenate([p[1] for p in parts])
        rows = np.concatenate([p[2] for p in parts])
        best = np.lexsort((rows, -keys))[:m]
        return self._result(counts, keys[best], rows[best])

    def _result(self, counts: np.ndarray | None, keys: np.ndarray, rows: np.ndarray) -> RoundResult:
        local = rows - self.row_base
        where, ptr = segments(self.indptr[local], self.indptr[local + 1])
        feats = self.weights.compact[self.indices[where]]
        kept = feats >= 0
        before = np.zeros(len(feats) + 1, dtype=np.int64)
        np.cumsum(kept, out=before[1:])
        return RoundResult(counts, keys, rows, feats[kept].astype(np.int32), before[ptr])

    def first(self) -> RoundResult:
        """The first scorer's best pool rows (no AP before round 1)."""
        self._ensure(self.weights.initial_active())
        empty = positive_order(np.zeros(0), np.zeros(0, dtype=np.int64))
        return self._pass(empty, count=False, m=self.spec.step)

    def step(self, chosen: np.ndarray, changed: np.ndarray, increment: np.ndarray) -> RoundResult:
        """Move ``chosen`` (global rows; those of this block become STS negatives) into the STS, add
        their features' counts (``increment`` at compact ids ``changed``) and run the round."""
        local = np.asarray(chosen, dtype=np.int64) - self.row_base
        mine = local[(local >= 0) & (local < self.n_own)]
        self.kind[mine] = STS_NEGATIVE
        self.pool_left -= len(chosen)  # every block knows the whole pool's size
        self.rounds += 1
        w = self.weights
        w.add(changed, increment, len(chosen))
        active = w.update()
        self._ensure(active)
        keys = row_keys(self.sub.rows, self.positive_local, w.vec, 2 * w.Fm, w.Fm)
        order = positive_order(keys, self.positive_rows)
        return self._pass(order, count=True, m=self.spec.step if self.pool_left > 0 else 0)


def segments(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions ``starts[k]:ends[k]`` concatenated, and where each segment begins in them."""
    lengths = np.asarray(ends, dtype=np.int64) - np.asarray(starts, dtype=np.int64)
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return np.repeat(np.asarray(starts, dtype=np.int64) - ptr[:-1], lengths) + np.arange(int(ptr[-1])), ptr


def initial_kind(positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    kind = np.full(len(positive), NOT_TRAINING, dtype=np.uint8)
    kind[negative & ~positive] = POOL
    kind[positive] = POSITIVE
    return kind
