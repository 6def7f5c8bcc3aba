"""WEKA 3.6's NaiveBayes on small files built for the naive-Bayes review: what the UCI parity test
(tests/test_weka_parity.py) does not reach. Missing values in training and test (a row with every
attribute missing, a training row with a missing class), instance weights (fractional, 1e-3, 0, 1e-9,
1e12-3e15), a class with no training instance, a single class, one and two training instances, a column
missing in every training row, a constant column and columns constant per class, numeric columns with
three distinct values, a nominal value never seen in training, values on the half-steps of the precision
(round half to even), sparse ARFF rows (implicit zeros, missing values stored), and the refusal of string
and date attributes. One command, with Debian's weka package and a JDK:

    python scripts/weka/make_nb_review_refs.py [--weka-jar /usr/share/java/weka.jar]

writes ``tests/golden/weka_nb_review.json``: each case's training and test ARFF text and WEKA's
predictions and class distributions (``Double.toString``, through ``scripts/weka/NBDump.java``), or
WEKA's error message; ``tests/test_review_nb.py`` compares nb-weka with them without Java.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from _nbdump import parse_rows, run_nbdump

ROOT = Path(__file__).resolve().parents[2]
MIXED = ("@relation r\n@attribute a numeric\n@attribute b {u,v,w}\n@attribute c numeric\n"
         "@attribute class {k0,k1,k2}\n")


def cases() -> dict[str, tuple[str, str]]:
    rng = np.random.default_rng(1)

    def row(miss: float = 0.0, k: int | None = None, weight: float | None = None) -> str:
        k = int(rng.integers(3)) if k is None else k
        a = f"{rng.normal(k):.3f}" if rng.random() >= miss else "?"
        b = "uvw"[rng.integers(3)] if rng.random() >= miss else "?"
        c = f"{rng.integers(0, 3) + k}" if rng.random() >= miss else "?"
        return f"{a},{b},{c},k{k}" + ("" if weight is None else f",{{{weight!r}}}")

    def arff(header: str, rows: list[str]) -> str:
        return header + "@data\n" + "".join(r + "\n" for r in rows)

    out: dict[str, tuple[list[str], list[str], str]] = {}
    test = [row(0.3) for _ in range(40)] + ["?,?,?,k0", "?,?,?,?", "100,u,?,k1", "-1e6,?,1e6,k2"]
    out["missing"] = ([row(0.3) for _ in range(60)] + ["?,?,?,k1", "1,u,1,?"], test, MIXED)
    out["weights"] = ([row(0.1, weight=float(rng.choice([0.5, 2.0, 3.25, 1e-3, 7]))) for _ in range(60)], test, MIXED)
    out["tiny-weights"] = ([row(0.1, weight=1e-9 * float(rng.random())) for _ in range(60)], test, MIXED)
    out["zero-weights"] = ([row(0.1, weight=float(rng.choice([0.0, 1.0]))) for _ in range(30)], test, MIXED)
    out["huge-weights"] = ([row(0.1, weight=float(rng.choice([1e12, 3e15]))) for _ in range(30)], test, MIXED)
    out["absent-class"] = ([row(0.1, k=int(rng.integers(2))) for _ in range(30)], test, MIXED)
    out["one-class"] = ([row(0.1, k=1) for _ in range(30)], test, MIXED)
    out["one-instance"] = (["1.5,v,2,k1"], test, MIXED)
    out["two-instances"] = (["1.5,v,2,k1", "2.5,u,3,k0"], test, MIXED)
    out["all-missing-column"] = ([f"?,{'uvw'[i % 3]},{i % 4},k{i % 3}" for i in range(30)], test, MIXED)
    out["constant"] = ([f"3.7,u,{i % 2},k{i % 3}" for i in range(30)], test, MIXED)
    out["constant-per-class"] = ([f"{i % 3}.25,{'uvw'[i % 3]},{(i % 3) * 2},k{i % 3}" for i in range(30)], test,
                                 MIXED)
    out["few-distinct"] = ([f"{[0, 1, 100][i % 3] if i % 5 else 0.5},{'uvw'[i % 2]},{i % 2},k{i % 3}"
                            for i in range(40)], test, MIXED)
    out["unseen-nominal"] = ([f"{rng.normal():.2f},{'uv'[i % 2]},{i % 3},k{i % 3}" for i in range(30)], test, MIXED)
    out["half-steps"] = ([f"{(i % 7) / 2},{'uv'[i % 2]},{i * 0.5},k{i % 3}" for i in range(30)],
                         test + [f"{i / 4},u,{i / 8},k0" for i in range(20)], MIXED)
    sparse = "@relation sp\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@attribute class {k0,k1}\n"
    out["sparse"] = ([(f"{{{'0 ' + str(i) if i % 3 else '1 2.5'}, 2 y, 3 k{i % 2}}}" if i % 4 else f"{{3 k{i % 2}}}")
                      for i in range(30)], [f"{{0 {i}, 1 {i % 3}}}" for i in range(10)] + ["{}"], sparse)
    out["sparse-missing"] = ([f"{{0 {i if i % 3 else '?'}, 1 {i % 3}, 3 k{i % 2}}}" for i in range(30)],
                             [f"{{0 ?, 1 {i % 3}}}" for i in range(10)], sparse)
    date = "@relation d\n@attribute d date 'yyyy-MM-dd HH:mm:ss'\n@attribute x numeric\n@attribute class {k0,k1}\n"
    rows = [f"'2020-0{1 + i % 9}-1{i % 9} 0{i % 10}:00:00',{i % 4},k{i % 2}" for i in range(12)]
    out["date"] = (rows, rows, date)
    string = "@relation s\n@attribute s string\n@attribute x numeric\n@attribute class {k0,k1}\n"
    out["string"] = ([f"'w{i}',{i},k{i % 2}" for i in range(10)], [f"'w{i}',{i},k{i % 2}" for i in range(3)], string)
    return {name: (arff(h, tr), arff(h, te)) for name, (tr, te, h) in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args()
    doc: dict = {"weka": "3.6.14 (Debian weka)", "driver": "scripts/weka/NBDump.java", "cases": {}}
    made = cases()
    for name, lines in run_nbdump(args.weka_jar, made).items():
        train, test = made[name]
        if not lines[0].startswith("OK"):
            doc["cases"][name] = {"train": train, "test": test, "error": lines[0]}
            continue
        doc["cases"][name] = {"train": train, "test": test, **parse_rows(lines)}
    target = ROOT / "tests" / "golden" / "weka_nb_review.json"
    target.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(target, {k: v.get("predicted", v.get("error")) for k, v in doc["cases"].items()})


if __name__ == "__main__":
    main()
