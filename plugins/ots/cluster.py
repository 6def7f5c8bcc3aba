"""OTS searches on a Dask cluster (dask and distributed, imported on first use).

Two ways, for two sizes of corpus:

* **One term per task** (``search_terms_on_cluster``): every worker reads the corpus from its own path
  (once per worker process, kept with its column index for the next term) and runs whole searches.
  For a corpus that fits one worker and many terms (the paper: 20 MeSH terms).
* **Data-parallel rounds** (``data_parallel_search``): for a corpus that fits no single worker. The
  corpus is persisted as row partitions, one actor per partition (Dask actors keep state on their
  worker and are called without the scheduler). Each actor loads its rows itself (``loader(part)``),
  holds a copy of the positives' rows (every round needs their keys, and they are few), its own column
  index and ``rounds.RoundEngine``. A round sends every actor only the rows chosen last round and the
  change of the counts (compact feature ids and how many more negatives contain them); each returns
  the gap counts the AP needs and its M best pool rows with their features; the client adds the counts
  and merges the rows (``search.run_rounds``). The weights are recomputed from the counts on every
  actor with the same operations, so the trace equals the single-machine trace bit for bit.

An actor lives on one worker: if that worker dies the search stops with an error (run it again).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolkit.errors import ToolkitError

from toolkit.plugins.ots.bim import BIMCounts, presence
from toolkit.plugins.ots.kernel import NOT_TRAINING
from toolkit.plugins.ots.rounds import ColumnIndex, RoundEngine, RoundResult, TaskWeights, initial_kind
from toolkit.plugins.ots.search import OTSResult, _check_stops, optimal_training_set, pool_step, run_rounds, task_spec

__all__ = ["search_terms_on_cluster", "data_parallel_search", "Partition", "peak_memory"]


def peak_memory() -> dict[str, int]:
    """This process's resident memory now and at its peak (Linux VmRSS, VmHWM), in bytes."""
    out = {"rss": 0, "peak": 0}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["rss"] = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                out["peak"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    return out


# ----------------------------------------------------------------------------- one term per task

_WORKER_CORPORA: dict[tuple[Any, ...], tuple[Any, np.ndarray, list[str], ColumnIndex]] = {}


def _worker_corpus(path: str, class_attribute: Any) -> tuple[Any, np.ndarray, list[str], ColumnIndex]:
    """The corpus as this worker reads it from ``path`` (kept for the next term): presence matrix (text
    attributes turned into word counts as the pipeline does), class codes, class labels, column index."""
    key = (os.path.abspath(path), os.path.getmtime(path), class_attribute)
    hit = _WORKER_CORPORA.get(key)
    if hit is None:
        from toolkit import LoadOptions, Pipeline, load_dataset

        ds = load_dataset(path, LoadOptions(class_attribute=class_attribute))
        labels = list(ds.require_nominal_class())
        # word counts of text attributes as ots-trace makes them (the text step does not look at the class)
        prepared = Pipeline("nb-bim", tune=False).prepare(ds.one_vs_rest(labels[0]))
        B = presence(prepared.X)
        columns = ColumnIndex.of(B)
        columns.column_nnz  # build it now, once
        _WORKER_CORPORA.clear()  # one corpus per worker process
        y = np.asarray(ds.y)
        # the pipeline drops the rows whose class is missing: the codes must follow the same rows
        y = y[np.where(np.isnan(y), -1, y) >= 0] if y.dtype.kind == "f" else y[y >= 0]
        hit = _WORKER_CORPORA[key] = (B, y, labels, columns)
    return hit


def _term_task(path: str, class_attribute: Any, term: str, params: dict[str, Any]) -> OTSResult:
    B, y, labels, columns = _worker_corpus(path, class_attribute)
    if term not in labels:
        raise ToolkitError(f"{path}: class '{term}' is not a value of the class attribute")
    codes = np.where(np.isnan(y), -1, y).astype(np.int64) if y.dtype.kind == "f" else y.astype(np.int64)
    k = labels.index(term)
    return optimal_training_set(B, codes == k, (codes >= 0) & (codes != k), columns=columns, n_threads=1, **params)


def search_terms_on_cluster(client: Any, path: str, terms: Sequence[str], *, class_attribute: Any = None,
                            **params: Any) -> dict[str, OTSResult]:
    """One OTS search per class in ``terms`` (each against the rest), one task each; every worker reads
    ``path`` itself. ``params`` are ``optimal_training_set``'s. Results in the order of ``terms``."""
    from distributed import as_completed

    path = os.path.abspath(path)
    futures = {client.submit(_term_task, path, class_attribute, t, params, pure=False, key=f"ots-term-{i}-{t}"): t
               for i, t in enumerate(terms)}
    done: dict[str, OTSResult] = {}
    for future in as_completed(futures):
        done[futures[future]] = future.result()
    return {t: done[t] for t in terms}


# ----------------------------------------------------------------------------- data-parallel rounds

def _pattern(X: Any) -> Any:
    """A CSR matrix whose stored values are all present (> 0) as it is (only its pattern is read: a
    loader may give int8 ones instead of float64), anything else through ``presence``."""
    import scipy.sparse as sp

    if isinstance(X, sp.csr_matrix) and X.has_canonical_format and bool(np.all(X.data > 0)):
        return X
    return presence(X)


class Partition:
    """A row partition of the corpus on a worker (a Dask actor): its rows' presence pattern and class
    codes from ``loader(part)`` (a picklable callable returning (matrix, class codes) of the rows;
    code < 0: unlabelled), and for a term the state of its rounds."""

    def __init__(self, loader: Callable[[int], tuple[Any, np.ndarray]], part: int):
        X, y = loader(part)
        B = _pattern(X)
        self.indptr = B.indptr.astype(np.int64)
        self.indices = B.indices.astype(np.int32, copy=False)
        self.n_rows, self.n_features = B.shape
        codes = np.asarray(y)
        self.codes = (np.where(np.isnan(codes), -1, codes) if codes.dtype.kind == "f" else codes).astype(np.int64)
        self.engine: RoundEngine | None = None
        del X, B

    def _column_counts(self, rows: np.ndarray) -> np.ndarray:
        """Documents among ``rows`` (a mask) that contain each feature, in chunks of rows (no copy of
        the partition): sums of ones, the same whole numbers as a product with the mask."""
        out = np.zeros(self.n_features)
        step = max(1, 4_000_000 * self.n_rows // max(int(self.indptr[-1]), 1))
        for a in range(0, self.n_rows, step):
            b = min(a + step, self.n_rows)
            s, e = int(self.indptr[a]), int(self.indptr[b])
            weights = np.repeat(rows[a:b].astype(np.float64), np.diff(self.indptr[a:b + 1]))
            out += np.bincount(self.indices[s:e], weights=weights, minlength=self.n_features)
        return out

    def describe(self, term: int) -> dict[str, Any]:
        """Rows, features, and for class ``term``: the positives' local rows and patterns, and this
        partition's counts (positives' and all negatives')."""
        pos = self.codes == term
        neg = (self.codes >= 0) & ~pos
        rows = np.flatnonzero(pos)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        lengths = ends - starts
        ptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        where = np.repeat(starts - ptr[:-1], lengths) + np.arange(int(ptr[-1]))
        return {"n_rows": self.n_rows, "n_features": self.n_features, "positive_local": rows,
                "positive_indptr": ptr, "positive_indices": self.indices[where].astype(np.int32),
                "n_pos": self._column_counts(pos), "n_neg": self._column_counts(neg), "N_pos": float(pos.sum()),
                "N_neg": float(neg.sum()), "pool": int(neg.sum())}

    def setup(self, term: int, row_base: int, spec: Any, pos_counts: tuple[np.ndarray, float],
              wts_counts: tuple[np.ndarray, np.ndarray, float, float] | None, positive_rows: np.ndarray,
              positive_indptr: np.ndarray, positive_indices: np.ndarray, pool_size: int) -> int:
        """Start the rounds of class ``term``: the whole corpus's counts, the positives' global rows and
        patterns (appended after this partition's own rows, so that every partition ranks them)."""
        if self.engine is not None:  # the last term's state goes before this term's is built
            self.engine.close()
            self.engine = None
        pos = self.codes == term
        neg = (self.codes >= 0) & ~pos
        pc = BIMCounts(pos_counts[0], np.zeros(self.n_features), pos_counts[1], 0.0)
        wc = None if wts_counts is None else BIMCounts(wts_counts[0], wts_counts[1], wts_counts[2], wts_counts[3])
        weights = TaskWeights(pc, wc, self.n_features, spec)
        own = self.indptr[-1]
        indptr = np.concatenate([self.indptr, own + positive_indptr[1:]])
        indices = np.concatenate([self.indices, positive_indices])
        # the partition's own rows become views of the extended arrays (no second copy kept)
        self.indptr, self.indices = indptr[:self.n_rows + 1], indices[:own]
        kind = np.concatenate([initial_kind(pos, neg), np.full(len(positive_rows), NOT_TRAINING, dtype=np.uint8)])
        positive_local = self.n_rows + np.arange(len(positive_rows))
        columns = ColumnIndex(indptr, indices, self.n_features)
        self.engine = RoundEngine(indptr, indices, weights, columns, kind, positive_rows, positive_local,
                                  row_base=row_base, n_own=self.n_rows, pool_size=pool_size,
                                  n_threads=1)
        return len(kind)

    def first(self) -> RoundResult:
        assert self.engine is not None
        return self.engine.first()

    def step(self, chosen: np.ndarray, changed: np.ndarray, increment: np.ndarray) -> RoundResult:
        assert self.engine is not None
        return self.engine.step(chosen, changed, increment)

    def memory(self) -> dict[str, int]:
        return peak_memory()


def data_parallel_search(client: Any, loader: Callable[[int], tuple[Any, np.ndarray]], n_parts: int,
                         term: int = 1, *, patience: int | None = None, max_size: int | None = None,
                         partitions: Sequence[Any] | None = None, **params: Any) -> tuple[OTSResult, list[Any]]:
    """The OTS search of class code ``term`` (against the other labelled rows) over a corpus in
    ``n_parts`` row partitions, ``loader(part)`` giving partition ``part``'s rows in corpus order, one
    actor per partition spread over the workers. Returns the result and the actors (pass them back as
    ``partitions`` to search another term on the loaded corpus; ``actor.memory().result()`` tells a
    worker's peak memory). ``params`` are ``optimal_training_set``'s search parameters."""
    _check_stops(patience, max_size)
    if partitions is None:
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise ToolkitError("the Dask cluster has no worker")
        futures = [client.submit(Partition, loader, p, actor=True, workers=[workers[p % len(workers)]],
                                 allow_other_workers=False, pure=False) for p in range(n_parts)]
        partitions = [f.result() for f in futures]
    infos = [f.result() for f in [a.describe(int(term)) for a in partitions]]
    bases = np.r_[0, np.cumsum([i["n_rows"] for i in infos])].astype(np.int64)
    positive_rows = np.concatenate([bases[p] + i["positive_local"] for p, i in enumerate(infos)]).astype(np.int64)
    indptrs, indices = [np.zeros(1, dtype=np.int64)], []
    for i in infos:
        indptrs.append(indptrs[-1][-1] + i["positive_indptr"][1:])
        indices.append(i["positive_indices"])
    pos_indptr = np.concatenate(indptrs)
    pos_indices = np.concatenate(indices) if indices else np.zeros(0, dtype=np.int32)
    n_pos = np.sum([i["n_pos"] for i in infos], axis=0)
    n_neg = np.sum([i["n_neg"] for i in infos], axis=0)
    N_pos, N_neg = sum(i["N_pos"] for i in infos), sum(i["N_neg"] for i in infos)
    pool_size = sum(i["pool"] for i in infos)
    spec = task_spec(len(positive_rows), **params)
    if pool_size == 0 or len(positive_rows) == 0:
        return OTSResult(positive_rows, np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), spec.step,
                         -1), list(partitions)
    wts = (n_pos, n_neg, N_pos, N_neg) if spec.init == "wts" else None
    [f.result() for f in [a.setup(int(term), int(bases[p]), pool_step(spec, pool_size), (n_pos, N_pos), wts,
                                  positive_rows, pos_indptr,
                                  pos_indices, pool_size) for p, a in enumerate(partitions)]]

    def call(name: str, *args: Any) -> list[RoundResult]:
        return [f.result() for f in [getattr(a, name)(*args) for a in partitions]]

    return run_rounds(call, spec, positive_rows, pool_size, patience, max_size), list(partitions)
