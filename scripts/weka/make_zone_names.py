"""The time-zone names Java's SimpleDateFormat reads in a DATE value (pattern letters z and Z), with the
UTC offset it gives each: toolkit/data/java_zone_names.json, read by toolkit.data.arff_dates.

One command, from the repository root, with a JDK (the one WEKA runs on here: OpenJDK 17):

    python scripts/weka/make_zone_names.py

``ZoneNames.java`` parses "DATE NAME" for every name of ``DateFormatSymbols.getZoneStrings()`` (English,
JVM zone UTC, as WEKA is run in the golden checks) at ten dates from 1972 to 2037 (January and July).
A name whose offset is the same at all ten is "fixed"; the others (zones whose rules changed, or a name
Java resolves to a zone whose history differs: "India Standard Time" gives +06:00 in 2000) are listed as
"date_dependent" and refused by the reader with that reason, rather than guessed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "toolkit" / "data" / "java_zone_names.json"


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="zone_names_") as tmp:
        subprocess.run(["javac", "-nowarn", "-d", tmp, str(Path(__file__).with_name("ZoneNames.java"))], check=True)
        out = subprocess.run(["java", "-Duser.timezone=UTC", "-Duser.language=en", "-cp", tmp, "ZoneNames"],
                             check=True, capture_output=True, text=True).stdout
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    offsets = json.loads(out)
    fixed = {name: v[0] for name, v in sorted(offsets.items()) if len(set(v)) == 1}
    dependent = sorted(name for name, v in offsets.items() if len(set(v)) > 1)
    OUT.write_text(json.dumps({"source": f"scripts/weka/make_zone_names.py ({java})",
                               "fixed_minutes": fixed, "date_dependent": dependent}, indent=0, ensure_ascii=False)
                   + "\n", encoding="utf-8")
    print(f"{OUT}: {len(fixed)} fixed, {len(dependent)} date-dependent names", file=sys.stderr)


if __name__ == "__main__":
    main()
