"""Reports of unusual results, as a user meets them: one pipeline, failed repetitions, every section reachable."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from toolkit.cli import app

runner = CliRunner()
TINY = ROOT / "tests" / "data" / "tiny.arff"
IRIS = ROOT / "datasets" / "iris.arff"


def test_cd_diagram_of_one_pipeline_says_a_second_pipeline_is_missing(tmp_path):
    """One pipeline on two datasets: the refusal said the diagram 'needs at least 2 datasets with a result for
    every pipeline', which the results have; what is missing is a second pipeline. Nothing is written."""
    out = tmp_path / "one.jsonl"
    toolkit.evaluate([TINY, IRIS], ["nb-weka"], runs=2, out=out)
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "r.html"), "-o", str(tmp_path / "cd.svg")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "2 pipelines" in lines[0] and "1 pipeline and 2" in lines[0], lines
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "cd.svg").exists()
