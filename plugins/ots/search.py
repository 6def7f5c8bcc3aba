"""The optimal-training-set (OTS) search (algorithms.md 4.1, 4.3).

OTS (Sohn, Kim, Comeau & Wilbur 2008): the small training set (STS) starts as all positive documents;
each iteration moves the M pool negatives that the current BIM scores highest into the STS, scores
the STS by the average precision of every training document (STS members by their leave-one-out
scores, the others by the BIM trained on the STS; ``evaluate="sts"`` ranks the STS members only), and
retrains the scorer on the STS. The OTS is the STS with the best AP (the smaller one among equals).
Every BIM here weights only the features of the positives (``features="positive"``, algorithms.md
2.5), a set fixed once: every STS holds all the positives.

Cost. Every iteration needs the scores of every document: pool documents under the scorer trained
on the STS, STS documents under their leave-one-out weights (which differ for positives and
negatives). All three are one sparse product: the column indices of each row are shifted by
0 (pool), F (STS negative) or 2F (positive) into a matrix with 3F columns, multiplied by the
three weight vectors laid end to end. Moving a document into the STS shifts its own indices
(O(its non-zeros)), the counts change by its column counts, and the weights are O(F). An iteration
is therefore one O(nnz) product plus O(n + F) vector work; nothing refits per document. On a large
corpus the product skips the entries of features that carry no weight in any block (most of them,
with |w| thresholded), see ``_RoundScorer``; the scores stay bit-identical.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.errors import ParameterError

from toolkit.plugins.ots.bim import (
    bim_counts, bim_weights, check_alpha, check_features, feature_mask, presence, restricted, smoothed_logit,
    thresholded,
)
from toolkit.plugins.ots.leave_one_out import loo_smoothed_logit, ranked_average_precision, tie_key

__all__ = ["OTSResult", "optimal_training_set", "step_size"]

_INITS = ("wts", "sts")
_SCORERS = ("sts", "wts_fixed")
_EVALUATE = ("wts", "sts")


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
    return max(1, int(np.floor(value * n_positive + 0.5)))


def _entry_positions(indptr: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Positions in ``indices`` of the entries of ``rows`` (vectorised concatenation of ranges)."""
    starts = indptr[rows]
    lengths = indptr[rows + 1] - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return shift + np.arange(total, dtype=np.int64)


def _top(scores: np.ndarray, m: int) -> np.ndarray:
    """Positions of the ``m`` highest scores in rank order; ties (at 1e-9) go to the lower position."""
    keys = tie_key(scores)
    n = len(keys)
    if m >= n:
        return np.lexsort((np.arange(n), -keys))
    candidates = np.arange(n)
    if n > 100_000 and n > 256 * m:
        # a bound from a strided sample: at least 2m keys (the sampled ones) reach the 2m-th largest
        # sampled key, so the m largest all do; only the keys above it need partitioning (exact)
        sample = keys[::64]
        bound = np.partition(sample, len(sample) - 2 * m)[len(sample) - 2 * m]
        above_bound = np.flatnonzero(keys > bound)
        if len(above_bound) < m:  # the rest are ties at the bound: the lowest positions among them
            chosen = np.concatenate([above_bound, np.flatnonzero(keys == bound)[: m - len(above_bound)]])
            return chosen[np.lexsort((chosen, -keys[chosen]))]
        candidates = above_bound
    sub = keys[candidates]
    kth = np.partition(sub, len(sub) - m)[len(sub) - m]
    above = np.flatnonzero(sub > kth)
    equal = np.flatnonzero(sub == kth)[: m - len(above)]
    chosen = candidates[np.concatenate([above, equal])]
    return chosen[np.lexsort((chosen, -keys[chosen]))]


_PARALLEL_MIN_NNZ = 4_000_000  # below this a product takes a few ms and threads do not pay
_SUBSET_MIN_NNZ = 1_000_000  # below this the full product is cheap enough
_SUBSET_MAX_SHARE = 0.4  # restrict the product while at most this share of the entries carries weight
_LOOKAHEAD = 25  # rounds: features predicted to gain weight this soon are merged into the copy together


