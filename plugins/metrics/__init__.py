"""The metrics family: evaluators of one test part (algorithms.md 5.2) and the ``pr-plot`` command.

Registrations only: ``classification.py`` (error, accuracy, log-loss, the confusion matrix, per-class
precision/recall/F1 and their averages, kappa, Matthews correlation, Brier score, WEKA's mean absolute
and root mean squared errors), ``ranking.py`` (average precision, precision-recall points, break-even
points, one-vs-rest ROC and PR areas), ``pr_plot.py`` (the figure). The counting itself is the core's
``toolkit.evaluation.measures``.
"""

from __future__ import annotations

from toolkit import hookimpl


@hookimpl
def register_evaluators(register):  # type: ignore[no-untyped-def]
    import toolkit.evaluation.measures as measures
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
             greater_is_better=True, needs_proba=False, scalar=False)
    register("bep-micro", r.bep_micro, description="Micro-averaged precision/recall break-even point (binary: positive class)",
             greater_is_better=True, needs_proba=False)
    register("bep-macro", r.bep_macro, description="Macro-averaged precision/recall break-even point (binary: positive class)",
             greater_is_better=True, needs_proba=False)
    register("confusion-matrix", c.confusion_matrix, description="Counts of (true class, predicted class)",
             greater_is_better=True, needs_proba=False, scalar=False, max_classes=measures.MAX_CONFUSION_CLASSES)
    register("per-class", c.per_class,
             description="Per class: support, TP/FP rate, precision, recall, F1, ROC and PR area (WEKA's detail table)",
             greater_is_better=True, needs_proba=False, scalar=False)
    for measure in ("precision", "recall", "f1"):
        for average in ("macro", "micro", "weighted"):
            register(f"{measure}-{average}", c.averaged_measure(measure, average),
                     description=f"{'F1' if measure == 'f1' else measure.capitalize()}, {average} average over classes",
                     greater_is_better=True, needs_proba=False)
    register("roc-auc", r.roc_auc,
             description="One-vs-rest ROC area, weighted by class frequency (WEKA's weighted average)",
             greater_is_better=True, needs_proba=False)
    register("roc-auc-macro", r.roc_auc_macro, description="One-vs-rest ROC area, unweighted mean over classes",
             greater_is_better=True, needs_proba=False)
    register("pr-auc", r.pr_auc,
             description="Area under the precision-recall curve (binary: positive class; else frequency-weighted)",
             greater_is_better=True, needs_proba=False)
    register("pr-auc-macro", r.pr_auc_macro, description="One-vs-rest PR area, unweighted mean over classes",
             greater_is_better=True, needs_proba=False)
    register("kappa", c.kappa, description="Cohen's kappa statistic", greater_is_better=True, needs_proba=False)
    register("mcc", c.mcc, description="Matthews correlation coefficient (multi-class R_K)",
             greater_is_better=True, needs_proba=False)
    register("brier", c.brier, description="Brier score: mean sum over classes of (p - [true class])^2",
             greater_is_better=False, needs_proba=True)
    register("mean-absolute-error", c.mean_absolute_error,
             description="WEKA's mean absolute error of the class probabilities", greater_is_better=False,
             needs_proba=True)
    register("root-mean-squared-error", c.root_mean_squared_error,
             description="WEKA's root mean squared error of the class probabilities", greater_is_better=False,
             needs_proba=True)


@hookimpl
def register_commands(app):  # type: ignore[no-untyped-def]
    import typer

    @app.command("pr-plot")
    def pr_plot(
        results: list[str] = typer.Argument(..., help="Result files (.jsonl) written with -m pr-curve."),
        out: str = typer.Option("pr-curve.png", "--out", "-o", help="Figure to write: .png, .svg or .pdf (needs the plot extra)."),
        dataset: str = typer.Option(None, "--dataset", "-d", help="Dataset (task) name; default: the first."),
        repetition: int = typer.Option(0, "--repetition", help="Which repetition's test part."),
        label: str = typer.Option(None, "--label", "-l",
                                  help="Class value whose curve to draw (default: the positive one)."),
    ) -> None:
        """Precision-recall curves of every pipeline on one test part, as a figure (.png, .svg or .pdf)."""
        from toolkit import Results
        from toolkit.cli import err
        from toolkit.plotting import check_figure_path
        from toolkit.plugins.metrics.pr_plot import plot_pr_curves, pr_curves_from_records

        check_figure_path(out)
        records = Results.from_files(results).records
        curves = pr_curves_from_records(records, dataset, repetition, label)
        drawn = [r for r in records if r.get("status") == "ok" and isinstance(r["metrics"].get("pr-curve"), dict)]
        name = dataset or drawn[0]["dataset"]["name"]
        # the class drawn, named in the title: with more than two classes the first with a curve was drawn
        # and neither title nor legend said which
        classes = next(list(r["metrics"]["pr-curve"]) for r in drawn
                       if r["dataset"]["name"] == name and r["repetition"] == repetition)
        shown = label if label is not None else classes[0]
        title = f"{name}, class '{shown}', repetition {repetition}"
        err(f"figure written to {plot_pr_curves(curves, out, title)}"
            + (f" (class '{shown}' of {len(classes)} with curves; --label picks another)" if len(classes) > 1 else ""))
