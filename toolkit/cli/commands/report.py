"""``toolkit report``: results files -> a report to share (HTML, LaTeX, Markdown, CSV, JSON; the CD diagram
as PNG, SVG or PDF), the format from each output's extension."""

from __future__ import annotations

from typing import Optional

import typer

from toolkit.cli.output import check_alpha, check_rope, err

__all__ = ["register", "report_command"]


def report_command(
    results: list[str] = typer.Argument(..., help="Results files (.jsonl) of one experiment."),
    out: list[str] = typer.Option(..., "--out", "-o",
                                  help="File to write, repeatable; the format from the extension: .html (one "
                                       "self-contained file), .tex, .md, .csv (long; NAME-summary.csv beside it), "
                                       ".json, or the CD diagram alone as .png, .svg, .pdf."),
    metric: list[str] = typer.Option([], "--metric", "-m",
                                     help="Metrics to tabulate, repeatable (default: every metric of the experiment)."),
    report_metric: Optional[str] = typer.Option(None, "--report",
                                                help="Metric of the significance table, the tests across datasets and "
                                                     "the CD diagram (default: error, else the first)."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Pipeline to test against (default: first)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of every test."),
    significance: str = typer.Option("corrected-t", "--significance",
                                     help="corrected-t (WEKA default), paired-t or sign."),
    rope: float = typer.Option(0.01, "--rope",
                               help="Region of practical equivalence of the Bayesian test, in the metric's units."),
) -> None:
    """Write a report of results files: experiment statement, significance table with (v/ /*), a table per
    metric, Friedman / Nemenyi with the CD diagram, distributions, confusion matrices, chosen parameters."""
    from toolkit.errors import ParameterError
    from toolkit.evaluation.report import TESTS
    from toolkit.reporting import check_outputs, write_report

    check_outputs(out)
    if significance not in TESTS:
        raise ParameterError(f"--significance must be one of {', '.join(TESTS)}, not '{significance}'")
    check_alpha(alpha)
    check_rope(rope)
    for path in results:
        if not path.endswith(".jsonl"):
            raise ParameterError(f"{path}: toolkit report reads results files (.jsonl) written by evaluate or "
                                 f"compare --out")
    from toolkit.evaluation.results import Results

    loaded = Results.from_files(results)
    for note in loaded.incomplete_notes():
        err(note, prefix="Warning: ", color="yellow")
    written = write_report(loaded, out, metrics=metric or None, main=report_metric, baseline=baseline, alpha=alpha,
                           test=significance, rope=rope)
    for path in written:
        err(f"written: {path}")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
