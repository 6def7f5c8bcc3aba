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
* Each kind of row reads one block of weights and has its own restricted rows (``RoundEngine``): the pass
  visits only rows whose pattern is not empty (the others score 0 exactly and are counted together), one
  key per feature for the rows of one entry, the rest packed by pattern length (``kernel.packed_pass``),
  in threads: gap counts for the AP, the M best pool rows.

``RoundEngine`` holds all this for a block of rows; the search (``search.py``) drives one engine in one
process, or one per partition on a Dask cluster (``cluster.py``), with the same messages: the rows chosen
last round and the change of the counts.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from toolkit.plugins.ots.bim import (
    BIMCounts, bim_counts, bim_weights, feature_mask, restricted, smoothed_logit, thresholded,
)
from toolkit.plugins.ots.kernel import (
    NOT_TRAINING, POOL, POSITIVE, STS_NEGATIVE, PositiveOrder, Rows, column_index, filter_rows, first_empty,
    gather_columns, merge_rows, positive_order, restrict_rows, round_weights_at, row_keys, HELD_PACKED, HELD_SINGLE, HELD_TAIL, N_CLASSES, N_PACK, PackedRows, SingleRows,
    VisitRows, class_pass, nonempty_rows, pack_rows, packed_pass, single_pass, touch_rows,
)
from toolkit.plugins.ots.leave_one_out import loo_smoothed_logit

__all__ = ["ColumnIndex", "TaskSpec", "TaskWeights", "RestrictedRows", "RoundEngine", "RoundResult", "LOOKAHEAD",
           "segments"]

