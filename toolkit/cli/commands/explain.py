"""``toolkit explain``: what a fitted model says about the features (e.g. BMA's inclusion weights)."""

from __future__ import annotations

from typing import Optional

import typer

from toolkit.cli.output import CLASS_OPTION_HELP, class_attribute as class_value, json_text, out, plain_table

__all__ = ["register"]


def explain_command(
    dataset: str = typer.Argument(..., help="A dataset file (.arff, .csv, .libsvm, each optionally .gz) or bundled "
                                              "name; the model is fit on all of it."),
    classifier: str = typer.Option(..., "--classifier", "-c", help="NAME[:k=v,...] (no tuning: defaults unless set)."),
    top: int = typer.Option(30, "--top", help="Show the first N rows (0 = all)."),
    class_attribute: Optional[str] = typer.Option(None, "--class", "-C", help=CLASS_OPTION_HELP),
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
) -> None:
    """Fit a classifier on a dataset and print its explanation (for BMA: P(feature used | data))."""
    from toolkit import explain
    from toolkit.errors import ParameterError

    if top < 0:   # checked before the fit; -1 used to show every row, as 0 does
        raise ParameterError(f"--top must be 0 (all rows) or more, not {top}")
    report = explain(dataset, classifier, class_attribute=class_value(class_attribute))
    if as_json:
        out(json_text(report))
        return
    rows = report["rows"] if top <= 0 else report["rows"][:top]
    cells = [[f"{v:.6g}" if isinstance(v, float) else str(v) for v in row] for row in rows]
    for line in plain_table([report["columns"], *cells]):
        out(line)
    if top > 0 and len(report["rows"]) > top:
        out(f"... {len(report['rows']) - top} more (--top 0 shows all)")
    if report.get("note"):
        out(report["note"])


def register(app: typer.Typer) -> None:
    app.command("explain")(explain_command)
