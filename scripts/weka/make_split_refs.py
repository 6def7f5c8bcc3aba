"""WEKA 3.6's own shuffle and fold arithmetic for the thesis protocol (algorithms.md 5.1.3).

One command, from the repository root, with Debian's ``weka`` package installed (Java 17):

    python scripts/weka/make_split_refs.py [--weka-jar /usr/share/java/weka.jar]

``scripts/weka/SplitDump.java`` builds an ``Instances`` of n rows whose only attribute is the row number,
calls ``randomize(new Random(10))`` and prints the order, ``testCV(10, 9)`` (the reported test fold),
``testCV(10, 0)`` (the validation fold) and ``trainCV(10, 9)`` (the refit part), as row numbers. The sizes
include vote (435), iris (150) and sizes with n % 10 from 0 to 9. Output: ``tests/golden/weka_thesis_splits.json``,
read by ``tests/test_review_harness.py`` without Java.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from make_nb_refs import git_commit, java_version, weka_version  # noqa: E402

OUT = ROOT / "tests" / "golden" / "weka_thesis_splits.json"
SIZES = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 150, 435]
SEED = 10


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="weka_splits_") as tmp:
        subprocess.run(["javac", "-cp", args.weka_jar, "-d", tmp, str(Path(__file__).parent / "SplitDump.java")],
                       check=True)
        out = subprocess.run(["java", "-cp", f"{args.weka_jar}:{tmp}", "SplitDump", str(SEED), *map(str, SIZES)],
                             check=True, capture_output=True, text=True).stdout
    splits = json.loads(out)
    doc = {"source": "WEKA Instances.randomize(new Random(10)), testCV(10, 9), testCV(10, 0), trainCV(10, 9) "
                     "(scripts/weka/SplitDump.java)",
           "weka": weka_version(args.weka_jar), "java": java_version(), "seed": SEED,
           "generated_utc": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "toolkit_commit": git_commit(), "command": "python scripts/weka/make_split_refs.py", "splits": splits}
    OUT.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
