"""WEKA 3.6's PairedCorrectedTTester and PairedTTester on result sets with missing and failed runs: the v / *
marks and the (v/ /*) counts when the runs a scheme has differ from the runs it shares with the baseline.

One command, from the repository root, with Debian's ``weka`` package installed (Java 17):

    python scripts/weka/make_pairing_refs.py [--weka-jar /usr/share/java/weka.jar]

The sets (three schemes A, B, C; 10 runs; 90 training and 10 test instances a run) are made so that the
means of each scheme's own runs point the other way than the paired differences (a baseline run with an
outlier that the other scheme has no value for, missing or failed), or hold no pair at all (a scheme, or
every scheme, without a value; WEKA leaves such a dataset out of the (v/ /*) counts), or one pair. A
failed run (``"FAIL"``, a failed record in the toolkit) is a missing value (``?``) for WEKA, as WEKA's
testers want a row for every run. The testers run from WEKA's command line with every scheme as the
baseline in turn, significance 0.05; ``tests/golden/weka_ttest_pairing.json`` keeps the sets and WEKA's
tables, which ``tests/test_stats_weka.py`` compares with ``compare_results`` without Java.
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
sys.path.insert(0, str(Path(__file__).parent))

from make_nb_refs import git_commit, java_version, weka_version  # noqa: E402

OUT = ROOT / "tests" / "golden" / "weka_ttest_pairing.json"
SCHEMES = ["A", "B", "C"]
RUNS = 10
N_TRAIN, N_TEST = 90, 10
SIG = 0.05
TESTERS = {"corrected": "weka.experiment.PairedCorrectedTTester", "plain": "weka.experiment.PairedTTester"}


def sets() -> list[dict]:
    rng = np.random.default_rng(2027)
    base = np.round(0.8 + 0.02 * rng.standard_normal(RUNS), 4)

    def noise(scale: float) -> np.ndarray:
        return scale * rng.standard_normal(RUNS)

    def r(values: np.ndarray) -> list:
        return [float(v) for v in np.round(values, 6)]

    a_out = base.copy()
    a_out[9] = 0.30                                  # an outlier run of the baseline
    b_lower = r(a_out - 0.03 + noise(0.003))
    nan_run = {"A": r(a_out), "B": b_lower[:9] + [None], "C": r(a_out + 0.02 + noise(0.005))}
    failed_run = {"A": r(a_out), "B": b_lower[:9] + ["FAIL"], "C": nan_run["C"]}
    b_higher = r(base + 0.02 + noise(0.004))
    b_higher[2] = 0.10                               # the other's outlier falls on the baseline's missing run
    c_mixed = r(base - 0.01 + noise(0.02))
    c_mixed[2] = 0.95
    nan_base = {"A": [None if i == 2 else float(v) for i, v in enumerate(base)], "B": b_higher, "C": c_mixed}
    other_missing = {"A": r(base), "B": [None] * RUNS, "C": r(base + 0.03 + noise(0.005))}
    all_missing = {p: [None] * RUNS for p in SCHEMES}
    one_pair = {"A": [float(base[0])] + [None] * (RUNS - 1), "B": r(base - 0.05 + noise(0.005)),
                "C": r(base + 0.05 + noise(0.005))}
    all_failed = {"A": r(base), "B": ["FAIL"] * RUNS, "C": r(base - 0.04 + noise(0.004))}
    return [
        {"dataset": "nan-run", "what": "B has no value on the baseline's outlier run: B's own mean is above A's, "
                                       "its paired values below", "values": nan_run},
        {"dataset": "failed-run", "what": "as nan-run, B's run failed", "values": failed_run},
        {"dataset": "nan-baseline-run", "what": "the baseline has no value on B's outlier run: B's own mean is "
                                                "below A's, its paired values above", "values": nan_base},
        {"dataset": "other-missing", "what": "B has no value at all (no pair: not counted)", "values": other_missing},
        {"dataset": "all-missing", "what": "no scheme has a value (not counted)", "values": all_missing},
        {"dataset": "one-pair", "what": "the baseline A has one value: one pair (a tie)", "values": one_pair},
        {"dataset": "all-failed", "what": "every run of B failed (no pair: not counted)", "values": all_failed},
    ]


def write_arff(data: list[dict], path: Path) -> None:
    lines = ["@relation toolkit-results", "",
             "@attribute Key_Dataset {" + ",".join(f"'{s['dataset']}'" for s in data) + "}",
             "@attribute Key_Run numeric", "@attribute Key_Fold numeric",
             "@attribute Key_Scheme {" + ",".join(f"'{p}'" for p in SCHEMES) + "}",
             "@attribute Key_Scheme_options {''}", "@attribute Key_Scheme_version_ID {'0'}",
             "@attribute Number_of_training_instances numeric", "@attribute Number_of_testing_instances numeric",
             "@attribute value numeric", "", "@data"]
    for s in data:
        for p in SCHEMES:
            for run, v in enumerate(s["values"][p], 1):
                shown = "?" if v is None or v == "FAIL" else repr(float(v))
                lines.append(f"'{s['dataset']}',{run},1,'{p}','','0',{N_TRAIN},{N_TEST},{shown}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args(argv)
    data = sets()
    tables: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="weka_pairing_") as tmp:
        arff = Path(tmp) / "results.arff"
        write_arff(data, arff)
        for name, cls in TESTERS.items():
            for b, base in enumerate(SCHEMES, 1):
                proc = subprocess.run(["java", "-cp", args.weka_jar, cls, "-t", str(arff), "-D", "1", "-R", "2",
                                       "-F", "3", "-G", "4,5,6", "-c", "9", "-b", str(b), "-S", str(SIG)],
                                      capture_output=True, text=True, check=True)
                tables.setdefault(name, {})[base] = proc.stdout
    doc = {
        "provenance": {
            "weka": f"WEKA {weka_version(args.weka_jar)} (Debian package weka, {os.path.realpath(args.weka_jar)})",
            "java": java_version(),
            "command": "python scripts/weka/make_pairing_refs.py",
            "testers": f"{', '.join(TESTERS.values())} -D 1 -R 2 -F 3 -G 4,5,6 -c 9 -b BASELINE -S {SIG}",
            "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
            "toolkit_commit": git_commit(),
        },
        "alpha": SIG, "schemes": SCHEMES, "n_train": N_TRAIN, "n_test": N_TEST, "sets": data, "weka_tables": tables,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(data)} result sets", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