def _available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _row_blocks(A: sp.csr_matrix, n_blocks: int) -> list[tuple[int, int, sp.csr_matrix]]:
    """Row blocks of about equal non-zeros, as (first row, end row, block) whose arrays are views of
    ``A``'s: an in-place shift of ``A.indices`` is seen by the blocks."""
    n = A.shape[0]
    cuts = np.searchsorted(A.indptr, np.linspace(0, A.nnz, max(1, min(n_blocks, n)) + 1)[1:-1])
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 0, n), [n]]))
    blocks = []
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        s, e = A.indptr[a], A.indptr[b]
        block = sp.csr_matrix((b - a, A.shape[1]))
        # set after construction: the constructor may copy, and a copy would miss later shifts
        block.indptr, block.indices, block.data = A.indptr[a:b + 1] - s, A.indices[s:e], A.data[s:e]
        blocks.append((a, b, block))
    return blocks


def _about_to_gain_weight(n_neg: np.ndarray, N_neg: float, highest: np.ndarray, lowest: np.ndarray, tau: float,
                         alpha: float, step: int, left: int) -> tuple[np.ndarray, np.ndarray]:
    """Features without weight that may gain one within a few rounds (``soon``) and within a few more
    (``later``), so that the restricted product can take them in together.

    A weight changes in two ways. While no added negative contains feature t, only N grows, which
    raises every weight by log((N' - n_t + a)/(N - n_t + a)): ``soon`` holds the features it lifts above
    tau within ``step`` more negatives, ``later`` within twice as many. Each added negative containing
    t raises n_t, which lowers its weights by at most log((n' - 1 + a)/(n - 1 + a)) (the leave-one-out
    weight moves most): ``soon`` holds the features one such negative pushes below -tau, ``later`` those
    three push. A feature that escapes both (more added negatives contain it in one round) is caught
    when it happens; the product stays exact either way."""
    room = np.maximum(N_neg - n_neg, 0.0) + alpha
    below = np.maximum(n_neg - 1.0, 0.0) + alpha
    soon = (highest + np.log1p(min(step, left) / room) > tau) | (lowest - np.log1p(1.0 / below) < -tau)
    later = (highest + np.log1p(min(2 * step, left) / room) > tau) | (lowest - np.log1p(3.0 / below) < -tau)
    return soon, later


