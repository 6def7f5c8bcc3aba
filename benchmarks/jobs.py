"""Parallel runs: the main job (the 20 thesis datasets, nb-weka + bma-nb, 10 repetitions) with
``--jobs 2`` against ``--jobs 1``, in interleaved pairs. Goal on an idle 2-core machine: at least 1.7x.

    python benchmarks/jobs.py [--pairs 5] [--jobs 2]

Two figures: the harness in process (``toolkit.evaluate`` on datasets already loaded: what the workers
share) and the whole ``toolkit evaluate`` process (interpreter start, imports and loading stay serial).
Also prints the BLAS/OpenMP thread pools a worker runs with (threadpoolctl), to show that N workers
do not each start one thread per core.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from _common import interleaved, load_average, print_bytecode_note, process_env, record, shared

import toolkit
from toolkit.evaluation import harness

THESIS = ["anneal", "autos", "vote", "sick", "credit-a", "mushroom", "heart-statlog", "segment", "labor", "vowel",
          "audiology", "iris", "zoo", "lymph", "soybean", "balance-scale", "glass", "letter", "hepatitis", "haberman"]
CLASSIFIERS = ["nb-weka", "bma-nb"]


def _pools() -> list[tuple[str, int]]:
    from threadpoolctl import threadpool_info

    return [(p["internal_api"], p["num_threads"]) for p in threadpool_info()]


def worker_pools(jobs: int) -> list[tuple[str, int]]:
    with harness.forked_pool(jobs) as pool:
        return pool.submit(_pools).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    paths = [shared("uci", f"{name}.arff") for name in THESIS]
    datasets = [toolkit.load_arff(p) for p in paths]
    print(f"cores: os.cpu_count() = {os.cpu_count()}, usable = {len(os.sched_getaffinity(0))}; load {load_average():.2f}")
    print(f"  thread pools in this process: {_pools()}")
    print_bytecode_note()
    print(f"  thread pools in a worker of --jobs {args.jobs}: {worker_pools(args.jobs)}")

    def in_process(jobs):
        return lambda: toolkit.evaluate(datasets, CLASSIFIERS, runs=args.runs, jobs=jobs)

    # CPU seconds, which load does not change much: this process's own and its finished workers'
    def cpu(fn):
        self0, kids0 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        fn()
        self1, kids1 = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return (self1.ru_utime + self1.ru_stime - self0.ru_utime - self0.ru_stime,
                kids1.ru_utime + kids1.ru_stime - kids0.ru_utime - kids0.ru_stime)

    one, _ = cpu(in_process(1))
    parent, workers = cpu(in_process(args.jobs))
    print(f"  CPU seconds, harness in process: --jobs 1 {one:.2f}; --jobs {args.jobs}: parent {parent:.2f} + workers "
          f"{workers:.2f}. If the cores were free: about {one / (parent + workers / args.jobs):.2f}x "
          f"(--jobs 1 CPU / (parent + workers / {args.jobs}); a model, not a measurement)")

    harness_pairs = record(interleaved("main job, harness in process", "--jobs 1", in_process(1),
                                       f"--jobs {args.jobs}", in_process(args.jobs), pairs=args.pairs,
                                       gap=0.25),   # a --jobs run's restored BLAS threads spin in this process
                           goal="<= 0.59 (1.7x)")

    script = Path(sys.executable).with_name("toolkit")
    base = [str(script)] if script.exists() else [sys.executable, "-m", "toolkit"]

    def whole(jobs):
        def go():
            subprocess.run(base + ["evaluate", *map(str, paths), "-c", CLASSIFIERS[0], "-c", CLASSIFIERS[1], "--runs",
                                   str(args.runs), "--jobs", str(jobs)],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=process_env())
        return go

    whole_pairs = record(interleaved("main job, whole toolkit evaluate process", "--jobs 1", whole(1),
                                     f"--jobs {args.jobs}", whole(args.jobs), pairs=args.pairs),
                         goal="<= 0.59 (1.7x)")
    # Amdahl: what stays serial in the whole process (interpreter start, imports, loading, report) is the
    # whole --jobs 1 time less the harness's; with the harness's own measured speed-up, the whole process
    # can at best give
    one_whole, one_harness = statistics.median(whole_pairs.anchor), statistics.median(harness_pairs.anchor)
    n_harness = statistics.median(harness_pairs.ours)
    serial = max(0.0, one_whole - one_harness)
    print(f"  serial part of the whole process: {serial:.2f} s of {one_whole:.2f} s; with the harness's "
          f"--jobs {args.jobs} time ({n_harness:.2f} s) the whole process can reach at most "
          f"{one_whole / (serial + n_harness):.2f}x, and {one_whole / (serial + one_harness / args.jobs):.2f}x "
          f"with a perfect {args.jobs}-way harness")


if __name__ == "__main__":
    main()
