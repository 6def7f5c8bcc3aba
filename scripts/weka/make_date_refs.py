"""WEKA 3.6's values of DATE attributes, as epoch milliseconds, for patterns whose fields Java fills in
itself: a pattern without a year (Java's fields default to 1970-01-01, strptime's to 1900) and two-digit
years (Java's default century: from 80 years before the moment the format is made to 20 after; strptime
pivots at 69), and a quote doubled inside a quoted literal. One command, with Debian's weka package and a JDK:

    python scripts/weka/make_date_refs.py [--weka-jar /usr/share/java/weka.jar]

writes ``tests/golden/weka_dates.json`` (the ARFF text, the UTC date it was made on, and WEKA's values
from ``scripts/weka/DateDump.java`` run with ``-Duser.timezone=UTC``); ``tests/test_weka_formats.py``
compares the toolkit's reader with it without Java.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ARFF = ("@relation d\n@attribute t date 'HH:mm:ss.SSS'\n@attribute m date 'HH:mm'\n@attribute md date 'MM-dd'\n"
        "@attribute a date 'hh:mm a'\n@attribute y2 date 'dd/MM/yy'\n@attribute y3 date 'yy-MM-dd HH:mm'\n"
        "@attribute q date \"hh 'o''clock' a\"\n@data\n"
        "'01:02:03.500','23:59','12-31','01:30 PM','03/02/90','10-07-04 12:00',\"12 o'clock PM\"\n"
        "'00:00:00.001','00:00','01-01','12:00 AM','29/02/12','50-01-01 00:00',\"01 o'clock AM\"\n"
        "'13:14:15.016','12:30','02-28','11:59 PM','03/02/50','66-12-31 23:59',\"11 o'clock PM\"\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["javac", "-nowarn", "-cp", args.weka_jar, "-d", tmp,
                        str(Path(__file__).with_name("DateDump.java"))], check=True)
        src = Path(tmp) / "d.arff"
        src.write_text(ARFF, encoding="utf-8")
        out = subprocess.run(["java", "-Duser.timezone=UTC", "-Duser.language=en", "-cp", f"{args.weka_jar}:{tmp}",
                              "DateDump", str(src)], capture_output=True, text=True, check=True)
    rows = [[int(v) for v in line.split()] for line in out.stdout.splitlines() if line.strip()]
    doc = {"weka": "3.6.14 (Debian weka)", "made_utc": dt.datetime.now(dt.timezone.utc).date().isoformat(),
           "arff": ARFF, "weka_ms": rows}
    target = ROOT / "tests" / "golden" / "weka_dates.json"
    target.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(target, rows)


if __name__ == "__main__":
    main()
