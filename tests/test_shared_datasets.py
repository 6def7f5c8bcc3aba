"""Every file in ../shared/datasets: `toolkit info` counts equal MANIFEST.md's, the file survives
read -> write -> read in dense and sparse form, and our reader equals the liac-arff reference
engine where liac-arff can parse the file.

MANIFEST.md's counts were checked against WEKA 3.6.14 by the people who built the collection,
so they are an independent reference.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from conftest import SHARED, shared_path
from toolkit.cli import app
from toolkit.data import arff


def _manifest_rows() -> list[dict]:
    path = SHARED / "MANIFEST.md"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 11 or not cells[0].startswith("`") or cells[0].endswith(".tar.gz`"):
            continue
        file = cells[0].strip("`")
        notes = cells[10]
        class_attr = -1
        if "class attribute is the FIRST" in notes:
            class_attr = 0
        elif "class attribute is the SECOND" in notes:
            class_attr = 1
        number = lambda text: int(re.match(r"\d+", text).group())  # noqa: E731
        classes = cells[6]
        rows.append({
            "file": file,
            "instances": number(cells[4]),
            "attributes": number(cells[5]),
            "classes": "numeric" if classes.startswith("numeric") else int(classes),
            "sparse": cells[7] == "yes",
            "class": class_attr,
        })
    return rows


ROWS = _manifest_rows()
runner = CliRunner()


def test_manifest_lists_every_file():
    """The walk below covers the whole folder: every ARFF file is in the manifest and vice versa."""
    shared_path("MANIFEST.md")
    on_disk = {str(p.relative_to(SHARED)) for p in SHARED.rglob("*") if p.name.endswith((".arff", ".arff.gz"))}
    listed = {r["file"] for r in ROWS}
    assert on_disk == listed
    assert len(listed) == 138


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_info_counts_equal_manifest(row):
    path = shared_path(row["file"])
    args = ["info", str(path), "--json"]
    if row["class"] != -1:
        args += ["--class", str(row["class"] + 1)]  # the CLI counts positions from 1, as WEKA's -c
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["instances"] == row["instances"]
    assert info["attributes"] == row["attributes"]
    assert info["sparse"] == row["sparse"]
    assert info["class"]["classes"] == row["classes"]


def _other_form_is_small(ds) -> bool:
    """Dense <-> sparse copies where they stay small (string columns have no useful sparse form)."""
    return not ds.strings and ds.n_instances * max(ds.n_features, 1) <= 3_000_000


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_read_write_read_roundtrip(row, tmp_path):
    path = shared_path(row["file"])
    first = arff.read(path, class_attribute=row["class"] if row["class"] != -1 else -1)
    # written in its own form (plain text: gzip writing is covered by the unit tests)
    out = tmp_path / "copy.arff"
    arff.write(first, out)
    again = arff.read(out, class_attribute=first.class_index if first.class_index is not None else None)
    assert first.difference(again) is None
    assert again.is_sparse == first.is_sparse
    # and in the other form (dense <-> sparse), where that stays small
    if _other_form_is_small(first):
        other = tmp_path / "other.arff"
        arff.write(first, other, sparse=not first.is_sparse)
        back = arff.read(other, class_attribute=first.class_index if first.class_index is not None else None)
        assert back.is_sparse != first.is_sparse
        assert first.difference(back) is None


_LIAC_CANNOT = {"quirky/breast-w.arff", "quirky/zoo.arff", "quirky/supermarket.arff"}


@pytest.mark.parametrize("row", [r for r in ROWS if not r["file"].endswith(".gz")],
                         ids=[r["file"] for r in ROWS if not r["file"].endswith(".gz")])
def test_fast_reader_equals_liac_arff(row):
    """liac-arff parses the pre-scanned header's data; our vectorised reader must agree value for value.
    (The three quirky files liac-arff cannot parse raw work here because of the pre-scan.)"""
    path = shared_path(row["file"])
    if path.stat().st_size > 1_500_000:
        pytest.skip("liac-arff reference is slow on large files; the gzip text files are covered by the roundtrip")
    cls = row["class"]
    ours = arff.read(path, class_attribute=cls)
    reference = arff.read(path, class_attribute=cls, engine="liac-arff")
    assert ours.difference(reference) is None


def test_liac_arff_alone_fails_on_the_quirky_files():
    """The pre-scan is needed: raw liac-arff 2.5.0 refuses these three WEKA-valid files."""
    import arff as liac

    for name in sorted(_LIAC_CANNOT):
        path = shared_path(name)
        with pytest.raises(liac.ArffException):
            liac.loads(path.read_text(encoding="utf-8"))
        assert arff.read(path).n_instances > 0
