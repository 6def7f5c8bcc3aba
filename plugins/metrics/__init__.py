"""The metrics family: evaluators of one test part (algorithms.md 5.2) and the ``pr-plot`` command.

Registrations only: ``classification.py`` (error, accuracy, log-loss, confusion matrix),
``ranking.py`` (average precision, precision-recall points, break-even points), ``pr_plot.py``
(the figure).
"""

from __future__ import annotations

from toolkit import hookimpl


@hookimpl
def register_evaluators(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins.metrics import classification as c
    from toolkit.plugins.metrics import ranking as r

    register("error", c.error, description="Share of misclassified test instances",
             greater_is_better=False, needs_proba=False)
    register("accuracy", c.accuracy, description="Share of correctly classified test instances",
             greater_is_better=True, needs_proba=False)
    register("log-loss", c.log_loss, description="Mean negative log-probability of the true class",
             greater_is_better=False, needs_proba=True)
    register("average-precision", r.average_precision,
             description="Non-interpolated average precision (binary: positive class; else one-vs-rest mean)",
             greater_is_better=True, needs_proba=False)
    register("pr-curve", r.pr_curve, description="Precision-recall points per class (one-vs-rest)",
             greater_is_better=True, needs_proba=False)
    register("bep-micro", r.bep_micro, description="Micro-averaged precision/recall break-even point",
             greater_is_better=True, needs_proba=False)
    register("bep-macro", r.bep_macro, description="Macro-averaged precision/recall break-even point",
             greater_is_better=True, needs_proba=False)
    register("confusion-matrix", c.confusion_matrix, description="Counts of (true class, predicted class)",
             greater_is_better=True, needs_proba=False)


@hookimpl
def register_commands(app):  # type: ignore[no-untyped-def]
    import typer

    @app.command("pr-plot")
    def pr_plot(
        results: list[str] = typer.Argument(..., help="Result files (.jsonl) written with -m pr-curve."),
        out: str = typer.Option("pr-curve.png", "--out", "-o", help="PNG to write (needs the plot extra)."),
        dataset: str = typer.Option(None, "--dataset", "-d", help="Dataset (task) name; default: the first."),
        repetition: int = typer.Option(0, "--repetition", help="Which repetition's test part."),
        label: str = typer.Option(None, "--label", "-l",
                                  help="Class value whose curve to draw (default: the positive one)."),
    ) -> None:
        """Precision-recall curves of every pipeline on one test part, as a PNG."""
        from toolkit import Results
        from toolkit.cli import err
        from toolkit.plotting import check_figure_path
        from toolkit.plugins.metrics.pr_plot import plot_pr_curves, pr_curves_from_records

        check_figure_path(out)
        records = Results.from_files(results).records
        curves = pr_curves_from_records(records, dataset, repetition, label)
        name = dataset or next(r["dataset"]["name"] for r in records if r.get("status") == "ok")
        err(f"figure written to {plot_pr_curves(curves, out, f'{name}, repetition {repetition}')}")
