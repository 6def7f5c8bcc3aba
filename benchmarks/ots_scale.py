"""OTS selection at scale: a synthetic sparse binary corpus of 1,000,000 documents (1 % positives, about
50 distinct features each, 100,000 features), generated here with a fixed seed.

    python benchmarks/ots_scale.py [--docs 1000000] [--patience 10,200] [--full] [--evaluate sts|wts] [--cluster]

For each stopping rule: the OTS search's wall time, rounds, time per round, the OTS found, and the
peak resident memory of the process during the search (Linux VmHWM, reset before each search; the
corpus itself stays resident). Anchors measured in the same run: one sparse product of the corpus
with a weight vector (a round's irreducible work: every document is rescored each round) and one
nb-bim fit on the whole corpus. ``--full`` also runs the toolkit default (patience None: to the end,
|negatives| / M = 9,900 rounds; docs/results/ots_scale.md has the figures) and prints it as ratios to
the two anchors. ``--evaluate`` (default wts, the toolkit's default: rank every training document each
round; sts: the STS only).

The corpus: feature frequencies follow a Zipf-like law (rank r drawn with weight 1/(r + 10));
positives take 20 % of their features from 300 topic features, and 2 % of the negatives ("near
misses") take 8 % from the same topic, so there are negatives close to the positives to find.

``--cluster`` then runs the data-parallel rounds (plugins/ots/cluster.py) on a corpus of ``--cluster-docs``
(5,000,000) documents from the same generator, written to a temporary directory in ``--parts`` row
partitions that the workers read themselves, on a 2-worker ``LocalCluster`` whose workers each get a
``memory_limit`` below the corpus's size in memory (``--worker-memory``, a share of it): seconds per round
over ``--cluster-rounds`` rounds (``max_size``; the full search is |negatives| / M = 9,900 rounds there too),
each worker's peak resident memory (VmHWM, loading included) against its limit, and whether a worker was
restarted (the workers' process ids before and after).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved, record  # noqa: E402

from toolkit.plugins.ots.nb_bim import BIMNaiveBayes
from toolkit.plugins.ots.selectors import OTSSelector

SEED = 20080701


def make_corpus(n: int, n_features: int = 100_000, mean_length: int = 50, positive_share: float = 0.01,
                seed: int = SEED, zipf: float = 1.0) -> tuple[sp.csr_matrix, np.ndarray]:
    """Binary CSR corpus and labels (1 = positive), deterministic for a seed."""
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, int(round(positive_share * n)), replace=False)] = 1
    near = (y == 0) & (rng.random(n) < 0.02)
    lengths = np.maximum(rng.poisson(mean_length, n), 1)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    nnz = int(indptr[-1])
    cdf = np.cumsum((np.arange(n_features) + 10.0) ** -zipf)
    cdf /= cdf[-1]
    rank_of_feature = rng.permutation(n_features).astype(np.int32)  # frequent features spread over the ids
    indices = np.empty(nnz, dtype=np.int32)
    topic = rng.choice(n_features, 300, replace=False).astype(np.int32)
    row_share = np.zeros(n)
    row_share[y == 1] = 0.20
    row_share[near] = 0.08
    chunk = 5_000_000
    row_of = np.repeat(np.arange(n, dtype=np.int32), lengths)  # 4 bytes per entry
    for start in range(0, nnz, chunk):
        stop = min(start + chunk, nnz)
        u = rng.random(stop - start)
        ranks = np.searchsorted(cdf, u).astype(np.int32)
        ranks = np.minimum(ranks, n_features - 1)
        idx = rank_of_feature[ranks]
        from_topic = rng.random(stop - start) < row_share[row_of[start:stop]]
        idx[from_topic] = topic[rng.integers(0, len(topic), int(from_topic.sum()))]
        indices[start:stop] = idx
    del row_of
    X = sp.csr_matrix((np.ones(nnz), indices, indptr), shape=(n, n_features))
    X.sum_duplicates()  # sorts each row and merges repeated features
    X.data[:] = 1.0
    return X, y


def _status(field: str) -> int:
    """A VmXXX line of /proc/self/status, in bytes (0 where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def run_search(X: sp.csr_matrix, y: np.ndarray, label: str, save: str = "", **params: object) -> float:
    reset = _reset_peak()
    before = _status("VmRSS")
    start = time.perf_counter()
    selector = OTSSelector(**params)
    rows = selector.select(X, y)
    seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    trace = selector.trace_
    if save:
        import json

        Path(save).write_text(json.dumps({"label": label, "seconds": seconds, "trace": trace}))
    rounds = len(trace["size"])
    print(f"{label}: {seconds:.1f} s ({seconds / 60:.2f} min; load {os.getloadavg()[0]:.2f}), {rounds} rounds of "
          f"M = {trace['step']} "
          f"({1000 * seconds / max(rounds, 1):.0f} ms per round)")
    print(f"  OTS: {len(rows):,} documents ({selector.ots_negatives_:,} negatives), best leave-one-out AP "
          f"{trace['best_average_precision']:.4f} at round {trace['size'].index(trace['best_size']) + 1}")
    if reset and peak:
        print(f"  memory: resident {before / 2**20:,.0f} MiB before, peak {peak / 2**20:,.0f} MiB during the "
              f"search (+{(peak - before) / 2**20:,.0f} MiB)")
    else:
        import resource

        print(f"  memory: process peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:,.0f} MiB")
    return seconds


def corpus_bytes(X: sp.csr_matrix) -> int:
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


class PartLoader:
    """A row partition of a corpus written by ``write_parts`` (picklable: each worker reads its own)."""

    def __init__(self, directory: str):
        self.directory = directory

    def __call__(self, part: int) -> tuple[sp.csr_matrix, np.ndarray]:
        n_features = int((Path(self.directory) / "features").read_text())
        with np.load(Path(self.directory) / f"part-{part}.npz") as z:
            indptr, indices, y = z["indptr"], z["indices"], z["y"]
        # a binary pattern with int8 ones (the partition keeps only indptr and indices)
        X = sp.csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr), shape=(len(indptr) - 1, n_features))
        return X, y


