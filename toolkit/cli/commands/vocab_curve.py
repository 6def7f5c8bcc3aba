"""``toolkit vocab-curve``: accuracy against vocabulary size for several feature selectors."""

from __future__ import annotations

from typing import Optional

import typer

from toolkit.cli.output import CLASS_OPTION_HELP, check_alpha, class_attribute as class_value, err, json_text, out

__all__ = ["register", "vocab_curve_command"]


def vocab_curve_command(
    datasets: list[str] = typer.Argument(..., help="Dataset files (string text or word counts; .arff, .csv, .libsvm, each "
                                                            "optionally .gz), bundled names or folders."),
    selector: list[str] = typer.Option([], "--selector", "-s",
                                       help="Feature selector NAME[:k=v] (repeatable; default kl, dkl, mi and mi:event_model=token)."),
    sizes: str = typer.Option("20,50,100,200,500,1000,2000,5000,10000,20000,full", "--sizes",
                              help="Comma-separated vocabulary sizes; 'full' = every word."),
    classifier: str = typer.Option("nb-multinomial:epsilon=1,prior=mle", "--classifier", "-c",
                                   help="Classifier NAME[:k=v,...] refit for every size."),
    text: Optional[str] = typer.Option(None, "--text", help="Text step, e.g. word-counts:remove_top=100."),
    test: list[str] = typer.Option([], "--test", help="Fixed test set for each DATASET."),
    runs: int = typer.Option(5, "--runs", "-r", help="Random splits (without --test)."),
    test_fraction: float = typer.Option(0.2, "--test-fraction", help="Share held out in each random split."),
    seed: int = typer.Option(1, "--seed", help="Split r uses numpy default_rng(seed + r)."),
    metric: str = typer.Option("accuracy", "--metric", "-m", help="Evaluator name."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Selector tested against (default: mi)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the one-sided paired t-test."),
    fmt: str = typer.Option("table", "--format", help="table, markdown, csv or json."),
    plot: Optional[str] = typer.Option(None, "--out", "-o", "--plot",
                                       help="Also write the figure here (.png, .svg, .pdf; needs the plot extra)."),
    class_attribute: Optional[str] = typer.Option(None, "--class", "-C", help=CLASS_OPTION_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress notes on stderr."),
) -> None:
    """Accuracy against vocabulary size for KL, dKL and MI of both event models (Schneider 2004's experiment)."""
    from toolkit.cli.output import progress_bar
    from toolkit.errors import ParameterError
    from toolkit.evaluation.curves import DEFAULT_SELECTORS, vocabulary_curve

    if fmt not in ("table", "markdown", "csv", "json"):
        raise ParameterError(f"--format must be table, markdown, csv or json, not '{fmt}'")
    check_alpha(alpha)
    selectors = selector or list(DEFAULT_SELECTORS)
    if baseline is not None and baseline not in selectors:   # the table marks cells against it, after the run
        raise ParameterError(f"--baseline '{baseline}' is not among the selectors ({', '.join(selectors)})")
    if plot:
        from toolkit.plotting import check_figure_path

        check_figure_path(plot)
    with progress_bar(not quiet) as update:
        result = vocabulary_curve(datasets, selectors=selectors, sizes=sizes,
                                  classifier=classifier, text=text or "auto", test=test or None, runs=runs,
                                  test_fraction=test_fraction, seed=seed, metric=metric,
                                  class_attribute=class_value(class_attribute),
                                  progress=update)
    if fmt == "json":
        out(json_text(result.as_dict()))   # NaN (the sd of one repetition) as null: json.dumps wrote NaN, no JSON
    else:
        out(result.format(fmt, baseline=baseline, alpha=alpha))
    if plot:
        result.plot(plot)
        if not quiet:
            err(f"figure written to {plot}")


def register(app: typer.Typer) -> None:
    app.command("vocab-curve")(vocab_curve_command)
