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


@pytest.fixture(scope="module")
def two_by_two(tmp_path_factory):
    out = tmp_path_factory.mktemp("r") / "r.jsonl"
    toolkit.evaluate([TINY, IRIS], ["nb-weka", "nb-gaussian"], runs=2, out=out)
    return out


def test_outputs_that_collide_are_refused_before_anything_is_written(two_by_two, tmp_path):
    """-o r.csv -o r-summary.csv: r.csv writes its summary as r-summary.csv, and the second output wrote the long
    CSV over it (the summary was lost, 'written: r-summary.csv' came twice). Refused, naming both outputs."""
    long, summary = tmp_path / "r.csv", tmp_path / "r-summary.csv"
    for order in ([long, summary], [summary, long]):
        result = runner.invoke(app, ["report", str(two_by_two), *[a for p in order for a in ("-o", str(p))]])
        assert result.exit_code == 2, result.output
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "r-summary.csv: would be written twice" in lines[0], lines
        assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_the_same_content_asked_twice_is_written_once(two_by_two, tmp_path):
    """One file asked for twice with the same content (-o r.md and its diagram as -o r-cd.svg, or one -o
    repeated) is not refused: it is written and listed once."""
    md, svg, html = tmp_path / "r.md", tmp_path / "r-cd.svg", tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(two_by_two), "-o", str(svg), "-o", str(md), "-o", str(html),
                                 "-o", str(html)])
    assert result.exit_code == 0, result.output
    written = [line.split("written: ", 1)[1] for line in result.stderr.splitlines()]
    assert sorted(written) == sorted([str(svg), str(md), str(html)])
    assert "<svg" in svg.read_text()[:300]


def test_a_report_of_a_dict_metric_alone_names_the_metrics_to_add(tmp_path):
    """-m confusion-matrix alone said 'the results hold no metric with one number per repetition', while they
    held kappa: the message names the option and the metrics that would do."""
    out = tmp_path / "cm.jsonl"
    toolkit.evaluate([TINY], ["nb-weka"], runs=2, metrics=["confusion-matrix", "kappa"], out=out)
    result = runner.invoke(app, ["report", str(out), "-o", str(tmp_path / "r.html"), "-m", "confusion-matrix"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--metric confusion-matrix" in lines[0] and "add one of kappa" in lines[0], lines
    assert not (tmp_path / "r.html").exists()


def test_a_report_is_written_through_a_symbolic_link(two_by_two, tmp_path):
    """-o public.html, a link to the published report: the new report replaced the link with a file of its own
    and the published one stayed as it was. Written through the link, as a shell's > does."""
    published = tmp_path / "site" / "report.html"
    published.parent.mkdir()
    published.write_text("last week's report")
    link = tmp_path / "public.html"
    link.symlink_to(published)
    result = runner.invoke(app, ["report", str(two_by_two), "-o", str(link)])
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and link.resolve() == published.resolve()
    assert published.read_text().startswith("<!DOCTYPE html>")
    assert result.stderr.strip() == f"written: {link}"
