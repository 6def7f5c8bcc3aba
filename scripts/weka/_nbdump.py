"""Run ``NBDump.java`` (WEKA 3.6's NaiveBayes) on ARFF texts: shared by the reference scripts that build
their own small cases (``make_nb_edge_refs.py``, ``make_nb_review_refs.py``)."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path


def run_nbdump(weka_jar: str, cases: dict[str, tuple[str, str]]) -> dict[str, list[str]]:
    """For each case name, (train ARFF text, test ARFF text) -> NBDump's output lines: ``OK ...`` then one
    line per test row (index, predicted code, distribution), or WEKA's error as the first line. The class
    is the last attribute of the train text."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(["javac", "-nowarn", "-cp", weka_jar, "-d", tmp, str(Path(__file__).with_name("NBDump.java"))],
                       check=True)
        jobs = []
        for name, (train, test) in cases.items():
            (work / f"{name}-train.arff").write_text(train, encoding="utf-8")
            (work / f"{name}-test.arff").write_text(test, encoding="utf-8")
            class_index = train.split("@data")[0].count("@attribute") - 1
            jobs.append(f"{class_index}\t{work / f'{name}-train.arff'}\t{work / f'{name}-test.arff'}\t{work / f'{name}.out'}")
        (work / "jobs.tsv").write_text("\n".join(jobs) + "\n", encoding="utf-8")
        subprocess.run(["java", "-cp", f"{weka_jar}:{tmp}", "NBDump", str(work / "jobs.tsv")], check=True)
        return {name: (work / f"{name}.out").read_text(encoding="utf-8").splitlines() for name in cases}


def parse_rows(lines: list[str]) -> dict[str, list]:
    """The predicted codes and class distributions of an ``OK`` output."""
    rows = [line.split() for line in lines[1:]]
    return {"predicted": [int(r[1]) for r in rows], "distribution": [[float(v) for v in r[2:]] for r in rows]}
