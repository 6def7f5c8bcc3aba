"""Past one machine on Dask (issue 17): the harness on a cluster, and count models trained from a file
larger than a worker's memory.

    python benchmarks/scale_out.py [--part a|b|all] [--pairs 3] [--runs 3] [--gb 5] [--keep-corpus PATH]

(a) The 20 thesis datasets x nb-weka, bma-nb, nb-gaussian, liblinear-lr, ``--runs`` repetitions of the
    default protocol (240 tasks: about 4 minutes a run here at load 5): ``toolkit.evaluate(..., jobs=2)``
    against the same with ``cluster="local:2"`` (a LocalCluster of two worker processes started and stopped
    inside the timed call), in interleaved pairs (no warm-up run: each run is minutes long);
    wall times, the ratio, and the overhead per task = (cluster - local) / tasks. The start-up and shut-down
    of the local cluster alone are timed too, and the records of both runs are checked to be the same.
(b) A generated sparse corpus written as ARFF (``--gb`` GB, binary class, 5 % positives, a Zipf-like
    vocabulary of 200,000 words, about 120 distinct words per document), trained by nb-multinomial and
    nb-bim from byte ranges on a LocalCluster of 1 and of 2 workers, each limited to 2 GB (Dask's
    ``memory_limit``: a worker past 95 % of it is restarted, so a run that completes with no restart
    stayed below): MB/s, documents/s, the peak resident memory of every worker (getrusage, a fresh cluster
    per run) against its limit, and whether a worker was restarted. Then the same models fitted in one
    process on a subset of the file (its first ~300 MB) and from that subset's ranges on the cluster must be
    the same (exact counts, equal predictions). The corpus is deleted at the end unless --keep-corpus.

Heavy: run it alone (``flock /work/heavy.lock python benchmarks/scale_out.py``); (b) needs ~2x --gb of disk
for a moment and about 10 minutes here.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import interleaved, load_average, record, shared  # noqa: E402

THESIS = ["anneal", "autos", "vote", "sick", "credit-a", "mushroom", "heart-statlog", "segment", "labor", "vowel",
          "audiology", "iris", "zoo", "lymph", "soybean", "balance-scale", "glass", "letter", "hepatitis", "haberman"]
CLASSIFIERS = ["nb-weka", "bma-nb", "nb-gaussian", "liblinear-lr"]
SEED = 20260117


def _quiet_cluster(n_workers: int, memory_limit: str | None = None):
    from distributed import LocalCluster

    kwargs = {"memory_limit": memory_limit} if memory_limit else {}
    return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        silence_logs=50, **kwargs)


# ----------------------------------------------------------------------------- (a) the harness

def _canonical(path: Path) -> list[str]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        rec = json.loads(line)
        rec.pop("timing", None)
        out.append(json.dumps(rec, sort_keys=True))
    return sorted(out)


def harness(pairs: int, runs: int) -> None:
    import toolkit

    paths = [shared("uci", f"{name}.arff") for name in THESIS]
    tasks = len(paths) * len(CLASSIFIERS) * runs
    work = Path(tempfile.mkdtemp(prefix="scale-out-a-"))
    print(f"(a) {len(paths)} datasets x {len(CLASSIFIERS)} classifiers x {runs} repetitions = {tasks} tasks; "
          f"load {load_average():.2f}")
    count = {"local": 0, "cluster": 0}

    def local() -> None:
        count["local"] += 1
        toolkit.evaluate(paths, CLASSIFIERS, runs=runs, jobs=2, out=work / f"local-{count['local']}.jsonl")

    def on_cluster() -> None:
        count["cluster"] += 1
        toolkit.evaluate(paths, CLASSIFIERS, runs=runs, cluster="local:2", out=work / f"cluster-{count['cluster']}.jsonl")

    pair = record(interleaved(f"20 thesis datasets x 4 classifiers x {runs} repetitions", "--jobs 2", local,
                              "--cluster local:2", on_cluster, pairs=pairs, warmup=False))
    same = _canonical(work / "local-1.jsonl") == _canonical(work / "cluster-1.jsonl")
    print(f"    the records of both (timing left out) are the same: {same}")
    overhead = [(o - a) / tasks * 1000 for o, a in zip(pair.ours, pair.anchor, strict=True)]
    print(f"    overhead per task: {statistics.median(overhead):.1f} ms (min {min(overhead):.1f}, max "
          f"{max(overhead):.1f}); per task local {statistics.median(pair.anchor) / tasks * 1000:.1f} ms")

    def start_stop() -> None:
        from distributed import Client

        with _quiet_cluster(2) as cluster, Client(cluster):
            pass

    times = []
    for _ in range(pairs):
        start = time.perf_counter()
        start_stop()
        times.append(time.perf_counter() - start)
    rest = statistics.median(pair.ours) - statistics.median(times) - statistics.median(pair.anchor)
    print(f"    LocalCluster(2) start + stop alone: {statistics.median(times):.2f} s (min {min(times):.2f}, max "
          f"{max(times):.2f}); overhead per task without it: {rest / tasks * 1000:.1f} ms")
    shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------------- (b) a corpus past a worker's memory

VOCABULARY = 200_000


def _pieces(pieces: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte strings laid end to end (uint8), with each one's start and length."""
    lengths = np.array([len(p) for p in pieces], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.frombuffer(b"".join(pieces), dtype=np.uint8), starts, lengths


def write_corpus(path: Path, target_bytes: int, seed: int = SEED, docs_per_chunk: int = 20_000) -> tuple[int, int]:
    """A binary word-count corpus as sparse ARFF, generated and written chunk by chunk (numpy only: every
    line is assembled from a table of byte pieces). Returns (documents, bytes)."""
    rng = np.random.default_rng(seed)
    V = VOCABULARY
    top = np.log((V + 10.0) / 10.0)   # rank r drawn with weight ~ 1/(r + 10): the inverse of its (continuous) CDF
    word_of_rank = rng.permutation(V)
    topic = rng.choice(V, 2000, replace=False)
    # pieces: "w " per word, "c," per count 1..9, "{", and the class field ending each line
    pieces = [f"{w} ".encode() for w in range(V)] + [f"{c},".encode() for c in range(1, 10)] + \
        [b"{", f"{V} neg}}\n".encode(), f"{V} pos}}\n".encode()]
    flat, piece_start, piece_length = _pieces(pieces)
    COUNT0, START, END0 = V - 1, V + 9, V + 10      # count c -> COUNT0 + c
    with open(path, "wb") as fh:
        fh.write(b"% generated by benchmarks/scale_out.py: a Zipf-like binary word-count corpus\n@relation corpus\n")
        fh.write(b"".join(f"@attribute w{w} numeric\n".encode() for w in range(V)))
        fh.write(b"@attribute class {neg,pos}\n@data\n")
        docs = 0
        while fh.tell() < target_bytes:
            n = docs_per_chunk
            positive = rng.random(n) < 0.05
            tokens = rng.poisson(150, n) + 1
            doc_of = np.repeat(np.arange(n), tokens)
            ranks = np.minimum((10.0 * np.exp(top * rng.random(len(doc_of))) - 10.0).astype(np.int64), V - 1)
            words = word_of_rank[ranks]
            on_topic = rng.random(len(doc_of)) < np.where(positive[doc_of], 0.2, 0.01)
            words[on_topic] = topic[rng.integers(0, len(topic), int(on_topic.sum()))]
            key = doc_of.astype(np.int64) * V + words
            key, count = np.unique(key, return_counts=True)          # sorted by document, then word
            doc, word = key // V, key % V
            count = np.minimum(count, 9)
            per_doc = np.bincount(doc, minlength=n)
            # token stream per document: START, (word, count) pairs, END
            m = len(word)
            stream = np.empty(m * 2 + 2 * n, dtype=np.int64)
            first_entry = np.concatenate([[0], np.cumsum(per_doc)[:-1]])
            doc_start = first_entry * 2 + 2 * np.arange(n)           # position of each START
            stream[doc_start] = START
            entry_pos = doc_start[doc] + 1 + 2 * (np.arange(m) - first_entry[doc])
            stream[entry_pos] = word
            stream[entry_pos + 1] = COUNT0 + count
            stream[doc_start + 1 + 2 * per_doc] = END0 + positive
            length = piece_length[stream]
            shift = np.repeat(piece_start[stream] - (np.cumsum(length) - length), length)
            fh.write(flat[np.arange(len(shift)) + shift].tobytes())
            docs += n
        size = fh.tell()
    return docs, size


def _peak_rss() -> int:
    """This process's peak resident memory (bytes): VmHWM, which starts afresh at exec. (getrusage's
    ru_maxrss does not: a worker spawned by the nanny would report the benchmark process's own peak, that
    of writing the corpus, if it was larger.)"""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def train_on_cluster(path: Path, model: str, n_workers: int, memory_limit: str) -> dict:
    from distributed import Client

    from toolkit.models.partitioned import train_partitioned

    with _quiet_cluster(n_workers, memory_limit) as cluster, Client(cluster) as client:
        before = client.run(os.getpid)
        start = time.perf_counter()
        fitted = train_partitioned(path, model, client=client, tune=False)
        wall = time.perf_counter() - start
        peaks = client.run(_peak_rss)
        after = client.run(os.getpid)
    restarted = len(set(before.values()) - set(after.values()))
    return {"wall": wall, "peaks": sorted(peaks.values()), "restarted": restarted, "fitted": fitted}


def corpus(gb: float, keep: str | None) -> None:
    import toolkit
    from toolkit.data import arff

    limit_gb = 2.0
    folder = Path(keep).parent if keep else Path(tempfile.mkdtemp(prefix="scale-out-b-"))
    path = Path(keep) if keep else folder / "corpus.arff"
    if not path.exists():
        start = time.perf_counter()
        docs, size = write_corpus(path, int(gb * 1e9))
        print(f"(b) corpus: {docs:,} documents, {size / 1e9:.2f} GB, {VOCABULARY:,} words (written in "
              f"{time.perf_counter() - start:.0f} s); load {load_average():.2f}")
    else:
        size = path.stat().st_size
        docs = None
        print(f"(b) corpus: {path} ({size / 1e9:.2f} GB, kept from an earlier run); load {load_average():.2f}")
    try:
        results = {}
        for model in ["nb-multinomial", "nb-bim"]:
            for workers in (1, 2):
                r = train_on_cluster(path, model, workers, f"{limit_gb}GB")
                n = r["fitted"].classifier.class_count_.sum() if model == "nb-multinomial" else None
                docs = docs or (int(n) if n is not None else None)
                results[(model, workers)] = r
                peaks = ", ".join(f"{p / 2**30:.2f}" for p in r["peaks"])
                print(f"  {model}, {workers} worker(s) of {limit_gb:.0f} GB: {r['wall']:.1f} s, "
                      f"{size / 1e6 / r['wall']:.1f} MB/s, {docs / r['wall']:,.0f} documents/s; peak memory per "
                      f"worker {peaks} GiB (limit {limit_gb * 1e9 / 2**30:.2f} GiB, all below: "
                      f"{max(r['peaks']) < limit_gb * 1e9}); workers restarted: {r['restarted']}; "
                      f"load {load_average():.2f}")
            one, two = results[(model, 1)]["wall"], results[(model, 2)]["wall"]
            print(f"    {model}: 2 workers / 1 worker = {two / one:.2f} of the wall time ({one / two:.2f}x)")
        # the same model as a single-process fit, on a subset of the file
        subset = folder / "subset.arff"
        header = arff.read_range(path, 0, 0)
        with open(path, "rb") as src, open(subset, "wb") as dst:
            data_offset = arff.split_ranges(path, 1)[0][0]
            dst.write(src.read(data_offset))
            chunk = src.read(300_000_000)
            dst.write(chunk[:chunk.rfind(b"\n") + 1])
        whole = arff.read(subset)
        print(f"  subset check: {whole.n_instances:,} documents ({subset.stat().st_size / 1e6:.0f} MB), header of "
              f"{len(header.attributes):,} attributes")
        for model in ["nb-multinomial", "nb-bim"]:
            local = toolkit.train(whole, model, tune=False).classifier
            r = train_on_cluster(subset, model, 2, f"{limit_gb}GB")
            remote = r["fitted"].classifier
            if model == "nb-multinomial":
                same_stats = bool(np.array_equal(local.feature_count_, remote.feature_count_))
            else:
                same_stats = bool(np.array_equal(local.weights_, remote.weights_) and
                                  local.intercept_ == remote.intercept_)
            sample = whole.X[:100_000]
            same_pred = bool(np.array_equal(local.predict(sample), remote.predict(sample)))
            print(f"    {model}: statistics equal: {same_stats}; predictions on {sample.shape[0]:,} documents equal: "
                  f"{same_pred}")
        del whole
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
            print(f"  corpus deleted ({folder})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["a", "b", "all"], default="all")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--runs", type=int, default=3, help="repetitions per dataset and classifier in (a)")
    parser.add_argument("--gb", type=float, default=5.0, help="size of the generated corpus of (b)")
    parser.add_argument("--keep-corpus", metavar="PATH", help="write (or reuse) the corpus here and keep it")
    args = parser.parse_args()
    import subprocess

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=Path(__file__).resolve().parent).stdout.strip() or "?"
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {commit}; cores: {os.cpu_count()}; "
          f"load {load_average():.2f}")
    if args.part in ("a", "all"):
        harness(args.pairs, args.runs)
    if args.part in ("b", "all"):
        corpus(args.gb, args.keep_corpus)
    return 0


if __name__ == "__main__":
    sys.exit(main())
