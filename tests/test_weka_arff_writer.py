"""WEKA 3.6.14 reads back what the toolkit's ARFF writer writes (issue 2 acceptance).

``tests/golden/weka_arff_writer.json`` is produced by ``scripts/weka/check_arff_writer.py``: every
ARFF file of the shared datasets (plus dense->sparse and sparse->dense conversions and a synthetic
edge-case file) is read by the toolkit, written by ``toolkit.data.arff.write`` and loaded by
Debian's WEKA (``weka.core.converters.ArffLoader``); the script records, per case, ``ok`` or the
first difference between WEKA's view and the toolkit's dataset. This test needs no Java: it checks
the recorded verdicts and that the report covers the shared files that exist here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import shared_path

REPORT = Path(__file__).parent / "golden" / "weka_arff_writer.json"
DATA = json.loads(REPORT.read_text(encoding="utf-8"))
CASES = DATA["cases"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_weka_reads_the_written_file_identically(case: str) -> None:
    assert CASES[case]["weka_reads_written"] == "ok", f"{case}: {CASES[case]['weka_reads_written']}"


@pytest.mark.parametrize("case", sorted(c for c in CASES if "weka_reads_original" in CASES[c]))
def test_toolkit_reads_the_shared_file_as_weka_does(case: str) -> None:
    assert CASES[case]["weka_reads_original"] == "ok", f"{case}: {CASES[case]['weka_reads_original']}"


def test_both_forms_and_both_conversions_were_checked() -> None:
    own = [c for c in CASES.values() if "weka_reads_original" in c]
    converted = [c for c in CASES.values() if "weka_reads_original" not in c]
    assert {c["written"] for c in own} == {"dense", "sparse"}
    assert any(c["written"] == "sparse" and c["source"].startswith("uci/") for c in converted)
    assert any(c["written"] == "dense" and c["source"].startswith("text/") for c in converted)
    assert {c["written"] for c in converted if c["source"].endswith("EDGE_CASES")} == {"dense", "sparse"}
    assert any(c["written"] == "sparse" and c["class_index"] not in (None, c["attributes"] - 1) for c in converted)


@pytest.mark.shared
def test_report_covers_every_shared_arff_file() -> None:
    root = shared_path()
    present = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                     if p.is_file() and (p.name.endswith(".arff") or p.name.endswith(".arff.gz")))
    checked = sorted(c["source"] for c in CASES.values() if "weka_reads_original" in c)
    assert present == checked