def write_parts(X: sp.csr_matrix, y: np.ndarray, directory: Path, n_parts: int) -> None:
    cuts = np.linspace(0, X.shape[0], n_parts + 1).astype(np.int64)
    (directory / "features").write_text(str(X.shape[1]))
    for p in range(n_parts):
        a, b = int(cuts[p]), int(cuts[p + 1])
        s, e = int(X.indptr[a]), int(X.indptr[b])
        np.savez(directory / f"part-{p}.npz", indptr=(X.indptr[a:b + 1] - s).astype(np.int64),
                 indices=X.indices[s:e], y=y[a:b])


def run_cluster(n_docs: int, n_parts: int, rounds: int, worker_share: float, evaluate: str) -> None:
    """The data-parallel search on a 2-worker LocalCluster, each worker limited below the corpus size."""
    import tempfile

    from distributed import Client, LocalCluster

    from toolkit.plugins.ots.cluster import data_parallel_search

    start = time.perf_counter()
    X, y = make_corpus(n_docs)
    size = corpus_bytes(X)
    pattern = X.indices.nbytes + X.indptr.nbytes
    n_pos = int(y.sum())
    M = max(1, int(np.floor(0.01 * n_pos + 0.5)))
    limit = int(worker_share * size)
    print(f"cluster corpus: {X.shape[0]:,} documents, {X.nnz:,} non-zeros, {n_pos:,} positives (M = {M}); "
          f"{size / 2**30:.2f} GiB as a float64 CSR matrix ({pattern / 2**30:.2f} GiB as a presence pattern); "
          f"generated in {time.perf_counter() - start:.0f} s")
    with tempfile.TemporaryDirectory(prefix="ots-scale-") as tmp:
        write_parts(X, y, Path(tmp), n_parts)
        del X, y
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=limit,
                          dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
            pids = client.run(os.getpid)
            print(f"  2 workers, memory_limit {limit / 2**30:.2f} GiB each ({worker_share:.2f} x the corpus), "
                  f"{n_parts} row partitions")
            params = dict(evaluate=evaluate, max_size=n_pos + rounds * M if rounds else None)
            t0 = time.perf_counter()
            result, parts = data_parallel_search(client, PartLoader(tmp), n_parts, 1, **params)
            seconds = time.perf_counter() - t0
            # the loaded partitions search again (no loading): the rounds alone
            t1 = time.perf_counter()
            again, _ = data_parallel_search(client, PartLoader(tmp), n_parts, 1, partitions=parts, **params)
            rounds_seconds = time.perf_counter() - t1
            memory = [p.memory().result() for p in parts]
            where = client.run(os.getpid)
            restarted = pids != where
            same = np.array_equal(result.added, again.added) and np.array_equal(result.average_precision,
                                                                                  again.average_precision)
            n_rounds = len(again.average_precision)
            print(f"  first search (the workers load their partitions, then {n_rounds} rounds): {seconds:.1f} s")
            print(f"  rounds on the loaded partitions: {rounds_seconds:.1f} s, {n_rounds} rounds of M = {M} "
                  f"({1000 * rounds_seconds / max(n_rounds, 1):.0f} ms per round); the same trace twice: {same}")
            by_worker: dict[str, int] = {}
            for p, m in zip(parts, memory):
                by_worker[p._address] = max(by_worker.get(p._address, 0), m["peak"])
            for address, peak in sorted(by_worker.items()):
                print(f"  worker {address}: peak {peak / 2**30:.2f} GiB = {peak / limit:.2f} x its limit")
            print(f"  worker restarted: {'yes' if restarted else 'no'} (process ids before and after)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=5, help="interleaved pairs for the nb-bim fit")
    parser.add_argument("--patience", default="10,200", help="comma-separated stopping rules to time")
    parser.add_argument("--full", action="store_true", help="also run to the end (patience None)")
    parser.add_argument("--save-trace", default="", help="write the last search's trace here (JSON)")
    parser.add_argument("--evaluate", default="wts", choices=["sts", "wts"],
                        help="the selector's evaluate option (wts: the default, rank every training document; "
                             "sts: the STS only)")
    parser.add_argument("--cluster", action="store_true", help="also run the data-parallel search on a LocalCluster")
    parser.add_argument("--cluster-docs", type=int, default=5_000_000)
    parser.add_argument("--cluster-rounds", type=int, default=300, help="rounds of the cluster search (0: all)")
    parser.add_argument("--parts", type=int, default=4, help="row partitions of the cluster corpus")
    parser.add_argument("--worker-memory", type=float, default=0.6,
                        help="each worker's memory_limit as a share of the corpus's size (below 1)")
    args = parser.parse_args()
    start = time.perf_counter()
    X, y = make_corpus(args.docs)
    print(f"corpus: {X.shape[0]:,} documents, {X.shape[1]:,} features, {X.nnz:,} non-zeros "
          f"({X.nnz / X.shape[0]:.1f} per document), {int(y.sum()):,} positives; generated in "
          f"{time.perf_counter() - start:.1f} s; resident {_status('VmRSS') / 2**20:,.0f} MiB "
          f"(os.cpu_count() = {os.cpu_count()})")
    v = np.random.default_rng(0).random(X.shape[1])
    pairs = record(interleaved(f"{X.shape[0]:,}-document corpus", "one product X @ w", lambda: X @ v, "nb-bim fit",
                               lambda: BIMNaiveBayes().fit(X, y), pairs=args.pairs), goal="<= 3.0")
    matvec, fit = statistics.median(pairs.anchor), statistics.median(pairs.ours)
    print(f"  a round's irreducible work, one sparse product X @ w: {1000 * matvec:.0f} ms (median); "
          f"one nb-bim fit {fit:.2f} s (median)")
    for patience in [int(p) for p in args.patience.split(",") if p.strip()]:
        run_search(X, y, f"OTS evaluate={args.evaluate}, patience {patience}",
                   save="" if args.full else args.save_trace,
                   patience=patience, evaluate=args.evaluate)
    if args.full:
        seconds = run_search(X, y, f"OTS evaluate={args.evaluate}, patience None (to the end)", save=args.save_trace,
                             evaluate=args.evaluate)
        print(f"  full search / one product = {seconds / matvec:,.0f}; full search / one nb-bim fit = "
              f"{seconds / fit:,.1f} (anchors of this run; load {os.getloadavg()[0]:.2f})")
    if args.cluster:
        del X, y
        run_cluster(args.cluster_docs, args.parts, args.cluster_rounds, args.worker_memory, args.evaluate)


if __name__ == "__main__":
    main()
