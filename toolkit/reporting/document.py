"""What a report holds, computed once from the results and then written in any format.

A report states the experiment (protocol, seeds, runs, metrics, versions, every dataset's sha256), shows the
significance table of its main metric (marks v / * and (v/ /*) against the baseline), a table per metric,
the comparison across datasets (average ranks, Friedman and Iman-Davenport, Nemenyi's critical difference
with the CD diagram, Holm-corrected pairwise Wilcoxon tests, sign and Wilcoxon tests against the
baseline), the Bayesian correlated t-test per dataset, the per-repetition values of every cell, the
confusion matrices summed over the repetitions and the hyperparameters chosen in every repetition.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from toolkit.errors import ParameterError, ToolkitError
from toolkit.evaluation import detail, stats
from toolkit.evaluation.report import (Comparison, MultiDataset, TESTS, compare_results, multi_dataset,
                                      paired_values)
from toolkit.evaluation.results import Results

__all__ = ["Report", "build_report", "write_text", "DEFAULT_ROPE"]

#: the region of practical equivalence of the Bayesian test, in the metric's own units (0.01 = one
#: percentage point of error or accuracy)
DEFAULT_ROPE = 0.01


def write_text(path: str | os.PathLike[str], text: str) -> str:
    """Write ``text`` to ``path`` in one step (never half a file)."""
    from toolkit.atomic_write import replaced_atomically

    target = os.fspath(path)
    umask = os.umask(0)
    os.umask(umask)
    # through a symbolic link to the file it names (replacing the path itself turned the link into a file of
    # its own and left the linked report, say in a published folder, as it was)
    with replaced_atomically(os.path.realpath(target), ToolkitError) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~umask)  # a report is to be shared: the usual mode, not the temporary file's 0600
    return target


@dataclass
class Report:
    files: list[str]
    experiment: dict[str, Any] | None
    results: Results
    main: Comparison
    tables: list[Comparison]
    across: MultiDataset
    bayes: dict[tuple[str, str], stats.BayesResult]
    rope: float
    dict_metrics: list[str]
    created_utc: str
    toolkit_version: str
    datasets: list[dict[str, Any]] = field(default_factory=list)
    pipelines: list[dict[str, Any]] = field(default_factory=list)

    @property
    def warnings(self) -> list[str]:
        """What a reader must know first: the run that wrote the results did not finish (repetitions without
        a record, a last line cut off); the report is shared without the terminal that showed them."""
        return self.results.incomplete_notes()

    # ------------------------------------------------------------------ per-cell views
    def values(self, dataset: str, pipeline: str, metric: str | None = None) -> list[float]:
        return self.results.values(dataset, pipeline, metric or self.main.metric)

    def confusion(self, dataset: str, pipeline: str) -> tuple[list[str], np.ndarray] | None:
        return detail.summed_confusion(self.results, dataset, pipeline)

    def per_class(self, dataset: str, pipeline: str) -> dict[str, Any] | None:
        return detail.per_class_means(self.results, dataset, pipeline)

    def hyperparameters(self, dataset: str, pipeline: str) -> list[tuple[int, dict[str, Any]]]:
        """(repetition, chosen parameters) for every repetition of the cell."""
        return [(int(r["repetition"]), dict(r.get("chosen_params") or {})) for r in self.results.cell(dataset, pipeline)]

    def tuned(self) -> bool:
        return any(r.get("chosen_params") for r in self.results.ok())

    def protocol_line(self) -> str:
        from toolkit.evaluation import experiment

        if self.experiment:
            return experiment.describe(self.experiment)
        return ""

    def failures(self) -> list[dict[str, Any]]:
        return [{"dataset": r["dataset"]["name"], "pipeline": r["pipeline"]["name"], "repetition": r["repetition"],
                 "error": r.get("error")} for r in self.results.problems()]


def _scalar_metrics(results: Results, experiment: dict[str, Any] | None) -> tuple[list[str], list[str]]:
    names = list((experiment or {}).get("metrics") or [])
    if not names:
        seen: dict[str, None] = {}
        for r in results.ok():
            for k in r["metrics"]:
                if k not in ("errors", "n_evaluated"):
                    seen.setdefault(k, None)
        names = list(seen)
    scalar = [m for m in names if not detail.is_dict_metric(results, m)]
    return scalar, [m for m in names if m not in scalar]


def build_report(results: Results, *, metrics: list[str] | None = None, main: str | None = None,
                 baseline: str | None = None, alpha: float = 0.05, test: str = "corrected-t",
                 rope: float = DEFAULT_ROPE, files: list[str] | None = None) -> Report:
    """Everything the report shows. ``metrics``: the tables to show (default: every scalar metric of the
    experiment); ``main``: the metric of the significance table, the tests across datasets and the
    distributions (default: error when present, else the first)."""
    from toolkit import __version__

    if test not in TESTS:
        raise ParameterError(f"--significance must be one of {', '.join(TESTS)}, not '{test}'")
    if not 0 < alpha < 1:
        raise ParameterError(f"--alpha must lie between 0 and 1, not {alpha}")
    if not (rope >= 0 and rope != float("inf")):  # NaN compares false: the old `rope < 0` let it through
        raise ParameterError(f"--rope must be a finite number >= 0, not {rope}")
    if not results.ok():
        where = ", ".join(results.sources or files or [])
        raise ToolkitError(f"{where + ': ' if where else ''}the results hold no finished repetition; nothing to report")
    scalar, dicts = _scalar_metrics(results, results.experiment)
    if metrics:
        for m in metrics:
            if m not in scalar and m not in dicts:
                raise ParameterError(f"metric '{m}' is not in the results (they hold: {', '.join(scalar + dicts)})")
        held = scalar
        scalar = [m for m in metrics if m in scalar]
        dicts = [m for m in metrics if m in dicts] or dicts
        if not scalar and held:   # the results have such metrics: the choice left them out (-m confusion-matrix)
            raise ParameterError(f"--metric {' --metric '.join(metrics)}: the significance table needs a metric with "
                                 f"one number per repetition; add one of {', '.join(held)}")
    if not scalar:
        raise ParameterError("the results hold no metric with one number per repetition to tabulate")
    if main is None:
        main = "error" if "error" in scalar else scalar[0]
    elif main not in scalar:
        raise ParameterError(f"--report {main} is not among the tabulated metrics ({', '.join(scalar)})")
    order = [main] + [m for m in scalar if m != main]
    tables = [compare_results(results, metric=m, baseline=baseline, alpha=alpha, test=test) for m in order]
    main_table = tables[0]
    across = multi_dataset(main_table, alpha)
    bayes: dict[tuple[str, str], stats.BayesResult] = {}
    for d in main_table.datasets:
        for p in main_table.pipelines:
            if p == main_table.baseline:
                continue
            # the repetitions both pipelines have a value for, as the t-tests and the sign test pair them
            paired = paired_values(results, d, main_table.baseline, p, main)
            if len(paired.kept) < 2:
                continue
            ratio = stats.test_train_ratio([r["n_test"] for r in paired.kept], [r["n_train"] for r in paired.kept])
            bayes[(d, p)] = stats.bayesian_correlated_ttest(paired.other, paired.base, rope, ratio,
                                                            main_table.greater_is_better)
    report = Report(files=list(files or []), experiment=results.experiment, results=results, main=main_table,
                    tables=tables, across=across, bayes=bayes, rope=rope, dict_metrics=dicts,
                    created_utc=datetime.now(timezone.utc).isoformat(timespec="seconds"), toolkit_version=__version__)
    report.datasets = _datasets(results)
    report.pipelines = _pipelines(results)
    return report


def _datasets(results: Results) -> list[dict[str, Any]]:
    known = {d["name"]: d.get("sha256") for d in (results.experiment or {}).get("datasets", [])}
    out = []
    for name in results.datasets():
        rec = next(r for r in results.ok() if r["dataset"]["name"] == name)["dataset"]
        out.append({"name": name, "sha256": known.get(name, rec.get("sha256")), "n_instances": rec.get("n_instances"),
                    "n_classes": rec.get("n_classes"), "relation": rec.get("relation")})
    return out


def _pipelines(results: Results) -> list[dict[str, Any]]:
    out = []
    for name in results.pipelines():
        rec = next(r for r in results.ok() if r["pipeline"]["name"] == name)
        desc = rec["pipeline"]
        steps = []
        for role in ("text", "example_selector", "feature_selector", "classifier"):
            step = desc.get(role)
            if isinstance(step, dict):
                params = ", ".join(f"{k}={v}" for k, v in (step.get("params") or {}).items())
                grid = ", ".join(f"{k} in {{{', '.join(map(str, v))}}}" for k, v in (step.get("grid") or {}).items())
                text = step.get("name", "?") + (f" ({params})" if params else "") + (f", tuned: {grid}" if grid and
                                                                                     desc.get("tune") else "")
                steps.append(f"{role.replace('_', ' ')}: {text}")
        versions = sorted(set(v for v in (rec.get("env", {}).get("plugins") or {}).values() if v))
        out.append({"name": name, "steps": steps, "versions": versions})
    return out