LOOKAHEAD = 75  # rounds: features predicted to gain weight this soon enter the restricted rows together
_FILTER_EVERY = 64  # rounds between checks whether the restricted rows hold many features no longer needed
# the restricted rows are filtered when they hold more than _FILTER_RATIO x the entries needed + _FILTER_SLACK:
# every pass reads them all, and a feature filtered out too early comes back by a cheap gather
_FILTER_SLACK = 100_000
_FILTER_RATIO = 1.2
# the extra part joins the base when it exceeds this and a 16th of the base: every pass merges the parts
# row by row, which costs more than the sum itself when many rows have entries in both
_COMBINE_MIN = 100_000
_COMBINE_SHARE = 16
# rows whose pattern changed since their block was packed (the tail) are visited in the restricted rows
# themselves, scattered reads that cost about _TAIL_COST times a packed row's share of a repack (one linear
# pass over the block's rows): a block is packed again once the tail rows visited since its last packing
# exceed the block's rows / _TAIL_COST (the tail's cost then equals a repack's), or when the tail alone
# exceeds _TAIL_MIN rows and the block's rows / _TAIL_SHARE
_TAIL_COST = 6
_PACK_MAX_NNZ = 8_000_000  # restricted rows larger than this are not packed (memory: no second copy)
_TAIL_MIN = 50_000
_TAIL_SHARE = 8


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

    def rows_of(self, features: np.ndarray, ids: np.ndarray, n_rows: int, parts: int = 1,
                run: Callable[[list], list] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The row-major pattern (``n_rows`` rows) of ``features`` (ascending), renumbered ``ids`` (in
        ``parts`` row ranges called by ``run``)."""
        colptr, rows = self._build()
        return gather_columns(colptr, rows, features, ids, n_rows, parts, run)


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
        # features="all": every column, the features of the whole training set when the search covers the
        # corpus (a column in no training row is never read); the positives' counts alone cannot tell more
        mask = feature_mask(pc, "positive") if spec.features == "positive" else None
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
        # a feature without weight keeps none while N <= safe_until (and its n stays): its weights are not
        # recomputed until then (then w_sts, ... are stale for it: the forecast refreshes them first)
        self.safe_until = np.full(Fm, -np.inf)
        self._stale = False

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
        self.safe_until[changed] = -np.inf

    def update(self) -> np.ndarray:
        """This round's vector; returns the features with a weight in any block."""
        alpha = self.spec.alpha
        at = np.flatnonzero(self.safe_until < self.N)  # the others surely keep no weight (their vec stays 0)
        log_rest = np.log(np.maximum(self.N - self.n[at], 0.0) + alpha)  # log(max(N - n, 0) + a)
        active = self._active
        round_weights_at(self.lp, self.llp, self.log_na, self.log_n1a, at, log_rest, self.spec.tau, self.N, alpha,
                         self.vec, self.w_sts, self.w_loo_neg, self.w_loo_pos, active, self.safe_until)
        self._stale = len(at) < self.Fm
        if self.spec.scorer == "wts_fixed":
            active = active | (self.v0 != 0)
        return active

    def _refresh(self) -> None:
        """The unthresholded weights of every feature at this N (update skips the features that surely
        have none): the same operations as update's."""
        if not self._stale:
            return
        log_rest = np.log(np.maximum(self.N - self.n, 0.0) + self.spec.alpha)
        logit_q = self.log_na - log_rest
        np.subtract(self.lp, logit_q, out=self.w_sts)
        np.subtract(self.lp, self.log_n1a - log_rest, out=self.w_loo_neg)
        np.subtract(self.llp, logit_q, out=self.w_loo_pos)
        self._stale = False

    def initial_active(self) -> np.ndarray:
        return self.v0 != 0

    def about_to_gain_weight(self, left: int, block: int | None = None) -> np.ndarray:
        """Features without weight that may gain one soon, so that they enter the restricted rows
        together. With n fixed every weight rises with N, by log((N' - n + a)/(N - n + a)) over the
        documents of the next ``LOOKAHEAD`` rounds; one more added negative containing t lowers its
        weights by at most log((n + a)/(n - 1 + a)), which is forecast for the features already in an STS
        negative (a feature in none gains its first rarely, and is added when it does). Only a forecast:
        a feature that gains weight unforeseen is added then; the sums never miss a weight."""
        alpha, tau = self.spec.alpha, self.spec.tau
        self._refresh()
        if block is None:  # any block
            highest = np.maximum(np.maximum(self.w_sts, self.w_loo_neg), self.w_loo_pos)
            lowest = np.minimum(np.minimum(self.w_sts, self.w_loo_neg), self.w_loo_pos)
        else:
            highest = lowest = (self.w_sts, self.w_loo_neg, self.w_loo_pos)[block]
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
        self.parts, self.run = 1, None  # the engine's threads, for the passes over row ranges

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
        extra_indptr, extra_indices = self.columns.rows_of(self.feature[in_extra], in_extra, self.n_rows,
                                                           self.parts, self.run)
        self.rows = Rows(self.rows.indptr, self.rows.indices, extra_indptr, extra_indices)
        self.kept[features] = True
        self._in_extra[in_extra] = True
        self.changes["add"] += 1
        if len(extra_indices) > max(len(self.rows.indices) // _COMBINE_SHARE, _COMBINE_MIN):
            self._combine()

    def _combine(self) -> None:
        """Move the extra part into the base (a linear merge of two sorted patterns)."""
        indptr, indices = merge_rows(self.rows, self.parts, self.run)
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
    rows appended after the block's own, ``n_own`` of them) give the positives' keys. The visited rows
    are split into ``n_threads`` parts of about equal size.

    Each kind of row reads one block of weights, so each has its own restricted rows: the pool rows'
    (``sub0``, the features with an STS weight), the STS negatives' (``sub1``, those with a leave-one-out
    weight of negatives) and the positives' (``sub2``, over the positives' rows only). A pass visits only
    the pool rows and STS negatives whose pattern holds an entry (``packed0``, ``single0``; ``packed1``, ``single1`` and ``tail1``); every other
    one has the score 0 exactly (a sum of nothing), so they are counted together: at the gap of key 0,
    or row by row when a positive's key is 0 too (ties go by row), and the first of them by row are the
    pool's candidates when the M best keys reach 0."""

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, weights: TaskWeights, columns: ColumnIndex,
                 kind: np.ndarray, positive_rows: np.ndarray, positive_local: np.ndarray, row_base: int = 0,
                 n_own: int | None = None, pool_size: int | None = None, n_threads: int = 1):
        self.indptr, self.indices = indptr, indices
        self.weights, self.spec = weights, weights.spec
        self.kind = kind
        self.row_base = int(row_base)
        self.n_own = len(kind) if n_own is None else int(n_own)
        self.own_kind = kind[:self.n_own]  # a view: rows chosen change it
        self.positive_rows = np.ascontiguousarray(positive_rows, dtype=np.int64)
        self.positive_local = np.ascontiguousarray(positive_local, dtype=np.int64)
        self.sub0 = RestrictedRows(indptr, indices, columns, weights.compact, weights.feature)
        self.sub1 = RestrictedRows(indptr, indices, columns, weights.compact, weights.feature)
        where, ptr = segments(indptr[self.positive_local], indptr[self.positive_local + 1])
        pos_indices = np.ascontiguousarray(indices[where], dtype=np.int32)
        self.sub2 = RestrictedRows(ptr, pos_indices, ColumnIndex(ptr, pos_indices, len(weights.compact)),
                                   weights.compact, weights.feature)
        self._all_positives = np.arange(len(self.positive_local), dtype=np.int64)
        self._perm = self._all_positives.copy()  # the positives' last order (a first guess for the next)
        # the whole pool's size (a partition's own pool is part of it)
        self.n_pool_own = int(np.sum(self.own_kind == POOL))
        self.n_sts_own = int(np.sum(self.own_kind == STS_NEGATIVE))
        self.pool_left = self.n_pool_own if pool_size is None else int(pool_size)
        self.rounds = 0
        self.n_threads = max(1, int(n_threads))
        self.executor = ThreadPoolExecutor(self.n_threads - 1) if self.n_threads > 1 else None
        for sub in (self.sub0, self.sub1):
            sub.parts, sub.run = self.n_threads, self._run
        nothing = np.zeros(0, dtype=np.int64)
        self.packed0 = self.packed1 = PackedRows(nothing, np.zeros(N_PACK + 1, dtype=np.int64), np.zeros(0, np.int32),
                                                 np.zeros(N_PACK + 1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                                                 np.zeros(0, dtype=np.uint8), np.full(len(kind), -1, dtype=np.int32))
        self.single0 = self.single1 = SingleRows(np.zeros(weights.Fm + 1, dtype=np.int64), nothing,
                                                 np.zeros(weights.Fm, dtype=np.int64))
        # rows whose pattern changed since their block was packed (features added, new STS negatives): visited
        # in the restricted rows themselves (class_pass); state says where each row is held (HELD_...)
        self.tail0 = self.tail1 = nothing
        self._tail_work = [0, 0]  # tail rows visited since each block was packed
        self.state0 = np.zeros(len(kind), dtype=np.uint8)
        self.state1 = np.zeros(len(kind), dtype=np.uint8)
        self._empty_from = 0  # no empty pool row (sub0) below this row

    @property
    def changes(self) -> dict[str, int]:
        """How often the restricted rows were built, added to, combined and filtered (all kinds)."""
        return {k: self.sub0.changes[k] + self.sub1.changes[k] + self.sub2.changes[k] for k in self.sub0.changes}

    def close(self) -> None:
        if self.executor is not None:
            self.executor.shutdown()

    # ------------------------------------------------------------------ the rows the sums run over

    def _ensure(self, sub: RestrictedRows, active: np.ndarray, block: int) -> bool | str:
        """Make ``sub`` hold every feature of ``active``; "added" when features were added (the rows they
        touch are in the tail), True when the patterns changed otherwise (built or filtered)."""
        w = self.weights
        if sub.changes["build"] == 0:
            later = (active | w.about_to_gain_weight(self.pool_left, block)) if self.rounds else active
            sub.build(later)
            return True
        missing = active & ~sub.kept
        if missing.any():
            later = w.about_to_gain_weight(self.pool_left, block)
            features = np.flatnonzero((later | active) & ~sub.kept)
            if sub is not self.sub2:
                self._touch(sub, features)
            sub.add(features)
            return "added"
        # in the first rounds the weights of most features fall below the threshold quickly: checked more often
        every = _FILTER_EVERY if self.rounds >= 2 * _FILTER_EVERY else max(1, _FILTER_EVERY // 16)
        if self.rounds % every == 0:
            needed = active | w.about_to_gain_weight(self.pool_left, block)
            held, wanted = sub.nnz_of(np.flatnonzero(sub.kept)), sub.nnz_of(np.flatnonzero(needed))
            if held > _FILTER_RATIO * wanted + _FILTER_SLACK:
                sub.filter(sub.kept & needed)
                return True
        return False

    def _leave_singles(self, mine: np.ndarray) -> None:
        """Rows ``mine`` leave the pool: lower their features' live counts among the pool's single rows
        (the rows of one entry of sub0 as classified last, all pool rows then)."""
        if len(mine) == 0:
            return
        self._leave_group(self.sub0, self.single0, mine[self.state0[mine] == HELD_SINGLE])
        self.packed0.leave(mine[self.state0[mine] == HELD_PACKED])
        self.state0[mine] = 0

    def _repack_due(self, block: int) -> bool:
        """Whether block 0 (pool) or 1 (STS) should be packed again for its tail (``_TAIL_COST``)."""
        if (self.sub0 if block == 0 else self.sub1).rows.nnz > _PACK_MAX_NNZ:
            return False  # packed once filtered
        tail = self.tail0 if block == 0 else self.tail1
        self._tail_work[block] += len(tail)
        return (self._tail_work[block] * _TAIL_COST > self.n_own
                or len(tail) > max(_TAIL_MIN, self.n_own // _TAIL_SHARE))

    def _ensure_pool(self, active: np.ndarray) -> None:
        changed = self._ensure(self.sub0, active, 0)
        if changed == "added":
            self._empty_from = 0
        if changed is True or self._repack_due(0):
            self.packed0, self.single0, self.tail0 = self._pack(self.sub0, POOL, self.state0)
            self._tail_work[0] = 0
            self._empty_from = 0

    def _pack(self, sub: RestrictedRows, k: int, state: np.ndarray) -> tuple[PackedRows, SingleRows, np.ndarray]:
        """The rows of kind ``k`` packed from ``sub`` (and no tail); while ``sub`` holds more than
        ``_PACK_MAX_NNZ`` entries (the first rounds, when nearly every feature has weight) a packed copy
        would double them: then every row with an entry is in the tail instead."""
        F = self.weights.Fm
        if sub.rows.nnz <= _PACK_MAX_NNZ:
            packed, single = pack_rows(sub.rows, self.own_kind, k, F, state[:self.n_own], self.n_threads, self._run)
            return packed, single, np.zeros(0, dtype=np.int64)
        rows = nonempty_rows(sub.rows, self.own_kind, k)
        state[:] = 0
        state[rows] = HELD_TAIL
        n = len(state)
        nothing = np.zeros(0, dtype=np.int64)
        packed = PackedRows(nothing, np.zeros(N_PACK + 1, dtype=np.int64), np.zeros(0, np.int32),
                            np.zeros(N_PACK + 1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                            np.zeros(0, dtype=np.uint8), np.full(n, -1, dtype=np.int32))
        single = SingleRows(np.zeros(F + 1, dtype=np.int64), nothing, np.zeros(F, dtype=np.int64))
        return packed, single, rows

    def _touch(self, sub: RestrictedRows, features: np.ndarray) -> None:
        """Before ``features`` (compact ids) join ``sub`` (sub0 or sub1): the rows of its kind that contain
        one of them leave their packed class or feature group for the tail."""
        if sub is self.sub0:
            state, single, k = self.state0, self.single0, POOL
        else:
            state, single, k = self.state1, self.single1, STS_NEGATIVE
        colptr, colrows = sub.columns._build()
        rows, singles, packed = touch_rows(colptr, colrows, self.weights.feature[features], self.kind, k,
                                           state[:self.n_own])
        if len(rows) == 0:
            return
        self._leave_group(sub, single, singles)
        (self.packed0 if sub is self.sub0 else self.packed1).leave(packed)
        # touch_rows finds the rows column by column, in no row order; the passes read each tail row's
        # pointers and entries, so in row order they read memory in sequence (a tail of 1M rows in column
        # order cost 3-4x as much to visit in the first rounds)
        rows = np.sort(rows)
        if sub is self.sub0:
            self.tail0 = np.concatenate([self.tail0, rows])
        else:
            self.tail1 = np.concatenate([self.tail1, rows])

    @staticmethod
    def _leave_group(sub: RestrictedRows, single: SingleRows, rows: np.ndarray) -> None:
        """Rows held as one-feature rows leave their group: lower its live count (their feature is the one
        entry of their pattern in ``sub``)."""
        r = sub.rows
        base = r.indptr[rows + 1] - r.indptr[rows]
        in_base, in_extra = rows[base == 1], rows[base == 0]
        np.subtract.at(single.live, r.indices[r.indptr[in_base]].astype(np.int64), 1)
        np.subtract.at(single.live, r.extra_indices[r.extra_indptr[in_extra]].astype(np.int64), 1)

    # ------------------------------------------------------------------ rounds

    def _parts(self, n: int) -> list[tuple[int, int]]:
        cuts = np.linspace(0, n, self.n_threads + 1).astype(np.int64)  # rows of about equal cost
        return list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))

    def _pass(self, order: PositiveOrder, count: bool, m: int) -> RoundResult:
        w = self.weights
        count_pool = count and self.spec.evaluate == "wts"
        sel = w.sel_offset if count else -1  # before round 1 block 0 holds the first scorer
        v0, v1 = self.packed0, self.packed1
        r0, r1 = self.sub0.rows, self.sub1.rows
        st0, st1 = self.state0, self.state1
        tail0 = VisitRows(self.tail0, np.r_[np.zeros(N_CLASSES, dtype=np.int64), len(self.tail0)])  # any pattern
        tail1 = VisitRows(self.tail1, np.r_[np.zeros(N_CLASSES, dtype=np.int64), len(self.tail1)])

        s0, s1 = self.single0, self.single1

        P = len(order.keys)

        def run(p0: tuple[int, int], p1: tuple[int, int], f0: tuple[int, int], f1: tuple[int, int],
                t0: tuple[int, int], t1: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
            c = np.zeros(P + 1, dtype=np.int64)  # every call adds its counts to it
            _, keys, rows, n0 = packed_pass(v0, st0, w.vec, w.Fm, 0, len(v0), self.row_base, sel, count_pool,
                                            POOL, order, m, counts=c, part=p0)
            _, skeys, srows, ns = single_pass(s0, st0, w.vec, w.Fm, f0[0], f0[1], self.row_base, sel, count_pool,
                                              POOL, order, m, counts=c, by_group=True)
            n0 += ns
            parts_k, parts_r = [keys, skeys], [rows, srows]
            if t0[1] > t0[0]:
                _, tkeys, trows, nt = class_pass(r0, st0, w.vec, w.Fm, tail0, t0[0], t0[1], self.row_base, sel,
                                                 count_pool, POOL, order, m, HELD_TAIL, counts=c)
                n0 += nt
                parts_k.append(tkeys)
                parts_r.append(trows)
            n1 = 0
            if count:
                _, _, _, n1 = packed_pass(v1, st1, w.vec, w.Fm, 0, len(v1), self.row_base, -1, False,
                                          STS_NEGATIVE, order, 0, counts=c, part=p1)
                if t1[1] > t1[0]:
                    n1 += class_pass(r1, st1, w.vec, w.Fm, tail1, t1[0], t1[1], self.row_base, -1, False,
                                     STS_NEGATIVE, order, 0, HELD_TAIL, counts=c)[3]
                n1 += single_pass(s1, st1, w.vec, w.Fm, f1[0], f1[1], self.row_base, -1, False, STS_NEGATIVE, order,
                                  0, counts=c, by_group=True)[3]
            return c, np.concatenate(parts_k), np.concatenate(parts_r), n0, n1

        k = self.n_threads
        jobs = list(zip([(i, k) for i in range(k)], [(i, k) for i in range(k)], self._parts(len(s0.features)),
                        self._parts(len(s1.features)), self._parts(len(self.tail0)), self._parts(len(self.tail1))))
        if self.executor is None:
            parts = [run(*j) for j in jobs]
        else:  # the first part in this thread, the others in the pool
            futures = [self.executor.submit(run, *j) for j in jobs[1:]]
            parts = [run(*jobs[0])] + [f.result() for f in futures]
        counts = parts[0][0]
        for p in parts[1:]:
            counts += p[0]
        keys = np.concatenate([p[1] for p in parts])
        rows = np.concatenate([p[2] for p in parts])
        n_pool_empty = self.n_pool_own - sum(p[3] for p in parts)
        n_sts_empty = self.n_sts_own - sum(p[4] for p in parts)
        if count:
            self._count_empty(counts, order, n_pool_empty if count_pool else 0, n_sts_empty, count_pool)
        if m > 0 and n_pool_empty > 0 and (len(keys) < m or np.sort(keys)[-m] <= 0):
            # the pool rows of score 0 (key 0) rank before the negative keys: the first of them by row
            empty = first_empty(self.sub0.rows, self.own_kind, POOL, self._empty_from, m)
            self._empty_from = int(empty[0]) if len(empty) else self.n_own
            keys = np.concatenate([keys, np.zeros(len(empty))])
            rows = np.concatenate([rows, self.row_base + empty])
        best = np.lexsort((rows, -keys))[:m]
        return self._result(counts if count else None, keys[best], rows[best])

    def _count_empty(self, counts: np.ndarray, order: PositiveOrder, n_pool: int, n_sts: int,
                     count_pool: bool) -> None:
        """The gap counts of the rows of score 0 that no pass visited."""
        if n_pool + n_sts == 0:
            return
        neg_keys = -order.keys  # ascending
        above = int(np.searchsorted(neg_keys, 0.0, side="left"))  # positives with a key > 0
        tied = int(np.searchsorted(neg_keys, 0.0, side="right")) - above
        if tied == 0:
            counts[above] += n_pool + n_sts
            return
        # positives of key 0 rank before the rows of key 0 with a higher row: row by row
        empty = []
        if count_pool:
            empty.append(first_empty(self.sub0.rows, self.own_kind, POOL, 0, n_pool))
        empty.append(first_empty(self.sub1.rows, self.own_kind, STS_NEGATIVE, 0, n_sts))
        rows = self.row_base + np.concatenate(empty)
        gaps = above + np.searchsorted(order.rows[above:above + tied], rows, side="left")
        counts += np.bincount(gaps, minlength=len(counts)).astype(np.int64)

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
        self._ensure_pool(self.weights.initial_active())
        empty = positive_order(np.zeros(0), np.zeros(0, dtype=np.int64))
        return self._pass(empty, count=False, m=self.spec.step)

    def step(self, chosen: np.ndarray, changed: np.ndarray, increment: np.ndarray) -> RoundResult:
        """Move ``chosen`` (global rows; those of this block become STS negatives) into the STS, add
        their features' counts (``increment`` at compact ids ``changed``) and run the round."""
        local = np.asarray(chosen, dtype=np.int64) - self.row_base
        mine = local[(local >= 0) & (local < self.n_own)]
        self._leave_singles(mine)
        self.kind[mine] = STS_NEGATIVE
        self.n_pool_own -= len(mine)
        self.n_sts_own += len(mine)
        self.pool_left -= len(chosen)  # every block knows the whole pool's size
        self.rounds += 1
        w = self.weights
        w.add(changed, increment, len(chosen))
        w.update()
        F = w.Fm
        # the positives' keys and order need only sub2 and block 2 of the weights: computed in the pool's
        # thread while this one brings sub0 and sub1 up to date (nothing they change is read there)
        self._ensure(self.sub2, w.vec[2 * F:3 * F] != 0, 2)
        ordering = self._positive_order if self.executor is None else self.executor.submit(self._positive_order)
        active0 = w.vec[:F] != 0
        if self.spec.scorer == "wts_fixed":
            active0 |= w.v0 != 0
        self._ensure_pool(active0)
        if len(mine) and self.sub1.changes["build"]:  # the new STS negatives: in the tail until sub1 is packed again
            r = self.sub1.rows
            full = mine[(r.indptr[mine + 1] > r.indptr[mine]) | (r.extra_indptr[mine + 1] > r.extra_indptr[mine])]
            self.state1[full] = HELD_TAIL
            self.tail1 = np.concatenate([self.tail1, np.sort(full)])
        changed1 = self._ensure(self.sub1, w.vec[F:2 * F] != 0, 1)
        if changed1 is True or self._repack_due(1):
            self.packed1, self.single1, self.tail1 = self._pack(self.sub1, STS_NEGATIVE, self.state1)
            self._tail_work[1] = 0
        order = ordering() if self.executor is None else ordering.result()
        return self._pass(order, count=True, m=self.spec.step if self.pool_left > 0 else 0)

    def _run(self, calls: list) -> list:
        """Call ``calls`` (functions of no argument), the first in this thread and the others in the pool."""
        if self.executor is None or len(calls) < 2:
            return [c() for c in calls]
        futures = [self.executor.submit(c) for c in calls[1:]]
        return [calls[0]()] + [f.result() for f in futures]

    def _positive_order(self) -> PositiveOrder:
        """The positives' keys under their leave-one-out weights (block 2), in rank order."""
        w = self.weights
        keys = row_keys(self.sub2.rows, self._all_positives, w.vec, 2 * w.Fm, w.Fm)
        return positive_order(keys, self.positive_rows, self._perm)


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
