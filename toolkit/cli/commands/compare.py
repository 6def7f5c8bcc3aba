"""``toolkit compare``: a results table across datasets, from result files or by running them."""

from __future__ import annotations

from typing import Optional

import typer

from toolkit.cli.output import check_alpha, err, out
from toolkit.cli.commands.evaluate import CLASS_HELP

__all__ = ["register"]


#: options that run classifiers on datasets (parameter name -> option): meaningless with result files
_RUN_ONLY = {"classifier": "-c", "fs": "--fs", "es": "--es", "protocol": "--protocol", "runs": "--runs",
             "test_fraction": "--test-fraction", "seed": "--seed", "stratified": "--stratified",
             "class_attribute": "--class", "inner_folds": "--inner-folds", "test": "--test",
             "keep_going": "--keep-going", "scheduler": "--scheduler", "cluster": "--cluster", "jobs": "--jobs",
             "out_file": "--out", "resume": "--resume", "text": "--text", "validation_fraction": "--validation-fraction",
             "positive": "--positive", "positive_below": "--positive-below", "dense": "--dense",
             "no_tune": "--no-tune", "save_proba": "--save-proba"}


def compare_command(
    ctx: typer.Context,
    items: list[str] = typer.Argument(..., help="Result files (.jsonl), or datasets / folders to evaluate."),
    classifier: list[str] = typer.Option([], "--classifier", "-c", help="Classifiers to run on datasets."),
    fs: Optional[str] = typer.Option(None, "--fs", help="Feature selector NAME[:k=v,...]."),
    es: Optional[str] = typer.Option(None, "--es", help="Example selector NAME[:k=v,...]."),
    text: Optional[str] = typer.Option(None, "--text",
                                       help="Text step for string attributes, e.g. word-counts:remove_top=500."),
    protocol: str = typer.Option("random", "--protocol", help="random (default), thesis, or fixed (with --test)."),
    runs: int = typer.Option(10, "--runs", "-r", help="Repetitions of the random protocol."),
    test_fraction: float = typer.Option(0.1, "--test-fraction", help="Share held out for testing."),
    validation_fraction: float = typer.Option(0.1, "--validation-fraction",
                                              help="Share of the training part that validates the grid."),
    seed: int = typer.Option(1, "--seed", help="Repetition r uses numpy default_rng(seed + r)."),
    stratified: bool = typer.Option(False, "--stratified", help="Keep class shares in every split."),
    class_attribute: list[str] = typer.Option([], "--class", "-C", help=CLASS_HELP),
    inner_folds: Optional[int] = typer.Option(None, "--inner-folds", help="Tune by k-fold CV inside training."),
    positive: list[str] = typer.Option([], "--positive", "-p",
                                       help="Binary task: CLASS (code 1) against the rest; repeatable."),
    positive_below: Optional[float] = typer.Option(None, "--positive-below",
                                                   help="One CLASS-vs-rest task per class with a share below this."),
    dense: bool = typer.Option(False, "--dense", help="Load sparse files as dense arrays."),
    no_tune: bool = typer.Option(False, "--no-tune", help="Use default parameters, skip tuning."),
    save_proba: bool = typer.Option(False, "--save-proba", help="Store test probabilities and decision scores in --out (what the model has)."),
    metric: list[str] = typer.Option([], "--metric", "-m",
                                     help="Metric to tabulate; repeatable, a table each (default: error)."),
    report_metric: Optional[str] = typer.Option(None, "--report", help="Show only this metric's table."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Pipeline to test against (default: first)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level."),
    significance: str = typer.Option("corrected-t", "--significance", help="corrected-t (WEKA default), paired-t or sign."),
    test: list[str] = typer.Option([], "--test", help="Fixed test set for each DATASET when running."),
    keep_going: bool = typer.Option(False, "--keep-going", help="Go on past failed repetitions (exit code 1)."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Run on a Dask cluster: tcp://HOST:8786."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Run on a new local Dask cluster: local:N."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Processes over repetitions (at most 4 per core and one per repetition are started)."),
    out_file: Optional[str] = typer.Option(None, "--out", "-o", help="JSON-lines results when running."),
    resume: bool = typer.Option(False, "--resume", help="Continue --out."),
    fmt: str = typer.Option("table", "--format",
                            help="table, markdown, csv (numbers per pipeline), csv-long (one row per repetition), "
                                 "latex or json."),
    interval: str = typer.Option("ci", "--interval", help="ci (mean ± 95% CI) or lcl (the one-sided 95% limit on "
                                                         "the worse side: lower, or upper for error and the like)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Compare classifiers across datasets: mean ± CI, significance marks, wins/ties/losses."""
    from toolkit import compare
    from toolkit.errors import ParameterError, ResultsFileError
    from toolkit.evaluation.report import check_report_options

    metrics = list(dict.fromkeys(metric)) or [report_metric or "error"]   # --report alone: that metric is run
    check_alpha(alpha)
    if as_json and fmt not in ("table", "json"):   # --json won over the --format asked for, without a word
        raise ParameterError(f"--json and --format {fmt} ask for two outputs; give one")
    check_report_options(fmt=fmt, test=significance, interval=interval, metric=report_metric)
    for m in metrics:
        check_report_options(metric=m)
    if report_metric and metric and report_metric not in metrics:
        raise ParameterError(f"--report {report_metric} is not among the metrics (-m {' -m '.join(metrics)})")
    shown = [report_metric] if report_metric else metrics
    if all(item.endswith(".jsonl") for item in items):
        given = [option for name, option in _RUN_ONLY.items() if _given(ctx, name)]
        if given:   # -o r2.jsonl wrote nothing, --runs 20 ran nothing, without a word
            what = "-c runs" if given == ["-c"] else f"{', '.join(given)}: options to run"
            raise ParameterError(f"{what} classifiers on datasets; result files are only tabulated")
        from toolkit.evaluation.report import format_tables
        from toolkit.evaluation.results import Results

        results = Results.from_files(items)
        for note in results.incomplete_notes():
            err(note, prefix="Warning: ", color="yellow")
        if not results.ok():
            raise ResultsFileError(f"{', '.join(items)}: no finished repetition; nothing to compare")
        held = results.metrics()
        if not metric and not report_metric and "error" not in held and held:
            # a run without error (-m kappa only): its first metric with numbers (not a confusion matrix)
            from toolkit.evaluation.detail import is_dict_metric

            shown = ([m for m in held if not is_dict_metric(results, m)] or held)[:1]
        missing = [m for m in shown if m not in held]
        if missing:
            raise ParameterError(f"metric '{missing[0]}' is not in the results (they hold: {', '.join(held)})")
        compare(results, baseline=baseline, metric=shown[0], alpha=alpha, test=significance)  # checks the baseline
        out(format_tables(results, shown, "json" if as_json else fmt, baseline=baseline, alpha=alpha,
                          test=significance, interval=interval))
        return
    if not classifier:
        raise ParameterError("give classifiers with -c NAME to evaluate datasets, or pass .jsonl result files")
    from toolkit.cli.commands.evaluate import run_and_report

    run_and_report(items, classifier, fs, es, protocol, runs, test_fraction, validation_fraction, seed, stratified,
                   inner_folds, test, list(dict.fromkeys([*metrics, "error"])), jobs, out_file, resume, False,
                   "json" if as_json else fmt, baseline, class_attribute, dense, no_tune, save_proba, quiet,
                   report_metric, alpha, significance, text, positive, positive_below, keep_going=keep_going,
                   scheduler=scheduler, cluster=cluster, shown=shown, interval=interval)


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option was given (on the command line or by its environment variable), not defaulted."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT", "PROMPT")


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
