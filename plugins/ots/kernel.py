"""One OTS round over a block of rows: tie keys, the counts the whole-training-set AP needs, the pool's best rows.

A round ranks every training document (algorithms.md 4.1 step 3c) and picks the M best pool documents
(step 3b). Neither needs a sorted list of all documents:

* the AP needs only each positive's rank (algorithms.md 5.2.3). With the positives sorted by (key
  descending, row ascending), a negative ranks before exactly the positives after its *gap*: the number of
  positives that rank before it. ``counts[j]`` is the number of negatives in gap j, and positive i (0-based,
  in that order) has rank ``i + 1 + counts[0] + ... + counts[i]``. Counts from row blocks add up, so the
  blocks can run in threads or on other machines.
* the M best pool rows of the whole corpus are among the M best of each block.

A document's score is the sum of its features' weights in column order, exactly the sum a CSR product
forms (entries of weight 0 add nothing), so the keys are those of the plain computation to the last bit.
The matrix comes in two parts whose columns are disjoint, a base and a small extra part, merged by column
as the sum runs: features that gain a weight go into the extra part without rebuilding the base.

``round_pass`` runs the compiled kernel (``_rounds.c``) when it is built, else the same computation in
numpy (``_round_pass_numpy``; tests check that both agree with the plain product).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from toolkit.plugins.ots.leave_one_out import TIE_DECIMALS

try:
    from toolkit.plugins.ots import _rounds
except ImportError:  # not built: the numpy path computes the same, slower
    _rounds = None

__all__ = ["NOT_TRAINING", "POOL", "STS_NEGATIVE", "POSITIVE", "Rows", "PositiveOrder", "positive_order",
           "round_pass", "visit_pass", "class_pass", "single_pass", "SingleRows", "PackedRows", "pack_rows", "packed_pass", "HELD_PACKED", "HELD_SINGLE", "HELD_TAIL", "touch_rows", "VisitRows", "N_CLASSES", "nonempty_rows", "first_empty", "row_keys", "average_precision_from_counts", "merge_top", "compiled", "restrict_rows",
           "merge_rows", "filter_rows", "column_index", "gather_columns", "round_weights", "round_weights_at"]

# what a row is in the current round; a row's weights are block (kind - 1) of the weight vector
NOT_TRAINING, POOL, STS_NEGATIVE, POSITIVE = 0, 1, 2, 3


def compiled() -> bool:
    """Whether the compiled kernel is in use."""
    return _rounds is not None


@dataclass
class Rows:
    """A row-major pattern in two parts with disjoint columns (``extra`` may be empty): int64 row
    pointers, int32 column indices, sorted within each row."""

    indptr: np.ndarray
    indices: np.ndarray
    extra_indptr: np.ndarray
    extra_indices: np.ndarray

    @classmethod
    def of(cls, indptr: np.ndarray, indices: np.ndarray) -> Rows:
        n = len(indptr) - 1
        return cls(np.ascontiguousarray(indptr, dtype=np.int64), np.ascontiguousarray(indices, dtype=np.int32),
                   np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32))

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1] + self.extra_indptr[-1])

    def as_csr(self, n_columns: int) -> sp.csr_matrix:
        """The union of both parts as one CSR pattern (sorted indices)."""
        shape = (self.n_rows, n_columns)
        base = sp.csr_matrix((np.ones(len(self.indices)), self.indices, self.indptr), shape=shape)
        if self.extra_indptr[-1] == 0:
            return base
        extra = sp.csr_matrix((np.ones(len(self.extra_indices)), self.extra_indices, self.extra_indptr), shape=shape)
        out = (base + extra).tocsr()
        out.sort_indices()
        return out


@dataclass
class PositiveOrder:
    """The positives of a round in rank order (key descending, row ascending), and equal-width buckets
    over their key range: ``start[b]`` is the first position whose bucket is >= b."""

    keys: np.ndarray
    rows: np.ndarray
    start: np.ndarray
    kmax: float
    kmin: float
    scale: float


def positive_order(keys: np.ndarray, rows: np.ndarray, perm: np.ndarray | None = None) -> PositiveOrder:
    """Sort the positives' keys (``rows`` ascending, so a stable sort breaks ties by row) and bucket them.

    A key's bucket is ``int((kmax - key) * scale)``: the float operations are monotone, so a positive in a
    lower bucket than a row's has a strictly higher key, one in a higher bucket a strictly lower key; only
    the positives that share the row's bucket are compared one by one (binary search). ``perm`` (the last
    round's order, updated in place) is a first guess for the compiled sort; the result does not depend
    on it."""
    P = len(keys)
    if _rounds is not None and P > 0:
        if perm is None:
            perm = np.arange(P, dtype=np.int64)
        k, r = np.empty(P), np.empty(P, dtype=np.int64)
        start = np.empty(8 * P + 2, dtype=np.int32)
        kmax, kmin, scale = _rounds.order_positives(np.ascontiguousarray(keys, dtype=np.float64),
                                                    np.ascontiguousarray(rows, dtype=np.int64), perm, k, r, start)
        return PositiveOrder(k, r, start, kmax, kmin, scale)
    order = np.argsort(-keys, kind="stable")
    k, r = np.ascontiguousarray(keys[order]), np.ascontiguousarray(rows[order], dtype=np.int64)
    P = len(k)
    if P == 0:
        return PositiveOrder(k, r, np.zeros(2, dtype=np.int32), 0.0, 0.0, 0.0)
    kmax, kmin = float(k[0]), float(k[-1])
    n_buckets = 8 * P + 1  # most buckets then hold no positive: one look-up, no search
    scale = n_buckets / (kmax - kmin) if kmax > kmin else 0.0
    buckets = np.minimum(((kmax - k) * scale).astype(np.int64), n_buckets - 1)
    start = np.zeros(n_buckets + 1, dtype=np.int32)  # positives in lower buckets: a running count
    np.cumsum(np.bincount(buckets, minlength=n_buckets), out=start[1:])
    return PositiveOrder(k, r, start, kmax, kmin, scale)


def row_keys(rows: Rows, which: np.ndarray, vec: np.ndarray, offset: int, F: int) -> np.ndarray:
    """Tie keys (round(score, 9)) of rows ``which`` under the weights ``vec[offset:offset + F]``."""
    which = np.ascontiguousarray(which, dtype=np.int64)
    if _rounds is not None:
        out = np.empty(len(which))
        _rounds.row_keys(rows.indptr, rows.indices, rows.extra_indptr, rows.extra_indices, which, vec, offset, F, out)
        return out
    M = rows.as_csr(F)[which]
    return np.round(M @ vec[offset:offset + F], TIE_DECIMALS)


def round_weights(lp: np.ndarray, llp: np.ndarray, log_na: np.ndarray, log_n1a: np.ndarray, log_rest: np.ndarray,
                  tau: float, vec: np.ndarray, w_sts: np.ndarray, w_loo_neg: np.ndarray, w_loo_pos: np.ndarray,
                  active: np.ndarray) -> None:
    """A round's weights from the cached logarithms (``rounds.TaskWeights``), written in place: the STS
    weight lp - (log_na - log_rest), the leave-one-out weights of negatives lp - (log_n1a - log_rest)
    and of positives llp - (log_na - log_rest), each thresholded into blocks 0-2 of ``vec``; ``active``
    (bool) says which feature has a weight in any block."""
    F = len(lp)
    if _rounds is not None:
        _rounds.weights(lp, llp, log_na, log_n1a, log_rest, float(tau), vec, w_sts, w_loo_neg, w_loo_pos,
                        active.view(np.uint8))
        return
    logit_q = log_na - log_rest
    np.subtract(lp, logit_q, out=w_sts)
    np.subtract(lp, log_n1a - log_rest, out=w_loo_neg)
    np.subtract(llp, logit_q, out=w_loo_pos)
    active[:] = False
    for block, w in enumerate((w_sts, w_loo_neg, w_loo_pos)):
        part = vec[block * F:(block + 1) * F]
        np.copyto(part, np.where(np.abs(w) > tau, w, 0.0))
        active |= part != 0


def round_weights_at(lp: np.ndarray, llp: np.ndarray, log_na: np.ndarray, log_n1a: np.ndarray, at: np.ndarray,
                     log_rest: np.ndarray, tau: float, N: float, alpha: float, vec: np.ndarray, w_sts: np.ndarray,
                     w_loo_neg: np.ndarray, w_loo_pos: np.ndarray, active: np.ndarray, safe_until: np.ndarray) -> None:
    """``round_weights`` for the features ``at`` only (``log_rest[q]`` is feature ``at[q]``'s): the same
    values bit for bit there, every other entry kept. ``safe_until[t]`` (written for ``at``) is an N up to
    which feature t surely has no weight in any block while its count n does not change (-inf: none, or it
    has a weight): with n fixed its three weights rise with N by log((N' - n + a)/(N - n + a)) <=
    (N' - N)/(N - n + a), so it keeps none while that stays below its distance to tau, less a margin."""
    at = np.ascontiguousarray(at, dtype=np.int64)
    if _rounds is not None:
        _rounds.weights_at(lp, llp, log_na, log_n1a, at, np.ascontiguousarray(log_rest, dtype=np.float64), float(tau),
                           float(N), float(alpha), vec, w_sts, w_loo_neg, w_loo_pos, active.view(np.uint8),
                           safe_until)
        return
    F = len(lp)
    logit_q = log_na[at] - log_rest
    a = lp[at] - logit_q
    b = lp[at] - (log_n1a[at] - log_rest)
    c = llp[at] - logit_q
    w_sts[at], w_loo_neg[at], w_loo_pos[at] = a, b, c
    on = np.zeros(len(at), dtype=bool)
    for block, x in enumerate((a, b, c)):
        kept = np.where(np.abs(x) > tau, x, 0.0)
        vec[block * F + at] = kept
        on |= kept != 0
    active[at] = on
    room = tau - np.maximum(np.maximum(a, b), c)
    low = np.minimum(np.minimum(a, b), c) + tau
    margin = 1e-9
    ok = ~on & (room > margin) & (low > margin) & ~np.isnan(log_rest)
    safe_until[at] = np.where(ok, N + (room - margin) * 0.999 * np.exp(log_rest), -np.inf)


def round_pass(rows: Rows, kind: np.ndarray, vec: np.ndarray, F: int, lo: int, hi: int, row_base: int,
               sel_offset: int, count_pool: bool, count_sts: bool, order: PositiveOrder,
               m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over rows ``lo:hi``: the gap counts of the pool rows (if ``count_pool``) and STS negatives (if
    ``count_sts``), and the ``m`` best pool rows as (keys, global rows) in rank order. Pool rows read
    ``vec[0:F]`` (and are chosen by ``vec[sel_offset:sel_offset + F]`` when ``sel_offset >= 0``), STS
    negatives ``vec[F:2F]``. Global row = ``row_base`` + local row."""
    return visit_pass(rows, kind, vec, F, lo, hi, row_base, sel_offset, count_pool, count_sts, order, m)[:3]


def visit_pass(rows: Rows, kind: np.ndarray, vec: np.ndarray, F: int, lo: int, hi: int, row_base: int,
               sel_offset: int, count_pool: bool, count_sts: bool, order: PositiveOrder, m: int,
               visit: np.ndarray | None = None,
               visit_pool: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``round_pass`` over the rows ``visit[lo:hi]`` (local rows, ascending when pool rows are visited and
    ``m > 0``) instead of ``lo:hi`` when ``visit`` is given, visiting pool rows only if ``visit_pool``;
    also returns how many rows it visited (pool rows, and STS negatives when ``count_sts``)."""
    P = len(order.keys)
    counts = np.zeros(P + 1, dtype=np.int64)
    if _rounds is None:
        return _round_pass_numpy(rows, kind, vec, F, lo, hi, row_base, sel_offset, count_pool, count_sts, order, m,
                                 visit, visit_pool)
    top_keys = np.empty(m)
    top_rows = np.empty(m, dtype=np.int64)
    use = visit is not None
    n, visited = _rounds.round_pass(rows.indptr, rows.indices, rows.extra_indptr, rows.extra_indices, kind, vec, F,
                                    lo, hi, row_base, sel_offset, int(count_pool), int(count_sts), order.keys,
                                    order.rows, order.start, order.kmax, order.kmin, order.scale, m, counts,
                                    top_keys, top_rows, visit if use else _NO_ROWS, int(use), int(visit_pool))
    return counts, top_keys[:n], top_rows[:n], visited


_NO_ROWS = np.zeros(0, dtype=np.int64)
N_CLASSES = 5  # rows with 1, 2, 3, 4 entries in the base part only, then any other
HELD_PACKED, HELD_SINGLE, HELD_TAIL = 1, 2, 3  # where a pass finds a row (its state; 0: nowhere, score 0)


@dataclass
class VisitRows:
    """The rows a pass visits, grouped as ``class_pass`` reads them: ``rows[seg[c]:seg[c + 1]]`` hold
    the rows of ``c + 1`` entries (all in the base part) for c < 4, the others in the last group."""

    rows: np.ndarray
    seg: np.ndarray

    def __len__(self) -> int:
        return int(self.seg[-1])


@dataclass
class SingleRows:
    """The rows whose pattern is one feature (of the base part), grouped by it: feature f's rows are
    ``rows[ptr[f]:ptr[f + 1]]`` (ascending), ``live[f]`` of them still of the kind they were taken for
    (the caller lowers it when one changes kind)."""

    ptr: np.ndarray
    rows: np.ndarray
    live: np.ndarray

    def __post_init__(self) -> None:
        self.features = np.flatnonzero(self.live).astype(np.int64)  # the groups a pass visits
        self.front = self.ptr[:-1].copy()  # candidates are looked for from here (rows before it left)


def _segments(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.asarray(ends, dtype=np.int64) - np.asarray(starts, dtype=np.int64)
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return np.repeat(np.asarray(starts, dtype=np.int64) - ptr[:-1], lengths) + np.arange(int(ptr[-1])), ptr


def single_pass(singles: SingleRows, state: np.ndarray, vec: np.ndarray, F: int, flo: int, fhi: int, row_base: int,
                sel_offset: int, count_pool: bool, block_kind: int, order: PositiveOrder,
                m: int, want: int = HELD_SINGLE,
        counts: np.ndarray | None = None, by_group: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``class_pass`` for the rows of ``singles`` of the features ``flo:fhi`` (``singles.features[flo:fhi]`` if
    ``by_group``: the features that had rows when packed) whose ``state`` is ``want``
    (``live`` counts them): a row's score is its feature's weight (0 + w, the same sum), one key per
    feature."""
    P = len(order.keys)
    if _rounds is not None:
        counts = np.zeros(P + 1, dtype=np.int64) if counts is None else counts  # added to
        top_keys = np.empty(m)
        top_rows = np.empty(m, dtype=np.int64)
        n, visited = _rounds.single_pass(singles.ptr, singles.rows, singles.live, state, vec, F, flo, fhi, row_base,
                                         sel_offset, int(count_pool), int(block_kind), order.keys, order.rows,
                                         order.start, order.kmax, order.kmin, order.scale, m, counts, top_keys,
                                         top_rows, int(want), singles.features if by_group else None,
                                         singles.front)
        return counts, top_keys[:n], top_rows[:n], visited
    groups = singles.features[flo:fhi] if by_group else np.arange(flo, fhi)
    where, _ = _segments(singles.ptr[groups], singles.ptr[groups + 1])
    local = singles.rows[where]
    feats = np.repeat(groups, singles.ptr[groups + 1] - singles.ptr[groups])
    live = state[local] == want
    local, feats = local[live], feats[live]
    w = vec[F:2 * F] if block_kind == STS_NEGATIVE else vec[:F]
    keys = np.round(0.0 + w[feats], TIE_DECIMALS)
    glob = row_base + local
    counts = np.zeros(P + 1, dtype=np.int64) if counts is None else counts
    if block_kind == STS_NEGATIVE or count_pool:
        all_keys = np.concatenate([order.keys, keys])
        all_rows = np.concatenate([order.rows, glob])
        is_pos = np.r_[np.ones(P, dtype=bool), np.zeros(len(keys), dtype=bool)]
        ranked = np.lexsort((all_rows, -all_keys))
        counts += np.bincount(np.cumsum(is_pos[ranked])[~is_pos[ranked]], minlength=P + 1).astype(np.int64)
    if block_kind != POOL or m == 0:
        return counts, np.zeros(0), np.zeros(0, dtype=np.int64), len(local)
    sel = np.round(0.0 + vec[sel_offset:sel_offset + F][feats], TIE_DECIMALS) if sel_offset >= 0 else keys
    best = np.lexsort((glob, -sel))[:m]
    return counts, sel[best], glob[best], len(local)


N_PACK = 4  # packed classes: rows of 2, 3, 4 entries, then any other
PACK_ROWS_PER_PART = 65536  # the functions over row ranges give each thread at least this many rows


@dataclass
class PackedRows:
    """The rows a pass visits, their patterns copied in the order it reads them (``pack_rows``): class c
    (rows ``rows[seg[c]:seg[c + 1]]``) of rows of c + 2 entries at ``idx[ioff[c]:ioff[c + 1]]``, the last
    class of any length with row pointers ``gptr`` relative to ``ioff[N_PACK - 1]``."""

    rows: np.ndarray
    seg: np.ndarray
    idx: np.ndarray
    ioff: np.ndarray
    gptr: np.ndarray
    alive: np.ndarray  # uint8 per entry: 0 once its row left (chosen, or its pattern changed)
    pos: np.ndarray  # int32 per row of the block: its entry, or -1

    def __len__(self) -> int:
        return int(self.seg[-1])

    def leave(self, rows: np.ndarray) -> None:
        """Rows ``rows`` (held here) are no longer visited."""
        self.alive[self.pos[rows]] = 0

    def as_csr(self, F: int) -> sp.csr_matrix:
        """Row j of the result: the pattern of ``rows[j]``."""
        ptrs = [self.ioff[c] + (c + 2) * np.arange(self.seg[c + 1] - self.seg[c]) for c in range(N_PACK - 1)]
        n_g = int(self.seg[-1] - self.seg[-2])
        ptr = np.r_[np.concatenate(ptrs + [self.ioff[N_PACK - 1] + self.gptr[:n_g]]), self.ioff[-1]].astype(np.int64)
        return sp.csr_matrix((np.ones(len(self.idx[:self.ioff[-1]])), self.idx[:self.ioff[-1]], ptr),
                             shape=(len(self), F))


def pack_rows(rows: Rows, kind: np.ndarray, k: int, F: int, state: np.ndarray, parts: int = 1,
              run: Callable[[list[Callable[[], object]]], list[object]] | None = None) -> tuple[PackedRows, SingleRows]:
    """The rows of kind ``k`` whose pattern holds an entry: those of one entry as ``SingleRows``, the others
    packed (``PackedRows``), both parts of a pattern merged by column; ascending within each group.
    ``state`` (uint8, one per row) is set to HELD_SINGLE / HELD_PACKED for them, 0 for every other row.
    The compiled path cuts the rows into ``parts`` ranges, counted and then written by ``run`` (which calls
    a list of functions, in threads if it likes): each range starts writing where the ranges before it end,
    so the result is the same for any number of parts."""
    n = len(kind)
    seg = np.zeros(N_PACK + 1, dtype=np.int64)
    ioff = np.zeros(N_PACK + 1, dtype=np.int64)
    if _rounds is not None:
        run = run or _serially
        ranges = _row_ranges(n, parts)
        parts = len(ranges)
        size = np.zeros((parts, N_PACK), dtype=np.int64)
        ent = np.zeros((parts, N_PACK), dtype=np.int64)
        live = np.zeros((parts, F), dtype=np.int64)
        ip, ix, jp, jx = rows.indptr, rows.indices, rows.extra_indptr, rows.extra_indices
        run([partial(_rounds.pack_count, ip, ix, jp, jx, kind, int(k), lo, hi, size[j], ent[j], live[j])
             for j, (lo, hi) in enumerate(ranges)])
        np.cumsum(size.sum(axis=0), out=seg[1:])
        np.cumsum(ent.sum(axis=0), out=ioff[1:])
        sptr = np.zeros(F + 1, dtype=np.int64)
        np.cumsum(live.sum(axis=0), out=sptr[1:])
        # where each range starts: after the ranges before it, in every class and group
        before = lambda a: np.cumsum(a, axis=0) - a  # noqa: E731
        nxt = seg[:-1] + before(size)
        inext = ioff[:-1] + before(ent)
        ng = before(size[:, N_PACK - 1])
        cursor = sptr[:-1] + before(live)
        n_g = int(seg[-1] - seg[-2])
        out = np.empty(int(seg[-1]), dtype=np.int64)
        idx = np.empty(int(ioff[-1]), dtype=np.int32)
        gptr = np.empty(n_g + 1, dtype=np.int64)
        gptr[0] = 0
        srows = np.empty(int(sptr[-1]), dtype=np.int64)
        pos = np.empty(n, dtype=np.int32)
        run([partial(_rounds.pack_write, ip, ix, jp, jx, kind, int(k), lo, hi, nxt[j], inext[j], int(ng[j]), ioff,
                     cursor[j], out, idx, gptr, srows, state, pos) for j, (lo, hi) in enumerate(ranges)])
        return (PackedRows(out, seg, idx, ioff, gptr, np.ones(len(out), dtype=np.uint8), pos),
                SingleRows(sptr, srows, live.sum(axis=0)))
    csr = rows.as_csr(F)[:n]
    length = np.diff(csr.indptr)
    mine = (kind == k) & (length > 0)
    one = np.flatnonzero(mine & (length == 1))
    feats = csr.indices[csr.indptr[one]].astype(np.int64)
    live = np.bincount(feats, minlength=F).astype(np.int64)
    sptr = np.zeros(F + 1, dtype=np.int64)
    np.cumsum(live, out=sptr[1:])
    singles = SingleRows(sptr, one[np.argsort(feats, kind="stable")].astype(np.int64), live)
    many = np.flatnonzero(mine & (length > 1))
    state[:] = 0
    state[one] = HELD_SINGLE
    state[many] = HELD_PACKED
    cls = np.minimum(length[many], N_PACK + 1) - 2
    many = many[np.argsort(cls, kind="stable")]
    cls = np.sort(cls, kind="stable")
    seg[1:] = np.cumsum(np.bincount(cls, minlength=N_PACK))
    sub = csr[many]
    idx = sub.indices.astype(np.int32)
    ends = np.r_[0, np.cumsum(length[many])]
    ioff[1:] = ends[seg[1:]]
    gptr = (ends[seg[-2]:] - ends[seg[-2]]).astype(np.int64)
    pos = np.full(n, -1, dtype=np.int32)
    pos[many] = np.arange(len(many), dtype=np.int32)
    return PackedRows(many.astype(np.int64), seg, idx, ioff, gptr, np.ones(len(many), dtype=np.uint8), pos), singles


def touch_rows(colptr: np.ndarray, colrows: np.ndarray, features: np.ndarray, kind: np.ndarray, k: int,
               state: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows below ``len(state)`` of kind ``k`` holding one of ``features`` (columns of a column index)
    whose state is not HELD_TAIL yet: they become HELD_TAIL; returns them and those of them that were
    HELD_SINGLE and HELD_PACKED."""
    features = np.ascontiguousarray(features, dtype=np.int64)
    n = len(state)
    if _rounds is not None:
        cap = min(n, int((colptr[features + 1] - colptr[features]).sum()))
        out = np.empty(cap, dtype=np.int64)
        singles = np.empty(cap, dtype=np.int64)
        packed = np.empty(cap, dtype=np.int64)
        q, qs, qp = _rounds.touch_rows(colptr, colrows, features, kind, int(k), state, HELD_TAIL, out, singles, packed)
        return out[:q], singles[:qs], packed[:qp]
    starts, ends = colptr[features], colptr[features + 1]
    lengths = ends - starts
    ptr = np.r_[0, np.cumsum(lengths)]
    rows = colrows[np.repeat(starts - ptr[:-1], lengths) + np.arange(int(ptr[-1]))].astype(np.int64)
    rows = rows[rows < n]
    rows = np.unique(rows[(kind[rows] == k) & (state[rows] != HELD_TAIL)])
    singles = rows[state[rows] == HELD_SINGLE]
    packed = rows[state[rows] == HELD_PACKED]
    state[rows] = HELD_TAIL
    return rows, singles, packed


def _rank_numpy(keys: np.ndarray, glob: np.ndarray, sel: np.ndarray, counted: bool, choose: bool,
                order: PositiveOrder, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Counts and candidates of rows with ``keys`` (global rows ``glob``) by one sort with the positives."""
    P = len(order.keys)
    counts = np.zeros(P + 1, dtype=np.int64)
    if counted:
        all_keys = np.concatenate([order.keys, keys])
        all_rows = np.concatenate([order.rows, glob])
        is_pos = np.r_[np.ones(P, dtype=bool), np.zeros(len(keys), dtype=bool)]
        ranked = np.lexsort((all_rows, -all_keys))
        counts = np.bincount(np.cumsum(is_pos[ranked])[~is_pos[ranked]], minlength=P + 1).astype(np.int64)
    if not choose:
        return counts, np.zeros(0), np.zeros(0, dtype=np.int64), len(keys)
    best = np.lexsort((glob, -sel))[:m]
    return counts, sel[best], glob[best], len(keys)


def packed_pass(packed: PackedRows, state: np.ndarray, vec: np.ndarray, F: int, lo: int, hi: int, row_base: int,
                sel_offset: int, count_pool: bool, block_kind: int, order: PositiveOrder,
                m: int, want: int = HELD_PACKED,
        counts: np.ndarray | None = None, part: tuple[int, int] = (0, 1)) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                                  int]:
    """``class_pass`` over the packed rows ``packed.rows[lo:hi]`` still alive (``state`` and ``want`` are not
    read: ``packed.alive`` says it); with ``part``
    = (i, k) only the i-th of k equal parts of every class (parts of about equal cost for threads)."""
    if _rounds is not None:
        P = len(order.keys)
        counts = np.zeros(P + 1, dtype=np.int64) if counts is None else counts  # added to
        top_keys = np.empty(m)
        top_rows = np.empty(m, dtype=np.int64)
        n, visited = _rounds.packed_pass(packed.rows, packed.seg, packed.idx, packed.ioff, packed.gptr, packed.alive,
                                         vec,
                                         F, lo, hi, row_base, sel_offset, int(count_pool), int(block_kind),
                                         order.keys, order.rows, order.start, order.kmax, order.kmin, order.scale, m,
                                         counts, top_keys, top_rows, int(want), int(part[0]), int(part[1]))
        return counts, top_keys[:n], top_rows[:n], visited
    sel_rows = np.zeros(len(packed), dtype=bool)
    for c in range(N_PACK):
        a, b = int(packed.seg[c]), int(packed.seg[c + 1])
        sel_rows[a + (b - a) * part[0] // part[1]:a + (b - a) * (part[0] + 1) // part[1]] = True
    sel_rows[:lo] = False
    sel_rows[hi:] = False
    M = packed.as_csr(F)[sel_rows]
    local = packed.rows[sel_rows]
    live = packed.alive[sel_rows] != 0
    M, local = M[live], local[live]
    w = vec[F:2 * F] if block_kind == STS_NEGATIVE else vec[:F]
    keys = np.round(M @ w, TIE_DECIMALS)
    sel = np.round(M @ vec[sel_offset:sel_offset + F], TIE_DECIMALS) if sel_offset >= 0 else keys
    got = _rank_numpy(keys, row_base + local, sel, block_kind == STS_NEGATIVE or count_pool,
                      block_kind == POOL and m > 0, order, m)
    if counts is not None:
        counts += got[0]
        return (counts,) + got[1:]
    return got


def class_pass(rows: Rows, kind: np.ndarray, vec: np.ndarray, F: int, visit: VisitRows, lo: int, hi: int,
               row_base: int, sel_offset: int, count_pool: bool, block_kind: int, order: PositiveOrder,
               m: int, want: int | None = None,
        counts: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``visit_pass`` over the rows ``visit.rows[lo:hi]`` of kind ``block_kind`` only (POOL: counted if
    ``count_pool``, the ``m`` best as candidates; STS_NEGATIVE: counted), in the order of their groups;
    returns the counts, the candidates (keys, global rows) and how many rows it visited."""
    want = block_kind if want is None else want
    if _rounds is None:
        local = visit.rows[lo:hi]
        local = np.sort(local[kind[local] == want])
        kind = np.where(kind == want, block_kind, NOT_TRAINING).astype(np.uint8)
        if block_kind == POOL:
            got = _round_pass_numpy(rows, kind, vec, F, 0, len(local), row_base, sel_offset, count_pool, False, order,
                                    m, local, True)
        else:
            got = _round_pass_numpy(rows, kind, vec, F, 0, len(local), row_base, -1, False, True, order, 0, local,
                                    False)
        if counts is not None:
            counts += got[0]
            return (counts,) + got[1:]
        return got
    P = len(order.keys)
    counts = np.zeros(P + 1, dtype=np.int64) if counts is None else counts  # added to
    top_keys = np.empty(m)
    top_rows = np.empty(m, dtype=np.int64)
    n, visited = _rounds.class_pass(rows.indptr, rows.indices, rows.extra_indptr, rows.extra_indices, kind, vec, F,
                                    lo, hi, row_base, sel_offset, int(count_pool), int(block_kind), order.keys,
                                    order.rows, order.start, order.kmax, order.kmin, order.scale, m, counts,
                                    top_keys, top_rows, visit.rows, visit.seg, int(want))
    return counts, top_keys[:n], top_rows[:n], visited


def nonempty_rows(rows: Rows, kind: np.ndarray, k: int) -> np.ndarray:
    """The rows of kind ``k`` (ascending) whose pattern (both parts) holds an entry."""
    n = len(kind)
    if _rounds is not None:
        out = np.empty(n, dtype=np.int64)
        q = _rounds.nonempty_rows(rows.indptr, rows.extra_indptr, kind, int(k), out)
        return out[:q].copy()
    length = np.diff(rows.indptr[:n + 1]) + np.diff(rows.extra_indptr[:n + 1])
    return np.flatnonzero((kind == k) & (length > 0)).astype(np.int64)


def first_empty(rows: Rows, kind: np.ndarray, k: int, start: int, m: int) -> np.ndarray:
    """The first ``m`` rows from ``start`` on (ascending) of kind ``k`` whose pattern is empty."""
    n = len(kind)
    if _rounds is not None:
        out = np.empty(m, dtype=np.int64)
        q = _rounds.first_empty(rows.indptr, rows.extra_indptr, kind, int(k), int(start), out)
        return out[:q]
    length = np.diff(rows.indptr[:n + 1]) + np.diff(rows.extra_indptr[:n + 1])
    return (start + np.flatnonzero((kind[start:] == k) & (length[start:] == 0))[:m]).astype(np.int64)


def _round_pass_numpy(rows: Rows, kind: np.ndarray, vec: np.ndarray, F: int, lo: int, hi: int, row_base: int,
                      sel_offset: int, count_pool: bool, count_sts: bool, order: PositiveOrder,
                      m: int, visit: np.ndarray | None = None,
                      visit_pool: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``visit_pass`` in numpy: scipy's CSR product for the sums, one sort for the ranks."""
    P = len(order.keys)
    local = np.arange(lo, hi) if visit is None else np.asarray(visit[lo:hi], dtype=np.int64)
    k = kind[local]
    if not visit_pool:
        k = np.where(k == POOL, NOT_TRAINING, k)
    M = rows.as_csr(F)[local]
    pool_keys = np.round(M @ vec[:F], TIE_DECIMALS)
    sts_keys = np.round(M @ vec[F:2 * F], TIE_DECIMALS)
    keys = np.where(k == POOL, pool_keys, sts_keys)
    counted = ((k == POOL) & count_pool) | ((k == STS_NEGATIVE) & count_sts)
    # positives and counted rows in one ranking: (key descending, row ascending)
    all_keys = np.concatenate([order.keys, keys[counted]])
    all_rows = np.concatenate([order.rows, row_base + local[counted]])
    is_pos = np.r_[np.ones(P, dtype=bool), np.zeros(int(counted.sum()), dtype=bool)]
    ranked = np.lexsort((all_rows, -all_keys))
    positives_before = np.cumsum(is_pos[ranked])[~is_pos[ranked]]
    counts = np.bincount(positives_before, minlength=P + 1).astype(np.int64)
    pool = k == POOL
    sel = np.round(M @ vec[sel_offset:sel_offset + F], TIE_DECIMALS) if sel_offset >= 0 else pool_keys
    cand_keys, cand_rows = sel[pool], row_base + local[pool]
    best = np.lexsort((cand_rows, -cand_keys))[:m]
    visited = int(np.sum(pool | ((k == STS_NEGATIVE) & count_sts)))
    return counts, cand_keys[best], cand_rows[best], visited


def merge_top(parts: list[tuple[np.ndarray, np.ndarray]], m: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``m`` best (key descending, row ascending) of the blocks' best rows."""
    keys = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
    rows = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    best = np.lexsort((rows, -keys))[:m]
    return keys[best], rows[best]


def average_precision_from_counts(counts: np.ndarray) -> float:
    """AP of the ranking whose positive i (0-based, rank order) has ``counts[0..i]`` negatives before it:
    the mean of (i + 1) / rank_i, the same array and the same mean as ranking every document."""
    P = len(counts) - 1
    if P <= 0:
        return float("nan")
    hits = np.arange(1, P + 1)
    ranks = hits + np.cumsum(counts[:P])
    return float(np.mean(hits / ranks))


# ----------------------------------------------------------------------------- patterns
# The restricted rows and the column index are built by linear passes into arrays of the exact size (int64
# row pointers, int32 columns): the compiled ones need no temporary the size of the corpus; the numpy
# twins compute the same arrays (tests check both).

def restrict_rows(indptr: np.ndarray, indices: np.ndarray, mapping: np.ndarray, nnz: int,
                  chunk: int = 4_000_000) -> tuple[np.ndarray, np.ndarray]:
    """The entries whose ``mapping[column] >= 0`` (``nnz`` of them), renumbered to ``mapping[column]``
    (increasing on the kept columns, so rows stay sorted)."""
    n = len(indptr) - 1
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    out = np.empty(nnz, dtype=np.int32)
    if _rounds is not None:
        got = _rounds.restrict_rows(np.ascontiguousarray(indptr, dtype=np.int64),
                                    np.ascontiguousarray(indices, dtype=np.int32),
                                    np.ascontiguousarray(mapping, dtype=np.int32), out_ptr, out)
        if got != nnz:
            raise ValueError(f"restrict_rows: {got} entries, expected {nnz}")
        return out_ptr, out
    bounds = np.searchsorted(indptr, np.arange(0, int(indptr[-1]) + chunk, chunk))
    bounds = np.unique(np.clip(np.r_[0, bounds, n], 0, n))
    q = 0
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):  # chunks of rows bound the temporaries
        s, e = int(indptr[a]), int(indptr[b])
        mapped = mapping[indices[s:e]]
        sel = mapped >= 0
        before = np.zeros(e - s + 1, dtype=np.int64)
        np.cumsum(sel, out=before[1:])
        out_ptr[a + 1:b + 1] = q + before[indptr[a + 1:b + 1] - s]
        kept = mapped[sel]
        out[q:q + len(kept)] = kept
        q += len(kept)
    if q != nnz:
        raise ValueError(f"restrict_rows: {q} entries, expected {nnz}")
    return out_ptr, out


def _row_ranges(n: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` ranges of about equal rows (fewer for a small block: not worth a thread)."""
    parts = max(1, min(int(parts), n // PACK_ROWS_PER_PART + 1))
    cuts = np.linspace(0, n, parts + 1).astype(np.int64).tolist()
    return list(zip(cuts[:-1], cuts[1:]))


def _serially(calls: list[Callable[[], object]]) -> list[object]:
    return [c() for c in calls]


def merge_rows(rows: Rows, parts: int = 1,
               run: Callable[[list[Callable[[], object]]], list[object]] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Both parts of ``rows`` as one pattern, rows sorted (compiled: ``parts`` row ranges called by ``run``)."""
    n = rows.n_rows
    if _rounds is not None:
        out_ptr = np.empty(n + 1, dtype=np.int64)
        out = np.empty(rows.nnz, dtype=np.int32)
        (run or _serially)([partial(_rounds.merge_rows, rows.indptr, rows.indices, rows.extra_indptr,
                                    rows.extra_indices, out_ptr, out, lo, hi) for lo, hi in _row_ranges(n, parts)])
        return out_ptr, out
    F = int(max(rows.indices.max(initial=-1), rows.extra_indices.max(initial=-1))) + 1
    csr = rows.as_csr(F)
    return csr.indptr.astype(np.int64), csr.indices.astype(np.int32)


def filter_rows(indptr: np.ndarray, indices: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries whose ``keep[column]`` is true; the compiled pass works in place (``indptr`` and
    ``indices`` are overwritten) and returns a trimmed copy of the indices."""
    if _rounds is not None:
        q = _rounds.filter_rows(indptr, indices, np.ascontiguousarray(keep, dtype=np.uint8))
        return indptr, indices[:q].copy()
    sel = keep[indices]
    before = np.zeros(len(indices) + 1, dtype=np.int64)
    np.cumsum(sel, out=before[1:])
    return before[indptr], indices[sel]


def column_index(indptr: np.ndarray, indices: np.ndarray, n_columns: int) -> tuple[np.ndarray, np.ndarray]:
    """(colptr int64, rows int32): the column-major copy of a row-major pattern, rows ascending."""
    n = len(indptr) - 1
    if _rounds is not None:
        colptr = np.empty(n_columns + 1, dtype=np.int64)
        rows = np.empty(int(indptr[-1]), dtype=np.int32)
        _rounds.column_index(np.ascontiguousarray(indptr, dtype=np.int64),
                             np.ascontiguousarray(indices, dtype=np.int32), colptr, rows)
        return colptr, rows
    pattern = sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(n, n_columns))
    csc = pattern.tocsc()
    return csc.indptr.astype(np.int64), csc.indices.astype(np.int32, copy=False)


def gather_columns(colptr: np.ndarray, colrows: np.ndarray, features: np.ndarray, ids: np.ndarray,
                   n_rows: int, parts: int = 1,
                   run: Callable[[list[Callable[[], object]]], list[object]] | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The row-major pattern (``n_rows`` rows) of columns ``features`` (ascending) of a column index,
    column ``features[k]`` renumbered ``ids[k]`` (ascending); compiled: ``parts`` row ranges called by
    ``run``."""
    features = np.ascontiguousarray(features, dtype=np.int64)
    ids = np.ascontiguousarray(ids, dtype=np.int32)
    total = int((colptr[features + 1] - colptr[features]).sum())
    if _rounds is not None:
        out_ptr = np.empty(n_rows + 1, dtype=np.int64)
        out = np.empty(total, dtype=np.int32)
        (run or _serially)([partial(_rounds.gather_columns, colptr, colrows, features, ids, out_ptr, out, lo, hi)
                            for lo, hi in _row_ranges(n_rows, parts)])
        return out_ptr, out
    starts, lengths = colptr[features], colptr[features + 1] - colptr[features]
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    rows = colrows[shift + np.arange(total)]
    ptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    csc = sp.csc_matrix((np.ones(total, dtype=np.int8), rows, ptr), shape=(n_rows, len(features)))
    csr = csc.tocsr()
    csr.sort_indices()
    return csr.indptr.astype(np.int64), ids[csr.indices].astype(np.int32)
