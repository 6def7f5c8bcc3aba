"""How WEKA 3.6 writes DATE values in an ARFF file (``Attribute.formatDate``, Java's SimpleDateFormat in
UTC): every pattern letter the toolkit writes, one to four letters, the three zone letters (z its name,
Z an offset, X "Z": WEKA refuses "+0000" under XXX), at twelve moments from year 1 (Julian) to 9999. One
command, with Debian's weka package and a JDK:

    python scripts/weka/make_date_format_refs.py [--weka-jar /usr/share/java/weka.jar]

writes ``tests/golden/weka_date_formats.json`` (pattern, milliseconds, WEKA's text);
``tests/test_arff_dates_weka.py`` compares the toolkit's writer with it without Java.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = ["yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ssX", "yyyy-MM-dd'T'HH:mm:ssXX",
            "yyyy-MM-dd'T'HH:mm:ssXXX", "yyyy-MM-dd HH:mm:ss Z", "yyyy-MM-dd HH:mm:ss z",
            "yyyy-MM-dd HH:mm:ss zzzz", "y-M-d H:m:s", "yy", "yyy", "yyyyy.MMMMM.dd hh:mm aaa",
            "EEE, d MMM yyyy", "EEEE d MMMM yy", "h:mm a", "dd-MM-yyyy HH:mm:ss.S", "yyyy-MM-dd HH:mm:ss.SSSSSS",
            "MMM", "MMMM", "M/d", "S", "SS", "SSS", "''yyyy", "'at' HH 'o''clock'", "yyyyMMddHHmmssSSS", "E"]
MOMENTS = [0, 1583020800123, -1, 951782400000, 4102444799999, -14830992000000, 253402300799999,
           -62135596800000, 1234567890001, 86399999, 43200000, 1000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args()
    pairs = [(p, ms) for p in PATTERNS for ms in MOMENTS]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["javac", "-nowarn", "-cp", args.weka_jar, "-d", tmp,
                        str(Path(__file__).with_name("DateFormatDump.java"))], check=True)
        inputs = Path(tmp) / "in.tsv"
        inputs.write_text("".join(f"{p}\t{ms}\n" for p, ms in pairs), encoding="utf-8")
        done = subprocess.run(["java", "-Duser.timezone=UTC", "-Duser.language=en", "-Duser.country=US", "-cp",
                               f"{args.weka_jar}:{tmp}", "DateFormatDump", str(inputs)],
                              check=True, capture_output=True, text=True)
    texts = done.stdout.splitlines()
    assert len(texts) == len(pairs)
    doc = {"weka": "3.6.14 (Debian weka)", "cases": [[p, ms, t] for (p, ms), t in zip(pairs, texts)]}
    target = ROOT / "tests" / "golden" / "weka_date_formats.json"
    target.write_text(json.dumps(doc, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {target} ({len(pairs)} values)")


if __name__ == "__main__":
    main()
