"""WEKA 3.6 NaiveBayes reference outputs on the harness's own splits (issue 3 acceptance).

One command, from the repository root, with Debian's ``weka`` package installed (Java 17):

    python scripts/weka/make_nb_refs.py [--shared ../shared/datasets] [--weka-jar /usr/share/java/weka.jar]

For every ``uci/*.arff`` under the shared datasets folder (``--folders`` adds others: ``weka-examples other
quirky``, stored as ``<folder>-<name>``, skipping files whose class is not nominal or which hold string
attributes, which WEKA's NaiveBayes refuses) it

1. loads the file with ``toolkit.data.arff.read`` (class = last attribute, except spectf_test,
   spectf_train and wine: first, spectrometer: second; see the datasets' MANIFEST.md),
2. takes the harness's splits, ``toolkit.evaluation.harness.Protocol().splits(ds)`` (random, 10
   repetitions, seeds 1..10, 10 % test), and writes each training and test part with
   ``toolkit.data.arff.write(ds.subset(rows), path)`` into a temporary folder,
3. compiles ``scripts/weka/NBDump.java`` against weka.jar (temporary folder) and runs it once, in
   one JVM, over all splits: ``weka.classifiers.bayes.NaiveBayes`` with default options is built on
   the training file and every test instance's ``classifyInstance`` and
   ``distributionForInstance`` are printed with ``Double.toString``,
4. stores, per dataset, ``tests/golden/weka_nb/<dataset>.json.gz`` (deterministic gzip, no
   timestamp): WEKA's predicted class codes (ARFF declaration order, the toolkit's codes), the class
   codes WEKA read for the test rows, and the class distributions as 9-decimal fixed point
   integers (``round(p * 1e9)``, row-major, K per row), plus provenance.

Nothing here is read by the toolkit: ``tests/test_weka_parity.py`` compares the ``nb-weka``
classifier against these files without Java.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from toolkit.data import arff  # noqa: E402
from toolkit.evaluation.harness import Protocol  # noqa: E402

#: Class attribute positions that are not the last one (MANIFEST.md of the shared datasets).
CLASS_INDEX = {"spectf_test": 0, "spectf_train": 0, "wine": 0, "spectrometer": 1}
SCALE = 10 ** 9  # probabilities stored as round(p * SCALE)
OUT_DIR = ROOT / "tests" / "golden" / "weka_nb"


def class_choice(name: str) -> int:
    """The class attribute of a uci dataset (an index; -1 = last)."""
    return CLASS_INDEX.get(name, -1)


def split_digest(test: np.ndarray) -> str:
    """sha256 of the test indices as little-endian int64: lets the test detect changed splits."""
    return hashlib.sha256(np.asarray(test, dtype="<i8").tobytes()).hexdigest()


def compile_driver(jar: str, build: Path) -> None:
    src = Path(__file__).with_name("NBDump.java")
    subprocess.run(["javac", "-nowarn", "-cp", jar, "-d", str(build), str(src)], check=True)


def java_version() -> str:
    out = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return (out.stderr or out.stdout).splitlines()[0].strip()


def weka_version(jar: str) -> str:
    out = subprocess.run(["java", "-cp", jar, "weka.core.Version"], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()[0].strip()


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def parse_output(path: Path, K: int) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """(options, actual codes, predicted codes, (n, K) distributions) of one NBDump output file."""
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines or not lines[0].startswith("OK"):
        raise RuntimeError(f"{path}: WEKA failed: {lines[0] if lines else 'no output'}")
    options = lines[0][2:].strip()
    rows = [line.split() for line in lines[1:]]
    actual = np.array([int(r[0]) for r in rows], dtype=np.int64)
    pred = np.array([int(r[1]) for r in rows], dtype=np.int64)
    dist = np.array([[float(v) for v in r[2:]] for r in rows], dtype=np.float64).reshape(len(rows), K)
    return options, actual, pred, dist


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shared", default=os.environ.get("TOOLKIT_SHARED_DATASETS",
                                                           str(ROOT.parent / "shared" / "datasets")))
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    parser.add_argument("--only", nargs="*", help="dataset names (default: every uci/*.arff)")
    parser.add_argument("--folders", nargs="*", default=["uci"],
                        help="folders of the shared datasets to cover (default: uci)")
    parser.add_argument("--keep", help="keep the written ARFF files and WEKA outputs in this folder")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    files = []   # (folder, path, stored name)
    for folder in args.folders:
        for path in sorted((Path(args.shared) / folder).glob("*.arff")):
            files.append((folder, path, path.stem if folder == "uci" else f"{folder}-{path.stem}"))
    if args.only:
        files = [f for f in files if f[2] in set(args.only)]
    if not files:
        parser.error(f"no ARFF file under {args.shared} / {args.folders}")
    protocol = Protocol()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="weka_nb_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        build = work / "classes"
        build.mkdir(exist_ok=True)
        compile_driver(args.weka_jar, build)
        jobs = []
        plan = {}
        for folder, path, name in files:
            ds = arff.read(path, class_attribute=class_choice(name))
            if ds.class_attribute is None or ds.class_attribute.kind != "nominal" or ds.features.mask("string").any():
                print(f"skipped {folder}/{path.name}: WEKA's NaiveBayes needs a nominal class and no string "
                      f"attribute", file=sys.stderr)
                continue
            splits = protocol.splits(ds)
            plan[name] = (folder, path, ds, splits)
            for s in splits:
                stem = work / f"{name}.r{s.repetition}"
                arff.write(ds.subset(s.train), f"{stem}.train.arff")
                arff.write(ds.subset(s.test), f"{stem}.test.arff")
                jobs.append(f"{ds.class_index}\t{stem}.train.arff\t{stem}.test.arff\t{stem}.out")
        written = time.perf_counter()
        (work / "jobs.tsv").write_text("\n".join(jobs) + "\n", encoding="utf-8")
        command = ["java", "-Xmx1g", "-cp", f"{args.weka_jar}{os.pathsep}{build}", "NBDump", str(work / "jobs.tsv")]
        subprocess.run(command, check=True)
        ran = time.perf_counter()

        provenance = {
            "weka": f"WEKA {weka_version(args.weka_jar)} (Debian package weka, {os.path.realpath(args.weka_jar)})",
            "java": java_version(),
            "classifier": "weka.classifiers.bayes.NaiveBayes",
            "driver": "scripts/weka/NBDump.java (buildClassifier on the train file; classifyInstance and "
                      "distributionForInstance per test instance, printed with Double.toString)",
            "command": "python scripts/weka/make_nb_refs.py" + (f" --folders {' '.join(args.folders)}"
                                                                   if args.folders != ["uci"] else ""),
            "date": dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
            "toolkit_commit": git_commit(),
            "python": platform.python_version(),
            "splits": ("toolkit.evaluation.harness.Protocol().splits(ds) with "
                       f"{json.dumps(protocol.describe(), sort_keys=True)}; each part written with "
                       "toolkit.data.arff.write(ds.subset(rows)) and read by WEKA"),
            "proba_encoding": f"round(p * {SCALE}) as integers, row-major, K values per test row",
        }
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        total_rows = 0
        for name, (folder, path, ds, splits) in plan.items():
            K = len(ds.classes)
            records = []
            for s in splits:
                options, actual, pred, dist = parse_output(work / f"{name}.r{s.repetition}.out", K)
                expected = np.where(ds.y[s.test] < 0, -1, ds.y[s.test])
                if len(actual) != len(s.test) or not np.array_equal(actual, expected):
                    raise RuntimeError(f"{name} repetition {s.repetition}: WEKA read other test classes")
                records.append({
                    "repetition": s.repetition,
                    "seed": s.seed,
                    "n_train": len(s.train),
                    "n_test": len(s.test),
                    "test_sha256": split_digest(s.test),
                    "weka_options": options,
                    "actual": actual.tolist(),
                    "predicted": pred.tolist(),
                    "proba_e9": np.rint(dist * SCALE).astype(np.int64).ravel().tolist(),
                })
                total_rows += len(s.test)
            doc = {
                "dataset": name,
                "file": f"{folder}/{path.name}",
                "file_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "class_index": ds.class_index,
                "class_attribute": ds.class_attribute.name,
                "classes": list(ds.classes),
                "n_instances": ds.n_instances,
                "provenance": provenance,
                "splits": records,
            }
            data = json.dumps(doc, separators=(",", ":")).encode("utf-8")
            with open(OUT_DIR / f"{name}.json.gz", "wb") as raw:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
                    gz.write(data)
        size = sum(p.stat().st_size for p in OUT_DIR.glob("*.json.gz"))
        end = time.perf_counter()
        print(f"{len(plan)} datasets, {len(jobs)} splits, {total_rows} test rows; "
              f"writing ARFF {written - started:.1f} s, WEKA {ran - written:.1f} s, total {end - started:.1f} s; "
              f"{OUT_DIR.relative_to(ROOT)}: {size / 1024:.0f} KiB", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
