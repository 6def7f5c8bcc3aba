"""WEKA 3.6's reading and writing of DATE values at the edges of Java's SimpleDateFormat and
GregorianCalendar: S as a number of milliseconds (after a separator, abutting the seconds, SSSS), X
offsets of hours alone right after a field, dates before 15 October 1582 (Julian calendar, the ten
skipped days, 29 February 1500), years below 1000. One command, with Debian's weka package and a JDK:

    python scripts/weka/make_date_edge_refs.py [--weka-jar /usr/share/java/weka.jar]

writes ``tests/golden/weka_date_edges.json``: for each (pattern, value) the epoch milliseconds
``weka.core.Attribute.parseDate`` gives (what ArffLoader stores; null: WEKA refuses the value), and for
each (pattern, milliseconds) the text ``Attribute.formatDate`` gives (what WEKA writes), from
``scripts/weka/DateEdgeDump.java`` run with ``-Duser.timezone=UTC -Duser.language=en``.
``tests/test_arff_dates_weka.py`` compares the toolkit with it without Java.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ISO_MS = "yyyy-MM-dd HH:mm:ss.SSS"
PARSE = [
    # S: a number of milliseconds, with or without a separator before it, any number of letters
    ("yyyyMMddHHmmssSSS", "20010102030405123"), ("yyyyMMddHHmmssSSS", "2001010203040512"),
    ("yyyyMMddHHmmssSSS", "200101020304051234"), ("yyyyMMddHHmmssSSS", "20010102030405"),
    ("yyyyMMddHHmmss.SSS", "20010101000000.000"), ("yyyyMMddHHmmss.SSS", "20010101120000.007"),
    ("yyyy-MM-dd HH:mm:ss.SSSS", "2001-01-02 03:04:05.0123"), ("yyyy-MM-dd HH:mm:ss.SSSS", "2001-01-02 03:04:05.1234"),
    (ISO_MS, "2001-01-02 03:04:05.5"), (ISO_MS, "2001-01-02 03:04:05.999"), (ISO_MS, "2001-01-02 03:04:05.1000"),
    (ISO_MS, "2001-01-02 03:04:05.0000007"), ("HH:mm:ss,SSS", "01:02:03,045"), ("ss.S", "05.12"),
    ("HHmmssSSS'Z'", "030405123Z"),
    # X: Z, offsets of hours, hours and minutes, with or without a colon, right after a field or a space
    # (left out: X with one letter and "+0530"; Java reads "+05" and ignores the rest of the value)
    ("yyyy-MM-dd'T'HH:mmX", "2001-01-02T03:04Z"), ("yyyy-MM-dd'T'HH:mmX", "2001-01-02T03:04-08"),
    ("yyyy-MM-dd'T'HH:mmX", "2001-01-02T03:04+05"), ("yyyy-MM-dd'T'HH:mmXX", "2001-01-02T03:04+0530"),
    ("yyyy-MM-dd'T'HH:mmXXX", "2001-01-02T03:04-05:30"), ("yyyy-MM-dd'T'HH:mmXXX", "2001-01-02T03:04-08"),
    ("yyyy-MM-dd'T'HH:mmXX", "2001-01-02T03:04-08"),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSX", "2001-01-02T03:04:05.006+01"),
    ("yyyy-MM-dd HH:mm:ss X", "2010-01-01 00:00:00 -08"), ("yyyy-MM-dd HH:mm X", "2000-07-04 09:30 PST"),
    # before the Gregorian calendar: Julian dates, the skipped days, Julian leap days; years below 1000
    ("yyyy-MM-dd", "1500-01-01"), ("yyyy-MM-dd", "1582-10-04"), ("yyyy-MM-dd", "1582-10-05"),
    ("yyyy-MM-dd", "1582-10-14"), ("yyyy-MM-dd", "1582-10-15"), ("yyyy-MM-dd", "1582-12-31"),
    ("yyyy-MM-dd", "1500-02-29"), ("yyyy-MM-dd", "1300-02-29"), ("yyyy-MM-dd", "1501-02-29"),
    ("yyyy-MM-dd", "1600-02-29"), ("yyyy-MM-dd", "1700-02-29"), ("yyyy-MM-dd", "0999-05-05"),
    ("yyyy-MM-dd", "999-05-05"), ("yyyy-MM-dd", "0001-01-01"), ("yyyy-MM-dd", "0100-03-01"),
    ("y-MM-dd", "999-05-05"), ("dd MMM yyyy", "29 Feb 1500"), ("EEE dd MMM yyyy", "Wed 01 Jan 1500"),
    (ISO_MS, "1200-06-15 13:14:15.016"), ("yyyy-MM-dd HH:mm:ss Z", "1500-01-01 00:30:00 +0100"),
    ("yyyy-MM-dd HH:mm", "1582-10-04 23:59"),
    # text fields: a weekday must be the date's (strict), and without a day of month it picks the month's first
    # such day; AM/PM must agree with a 24-hour H; long and short names are read for any number of letters
    ("EEE, dd MMM yyyy", "Mon, 01 Feb 2003"), ("EEE, dd MMM yyyy", "Sat, 01 Feb 2003"),
    ("dd MMM yyyy EEE", "01 Feb 2003 sat"), ("EEE dd MMM yyyy", "Mon 01 Jan 1500"),
    ("EEE", "Mon"), ("EEE", "Thu"), ("EEE", "Sunday"), ("yyyy-MM EEE", "2003-02 Mon"), ("yyyy-MM EEE", "2003-02 Sat"),
    ("yyyy-MM EEEE", "2003-02 Friday"), ("EEEE yyyy-MM-dd", "Sat 2003-02-01"), ("EEE yyyy-MM-dd", "Saturday 2003-02-01"),
    ("dd MMM yyyy", "01 February 2003"), ("dd MMMM yyyy", "01 Feb 2003"), ("dd MMMM yyyy", "01 may 2003"),
    ("HH:mm a", "10:30 PM"), ("HH:mm a", "22:30 PM"), ("HH:mm a", "13:30 AM"), ("HH:mm a", "10:30 AM"),
    ("HH:mm a", "00:30 am"), ("a HH:mm", "PM 10:30"), ("a HH:mm", "PM 22:30"), ("hh:mm a", "10:30 PM"),
    ("hh:mm a", "12:30 AM"),
    # quoted literals that hold month and weekday names are matched as written
    ("'Sunday' yyyy-MM-dd", "Sunday 2003-02-02"), ("yyyy-MM-dd 'August'", "2003-02-02 August"),
    ("'Saturday' EEE yyyy-MM-dd", "Saturday Sat 2003-02-01"), ("'Saturday' EEE yyyy-MM-dd", "Saturday Saturday 2003-02-01"),
    ("'Monday' dd MMM yyyy HH:mm:ss.SSS", "Monday 03 Feb 2003 10:00:00.000"), ("'Monday' dd MMM yyyy", "Mon 03 Feb 2003"),
    ("'March' MMM yyyy", "Mar Feb 2003"), ("'March' MMMM yyyy", "March February 2003"),
    ("yyyy-MM EEE", "1582-10 Fri"), ("yyyy-MM-dd a", "2003-02-01 PM"),
]
# no zones here: WEKA formats a date in the zone its format last parsed
FORMAT_PATTERNS = ["yyyy-MM-dd HH:mm:ss.SSS", "yyyyMMddHHmmss.SSS", "yyyyMMddHHmmssSSS", "yyyy-MM-dd HH:mm:ss.SSSS",
                   "yyyy-MM-dd HH:mm:ss.S", "yyyy-MM-dd", "y-MM-dd", "yyy-MM-dd", "yyyyy-MM-dd", "EEE dd MMM yyyy",
                   "EEEE dd MMMM yyyy hh:mm a", "yy-MM-dd"]
FORMAT_MS = [0, 5, -1, -1500, 978307200000, 978350400123, 978404645012, 1262304000999,
             -14830992000000, -14825894400000, -14825851200000, -12219292800000,
             -12219292800001, -30630614400000, -62135769600000, -62135596800000, 253402300799999]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    args = parser.parse_args()
    lines = [f"P\t{p}\t{v}" for p, v in PARSE] + [f"F\t{p}\t{ms}" for p in FORMAT_PATTERNS for ms in FORMAT_MS]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["javac", "-nowarn", "-cp", args.weka_jar, "-d", tmp,
                        str(Path(__file__).with_name("DateEdgeDump.java"))], check=True)
        out = subprocess.run(["java", "-Duser.timezone=UTC", "-Duser.language=en", "-cp", f"{args.weka_jar}:{tmp}",
                              "DateEdgeDump"], input="\n".join(lines) + "\n", capture_output=True, text=True,
                             check=True).stdout.split("\n")
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    parsed, formatted = out[:len(PARSE)], out[len(PARSE):len(lines)]
    doc = {"weka": "3.6.14 (Debian weka)", "java": java, "zone": "UTC",
           "parse": [[p, v, None if ms == "ERR" else int(ms)] for (p, v), ms in zip(PARSE, parsed)],
           "format": [[p, ms, text] for (p, ms), text in
                      zip([(p, ms) for p in FORMAT_PATTERNS for ms in FORMAT_MS], formatted)]}
    target = ROOT / "tests" / "golden" / "weka_date_edges.json"
    # one case a line
    text = json.dumps({k: v for k, v in doc.items() if k not in ("parse", "format")}, ensure_ascii=False)[:-1]
    for key in ("parse", "format"):
        rows = ",\n  ".join(json.dumps(row, ensure_ascii=False) for row in doc[key])
        text += f',\n "{key}": [\n  {rows}\n ]'
    target.write_text(text + "\n}\n", encoding="utf-8")
    print(target, f"{len(doc['parse'])} values read, {len(doc['format'])} written")


if __name__ == "__main__":
    main()
