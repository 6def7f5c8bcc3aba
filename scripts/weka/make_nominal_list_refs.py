"""WEKA 3.6's reading of nominal value lists (``@attribute a {...}``): commas and white space both
separate values, an empty item is no value, quotes, escapes, comments and the errors. One command, with
Debian's weka package and a JDK:

    python scripts/weka/make_nominal_list_refs.py [--weka-jar /usr/share/java/weka.jar]

writes ``tests/golden/weka_nominal_lists.json``: for each attribute line the values WEKA's
``ArffLoader.ArffReader`` gives, or null when it refuses the line (``scripts/weka/NominalListDump.java``).
The lines are a fixed list of cases and random lists (fixed seed) of values, separators and characters.
Left out: NUL bytes (the toolkit refuses a file with one as binary) and tabs inside quotes (WEKA 3.6 ends
or drops such a value in ways the toolkit does not reproduce). ``tests/test_arff_header_limits.py``
compares the toolkit with it without Java.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    "@attribute a {x,y,z}", "@attribute a { x , y ,z }", "@attribute a {x,y}%c", "@attribute a {x,y} % c'",
    "@attribute 'a b' {'p q', r}", "@attribute a {'x','y'}", "@attribute a {'',x}", "@attribute a {\"x\", 'y'}",
    "@attribute a {'x,}', y}", "@attribute a {'it\\'s', x}", "@attribute a {x\\y}", "@attribute a {x,x}",
    "@attribute a {'x', x}", "@attribute a {}", "@attribute a { }", "@attribute a {,}", "@attribute a {x,,y}",
    "@attribute a {x,}", "@attribute a {x y}", "@attribute a {x} y", "@attribute a {x", "@attribute a {'x}",
    "@attribute a {x,'y}", "@attribute a {x}{y}", "@attribute a {\u00a0x,y}", "@attribute a{x,y}",
    "@attribute a {x%y}", "@attribute a {'x'y}", "@attribute a {'x' 'y'}", "@attribute a {x,y}}",
    "@attribute {x}", "@attribute a {'a\"b', \"c'd\"}", "@attribute a {x,\ty\t}\t", "@attribute a {'x',y,'z'} %'",
    "@attribute c {a b, c}", "@attribute c {a,b,}", "@attribute c {,a,b}", "@attribute c {a b c}",
    "@attribute c {a 'b c'}", "@attribute c {a\tb}", "@attribute c {a,'',b}", "@attribute c {a, ,b}",
]


def random_line(rng: random.Random) -> str:
    """Half the lines are lists of values (some repeated, some malformed), half any characters."""
    if rng.random() < 0.5:
        items = ["x", "yz", "\u00e9", "1", "?", "'a b'", "''", "'c,d'", "'e}'", "\"f g\"", "'it\\'s'", "'%'",
                 "x y", "", "'x'"]
        seps = [",", ",", " , ", ",\t", ", ", " ", ",,"]
        chosen = [rng.choice(items) for _ in range(rng.randint(1, 8))]
        body = "".join(item + rng.choice(seps) for item in chosen[:-1]) + chosen[-1]
    else:
        pieces = ["x", "yz", "\u00e9", "1", "?", " ", "\t", ",", ",", ", ", "'", "'", "\"", "\\", "\\'", "{",
                  "}", "%", "'a b'", "'c,d'", "'e}'", "''", "\"f g\"", "\u00a0"]
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
    close = rng.choice(["}", "}", "}", "", "} %x", "} y", " } ", "}%'"])
    return "@attribute n {" + body + close


def _tab_in_quotes(line: str) -> bool:
    quote = None
    for ch in line:
        if quote is None and ch in "'\"":
            quote = ch
        elif quote is not None and ch == quote:
            quote = None
        elif quote is not None and ch == "\t":
            return True
    return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--weka-jar", default="/usr/share/java/weka.jar")
    parser.add_argument("--random", type=int, default=1500)
    args = parser.parse_args()
    rng = random.Random(20261207)
    lines = list(CASES) + [random_line(rng) for _ in range(args.random)]
    lines = [line for line in dict.fromkeys(lines) if not _tab_in_quotes(line)]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["javac", "-nowarn", "-cp", args.weka_jar, "-d", tmp,
                        str(Path(__file__).with_name("NominalListDump.java"))], check=True)
        out = subprocess.run(["java", "-Duser.language=en", "-cp", f"{args.weka_jar}:{tmp}", "NominalListDump"],
                             input="\n".join(lines) + "\n", capture_output=True, text=True, encoding="utf-8",
                             check=True).stdout.splitlines()
    assert len(out) == len(lines), (len(out), len(lines))
    refs = []
    for line, answer in zip(lines, out):
        if answer.startswith("ERR"):
            refs.append([line, None])
        else:
            name, _kind, *values = answer.split("\t")[1].split("|")
            refs.append([line, values])
    target = ROOT / "tests" / "golden" / "weka_nominal_lists.json"
    target.write_text(json.dumps({"weka": "3.6.14", "lines": refs}, ensure_ascii=False, indent=0) + "\n",
                      encoding="utf-8")
    print(f"{target}: {len(refs)} lines, {sum(v is None for _, v in refs)} refused by WEKA")


if __name__ == "__main__":
    main()
