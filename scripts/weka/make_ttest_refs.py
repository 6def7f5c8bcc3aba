"""WEKA 3.6's Experimenter testers (PairedCorrectedTTester, PairedTTester) on toolkit results (issue 14).

One command, from the repository root, with Debian's ``weka`` package installed (Java 17):

    python scripts/weka/make_ttest_refs.py [--weka-jar /usr/share/java/weka.jar]

1. Runs the toolkit's harness (default protocol: 10 repetitions, 10 % test, seeds 1..10) on bundled
   datasets for nb-weka (the baseline) and three other pipelines, metric accuracy; adds synthetic result
   sets for the corner cases (training and test sizes that vary between runs, so that WEKA's ratio of sums
   differs from a mean of ratios; a constant non-zero difference; identical results; a difference whose
   standard deviation is below WEKA's 1e-6).
2. Writes them as one results file in the Experimenter's ARFF result format (Key_Dataset, Key_Run,
   Key_Scheme, Key_Scheme_options, Key_Scheme_version_ID, Number_of_training_instances,
   Number_of_testing_instances, the metric).
3. Compiles ``scripts/weka/TTestDump.java`` and runs both testers on it (significance 0.05) with every
   result set as the baseline in turn: per (baseline, dataset, pipeline) the count, the mean and sd of the differences, the
   probability, the significance, the test/train ratio and the t statistic; and the testers' own tables.
4. Stores ``tests/golden/weka_ttest.json``: the per-run values and sizes (from which the ARFF file is
   written again), WEKA's numbers and its tables with the v / * marks. ``tests/test_stats_weka.py`` checks the toolkit's tests and ``compare`` marks against it
   without Java.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

import toolkit  # noqa: E402
from make_nb_refs import git_commit, java_version, weka_version  # noqa: E402

OUT = ROOT / "tests" / "golden" / "weka_ttest.json"
DATASETS = ["glass", "diabetes", "vote", "iris", "breast-cancer", "labor", "soybean", "ionosphere", "credit-g"]
PIPELINES = ["nb-weka", "nb-gaussian", "bma-nb", "liblinear-lr:C=1,B=1"]
METRIC = "accuracy"
SIG = 0.05


def harness_sets() -> list[dict]:
    results = toolkit.evaluate(list(DATASETS), PIPELINES, metrics=[METRIC], runs=10, seed=1)
    sets = []
    for d in results.datasets():
        values, n_train, n_test = {}, None, None
        for p in results.pipelines():
            cell = results.cell(d, p)
            values[p] = [r["metrics"][METRIC] for r in cell]
            n_train = [r["n_train"] for r in cell]
            n_test = [r["n_test"] for r in cell]
        sets.append({"dataset": d, "source": "toolkit harness", "values": values, "n_train": n_train,
                     "n_test": n_test})
    return sets


def synthetic_sets(names: list[str]) -> list[dict]:
    """Corner cases, under the same four result-set names (WEKA's tester wants every result set on every
    dataset)."""
    rng = np.random.default_rng(14)
    base = 0.8 + 0.02 * rng.standard_normal(10)

    def named(*series: np.ndarray) -> dict:
        return {p: np.asarray(v).tolist() for p, v in zip(names, series)}

    noise = lambda scale: scale * rng.standard_normal(10)  # noqa: E731
    return [
        {"dataset": "uneven-sizes", "source": "synthetic: sizes vary between runs",
         "values": named(base, base + 0.015 + noise(0.01), base - 0.004 + noise(0.01), base - 0.03 + noise(0.01)),
         "n_train": [90, 80, 100, 95, 60, 70, 85, 99, 75, 66], "n_test": [10, 20, 5, 12, 40, 30, 15, 3, 25, 34]},
        {"dataset": "constant-difference", "source": "synthetic: every difference 0.03, -0.03 or 0",
         "values": named(base, base + 0.03, base, base - 0.03), "n_train": [90] * 10, "n_test": [10] * 10},
        {"dataset": "tiny-sd", "source": "synthetic: difference sd below and above 1e-6",
         "values": named(base, base + 1e-3 + noise(1e-8), base + 1e-3 + noise(1e-5), base - 1e-3 + noise(1e-7)),
         "n_train": [90] * 10, "n_test": [10] * 10},
        {"dataset": "missing-run", "source": "synthetic: a run without a value (the tester skips the pair)",
         "values": {**named(base, base + 0.02 + noise(0.01), base + noise(0.01), base - 0.02 + noise(0.01)),
                    names[2]: [None if r == 3 else float(v) for r, v in enumerate(base + noise(0.01))]},
         "n_train": [90] * 10, "n_test": [10] * 10},
    ]


def write_arff(sets: list[dict], path: Path) -> None:
    datasets = [s["dataset"] for s in sets]
    schemes = list(dict.fromkeys(p for s in sets for p in s["values"]))
    lines = ["@relation toolkit-results", "",
             "@attribute Key_Dataset {" + ",".join(f"'{d}'" for d in datasets) + "}",
             "@attribute Key_Run numeric",
             "@attribute Key_Scheme {" + ",".join(f"'{p}'" for p in schemes) + "}",
             "@attribute Key_Scheme_options {''}",
             "@attribute Key_Scheme_version_ID {'0'}",
             "@attribute Number_of_training_instances numeric",
             "@attribute Number_of_testing_instances numeric",
             f"@attribute {METRIC} numeric", "", "@data"]
    for s in sets:
        names = list(s["values"])
        for p in names:
            for run, value in enumerate(s["values"][p], 1):
                shown = "?" if value is None else repr(float(value))
                lines.append(f"'{s['dataset']}',{run},'{p}','','0',{s['n_train'][run - 1]},{s['n_test'][run - 1]},"
                             f"{shown}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def parse(output: str) -> tuple[dict, dict]:
    stats: dict = {"corrected": {}, "plain": {}}
    tables: dict = {}
    lines = output.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("STAT "):
            _s, tester, b, dataset, j, count, mean, sd, prob, sig, ratio, t = line.split()
            stats[tester].setdefault(int(b), {}).setdefault(dataset, {})[int(j)] = {
                "count": float(count), "mean_difference": float(mean), "sd_difference": float(sd),
                "p_value": float(prob), "significance": int(sig), "ratio": float(ratio), "t": float(t)}
        elif line.startswith("TABLE "):
            _t, tester, b = line.split()
            body = []
            i += 1
            while lines[i] != "END":
                body.append(lines[i])
                i += 1
            tables.setdefault(tester, {})[int(b)] = "\n".join(body)
        i += 1
    return stats, tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args(argv)
    sets = harness_sets()
    sets += synthetic_sets(list(sets[0]["values"]))
    with tempfile.TemporaryDirectory(prefix="weka_ttest_") as tmp:
        work = Path(tmp)
        arff_path = work / "results.arff"
        write_arff(sets, arff_path)
        subprocess.run(["javac", "-nowarn", "-cp", args.weka_jar, "-d", str(work),
                        str(Path(__file__).with_name("TTestDump.java"))], check=True)
        proc = subprocess.run(["java", "-cp", f"{args.weka_jar}{os.pathsep}{work}", "TTestDump", str(arff_path),
                               METRIC, str(SIG)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"TTestDump failed:\n{proc.stderr[-3000:]}")
    stats, tables = parse(proc.stdout)
    for s in sets:
        names = list(s["values"])
        # weka[tester][baseline][pipeline]: the tester's numbers for (baseline, pipeline) on this dataset
        s["weka"] = {tester: {names[b]: {names[j]: v for j, v in stats[tester][b][s["dataset"]].items()}
                              for b in stats[tester]} for tester in ("corrected", "plain")}
    doc = {
        "provenance": {
            "weka": f"WEKA {weka_version(args.weka_jar)} (Debian package weka, {os.path.realpath(args.weka_jar)})",
            "java": java_version(),
            "testers": "weka.experiment.PairedCorrectedTTester and weka.experiment.PairedTTester, significance "
                       f"{SIG}, every result set as the baseline in turn, keys as the Experimenter sets them",
            "driver": "scripts/weka/TTestDump.java",
            "command": "python scripts/weka/make_ttest_refs.py",
            "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
            "toolkit_commit": git_commit(),
            "harness": f"toolkit.evaluate({DATASETS}, {PIPELINES}, metrics=['{METRIC}'], runs=10, seed=1)",
            "stderr": proc.stderr.strip()[-2000:],
        },
        "metric": METRIC,
        "alpha": SIG,
        "sets": sets,
        "weka_tables": tables,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(sets)} result sets", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
