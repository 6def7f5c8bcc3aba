"""WEKA 3.6's evaluation measures of given class distributions, for the metrics review
(``tests/test_review_metrics.py``).

One command, from the repository root, with Debian's ``weka`` package installed (Java 17):

    python scripts/weka/make_metrics_refs.py [--weka-jar /usr/share/java/weka.jar]

The cases (below, seeded) are predictions (true class, class distribution, weight) with ties in the
probabilities, a class absent from the test part, probabilities exactly 0 and 1, a single test instance,
every prediction one class, and instance weights. ``scripts/weka/MetricsDump.java`` feeds each to one
``weka.classifiers.Evaluation`` (``evaluateModelOnceAndRecordPrediction``; no classifier involved) and
prints full-precision values of its error rate, kappa, mean absolute and root mean squared errors,
per-class TP/FP rate, precision, recall, F-measure and ROC area, the weighted averages and the confusion
matrix. ``tests/golden/weka_metrics_review.json`` holds the inputs, WEKA's values and provenance.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
OUT = ROOT / "tests" / "golden" / "weka_metrics_review.json"


def _coarse(rng: np.random.Generator, n: int, K: int, step: float) -> np.ndarray:
    """Class distributions on a coarse grid (many tied probabilities), rows summing to 1 exactly."""
    p = np.round(rng.dirichlet(np.ones(K), size=n) / step) * step
    p[:, -1] = 0.0
    p[:, -1] = np.clip(1.0 - p.sum(axis=1), 0.0, None)
    return p / p.sum(axis=1, keepdims=True)


def cases() -> list[dict]:
    rng = np.random.default_rng(20261207)
    out = []

    def add(name: str, y, proba, weights=None) -> None:
        y = np.asarray(y, dtype=np.int64)
        proba = np.asarray(proba, dtype=np.float64)
        w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
        out.append({"name": name, "K": int(proba.shape[1]), "y": y.tolist(), "proba": proba.tolist(),
                    "weights": w.tolist()})

    add("binary-ties", rng.integers(0, 2, 40), _coarse(rng, 40, 2, 0.1))
    add("three-ties", rng.integers(0, 3, 60), _coarse(rng, 60, 3, 0.25))
    y = rng.integers(0, 3, 50)                      # class 3 of 4 never occurs in the test part
    add("four-absent-class", y, _coarse(rng, 50, 4, 0.2))
    p = rng.dirichlet(np.ones(3), size=30)
    p[:10] = np.eye(3)[rng.integers(0, 3, 10)]      # probabilities exactly 0 and 1
    add("three-saturated", rng.integers(0, 3, 30), p)
    add("one-instance", [2], [[0.2, 0.3, 0.5]])
    p = _coarse(rng, 20, 3, 0.1)
    p[:, 0] += 1.0                                   # every prediction is class 0
    add("one-predicted-class", rng.integers(0, 3, 20), p / p.sum(axis=1, keepdims=True))
    add("one-true-class", np.zeros(15, np.int64), _coarse(rng, 15, 3, 0.1))
    add("five-weighted", rng.integers(0, 5, 80), _coarse(rng, 80, 5, 0.1), rng.integers(1, 4, 80).astype(float))
    return out


def parse(text: str) -> dict[str, dict]:
    results, current, name = {}, None, None
    for line in text.splitlines():
        f = line.split()
        if not f:
            continue
        if f[0] == "BEGIN":
            name, current = f[1], {"cm": []}
        elif f[0] == "END":
            results[name] = current
        elif f[0] == "cm":
            current["cm"].append([float(v) for v in f[1:]])
        else:
            values = [float(v) for v in f[1:]]
            current[f[0]] = values if len(values) > 1 or f[0] in ("tp_rate", "fp_rate", "precision", "recall", "f1",
                                                                  "roc_auc") else values[0]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args(argv)
    todo = cases()
    with tempfile.TemporaryDirectory(prefix="weka_metrics_") as tmp:
        work = Path(tmp)
        subprocess.run(["javac", "-cp", args.weka_jar, "-d", str(work), str(HERE / "MetricsDump.java")], check=True)
        lines = []
        for case in todo:
            lines.append(f"CASE {case['name']} {case['K']}")
            for y, p, w in zip(case["y"], case["proba"], case["weights"]):
                lines.append(" ".join([repr(w), str(y), *map(repr, p)]))
            lines.append("END")
        (work / "cases.txt").write_text("\n".join(lines) + "\n")
        run = subprocess.run(["java", "-cp", f"{args.weka_jar}:{work}", "MetricsDump", str(work / "cases.txt")],
                             check=True, capture_output=True, text=True)
    weka = parse(run.stdout)
    for case in todo:
        case["weka"] = weka[case["name"]]
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    doc = {"provenance": {"weka": f"WEKA 3.6.14 ({Path(args.weka_jar).resolve()})", "java": java,
                          "command": "python scripts/weka/make_metrics_refs.py",
                          "driver": "scripts/weka/MetricsDump.java (weka.classifiers.Evaluation of given distributions)",
                          "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                          "toolkit_commit": commit},
           "cases": todo}
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
