"""OTS selection at scale: a synthetic sparse binary corpus of 1,000,000 documents (1 % positives, about
50 distinct features each, 100,000 features), generated here with a fixed seed.

    python benchmarks/ots_scale.py [--docs 1000000] [--patience 10,200] [--full] [--evaluate sts|wts]

For each stopping rule: the OTS search's wall time, rounds, time per round, the OTS found, and the
peak resident memory of the process during the search (Linux VmHWM, reset before each search; the
corpus itself stays resident). Anchors measured in the same run: one sparse product of the corpus
with a weight vector (a round's irreducible work: every document is rescored each round) and one
nb-bim fit on the whole corpus. ``--full`` also runs the toolkit default (patience None: to the end,
|negatives| / M = 9,900 rounds; about 4 minutes here). ``--evaluate wts`` times the search that ranks
every training document each round (the setting of docs/results/ots.md) instead of the STS only.

The corpus: feature frequencies follow a Zipf-like law (rank r drawn with weight 1/(r + 10));
positives take 20 % of their features from 300 topic features, and 2 % of the negatives ("near
misses") take 8 % from the same topic, so there are negatives close to the positives to find.
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


def run_search(X: sp.csr_matrix, y: np.ndarray, label: str, save: str = "", **params: object) -> None:
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
    print(f"{label}: {seconds:.1f} s ({seconds / 60:.2f} min), {rounds} rounds of M = {trace['step']} "
          f"({1000 * seconds / max(rounds, 1):.0f} ms per round)")
    print(f"  OTS: {len(rows):,} documents ({selector.ots_negatives_:,} negatives), best leave-one-out AP "
          f"{trace['best_average_precision']:.4f} at round {trace['size'].index(trace['best_size']) + 1}")
    if reset and peak:
        print(f"  memory: resident {before / 2**20:,.0f} MiB before, peak {peak / 2**20:,.0f} MiB during the "
              f"search (+{(peak - before) / 2**20:,.0f} MiB)")
    else:
        import resource

        print(f"  memory: process peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:,.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=5, help="interleaved pairs for the nb-bim fit")
    parser.add_argument("--patience", default="10,200", help="comma-separated stopping rules to time")
    parser.add_argument("--full", action="store_true", help="also run to the end (patience None)")
    parser.add_argument("--save-trace", default="", help="write the last search's trace here (JSON)")
    parser.add_argument("--evaluate", default="sts", choices=["sts", "wts"],
                        help="the selector's evaluate option (sts: the default; wts: rank every training document)")
    args = parser.parse_args()
    start = time.perf_counter()
    X, y = make_corpus(args.docs)
    print(f"corpus: {X.shape[0]:,} documents, {X.shape[1]:,} features, {X.nnz:,} non-zeros "
          f"({X.nnz / X.shape[0]:.1f} per document), {int(y.sum()):,} positives; generated in "
          f"{time.perf_counter() - start:.1f} s; resident {_status('VmRSS') / 2**20:,.0f} MiB "
          f"(os.cpu_count() = {os.cpu_count()})")
    v = np.random.default_rng(0).random(X.shape[1])
    pairs = record(interleaved("1M corpus fit", "one product X @ w", lambda: X @ v, "nb-bim fit",
                               lambda: BIMNaiveBayes().fit(X, y), pairs=args.pairs), goal="<= 3.0")
    matvec = statistics.median(pairs.anchor)
    print(f"  a round's irreducible work, one sparse product X @ w: {1000 * matvec:.0f} ms (median)")
    for patience in [int(p) for p in args.patience.split(",") if p.strip()]:
        run_search(X, y, f"OTS evaluate={args.evaluate}, patience {patience}", save="" if args.full else args.save_trace,
                   patience=patience, evaluate=args.evaluate)
    if args.full:
        run_search(X, y, f"OTS evaluate={args.evaluate}, patience None (to the end)", save=args.save_trace,
                   evaluate=args.evaluate)


if __name__ == "__main__":
    main()
