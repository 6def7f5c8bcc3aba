"""WEKA 3.6's NaiveBayes on small files built to reach the corners of its NormalEstimator: a class in
which a numeric column is constant but large (the running sums' rounding noise gives a standard
deviation above 1e-10 at some value, 0 at the last, and WEKA keeps the last one that passed), and
columns whose squares overflow (|x| ~ 1e300: inf - inf = NaN at the last value, WEKA keeps what an
earlier value gave). One command, with Debian's weka package and a JDK:

    python scripts/weka/make_nb_edge_refs.py [--weka-jar /usr/share/java/weka.jar]

writes ``tests/golden/weka_nb_edge.json``: each case's training and test ARFF text and WEKA's
predictions and class distributions (``Double.toString``, through ``scripts/weka/NBDump.java``);
``tests/test_weka_parity.py`` compares nb-weka with them without Java.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from _nbdump import parse_rows, run_nbdump

ROOT = Path(__file__).resolve().parents[2]
HEADER = "@relation {name}\n@attribute a numeric\n@attribute b numeric\n@attribute class {{k0,k1,k2}}\n@data\n"


def _arff(name: str, rows: list[tuple[float, float, str]]) -> str:
    return HEADER.format(name=name) + "".join(f"{a!r},{b!r},{c}\n" for a, b, c in rows)


def cases() -> dict[str, tuple[str, str]]:
    rng = np.random.default_rng(7)
    out = {}
    # one class constant at a large value, the others in steps the precision cannot make exact; and a
    # spread of 1e-12 at 0.1, where the order of the additions decides the standard deviation
    for name, base, step in (("constant-large", 33000000.1, 0.3), ("constant-ids", 1.6e9 + 0.7, 0.1),
                             ("constant-123", 123.456, 0.001), ("spread-1e-12", 0.1, 1e-12)):
        train = [(base, float(rng.normal()), "k0") for _ in range(4)]
        train += [(base + step * k, float(rng.normal(1.0)), "k1") for k in range(1, 6)]
        train += [(base + step * k, float(rng.normal(2.0)), "k2") for k in range(2, 9)]
        test = [(base + step * k, float(rng.normal(k % 3)), f"k{k % 3}") for k in range(0, 9)]
        out[name] = (_arff(name, train), _arff(name, test))
    # squares that overflow: +-1e300 and its multiples
    train = [(1e300, 0.1, "k0"), (-1e300, 0.2, "k0"), (2e300, 0.3, "k0"), (3e300, 0.4, "k0"),
             (1e300, 1.1, "k1"), (2e300, 1.3, "k1"), (3e300, 1.2, "k1"), (4e300, 1.4, "k1"),
             (5e300, 2.1, "k2"), (-2e300, 2.2, "k2"), (6e300, 2.3, "k2")]
    test = [(2e300, 0.9, "k0"), (1e300, 0.7, "k1"), (3e300, 0.2, "k0"), (-1e300, 2.2, "k2")]
    out["overflow"] = (_arff("overflow", train), _arff("overflow", test))
    # exact ties in log space: the balance-scale construction (four weights and distances 1-5, the class says
    # which side the balance tips to), trained and tested on all 625 rows; the tied classes' linear products
    # differ in the last bit, which decides WEKA's label
    head = "@relation ties\n" + "".join(f"@attribute {a} {{1,2,3,4,5}}\n" for a in ("lw", "ld", "rw", "rd"))
    head += "@attribute class {L,B,R}\n@data\n"
    rows = "".join(f"{a},{b},{c},{d},{'L' if a * b > c * d else 'B' if a * b == c * d else 'R'}\n"
                   for a in range(1, 6) for b in range(1, 6) for c in range(1, 6) for d in range(1, 6))
    out["ties-balance"] = (head + rows, head + rows)
    # a class constant at 5 with instance weights: its running sums depend on the order of the additions
    head = "@relation weighted-constant\n@attribute x numeric\n@attribute class {a,b}\n@data\n"
    train = "5.0,a,{2.0}\n5.0,a,{1.0}\n5.0,a,{3.25}\n4.999999999887278,b\n5.000000000102151,b\n4.9999999998,b\n"
    test = "5.0000000003,a\n5.0,a\n4.9999999999,b\n5.0000000001,a\n"
    out["weighted-constant"] = (head + train, head + test)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args()
    doc: dict = {"weka": "3.6.14 (Debian weka)", "driver": "scripts/weka/NBDump.java", "cases": {}}
    made = cases()
    for name, lines in run_nbdump(args.weka_jar, made).items():
        train, test = made[name]
        if not lines[0].startswith("OK"):
            raise RuntimeError(f"{name}: WEKA failed: {lines[0]}")
        doc["cases"][name] = {"train": train, "test": test, **parse_rows(lines)}
    target = ROOT / "tests" / "golden" / "weka_nb_edge.json"
    target.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(target, {k: v["predicted"] for k, v in doc["cases"].items()})


if __name__ == "__main__":
    main()
