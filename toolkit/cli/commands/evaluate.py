"""``toolkit evaluate``: the nested resampling harness on one or more datasets."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import typer

from toolkit.cli.output import (CLASS_OPTION_HELP, check_alpha, class_attribute as class_value, err, json_text,
                                one_line, out, progress_bar)

__all__ = ["register", "evaluate_command", "run_and_report"]


CLASS_HELP = (CLASS_OPTION_HELP + " For every dataset, or DATASET=ATTR for one (file name without .arff); "
              "repeatable.")


def parse_class_options(values: Sequence[str]) -> Any:
    """``--class`` values: one NAME for every dataset, or DATASET=NAME pairs (plus at most one plain NAME
    for the others) -> what ``toolkit.evaluate`` takes as ``class_attribute``."""
    from toolkit.errors import ParameterError

    plain = [v for v in values if "=" not in v]
    pairs = [v.split("=", 1) for v in values if "=" in v]
    if len(plain) > 1:
        raise ParameterError(f"--class names more than one attribute for every dataset: {', '.join(plain)}; "
                             f"use DATASET=NAME for single datasets")
    if not pairs:
        return class_value(plain[0]) if plain else -1
    mapping: dict[str, str] = {}
    for stem, name in pairs:
        if not stem or not name:
            raise ParameterError(f"--class {stem}={name}: expected DATASET=NAME")
        if stem in mapping and mapping[stem] != name:
            raise ParameterError(f"--class gives dataset '{stem}' two class attributes: {mapping[stem]}, {name}")
        mapping[stem] = name
    if plain:
        mapping["*"] = plain[0]
    return {stem: class_value(name) for stem, name in mapping.items()}


def run_and_report(datasets: list[str], classifier: list[str], fs: Optional[str], es: Optional[str],
                   protocol: str, runs: int, test_fraction: float, validation_fraction: float, seed: int,
                   stratified: bool, inner_folds: Optional[int], test: list[str], metric: list[str],
                   jobs: int, out_file: Optional[str], resume: bool, as_json: bool, fmt: str,
                   baseline: Optional[str], class_attribute: Sequence[str], dense: bool, no_tune: bool,
                   save_proba: bool, quiet: bool, report_metric: Optional[str], alpha: float,
                   significance: str, text: Optional[str] = None, positive: Optional[list[str]] = None,
                   positive_below: Optional[float] = None, keep_going: bool = False,
                   scheduler: Optional[str] = None, cluster: Optional[str] = None,
                   shown: Optional[list[str]] = None, summary: bool = False, interval: str = "ci") -> None:
    from toolkit import compare, evaluate
    from toolkit.errors import Interrupted, ParameterError
    from toolkit.evaluation.api import make_pipelines
    from toolkit.evaluation.report import check_report_options, format_tables

    metrics = list(dict.fromkeys(metric)) or None  # None: evaluate's defaults
    check_alpha(alpha)
    if as_json and fmt != "table":   # --json took over and the --format asked for was dropped without a word
        raise ParameterError(f"--json and --format {fmt} ask for two outputs; give one")
    if not out_file and (resume or save_proba):   # both act on the --out file; without one they did nothing
        raise ParameterError(f"{'--resume continues' if resume else '--save-proba stores the probabilities in'} "
                             f"the results file of --out FILE; give --out")
    if jobs != 1 and (scheduler or cluster):   # the cluster's workers run the repetitions; --jobs was ignored
        raise ParameterError(f"--jobs {jobs} runs local processes; with {'--scheduler' if scheduler else '--cluster'} "
                             f"the cluster's workers run the repetitions: leave --jobs out")
    check_report_options(fmt=fmt, test=significance, metric=report_metric)
    for m in metrics or []:
        check_report_options(metric=m)
    if report_metric and metrics and report_metric not in metrics:
        raise ParameterError(f"--report {report_metric} is not among the metrics computed (-m {' -m '.join(metrics)})")
    if report_metric and not metrics:
        from toolkit.evaluation.harness import DEFAULT_METRICS

        if report_metric not in DEFAULT_METRICS:
            raise ParameterError(f"--report {report_metric} is not among the metrics computed by default "
                                 f"({', '.join(DEFAULT_METRICS)}); add -m {report_metric}")
    if out_file:
        from toolkit.cli.output import check_output_path

        check_output_path(out_file, "--out")
    from toolkit.evaluation.distributed import parse_cluster

    parse_cluster(scheduler, cluster)
    pipelines = make_pipelines(classifier, None, fs, es, not no_tune, text or "auto")
    if baseline is not None:
        from toolkit.models.pipeline import resolve_pipeline_name

        baseline = resolve_pipeline_name(baseline, [p.name for p in pipelines]) or baseline
    if baseline is not None and baseline not in [p.name for p in pipelines]:
        raise ParameterError(f"--baseline '{baseline}' is not among the pipelines "
                             f"({', '.join(p.name for p in pipelines)})")
    try:
        with progress_bar(not quiet) as update:
            results = evaluate(datasets, pipelines=pipelines, protocol=protocol,
                               runs=runs, test_fraction=test_fraction, validation_fraction=validation_fraction,
                               seed=seed, stratified=stratified, inner_folds=inner_folds, metrics=metrics,
                               jobs=jobs, out=out_file, resume=resume,
                               test=test or None, class_attribute=parse_class_options(class_attribute),
                               sparse=False if dense else "auto", tune=not no_tune, progress=update,
                               store_proba=save_proba or summary,
                               positive=positive or None, positive_below=positive_below, keep_going=keep_going,
                               notes=None if quiet else err, scheduler=scheduler, cluster=cluster,
                               # the table needs the metrics only (the file keeps the predictions): memory
                               # stays about a kilobyte a repetition
                               keep_predictions=summary)
    except KeyboardInterrupt:
        if out_file:
            raise Interrupted(f"interrupted; every finished repetition is saved in {out_file} "
                              f"(run again with --resume to continue)") from None
        raise Interrupted("interrupted; no results were saved (give --out FILE to keep finished repetitions)") from None
    if shown is None:
        shown = [report_metric] if report_metric else (metrics or ["error"])  # every -m given, else error
    comparison = compare(results, baseline=baseline, metric=shown[0], alpha=alpha, test=significance)
    if as_json:
        doc = {"schema": "toolkit.evaluate/1", "comparison": comparison.as_dict(),
               "records": [{k: v for k, v in r.items() if k != "predictions"} for r in results.records]}
        if summary:
            from toolkit.evaluation.summary import results_summaries

            doc["summary"] = [s.as_dict() for s in results_summaries(results)]
        out(json_text(doc))
    else:
        out(format_tables(results, shown, fmt, baseline=baseline, alpha=alpha, test=significance, interval=interval))
        if summary:
            from toolkit.evaluation.summary import results_summaries

            # WEKA's text after a CSV, JSON or LaTeX document made it no longer one (json.load: "Extra data"):
            # there it goes to stderr, as predict does with csv and arff
            show = out if fmt in ("table", "markdown") else err
            for s in results_summaries(results):
                show("")
                show(s.format())
    failed = summarise_failures(results.problems())
    if out_file and not quiet:
        err(f"results written to {out_file}")
    if failed:
        raise typer.Exit(1)


def summarise_failures(problems: Sequence[dict[str, Any]]) -> int:
    """One warning line per distinct failure message (not one per repetition); returns how many failed."""
    groups: dict[str, list[str]] = {}
    for r in problems:
        what = f"{r['dataset']['name']} / {r['pipeline']['name']} #{r['repetition']}"
        groups.setdefault(str(r.get("error")), []).append(what)
    for message, where in groups.items():
        shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3 else "")
        err(f"{len(where)} repetition{'s' if len(where) > 1 else ''} failed ({shown}): {one_line(message)[:300]}",
            prefix="Warning: ", color="yellow")
    return len(problems)


def evaluate_command(
    datasets: list[str] = typer.Argument(..., help="Dataset files (.arff, .csv, .libsvm, each optionally .gz), bundled names (iris), "
                                                            "or folders (their .arff and .arff.gz files)."),
    classifier: list[str] = typer.Option(..., "--classifier", "-c",
                                         help="NAME or NAME:k=v,k2=a|b (a|b = grid to tune); repeatable."),
    fs: Optional[str] = typer.Option(None, "--fs", help="Feature selector NAME[:k=v,...], fit on training parts."),
    es: Optional[str] = typer.Option(None, "--es", help="Example selector NAME[:k=v,...], fit on training parts."),
    text: Optional[str] = typer.Option(None, "--text",
                                       help="Text step for string attributes, e.g. word-counts:remove_top=500 "
                                            "(default: word-counts with its defaults)."),
    protocol: str = typer.Option("random", "--protocol", help="random (default), thesis, or fixed (with --test)."),
    runs: int = typer.Option(10, "--runs", "-r", help="Repetitions of the random protocol."),
    test_fraction: float = typer.Option(0.1, "--test-fraction", help="Share held out for testing."),
    validation_fraction: float = typer.Option(0.1, "--validation-fraction",
                                              help="Share of the training part that validates the grid."),
    seed: int = typer.Option(1, "--seed", help="Repetition r uses numpy default_rng(seed + r)."),
    stratified: bool = typer.Option(False, "--stratified", help="Keep class shares in every split."),
    inner_folds: Optional[int] = typer.Option(None, "--inner-folds", help="Tune by k-fold CV inside training."),
    positive: list[str] = typer.Option([], "--positive", "-p",
                                       help="Binary task: CLASS (code 1) against the rest; repeatable."),
    positive_below: Optional[float] = typer.Option(None, "--positive-below",
                                                   help="One CLASS-vs-rest task per class with a share below this."),
    test: list[str] = typer.Option([], "--test", help="Fixed test set for each DATASET (e.g. bydate test); "
                                                      "repeatable, in the order of the datasets."),
    metric: list[str] = typer.Option([], "--metric", "-m", help="Evaluator names (repeatable)."),
    report_metric: Optional[str] = typer.Option(None, "--report", help="Metric shown in the table."),
    jobs: int = typer.Option(1, "--jobs", "-j", help="Processes over repetitions (at most 4 per core and one per repetition are started)."),
    out_file: Optional[str] = typer.Option(None, "--out", "-o", help="JSON-lines results, written as they finish."),
    resume: bool = typer.Option(False, "--resume", help="Continue --out, skipping finished repetitions."),
    baseline: Optional[str] = typer.Option(None, "--baseline", help="Pipeline to test against (default: first)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level."),
    significance: str = typer.Option("corrected-t", "--significance", help="corrected-t (WEKA default), paired-t or sign."),
    class_attribute: list[str] = typer.Option([], "--class", "-C", help=CLASS_HELP),
    dense: bool = typer.Option(False, "--dense", help="Load sparse files as dense arrays."),
    no_tune: bool = typer.Option(False, "--no-tune", help="Use default parameters, skip tuning."),
    save_proba: bool = typer.Option(False, "--save-proba", help="Store test probabilities and decision "
                                                                "scores in --out (what the model has)."),
    fmt: str = typer.Option("table", "--format",
                            help="table, markdown, csv (numbers: mean, ci, sd, n, p-value, mark per pipeline), "
                                 "csv-long (dataset, pipeline, repetition, metric, value), latex or json."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document with the table and the records."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar or notes on stderr."),
    keep_going: bool = typer.Option(False, "--keep-going",
                                    help="Record a repetition that fails and go on (exit code 1 at the end); "
                                         "by default the run stops at the first failure."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler",
                                            help="Run on an existing Dask cluster: tcp://HOST:8786."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="Run on a new local Dask cluster: local:N."),
    summary: bool = typer.Option(False, "--summary",
                                 help="Also WEKA's evaluation summary per dataset and pipeline, summed over the "
                                      "repetitions (stores the test probabilities in --out); on stderr when stdout "
                                      "holds csv, csv-long, json or latex, in the document with --json."),
) -> None:
    """Nested random-resampling evaluation (thesis Algorithm 4) of classifiers on datasets."""
    run_and_report(datasets, classifier, fs, es, protocol, runs, test_fraction, validation_fraction, seed,
                   stratified, inner_folds, test, metric, jobs, out_file, resume, as_json, fmt, baseline,
                   class_attribute, dense, no_tune, save_proba, quiet, report_metric, alpha, significance, text,
                   positive, positive_below, keep_going, scheduler, cluster, summary=summary)


def register(app: typer.Typer) -> None:
    app.command("evaluate")(evaluate_command)