def _same_index_type(indptr: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """indptr and indices in one integer type, at least as wide as ``indices`` (which already allows
    for the later shifts): scipy would otherwise convert both at every product."""
    dtype = np.int64 if indices.dtype == np.int64 or indptr[-1] >= np.iinfo(np.int32).max else np.int32
    return indptr.astype(dtype, copy=False), indices.astype(dtype, copy=False)


class _RoundScorer:
    """Every document's score, ``A @ vec``, once per round: the OTS search's main cost on a large corpus.

    Two savings, neither of which changes a bit of the result:

    * An entry whose feature has weight 0 in all three blocks adds exactly 0.0 to its row's sum. With
      |w| thresholded at tau, only a few per cent of a text corpus's non-zeros carry weight once the
      STS holds some negatives, so the product runs over ``sub``: the entries of ``A`` whose feature is
      in ``kept`` (the features with weight, plus those likely to gain one within ``_LOOKAHEAD``
      rounds, see ``_about_to_gain_weight``), in ``A``'s order. When a feature outside ``kept`` gains
      weight, its entries (read from a column-major copy of the pattern) are merged in; when ``kept``
      has grown to twice what is needed, ``sub`` is filtered. Both cost O(nnz(sub) + n), not a pass
      over ``A``. While most entries carry weight, ``A`` itself is used.
    * Row blocks of about equal non-zeros run in threads: scipy's sparse product releases the GIL, and
      each row is still summed by the same code in the same order.

    ``shift(rows)`` moves documents from the pool block (columns 0..F-1) to the STS-negative block
    (F..2F-1), in ``A`` and in ``sub``.
    """

    def __init__(self, A: sp.csr_matrix, features: np.ndarray, F: int, positive_rows: np.ndarray, n_threads: int):
        self.A, self.F = A, F
        self.n_threads = max(1, int(n_threads))
        self.features = features  # each entry's feature (A's column without the block offset)
        self.feature_nnz = np.bincount(features, minlength=F)  # a feature keeps its entries in any block
        self.block = np.zeros(A.shape[0], dtype=np.int64)  # 0 pool (or not training), 1 STS negative, 2 positive
        self.block[positive_rows] = 2
        self.pool = ThreadPoolExecutor(self.n_threads) if self.n_threads > 1 else None
        self.kept: np.ndarray | None = None  # features in sub (None: sub is A)
        self.sub: sp.csr_matrix = A
        self._columns: tuple[np.ndarray, np.ndarray] | None = None  # (indptr, row indices) by feature
        self.changes = {"build": 0, "merge": 0, "filter": 0, "full": 0}
        self._set_sub(A, None)

    @property
    def restricts(self) -> bool:
        """Whether the product may run over a restricted copy (on a small corpus the full one is cheap)."""
        return self.A.nnz >= _SUBSET_MIN_NNZ

    def _set_sub(self, sub: sp.csr_matrix, kept: np.ndarray | None) -> None:
        self.sub, self.kept = sub, kept
        self.blocks = _row_blocks(sub, self.n_threads if sub.nnz >= _PARALLEL_MIN_NNZ else 1)

    def _share(self, features: np.ndarray) -> float:
        return float(self.feature_nnz[features].sum()) / max(self.A.nnz, 1)

    def _filtered(self, M: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
        """The entries of M whose feature is in ``keep``, in M's order."""
        mask = np.tile(keep, 3)[M.indices]
        # kept entries before each position
        kept_before = np.zeros(M.nnz + 1, dtype=np.int32 if M.nnz < np.iinfo(np.int32).max else np.int64)
        np.cumsum(mask, out=kept_before[1:])
        out = sp.csr_matrix(M.shape)
        # set after construction: the constructor may copy or change the index types
        out.indptr, out.indices = _same_index_type(kept_before[M.indptr], M.indices[mask])
        out.data = M.data[mask]
        return out

    def _merged(self, features: np.ndarray) -> sp.csr_matrix:
        """``sub`` with the entries of ``features`` (none of them in ``kept``) merged in, in ``A``'s order
        (within a row, by column)."""
        if self._columns is None:
            pattern = sp.csr_matrix((np.ones(self.A.nnz, dtype=np.int8), self.features, self.A.indptr),
                                    shape=(self.A.shape[0], self.F)).tocsc()
            self._columns = (pattern.indptr, pattern.indices)
        col_indptr, col_rows = self._columns
        rows = col_rows[_entry_positions(col_indptr, features)].astype(np.int64)
        feats = np.repeat(features, np.diff(col_indptr)[features])
        cols = self.block[rows] * self.F + feats
        order = np.lexsort((cols, rows))
        rows, cols = rows[order], cols[order]
        sub, width = self.sub, 3 * self.F
        sub_rows = np.repeat(np.arange(sub.shape[0], dtype=np.int64), np.diff(sub.indptr))
        at = np.searchsorted(sub_rows * width + sub.indices, rows * width + cols)
        out = sp.csr_matrix(sub.shape)
        added_before = np.zeros(sub.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=sub.shape[0]), out=added_before[1:])
        indices = np.insert(sub.indices, at, cols.astype(sub.indices.dtype))
        out.indptr, out.indices = _same_index_type(sub.indptr + added_before, indices)
        out.data = np.ones(len(indices))
        return out

    def _update(self, vec: np.ndarray, soon: np.ndarray | None, later: np.ndarray | None) -> None:
        """Choose the entries the product runs over this round."""
        F = self.F
        active = (vec[:F] != 0) | (vec[F:2 * F] != 0) | (vec[2 * F:] != 0)
        soon = active if soon is None else active | soon
        later = soon if later is None else soon | later
        later_share = self._share(later)
        if later_share > _SUBSET_MAX_SHARE:
            if self.kept is not None:
                self._set_sub(self.A, None)
                self.changes["full"] += 1
        elif self.kept is None:
            self._set_sub(self._filtered(self.A, later), later)
            self.changes["build"] += 1
        elif (soon & ~self.kept).any():
            self._set_sub(self._merged(np.flatnonzero(later & ~self.kept)), self.kept | later)
            self.changes["merge"] += 1
        elif self._share(self.kept) > 2 * later_share + 0.005:
            keep = self.kept & later  # sub holds only the kept features' entries; soon (and active) are among them
            self._set_sub(self._filtered(self.sub, keep), keep)
            self.changes["filter"] += 1

    def shift(self, rows: np.ndarray) -> np.ndarray:
        """Move ``rows`` (pool documents) into the STS-negative block; returns their entries' columns."""
        where = _entry_positions(self.A.indptr, rows)
        columns = self.A.indices[where]
        self.A.indices[where] += self.F
        if self.kept is not None:
            self.sub.indices[_entry_positions(self.sub.indptr, rows)] += self.F
        self.block[rows] = 1
        return columns

    def __call__(self, vec: np.ndarray, soon: np.ndarray | None = None,
                 later: np.ndarray | None = None) -> np.ndarray:
        """``A @ vec``. ``soon`` and ``later`` mark features expected to gain weight within a few rounds
        and within twice as many: when a feature with weight or one of ``soon`` is missing from the
        copy, all of ``later`` are merged in, so that merges come in batches."""
        if self.restricts:
            self._update(vec, soon, later)
        if len(self.blocks) == 1:
            return self.blocks[0][2] @ vec
        out = np.empty(self.A.shape[0])

        def run(block: tuple[int, int, sp.csr_matrix]) -> None:
            out[block[0]:block[1]] = block[2] @ vec

        assert self.pool is not None
        for future in [self.pool.submit(run, block) for block in self.blocks]:
            future.result()
        return out

    def __enter__(self) -> _RoundScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def optimal_training_set(X: Any, positive: np.ndarray, negative: np.ndarray, *, alpha: float = 1.0,
                         threshold: float = 1.0, step: float = 0.01, init: str = "wts", scorer: str = "sts",
                         patience: int | None = None, max_size: int | None = None,
                         evaluate: str = "wts", features: str = "positive",
                         n_threads: int | None = None) -> OTSResult:
    """Run the OTS search (algorithms.md 4.1) on the rows in ``positive`` and ``negative`` (boolean masks).

    ``evaluate`` says which documents the AP of a candidate STS ranks: "wts" (algorithms.md 4.1 step
    3c, revision 2) ranks every training document, the STS documents by their leave-one-out scores
    and the others by the STS-trained BIM (each document scored by a model that did not see it);
    "sts" (revision 1) ranks the STS documents only. ``features`` is the BIM feature set
    (algorithms.md 2.5): "positive" (the features of the positives) or "all". ``n_threads`` (default:
    the available cores when the corpus has millions of non-zeros, else 1) only splits the work; the
    result is the same.
    """
    alpha = check_alpha(alpha)
    tau = float(threshold)
    features = check_features(features, "ots")
    if init not in _INITS:
        raise ParameterError(f"init must be one of {', '.join(_INITS)}, not '{init}'")
    if evaluate not in _EVALUATE:
        raise ParameterError(f"evaluate must be one of {', '.join(_EVALUATE)}, not '{evaluate}'")
    if scorer not in _SCORERS:
        raise ParameterError(f"scorer must be one of {', '.join(_SCORERS)}, not '{scorer}'")
    if patience is not None and (int(patience) != patience or patience < 1):
        raise ParameterError(f"patience must be a whole number >= 1 or None, not {patience!r}")
    if max_size is not None and (int(max_size) != max_size or max_size < 1):
        raise ParameterError(f"max_size must be a whole number >= 1 or None, not {max_size!r}")
    B = presence(X)
    n, F = B.shape
    pos_rows = np.flatnonzero(positive)
    pool = np.flatnonzero(negative & ~positive)
    M = step_size(step, len(pos_rows))
    empty = OTSResult(pos_rows, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), M, -1)
    if len(pool) == 0 or len(pos_rows) == 0:
        return empty

    pos_counts = bim_counts(B, positive, np.zeros(n, dtype=bool))
    n_pos, N_pos = pos_counts.n_pos, pos_counts.N_pos
    logit_p = smoothed_logit(n_pos, N_pos, alpha)
    loo_logit_p = loo_smoothed_logit(n_pos, N_pos, alpha)
    # the BIM feature set: the same for every STS (each holds all the positives) and for leave-one-out
    mask = feature_mask(pos_counts, features)

    # one matrix, three column blocks: pool rows read block 0, STS negatives block 1, positives block 2
    index_dtype = np.int64 if 3 * F >= np.iinfo(np.int32).max else np.int32
    indices = B.indices.astype(index_dtype, copy=True)
    indices[_entry_positions(B.indptr, pos_rows)] += 2 * F
    A = sp.csr_matrix((B.data, indices, B.indptr), shape=(n, 3 * F), copy=False)
    vec = np.zeros(3 * F)

    if init == "wts":
        c0 = bim_counts(B, positive, negative)
        v0 = thresholded(bim_weights(c0, alpha, mask), tau)
    else:  # the positives alone: q_t = 1/2, so w_t = logit(p_t)
        v0 = thresholded(restricted(logit_p, mask), tau)
    vec[:F] = v0
    if n_threads is None:
        n_threads = _available_cores() if A.nnz >= _PARALLEL_MIN_NNZ else 1
    with _RoundScorer(A, B.indices, F, pos_rows, n_threads) as product:
        scores = product(vec)
        n_neg = np.zeros(F)  # negative counts in the STS
        N_neg = 0.0
        in_sts = positive.copy()
        is_pos = positive
        train_rows = np.flatnonzero(positive | negative)
        train_pos = positive[train_rows]
        all_train = len(train_rows) == n
        added: list[np.ndarray] = []
        n_added: list[int] = []
        ap_trace: list[float] = []
        best, best_ap, since_best = -1, -np.inf, 0
        total = 0
        while len(pool):
            chosen = pool[_top(scores[pool], M)]
            added.append(chosen)
            total += len(chosen)
            in_sts[chosen] = True
            pool = pool[~in_sts[pool]]
            n_neg += np.bincount(product.shift(chosen), minlength=F)[:F]
            N_neg += len(chosen)
            # weights of the STS-trained scorer, and the leave-one-out weights of STS members
            logit_q = smoothed_logit(n_neg, N_neg, alpha)
            w_sts = restricted(logit_p - logit_q, mask)
            w_loo_neg = restricted(logit_p - loo_smoothed_logit(n_neg, N_neg, alpha), mask)
            w_loo_pos = restricted(loo_logit_p - logit_q, mask)
            v_sts = thresholded(w_sts, tau)
            vec[:F] = v_sts if scorer == "sts" else v0
            vec[F:2 * F] = thresholded(w_loo_neg, tau)
            vec[2 * F:] = thresholded(w_loo_pos, tau)
            if product.restricts:
                highest = np.maximum(np.maximum(w_sts, w_loo_neg), w_loo_pos)
                lowest = np.minimum(np.minimum(w_sts, w_loo_neg), w_loo_pos)
                soon, later = _about_to_gain_weight(n_neg, N_neg, highest, lowest, tau, alpha, M * _LOOKAHEAD,
                                                    len(pool))
                if mask is not None:  # a feature outside the set never gains a weight
                    soon, later = soon & mask, later & mask
                scores = product(vec, soon, later)
            else:
                scores = product(vec)
            if evaluate == "sts":
                rows = np.flatnonzero(in_sts)
                ap = ranked_average_precision(scores[rows], is_pos[rows])
            else:
                ranked = scores if all_train else scores[train_rows]
                if scorer != "sts" and len(pool):  # the pool was scored by f_0; evaluation needs f_t
                    ranked = ranked.copy()
                    ranked[~in_sts[train_rows]] = B[pool] @ v_sts
                ap = ranked_average_precision(ranked, train_pos)
            ap_trace.append(ap)
            n_added.append(total)
            if ap > best_ap:
                best, best_ap, since_best = len(ap_trace) - 1, ap, 0
            else:
                since_best += 1
            if patience is not None and since_best >= patience:
                break
            if max_size is not None and len(pos_rows) + total >= max_size:
                break
    return OTSResult(pos_rows, np.concatenate(added), np.asarray(n_added, dtype=np.int64),
                     np.asarray(ap_trace), M, best)
