"""WEKA 3.6's NaiveBayes where the order in which it adds the instances decides the model, above the
100,000 cells to which nb-weka once found that order (tests/weka_order_data.py builds the data: 17,000
rows x 6 attributes around 1e8, spreads within rounding noise of the means). One command, with Debian's
weka package and a JDK:

    python scripts/weka/make_nb_order_refs.py [--weka-jar /usr/share/java/weka.jar]

writes ``tests/golden/weka_nb_order.json``: the data's sha256 (the test regenerates the same text) and
WEKA's predictions and class distributions on the 300 test rows; ``tests/test_review_nb.py`` compares
nb-weka with them without Java.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from _nbdump import parse_rows, run_nbdump

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from weka_order_data import TEST, TRAIN, arff_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args()
    train, test = arff_text(*TRAIN), arff_text(*TEST)
    lines = run_nbdump(args.weka_jar, {"order": (train, test)})["order"]
    if not lines or not lines[0].startswith("OK"):
        raise SystemExit(f"WEKA failed: {lines[:1]}")
    doc = {"weka": "3.6.14", "train_sha256": hashlib.sha256(train.encode()).hexdigest(),
           "test_sha256": hashlib.sha256(test.encode()).hexdigest(), **parse_rows(lines)}
    target = ROOT / "tests" / "golden" / "weka_nb_order.json"
    target.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
