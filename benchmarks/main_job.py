"""The main job end to end against WEKA 3.6 on the same splits: the 20 datasets of the BMA thesis
(algorithms.md 6.1; ../shared/datasets MANIFEST.md), nb-weka and bma-nb, the default protocol
(10 repetitions, 10 % test, H tuned on a validation part), ``--jobs 1``.

    python benchmarks/main_job.py [--pairs 3] [--runs 10] [--weka-jar /usr/share/java/weka.jar]

Each round, in alternating order, times:

* toolkit, whole process: ``toolkit evaluate <20 files> -c nb-weka -c bma-nb --runs 10 --jobs 1``
  (interpreter start, imports, loading, the run, the summary table), and the same with ``--out F``
  (every record flushed and fsync'ed as it finishes: 400 fsyncs);
* toolkit, in process: ``toolkit.evaluate`` on the loaded datasets (the harness only);
* WEKA, whole processes: one ``java weka.classifiers.bayes.NaiveBayes -t train.arff -T test.arff -v -o``
  per split (200 JVMs), how a WEKA user runs given splits from the command line; the acceptance
  figure of issue 19 (toolkit at least 10x faster);
* WEKA, one JVM: ``benchmarks/WekaNBTimer.java`` over all 200 splits, whole process, and its in-JVM
  times (reading the split files; building and evaluating NB: WEKA's compute).

WEKA runs NB only; the toolkit runs nb-weka and bma-nb with tuning. The split files are written once
with ``toolkit.data.arff.write(ds.subset(rows))`` (not timed). Needs Debian's ``weka`` and a JDK.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Pairs, load_average, print_bytecode_note, process_env, record, shared

import toolkit
from toolkit.data import arff
from toolkit.evaluation.harness import Protocol

THESIS = ["anneal", "autos", "vote", "sick", "credit-a", "mushroom", "heart-statlog", "segment", "labor", "vowel",
          "audiology", "iris", "zoo", "lymph", "soybean", "balance-scale", "glass", "letter", "hepatitis", "haberman"]
CLASSIFIERS = ["nb-weka", "bma-nb"]


def toolkit_command() -> list[str]:
    script = Path(sys.executable).with_name("toolkit")
    return [str(script)] if script.exists() else [sys.executable, "-m", "toolkit"]


def run_quiet(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=process_env())
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="rounds (each runs all four)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args()
    paths = [shared("uci", f"{name}.arff") for name in THESIS]
    have_weka = Path(args.weka_jar).exists() and shutil.which("java") and shutil.which("javac")
    work = Path(tempfile.mkdtemp(prefix="main_job_"))
    try:
        datasets = [toolkit.load_arff(p) for p in paths]
        protocol = Protocol(repetitions=args.runs)
        jobs, per_split = [], []
        if have_weka:
            build = work / "classes"
            build.mkdir()
            subprocess.run(["javac", "-nowarn", "-cp", args.weka_jar, "-d", str(build),
                            str(Path(__file__).with_name("WekaNBTimer.java")),
                            str(Path(__file__).resolve().parent.parent / "scripts" / "weka" / "NBDump.java")],
                           check=True)
            for path in paths:
                ds = arff.read(path)
                for s in protocol.splits(ds):
                    stem = work / f"{path.stem}.r{s.repetition}"
                    arff.write(ds.subset(s.train), f"{stem}.train.arff")
                    arff.write(ds.subset(s.test), f"{stem}.test.arff")
                    jobs.append(f"{ds.class_index}\t{stem}.train.arff\t{stem}.test.arff")
                    per_split.append(["java", "-cp", args.weka_jar, "weka.classifiers.bayes.NaiveBayes",
                                      "-t", f"{stem}.train.arff", "-T", f"{stem}.test.arff", "-c",
                                      str(ds.class_index + 1), "-v", "-o"])
            (work / "jobs.tsv").write_text("\n".join(jobs) + "\n", encoding="utf-8")
        else:
            print(f"  WEKA not run: {args.weka_jar}, java or javac absent (apt-get install -y weka default-jdk)")
        cli = toolkit_command() + ["evaluate", *map(str, paths), *sum((["-c", c] for c in CLASSIFIERS), []),
                                   "--runs", str(args.runs), "--jobs", "1"]
        n_splits = len(datasets) * args.runs
        print(f"main job: {len(datasets)} datasets x {args.runs} repetitions = {n_splits} splits; toolkit runs "
              f"{' + '.join(CLASSIFIERS)} ({2 * n_splits} tasks), WEKA runs NaiveBayes")
        print_bytecode_note()

        whole = Pairs("main job, whole processes", "WEKA NB, a JVM per split", "toolkit evaluate (one process)")
        whole_out = Pairs("main job, whole processes", "WEKA NB, a JVM per split", "toolkit evaluate --out F")
        one_jvm = Pairs("main job, one process each", "WEKA NB, one JVM for all splits", "toolkit evaluate")
        compute = Pairs("main job, compute", "WEKA in-JVM build+evaluate", "toolkit harness in process")
        reading = []
        errors = None

        def toolkit_cli(results_file: bool = False) -> float:
            if not results_file:
                return run_quiet(cli)
            out = work / f"run{time.perf_counter_ns()}.jsonl"
            seconds = run_quiet(cli + ["--out", str(out)])
            out.unlink(missing_ok=True)
            return seconds

        def toolkit_in_process() -> float:
            start = time.perf_counter()
            toolkit.evaluate(datasets, CLASSIFIERS, runs=args.runs, jobs=1)
            return time.perf_counter() - start

        def weka_per_split() -> float:
            return sum(run_quiet(c) for c in per_split)

        def weka_one_jvm() -> tuple[float, float, float]:
            start = time.perf_counter()
            out = subprocess.run(["java", "-cp", f"{args.weka_jar}{os.pathsep}{work / 'classes'}", "WekaNBTimer",
                                  str(work / "jobs.tsv")], check=True, capture_output=True, text=True).stdout
            seconds = time.perf_counter() - start
            f = out.split()
            values = dict(zip(f[::2], f[1::2]))
            nonlocal errors
            errors = int(values["errors"])
            return seconds, float(values["build_s"]) + float(values["evaluate_s"]), float(values["load_s"])

        toolkit_cli()                          # warm the file cache and the bytecode of both sides
        if have_weka:
            weka_one_jvm()
        for i in range(args.pairs):
            load = load_average()
            steps = ["cli", "inproc", "weka_split", "weka_jvm", "cli_out"]
            results = {}
            for step in (steps if i % 2 == 0 else steps[::-1]):
                if step == "cli":
                    results[step] = toolkit_cli()
                elif step == "cli_out":
                    results[step] = toolkit_cli(results_file=True)
                elif step == "inproc":
                    results[step] = toolkit_in_process()
                elif have_weka and step == "weka_split":
                    results[step] = weka_per_split()
                elif have_weka:
                    results[step] = weka_one_jvm()
            print(f"  round {i + 1}: toolkit whole process {results['cli']:.2f} s ({results['cli_out']:.2f} s with "
                  f"--out), in process {results['inproc']:.2f} s" + (f"; WEKA per-split JVMs {results['weka_split']:.1f} s, one JVM "
                                                   f"{results['weka_jvm'][0]:.2f} s (in-JVM build+evaluate "
                                                   f"{results['weka_jvm'][1]:.2f} s, reading files "
                                                   f"{results['weka_jvm'][2]:.2f} s)" if have_weka else "")
                  + f"; load {load:.2f}", flush=True)
            if have_weka:
                for pairs, anchor, ours in ((whole, results["weka_split"], results["cli"]),
                                            (whole_out, results["weka_split"], results["cli_out"]),
                                            (one_jvm, results["weka_jvm"][0], results["cli"]),
                                            (compute, results["weka_jvm"][1], results["inproc"])):
                    pairs.anchor.append(anchor)
                    pairs.ours.append(ours)
                    pairs.load.append(load)
                reading.append(results["weka_jvm"][2])
        if have_weka:
            record(whole, goal="<= 0.10 (10x faster)")
            record(whole_out)
            record(one_jvm)
            record(compute)
            for p in (whole, whole_out, one_jvm, compute):
                print(f"    {p.what}: toolkit {1 / p.median_ratio:.1f}x faster")
            print(f"  WEKA NB test errors over the {n_splits} splits: {errors} (reading the 2 x {n_splits} split files "
                  f"took WEKA {sorted(reading)[len(reading) // 2]:.2f} s of its one-JVM run)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
