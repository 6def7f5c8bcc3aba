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
    assert len(lines) == 1 and "at least 2 pipelines" in lines[0] and "2 such datasets and 1 pipeline" in lines[0], lines
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "cd.svg").exists()


def test_html_contents_link_to_the_failed_repetitions(tmp_path):
    """The list of failed repetitions closes the page but the contents at its top did not link to it, so a
    reader of a shared report had no sign of it there."""
    import json

    out = tmp_path / "r.jsonl"
    toolkit.evaluate([TINY, IRIS], ["nb-weka", "nb-gaussian"], runs=2, out=out)
    lines = out.read_text().splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec.get("schema") == "toolkit.result/1" and rec["dataset"]["name"] == "iris" and rec["repetition"] == 1 \
                and rec["pipeline"]["name"] == "nb-gaussian":
            rec = {k: v for k, v in rec.items() if k not in ("metrics", "predictions", "chosen_params", "tuning")}
            rec.update(status="failed", error="made up for this test", error_kind="bug")
            lines[i] = json.dumps(rec)
    out.write_text("\n".join(lines) + "\n")
    toolkit.write_report(out, tmp_path / "r.html")
    html = (tmp_path / "r.html").read_text()
    nav = re.search(r"<nav>(.*?)</nav>", html, re.S).group(1)
    assert '<section id="failures">' in html and 'href="#failures"' in nav
    # and a run without failures has neither
    clean = tmp_path / "clean.jsonl"
    toolkit.evaluate([TINY], ["nb-weka"], runs=2, out=clean)
    toolkit.write_report(clean, tmp_path / "c.html")
    assert "#failures" not in (tmp_path / "c.html").read_text()
