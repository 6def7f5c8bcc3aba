"""WEKA 3.6's evaluation summary (``weka.classifiers.Evaluation``) of NaiveBayes on fixed train/test files and
summed over the harness's splits (issue 14).

One command, from the repository root, with Debian's ``weka`` package installed (Java 17):

    python scripts/weka/make_eval_refs.py [--weka-jar /usr/share/java/weka.jar]

1. For each bundled dataset of ``FIXED`` (nominal, numeric, with missing values, mixed): test = the
   instances whose 0-based position i in the file has i % 3 == 2, train = the others, both written with
   ``toolkit.data.arff.write``; then exactly ``java weka.classifiers.bayes.NaiveBayes -t TRAIN -T TEST -i``,
   whose "=== Error on training data ===" and "=== Error on test data ===" sections are stored as text.
2. For each dataset of ``HARNESS``: the harness's splits (``Protocol().splits(ds)``: 10 repetitions, 10 %
   test, seeds 1..10), each part written the same way, and ``scripts/weka/EvalDump.java``: one WEKA
   ``Evaluation`` over the 10 splits (``setPriors(train)``, a new NaiveBayes, ``evaluateModel(test)`` per
   split, as its cross-validation sums folds); its summary, class details and confusion matrix.
3. ``tests/golden/weka_summary.json``: the texts, the sha256 of every file WEKA read, provenance.
   ``tests/test_weka_summary.py`` compares ``toolkit predict`` and ``toolkit evaluate --summary`` with them,
   without Java.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
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

from make_nb_refs import git_commit, java_version, weka_version  # noqa: E402
from toolkit.data import arff  # noqa: E402
from toolkit.evaluation.harness import Protocol  # noqa: E402
from toolkit.loading import resolve_dataset  # noqa: E402

OUT = ROOT / "tests" / "golden" / "weka_summary.json"
FIXED = {"contact-lenses": "nominal", "breast-cancer": "nominal, missing values", "iris": "numeric",
         "glass": "numeric, 6 classes", "diabetes": "numeric", "vote": "nominal, missing values",
         "soybean": "nominal, 19 classes, missing values", "labor": "numeric and nominal, missing values",
         "credit-g": "numeric and nominal"}
HARNESS = ["iris", "glass", "vote", "soybean", "breast-cancer"]
SPLIT_RULE = "test = instances with 0-based file position i % 3 == 2, train = the others (file order kept)"


def fixed_split(n: int) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(n)
    return rows[rows % 3 != 2], rows[rows % 3 == 2]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sections(text: str) -> dict[str, str]:
    """The training-data and test-data sections of WEKA's output (each from its title to the next)."""
    train_at = text.index("=== Error on training data ===")
    test_at = text.index("=== Error on test data ===")
    return {"train": text[train_at:test_at].rstrip() + "\n", "test": text[test_at:].rstrip() + "\n"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args(argv)
    fixed, harness = [], []
    with tempfile.TemporaryDirectory(prefix="weka_eval_") as tmp:
        work = Path(tmp)
        for name, kind in FIXED.items():
            ds = arff.read(resolve_dataset(name))
            train_rows, test_rows = fixed_split(ds.n_instances)
            train, test = work / f"{name}.train.arff", work / f"{name}.test.arff"
            arff.write(ds.subset(train_rows), train)
            arff.write(ds.subset(test_rows), test)
            command = ["java", "-cp", args.weka_jar, "weka.classifiers.bayes.NaiveBayes", "-t", str(train), "-T",
                       str(test), "-i"]
            proc = subprocess.run(command, capture_output=True, text=True, check=True)
            fixed.append({"dataset": name, "kind": kind, "split": SPLIT_RULE, "train_sha256": sha(train),
                          "test_sha256": sha(test), "n_train": len(train_rows), "n_test": len(test_rows),
                          "command": "java weka.classifiers.bayes.NaiveBayes -t TRAIN -T TEST -i",
                          **sections(proc.stdout)})
        jobs, digests = [], {}
        for name in HARNESS:
            ds = arff.read(resolve_dataset(name))
            digests[name] = []
            for s in Protocol().splits(ds):
                train, test = work / f"{name}.r{s.repetition}.train.arff", work / f"{name}.r{s.repetition}.test.arff"
                arff.write(ds.subset(s.train), train)
                arff.write(ds.subset(s.test), test)
                jobs.append(f"{name}\t{ds.class_index}\t{train}\t{test}")
                digests[name].append([sha(train), sha(test)])
        (work / "jobs.tsv").write_text("\n".join(jobs) + "\n", encoding="utf-8")
        subprocess.run(["javac", "-nowarn", "-cp", args.weka_jar, "-d", str(work),
                        str(Path(__file__).with_name("EvalDump.java"))], check=True)
        proc = subprocess.run(["java", "-cp", f"{args.weka_jar}{os.pathsep}{work}", "EvalDump", str(work / "jobs.tsv")],
                              capture_output=True, text=True, check=True)
    for block in proc.stdout.split("BEGIN ")[1:]:
        name, body = block.split("\n", 1)
        summary, details, matrix = body.split("END\n")[0].split("@@@\n")
        harness.append({"dataset": name, "protocol": Protocol().describe(), "split_sha256": digests[name],
                        "summary": summary, "class_details": details, "matrix": matrix})
    doc = {
        "provenance": {
            "weka": f"WEKA {weka_version(args.weka_jar)} (Debian package weka, {os.path.realpath(args.weka_jar)})",
            "java": java_version(),
            "command": "python scripts/weka/make_eval_refs.py",
            "driver": "scripts/weka/EvalDump.java for the harness splits; WEKA's own command line for -t/-T",
            "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
            "toolkit_commit": git_commit(),
        },
        "fixed": fixed,
        "harness": harness,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(fixed)} train/test pairs, {len(harness)} harness summaries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
