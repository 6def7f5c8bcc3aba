"""Summary tables like the thesis's Table 3 and WEKA's Experimenter.

Cells are mean +- 95 % CI over the repetitions (t_{0.975,R-1} s / sqrt(R)); under the thesis
protocol, the fold's error with the thesis's CI and the error count. Each pipeline is compared
with a baseline by the corrected resampled t-test (or the sign test over repetitions): ``v`` marks
significantly better, ``*`` significantly worse, and every column ends with (wins/ties/losses). As in WEKA's
PairedCorrectedTTester, the test and the mark's direction use the repetitions where both have a value (the
mean paired difference; the sign test's wins against its losses), and a dataset without such a repetition
is left out of (wins/ties/losses).
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.evaluation.cells import aligned, display_width, markdown_escape, plain_cell
from toolkit.errors import ParameterError
from toolkit.evaluation import stats
from toolkit.evaluation.results import Results, _clean

__all__ = ["Cell", "Comparison", "compare_results", "format_comparison", "FORMATS", "TESTS", "check_report_options"]

#: what ``--format`` takes for a comparison table
FORMATS = ("table", "markdown", "csv", "csv-long", "latex", "json")
#: what ``--significance`` takes: WEKA's corrected and plain paired t-tests, the sign test over repetitions
TESTS = ("corrected-t", "paired-t", "sign")
TEST_NAMES = {"corrected-t": "corrected resampled t-test", "paired-t": "paired t-test", "sign": "sign test"}


def check_report_options(fmt: str | None = None, test: str | None = None, interval: str | None = None,
                         metric: str | None = None) -> None:
    """The table's options, checked before any computation."""
    if fmt is not None and fmt not in FORMATS:
        raise ParameterError(f"--format must be one of {', '.join(FORMATS)}, not '{fmt}'")
    if test is not None and test not in TESTS:
        raise ParameterError(f"--significance must be one of {', '.join(TESTS)}, not '{test}'")
    if interval is not None and interval not in ("ci", "lcl"):
        raise ParameterError(f"--interval must be ci or lcl, not '{interval}'")
    if metric is not None:
        from toolkit.plugin_host.components import get_registry

        get_registry().get("evaluator", metric)

_PERCENT_METRICS = {"error", "accuracy", "average-precision", "bep-micro", "bep-macro"}


@dataclass
class Cell:
    dataset: str
    pipeline: str
    values: list[float]
    mean: float
    sd: float
    ci: float
    n: int
    mark: str = ""
    p_value: float | None = None
    errors: int | None = None
    n_test: int | None = None
    thesis: bool = False
    lcl: float = float("nan")  # one-sided 95 % lower confidence limit, mean - t_{0.95,R-1} s / sqrt(R)
    repetitions: list[int] = field(default_factory=list)
    expected: int | None = None  # repetitions the protocol asked for (more than n: some failed)


@dataclass
class Comparison:
    metric: str
    baseline: str
    pipelines: list[str]
    datasets: list[str]
    cells: dict[tuple[str, str], Cell]
    greater_is_better: bool
    test: str
    alpha: float
    wins: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    experiment: dict[str, Any] | None = None
    failed: dict[tuple[str, str], int] = field(default_factory=dict)

    def __str__(self) -> str:
        return format_comparison(self, "table")

    def thesis(self) -> bool:
        """Cells of the thesis protocol: one test fold's value, for error with the thesis CI (stats.thesis_ci)."""
        return any(c.thesis for c in self.cells.values())

    def to_markdown(self, interval: str = "ci") -> str:
        """The table in Markdown, caption below."""
        return format_comparison(self, "markdown", interval)

    def to_latex(self, interval: str = "ci") -> str:
        """A booktabs tabular: mean, interval and mark in cells of their own, the best mean per row in bold."""
        return format_comparison(self, "latex", interval)

    def to_csv(self) -> str:
        return format_comparison(self, "csv")

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per (dataset, pipeline): mean, sd, ci, lcl, n, p_value, mark (needs
        pandas)."""
        try:
            import pandas as pd
        except ImportError:
            from toolkit.errors import ToolkitError

            raise ToolkitError("to_frame needs pandas: pip install pandas") from None
        rows = [{"dataset": d, "pipeline": p, "mean": c.mean, "sd": c.sd, "ci": c.ci, "lcl": c.lcl, "n": c.n,
                 "p_value": c.p_value, "mark": c.mark}
                for d in self.datasets for p in self.pipelines if (c := self.cells.get((d, p))) is not None]
        return pd.DataFrame(rows, columns=["dataset", "pipeline", "mean", "sd", "ci", "lcl", "n", "p_value", "mark"])

    def means(self) -> tuple[list[str], np.ndarray]:
        """(datasets where every pipeline has a mean, datasets x pipelines matrix of the means). The means are
        rounded to 12 decimals, so that two pipelines with the same mean tie although their sums of the same
        values were added in another order (a difference of 1e-16 is no win)."""
        kept = [d for d in self.datasets
                if all((c := self.cells.get((d, p))) is not None and c.mean == c.mean for p in self.pipelines)]
        values = np.array([[self.cells[(d, p)].mean for p in self.pipelines] for d in kept], dtype=np.float64)
        return kept, np.round(values, 12).reshape(len(kept), len(self.pipelines))

    def across_datasets(self, alpha: float | None = None) -> MultiDataset:
        """Friedman, Nemenyi, pairwise Wilcoxon (Holm) and, against the baseline, sign and Wilcoxon tests over
        the datasets' means (datasets where a pipeline has no result are left out and named)."""
        return multi_dataset(self, self.alpha if alpha is None else alpha)

    def as_dict(self) -> dict[str, Any]:
        def clean(v: Any) -> Any:
            return None if isinstance(v, float) and not math.isfinite(v) else v

        rows = []
        for d in self.datasets:
            row: dict[str, Any] = {"dataset": d}
            for p in self.pipelines:
                c = self.cells.get((d, p))
                if c is None:
                    row[p] = None
                    continue
                row[p] = {"mean": clean(c.mean), "sd": clean(c.sd), "ci": clean(c.ci), "lcl": clean(c.lcl), "n": c.n,
                          "mark": c.mark,
                          "p_value": clean(c.p_value), "values": [clean(v) for v in c.values]}
                if c.errors is not None:
                    row[p]["errors"] = c.errors
                    row[p]["n_test"] = c.n_test
            rows.append(row)
        return {"schema": "toolkit.compare/1", "metric": self.metric, "baseline": self.baseline,
                "test": self.test, "alpha": self.alpha, "greater_is_better": self.greater_is_better,
                "pipelines": self.pipelines, "rows": rows,
                "wins_ties_losses": {p: list(v) for p, v in self.wins.items()},
                "experiment": self.experiment,
                "failed": [{"dataset": d, "pipeline": p, "repetitions": n} for (d, p), n in self.failed.items()]}


def greater_is_better(metric: str) -> bool:
    """Whether a higher value of ``metric`` is better (its evaluator's declaration; error and losses not)."""
    if metric in ("error", "log-loss", "errors", "perplexity"):
        return False
    try:
        from toolkit.plugin_host.components import get_spec

        return bool(getattr(get_spec("evaluator", metric), "greater_is_better", True))
    except Exception:
        return True


def compare_results(results: Results, *, metric: str = "error", baseline: str | None = None,
                    alpha: float = 0.05, test: str = "corrected-t") -> Comparison:
    """Summarise ``results`` per (dataset, pipeline) and test every pipeline against ``baseline``."""
    if test not in TESTS:
        raise ParameterError(f"test must be one of {', '.join(TESTS)}, not '{test}'")
    if not 0 < alpha < 1:   # -1, 2 and NaN were taken, and the table's caption said "alpha -1"
        raise ParameterError(f"alpha must lie between 0 and 1, not {alpha}")
    pipelines = results.pipelines()
    datasets = results.datasets()
    failed: dict[tuple[str, str], int] = {}
    for r in results.problems():
        key = (r["dataset"]["name"], r["pipeline"]["name"])
        failed[key] = failed.get(key, 0) + 1
        if key[0] not in datasets:
            datasets.append(key[0])
        if key[1] not in pipelines:
            pipelines.append(key[1])
    if not pipelines:
        return Comparison(metric, baseline or "", [], [], {}, greater_is_better(metric), test, alpha,
                          experiment=results.experiment)
    if baseline is None:
        baseline = pipelines[0]
    else:
        from toolkit.models.pipeline import resolve_pipeline_name

        named = resolve_pipeline_name(baseline, pipelines)
        if named is None:
            raise ParameterError(f"baseline '{baseline}' is not among the results ({', '.join(pipelines)})")
        baseline = named
    greater = greater_is_better(metric)
    cells: dict[tuple[str, str], Cell] = {}
    for d in datasets:
        for p in pipelines:
            recs = results.cell(d, p)
            if not recs:
                continue
            values = results.values(d, p, metric)
            reps = [int(r["repetition"]) for r in recs]
            expected = recs[0]["protocol"].get("repetitions") if recs[0]["protocol"].get("name") == "random" else None
            thesis = recs[0]["protocol"].get("name") == "thesis"
            if thesis:
                r = recs[0]
                value = values[0]
                n_total = r["dataset"]["n_instances"]
                ci = stats.thesis_ci(value, n_total) if metric == "error" and value == value else float("nan")
                cells[(d, p)] = Cell(d, p, values, value, float("nan"), ci, 1, errors=r["metrics"].get("errors"),
                                     n_test=r["n_test"], thesis=True, repetitions=reps)
            else:
                mean, sd, ci = stats.mean_ci(values)
                finite = [v for v in values if v == v]
                # n counts the values the mean and the tests use: a repetition whose metric is undefined
                # (roc-auc of a test part with one class) is not one of them
                cells[(d, p)] = Cell(d, p, values, mean, sd, ci, len(finite),
                                     lcl=stats.lower_confidence_limit(finite), repetitions=reps, expected=expected)
    wins: dict[str, tuple[int, int, int]] = {}
    for p in pipelines:
        w = t = l = 0
        for d in datasets:
            base, cell = cells.get((d, baseline)), cells.get((d, p))
            if p == baseline or base is None or cell is None:
                continue
            paired = _paired_test(results, d, baseline, p, metric, test)
            cell.p_value = paired.p_value
            if paired.n == 0:  # WEKA's (v/ /*) leaves out a dataset without a paired value (no tie)
                continue
            # the direction is the paired one (WEKA): the cells' own means may cover other repetitions
            if paired.p_value is not None and paired.p_value <= alpha and paired.direction:  # WEKA: p <= alpha
                better = (paired.direction > 0) == greater
                cell.mark = "v" if better else "*"
                if better:
                    w += 1
                else:
                    l += 1
            else:
                t += 1
        wins[p] = (w, t, l)
    return Comparison(metric, baseline, pipelines, datasets, cells, greater, test, alpha, wins,
                      experiment=results.experiment, failed=failed)


@dataclass(frozen=True)
class _Paired:
    """A pipeline against the baseline on one dataset, over the repetitions where both have a value: the
    test's p-value (None under 2 pairs), +1 / -1 / 0 when the other's values are greater / smaller / neither
    (the sign of the mean paired difference; the sign test's wins against its losses), and the pairs."""

    p_value: float | None
    direction: int
    n: int


@dataclass(frozen=True)
class PairedValues:
    """A pipeline's values against the baseline's on one dataset: ``shared`` the baseline's records of the
    repetitions both have, ``kept`` those where both have a value of the metric, ``base`` and ``other``
    the values there (WEKA's tester skips a run whose value is missing on either side, and keeps the
    sizes of every run)."""

    shared: list[dict[str, Any]]
    kept: list[dict[str, Any]]
    base: np.ndarray
    other: np.ndarray


def paired_values(results: Results, dataset: str, base: str, other: str, metric: str) -> PairedValues:
    """:class:`PairedValues` of ``other`` against ``base`` on ``dataset``: what every paired test reads."""
    a_recs = {r["repetition"]: r for r in results.cell(dataset, base)}
    b_recs = {r["repetition"]: r for r in results.cell(dataset, other)}
    reps = sorted(set(a_recs) & set(b_recs))

    def value(rec: dict[str, Any]) -> float:
        v = rec["metrics"].get(metric)
        return float("nan") if v is None or isinstance(v, (dict, list)) else float(v)

    pairs = np.array([(value(a_recs[r]), value(b_recs[r])) for r in reps], dtype=np.float64).reshape(-1, 2)
    keep = ~np.isnan(pairs).any(axis=1)
    return PairedValues([a_recs[r] for r in reps], [a_recs[r] for r, k in zip(reps, keep) if k],
                        pairs[keep, 0], pairs[keep, 1])


def _paired_test(results: Results, dataset: str, base: str, other: str, metric: str, test: str) -> _Paired:
    paired = paired_values(results, dataset, base, other, metric)
    a, b = paired.base, paired.other
    n = len(a)
    if n < 2:
        return _Paired(None, 0, n)
    if test == "sign":
        diffs = b - a
        wins, losses = int(np.sum(diffs > 0)), int(np.sum(diffs < 0))
        return _Paired(stats.sign_test(wins, losses, "two-sided"), int(np.sign(wins - losses)), n)
    if test == "paired-t":
        result = stats.paired_ttest(b, a)
    else:
        # WEKA's PairedCorrectedTTester: sum of the test sizes over the sum of the training sizes
        ratio = stats.test_train_ratio([r["n_test"] for r in paired.shared], [r["n_train"] for r in paired.shared])
        result = stats.corrected_ttest(b, a, ratio)
    diff = result.mean_difference
    return _Paired(result.p_value, int(np.sign(diff)) if diff == diff else 0, n)


def _worse_side_limit(c: Cell, greater_is_better: bool) -> float:
    """The one-sided 95 % confidence limit on the worse side of the mean: the lower limit of a metric where
    higher is better (the OTS paper's AP), the upper one of error, log-loss and the like (mean + t s/sqrt(R))."""
    return c.lcl if greater_is_better else 2.0 * c.mean - c.lcl


def _fmt_cell(c: Cell | None, metric: str, interval: str = "ci", failed: int = 0,
              greater_is_better: bool = True) -> str:
    if c is None:
        return "failed" if failed else "-"
    scale = 100.0 if metric in _PERCENT_METRICS else 1.0
    if c.mean != c.mean:
        return "n/a"
    text = f"{scale * c.mean:.2f}"
    if interval == "lcl":
        if c.lcl == c.lcl:
            text += f" ({'≥' if greater_is_better else '≤'} {scale * _worse_side_limit(c, greater_is_better):.2f})"
    elif c.ci == c.ci:
        text += f" ± {scale * c.ci:.2f}"
    if c.thesis and c.errors is not None:
        text += f" ({c.errors})"
    if c.expected is not None and c.n < c.expected:
        text += f" [{c.n}/{c.expected}]"
    if c.mark:
        text += f" {c.mark}"
    return text


def _protocol_note(comp: Comparison) -> str:
    from toolkit.evaluation import experiment

    if comp.experiment:
        return experiment.describe(comp.experiment)
    for c in comp.cells.values():
        if c.expected:
            return f"{c.expected} runs"
    return ""


def _numeric_csv_rows(comp: Comparison) -> tuple[list[str], list[list[str]]]:
    """A column per number (mean, ci, sd, n, p-value, mark) per pipeline, in the metric's own units:
    (header, rows)."""
    header = ["dataset"]
    for p in comp.pipelines:
        header += [f"{p} mean", f"{p} ci", f"{p} sd", f"{p} n", f"{p} p_value", f"{p} mark"]

    def num(v: Any) -> str:
        return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else repr(float(v))

    rows = []
    for d in comp.datasets:
        row = [d]
        for p in comp.pipelines:
            c = comp.cells.get((d, p))
            row += ["", "", "", "0", "", ""] if c is None else [num(c.mean), num(c.ci), num(c.sd), str(c.n),
                                                                 num(c.p_value), c.mark]
        rows.append(row)
    return header, rows


def _csv_text(rows: Iterable[Sequence[Any]]) -> str:
    """Rows as CSV: the csv module quotes what needs it (a name with a comma, a quote or a line break)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue().rstrip("\n")


def _numeric_csv(comp: Comparison) -> str:
    header, rows = _numeric_csv_rows(comp)
    return _csv_text([header, *rows])


LONG_CSV_HEADER = ["dataset", "pipeline", "repetition", "metric", "value"]


def long_csv_rows(comp: Comparison) -> Iterator[list[Any]]:
    """One row per (dataset, pipeline, repetition): the metric's value (the long format)."""
    for d in comp.datasets:
        for p in comp.pipelines:
            c = comp.cells.get((d, p))
            if c is None:
                continue
            for rep, v in zip(c.repetitions, c.values):
                yield [d, p, rep, comp.metric, "" if v != v else repr(float(v))]


def _long_csv(comp: Comparison) -> str:
    return _csv_text([LONG_CSV_HEADER, *long_csv_rows(comp)])


def format_comparison(comp: Comparison, fmt: str = "table", interval: str = "ci") -> str:
    """Render as ``table`` (plain text), ``markdown``, ``csv``, ``latex`` or ``json``; ``interval`` "ci"
    shows mean ± the two-sided 95 % half-width, "lcl" the mean and its one-sided 95 % lower confidence
    limit (the OTS paper's Table 2)."""
    if interval not in ("ci", "lcl"):
        raise ParameterError(f"interval must be 'ci' or 'lcl', not '{interval}'")
    if fmt == "json":
        return json.dumps(comp.as_dict(), indent=2)
    if fmt == "csv":
        return _numeric_csv(comp)
    if fmt == "csv-long":
        return _long_csv(comp)
    header = ["dataset"] + comp.pipelines
    rows = [[d] + [_fmt_cell(comp.cells.get((d, p)), comp.metric, interval, comp.failed.get((d, p), 0),
                             comp.greater_is_better)
                   for p in comp.pipelines] for d in comp.datasets]
    footer = ["(v/ /*)"] + [("baseline" if p == comp.baseline else "({}/{}/{})".format(*comp.wins.get(p, (0, 0, 0))))
                            for p in comp.pipelines]
    unit = " (%)" if comp.metric in _PERCENT_METRICS else ""
    thesis = comp.thesis()
    ci_note = (("one test fold's error ± thesis CI 2.228*sqrt(e(1-e)/N), N the whole dataset's instances (not the "
                "test fold's), error count in ()" if comp.metric == "error" else "one test fold's value")
               if thesis else
               ("mean (≥ one-sided lower 95% confidence limit, Student's t) over repetitions" if comp.greater_is_better
                else "mean (≤ one-sided upper 95% confidence limit, Student's t; lower is better) over repetitions")
               if interval == "lcl" else
               "mean ± 95% CI over repetitions")
    protocol = _protocol_note(comp)
    test_name = TEST_NAMES.get(comp.test, comp.test)
    caption = (f"{comp.metric}{unit}, {ci_note}" + (f" ({protocol})" if protocol else "")
               + f"; v / * = significantly better / worse than {comp.baseline} ({test_name}, alpha {comp.alpha}); "
               f"(v/ /*) counts the datasets where a pipeline is better / not different / worse than "
               f"{comp.baseline}")
    if any(c.expected is not None and c.n < c.expected for c in comp.cells.values()) or comp.failed:
        caption += "; [n/N]: only n of the N repetitions gave a value (the others failed or the metric is undefined there)"
    if fmt == "markdown":
        header = [markdown_escape(h) for h in header]
        rows = [[markdown_escape(r[0])] + r[1:] for r in rows]
        lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("| " + " | ".join(footer) + " |")
        lines += ["", f"*{markdown_escape(caption)}*"]
        return "\n".join(lines)
    if fmt == "latex":
        return latex_table(comp, interval, caption)
    if fmt != "table":
        raise ParameterError(f"format must be table, markdown, csv, csv-long, latex or json, not '{fmt}'")
    header = [plain_cell(h) for h in header]
    rows = [[plain_cell(r[0])] + r[1:] for r in rows]
    caption = plain_cell(caption)
    widths = [max(display_width(str(x)) for x in col) for col in zip(header, *rows, footer)]

    def line(cells: list[str]) -> str:
        return "  ".join(aligned(c, w, i == 0) for i, (c, w) in enumerate(zip(cells, widths)))
    out = [line(header), "-" * (sum(widths) + 2 * (len(widths) - 1))]
    out += [line(r) for r in rows]
    out += ["-" * (sum(widths) + 2 * (len(widths) - 1)), line(footer), caption]
    return "\n".join(out)


def format_tables(results: Results, metrics: list[str], fmt: str = "table", *, baseline: str | None = None,
                  alpha: float = 0.05, test: str = "corrected-t", interval: str = "ci") -> str:
    """Every metric of ``metrics`` shown: a significance table per scalar metric, summed confusion matrices
    and mean per-class tables for the dict-valued ones (never a table of ``n/a``). With one scalar metric
    the output is exactly :func:`format_comparison`'s, but for CSV, which always has a first column ``metric``."""
    from toolkit.evaluation import detail

    scalar = [m for m in metrics if not detail.is_dict_metric(results, m)]
    dicts = [m for m in metrics if m not in scalar]
    comps = [compare_results(results, metric=m, baseline=baseline, alpha=alpha, test=test) for m in scalar]
    if fmt == "json":
        if len(comps) == 1 and not dicts:
            return format_comparison(comps[0], "json")
        doc: dict[str, Any] = {"schema": "toolkit.compare-set/1", "tables": [c.as_dict() for c in comps],
                               "dict_metrics": {m: _dict_metric_data(results, m) for m in dicts}}
        return json.dumps(doc, indent=2, allow_nan=False, default=str)
    # the CSV of several metrics is written from rows, not by joining each metric's text: a name with a
    # line break (quoted in one row) or a character str.splitlines() splits at was cut into two rows
    if fmt == "csv-long":
        return _csv_text([LONG_CSV_HEADER, *(row for c in comps for row in long_csv_rows(c))]) if comps else ""
    if fmt == "csv":
        # a metric column whatever the number of metrics: a script reading one run's CSV reads the next
        table: list[list[str]] = []
        for i, c in enumerate(comps):
            header, rows = _numeric_csv_rows(c)
            table += ([["metric", *header]] if i == 0 else []) + [[c.metric, *row] for row in rows]
        return _csv_text(table)
    blocks = [format_comparison(c, fmt, interval) for c in comps]
    blocks += [detail.format_dict_metric(results, m, fmt) for m in dicts]
    return "\n\n".join(blocks)


def _dict_metric_data(results: Results, metric: str) -> list[dict[str, Any]]:
    from toolkit.evaluation import detail

    out = []
    for d in results.datasets():
        for p in results.pipelines():
            if not results.cell(d, p):
                continue
            if metric == "confusion-matrix":
                got = detail.summed_confusion(results, d, p)
                if got is not None:   # None: more classes than a confusion matrix may have
                    out.append({"dataset": d, "pipeline": p, "labels": got[0], "summed_matrix": got[1].tolist()})
            elif metric == "per-class":
                means = detail.per_class_means(results, d, p)
                if means is not None:
                    out.append({"dataset": d, "pipeline": p, "means": _clean(means)})
    return out


@dataclass
class MultiDataset:
    """The comparison over datasets of one :class:`Comparison` (Demsar 2006)."""

    metric: str
    pipelines: list[str]
    datasets: list[str]
    left_out: list[str]
    greater_is_better: bool
    alpha: float
    scores: np.ndarray
    ranks: np.ndarray
    friedman: stats.FriedmanResult | None
    nemenyi: stats.NemenyiResult | None
    pairwise: list[stats.PairTest]
    baseline: str
    versus_baseline: dict[str, dict[str, Any]]

    def as_dict(self) -> dict[str, Any]:
        from toolkit.evaluation.results import _clean as clean

        out: dict[str, Any] = {"metric": self.metric, "pipelines": self.pipelines, "datasets": self.datasets,
                               "left_out": self.left_out, "alpha": self.alpha,
                               "greater_is_better": self.greater_is_better, "baseline": self.baseline}
        if self.friedman is not None:
            f = self.friedman
            out["average_ranks"] = dict(zip(self.pipelines, clean(f.average_ranks)))
            out["friedman"] = {"chi2": clean(f.chi2), "df": f.n_methods - 1, "p_value": clean(f.p_value),
                               "iman_davenport_f": clean(f.iman_davenport), "df_f": list(f.df),
                               "iman_davenport_p": clean(f.iman_davenport_p)}
        if self.nemenyi is not None:
            n = self.nemenyi
            out["nemenyi"] = {"q_alpha": n.q_alpha, "critical_difference": n.critical_difference,
                              "cliques": [[self.pipelines[i] for i in c] for c in n.cliques]}
        out["pairwise_wilcoxon_holm"] = [{"a": self.pipelines[t.a], "b": self.pipelines[t.b],
                                          "statistic": clean(t.statistic), "p_value": clean(t.p_value),
                                          "p_holm": clean(t.p_holm), "significant": t.significant}
                                         for t in self.pairwise]
        out["versus_baseline"] = clean(self.versus_baseline)
        return out

    def format(self) -> str:
        """The numbers as plain text."""
        if self.friedman is None or self.nemenyi is None:
            return f"{self.metric}: too few datasets ({len(self.datasets)}) or pipelines for tests across datasets"
        f, n = self.friedman, self.nemenyi
        width = max(len(p) for p in self.pipelines)
        lines = [f"{self.metric} over {len(self.datasets)} datasets"
                 + (f" (left out, a pipeline has no result: {', '.join(self.left_out)})" if self.left_out else ""),
                 "average ranks (1 = best):"]
        for i in np.argsort(f.average_ranks, kind="stable"):
            lines.append(f"  {self.pipelines[i]:<{width}}  {f.average_ranks[i]:.3f}")
        iman = (f"{f.iman_davenport:.4f} (df {f.df[0]}, {f.df[1]}), p = {_p(f.iman_davenport_p)}"
                if f.iman_davenport == f.iman_davenport else
                "undefined (every dataset ranks the pipelines alike)" if f.n_datasets > 1 else "undefined (1 dataset)")
        lines.append(f"Friedman chi2 = {f.chi2:.4f} (df {f.n_methods - 1}), p = {_p(f.p_value)}; "
                     f"Iman-Davenport F = {iman}")
        groups = "; ".join("{" + ", ".join(self.pipelines[i] for i in c) + "}" for c in n.cliques) or "none"
        lines.append(f"Nemenyi: q_{self.alpha} = {n.q_alpha:.3f}, critical difference = {n.critical_difference:.3f}; "
                     f"not significantly different: {groups}")
        lines.append("pairwise Wilcoxon signed-rank, Holm-corrected:")
        for t in self.pairwise:
            lines.append(f"  {self.pipelines[t.a]} vs {self.pipelines[t.b]}: p = {_p(t.p_value)}, Holm p = "
                         f"{_p(t.p_holm)}{' *' if t.significant else ''}")
        lines.append(f"against {self.baseline} (wins/ties/losses over datasets; sign test, Wilcoxon):")
        for p, v in self.versus_baseline.items():
            lines.append(f"  {p}: {v['wins']}/{v['ties']}/{v['losses']}, sign p = {_p(v['sign_p'])}, Wilcoxon p = "
                         f"{_p(v['wilcoxon_p'])}")
        return "\n".join(lines)


def _p(value: float) -> str:
    if value != value:
        return "n/a"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.2e}"


def multi_dataset(comp: Comparison, alpha: float = 0.05) -> MultiDataset:
    """Tests across datasets on a comparison's per-dataset means."""
    kept, scores = comp.means()
    left_out = [d for d in comp.datasets if d not in kept]
    k = len(comp.pipelines)
    greater = comp.greater_is_better
    empty = MultiDataset(comp.metric, comp.pipelines, kept, left_out, greater, alpha, scores,
                         np.zeros((len(kept), k)), None, None, [], comp.baseline, {})
    if k < 2 or len(kept) < 2:
        return empty
    rank_matrix = stats.ranks(scores, greater)
    friedman = stats.friedman(scores, greater)
    nemenyi = stats.nemenyi(scores, greater, alpha)
    pairwise = stats.pairwise_wilcoxon(scores, alpha)
    b = comp.pipelines.index(comp.baseline) if comp.baseline in comp.pipelines else 0
    versus = {}
    for j, p in enumerate(comp.pipelines):
        if j == b:
            continue
        wins, ties, losses, sign_p = stats.sign_test_datasets(scores[:, j], scores[:, b], greater)
        versus[p] = {"wins": wins, "ties": ties, "losses": losses, "sign_p": sign_p,
                     "wilcoxon_p": stats.wilcoxon(scores[:, j], scores[:, b]).p_value}
    return MultiDataset(comp.metric, comp.pipelines, kept, left_out, greater, alpha, scores, rank_matrix, friedman,
                        nemenyi, pairwise, comp.pipelines[b], versus)


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
                  # braced: after \\ (a row's end) or \midrule, "[" opens an optional argument and "*" is
                  # the star form
                  "[": "{[}", "]": "{]}", "*": "{*}",
                  # a backtick is an opening quote to TeX (and !` ?` are the Spanish marks)
                  "`": r"\textasciigrave{}",
                  "\u00b1": r"$\pm$", "\u2265": r"$\geq$"}

#: pairs TeX's fonts join into another glyph (-- and --- into dashes, '' and ,, into quotes): kept apart
_LATEX_LIGATURES = (("--", "-{}-"), ("''", "'{}'"), (",,", ",{},"))

#: non-ASCII characters pdflatex (T1, no Unicode font) cannot take as they are: text commands and math
#: symbols, so that the .tex is ASCII
_LATEX_UNICODE = {
    "\u00a0": "~", "\u00a1": r"\textexclamdown{}", "\u00a2": r"\textcent{}", "\u00a3": r"\pounds{}",
    "\u00a5": r"\textyen{}", "\u00a7": r"\S{}", "\u00a9": r"\textcopyright{}", "\u00ab": r"\guillemotleft{}",
    "\u00ac": r"$\neg$", "\u00ae": r"\textregistered{}", "\u00b0": r"\textdegree{}", "\u00b2": r"\textsuperscript{2}",
    "\u00b3": r"\textsuperscript{3}", "\u00b5": r"$\mu$", "\u00b6": r"\P{}", "\u00b7": r"$\cdot$",
    "\u00b9": r"\textsuperscript{1}", "\u00bb": r"\guillemotright{}", "\u00bf": r"\textquestiondown{}",
    "\u00c6": r"\AE{}", "\u00d0": r"\DH{}", "\u00d7": r"$\times$", "\u00d8": r"\O{}", "\u00de": r"\TH{}",
    "\u00df": r"\ss{}", "\u00e6": r"\ae{}", "\u00f0": r"\dh{}", "\u00f7": r"$\div$", "\u00f8": r"\o{}",
    "\u00fe": r"\th{}", "\u0110": r"\DJ{}", "\u0111": r"\dj{}", "\u0131": r"\i{}", "\u0141": r"\L{}",
    "\u0142": r"\l{}", "\u014a": r"\NG{}", "\u014b": r"\ng{}", "\u0152": r"\OE{}", "\u0153": r"\oe{}",
    "\u2013": r"\textendash{}", "\u2014": r"\textemdash{}", "\u2018": r"\textquoteleft{}",
    "\u2019": r"\textquoteright{}", "\u201c": r"\textquotedblleft{}", "\u201d": r"\textquotedblright{}",
    "\u2022": r"\textbullet{}", "\u2026": r"\dots{}", "\u20ac": r"\texteuro{}", "\u2122": r"\texttrademark{}",
    "\u2190": r"$\leftarrow$", "\u2192": r"$\rightarrow$", "\u2212": r"$-$", "\u221a": r"$\surd$",
    "\u221e": r"$\infty$", "\u2248": r"$\approx$", "\u2260": r"$\neq$", "\u2264": r"$\leq$",
}
# Greek: the small letters as math letters, the capitals as math capitals or, where LaTeX has none (they look
# Latin), as upright Latin letters; U+03C2 is the final sigma, U+03A2 is unassigned
for _i, (_small, _capital) in enumerate(zip(
        "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi o pi rho varsigma sigma tau upsilon "
        "phi chi psi omega".split(),
        "A B Gamma Delta E Z H Theta I K Lambda M N Xi O Pi P - Sigma T Upsilon Phi X Psi Omega".split())):
    _LATEX_UNICODE[chr(0x3B1 + _i)] = f"${_small}$" if _small == "o" else f"$\\{_small}$"
    if _capital != "-":
        _LATEX_UNICODE[chr(0x391 + _i)] = _capital if len(_capital) == 1 else f"$\\{_capital}$"
#: combining marks of a decomposed (NFD) Latin letter, as LaTeX's accent commands
_LATEX_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=", "\u0306": "u",
                  "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0323": "d",
                  "\u0327": "c", "\u0328": "k", "\u0331": "b"}
_MARKS_BELOW = {"\u0323", "\u0327", "\u0328", "\u0331"}


def _latex_char(ch: str) -> str:
    """One character as pdflatex with T1 fonts prints it: an ASCII control character a space, a known
    symbol its command, an accented Latin letter its accent commands (na\u00efve -> na\\"{\\i}ve), anything
    else its code point in typewriter type (there is no glyph for it)."""
    if ch in _LATEX_SPECIAL:
        return _LATEX_SPECIAL[ch]
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return " "
    if code < 0x7F:
        return ch
    if ch in _LATEX_UNICODE:
        return _LATEX_UNICODE[ch]
    base, *marks = unicodedata.normalize("NFD", ch)
    if marks and base.isascii() and base.isalpha() and all(m in _LATEX_ACCENTS for m in marks):
        # an accent above an i or j replaces its dot (\i, \j: dotless)
        out = f"\\{base}" if base in ("i", "j") and not _MARKS_BELOW & set(marks) else base
        for m in marks:
            out = f"\\{_LATEX_ACCENTS[m]}{{{out}}}"
        return out
    return f"\\texttt{{\\textless{{}}U+{code:04X}\\textgreater{{}}}}"


def latex_escape(text: str) -> str:
    """Text as LaTeX source: the special characters as commands, every row safe after \\\\ and \\midrule,
    and ASCII only (pdflatex with T1 fonts; no inputenc or Unicode fonts needed). Composed first (NFC),
    so that a letter followed by a combining accent is one accented letter."""
    out = "".join(_latex_char(ch) for ch in unicodedata.normalize("NFC", str(text)))
    for pair, apart in _LATEX_LIGATURES:
        while pair in out:   # twice for "---"
            out = out.replace(pair, apart)
    return out


def best_in_row(comp: Comparison, dataset: str) -> set[str]:
    """The pipelines with the best mean on ``dataset`` (ties: all of them)."""
    means = {p: round(c.mean, 12) for p in comp.pipelines
             if (c := comp.cells.get((dataset, p))) is not None and c.mean == c.mean}
    if not means:
        return set()
    best = max(means.values()) if comp.greater_is_better else min(means.values())
    return {p for p, m in means.items() if m == best}


def latex_table_parts(comp: Comparison, interval: str = "ci") -> tuple[str, str, list[str]]:
    """The column spec, the header row and the body rows (the datasets, a rule, the (v/ /*) row) of
    :func:`latex_table`, for a ``tabular`` or a ``longtable``."""
    scale = 100.0 if comp.metric in _PERCENT_METRICS else 1.0
    cols = "l" + "r@{\\,}l@{\\,}l" * len(comp.pipelines)
    header = "dataset & " + " & ".join(f"\\multicolumn{{3}}{{c}}{{{latex_escape(p)}}}" for p in comp.pipelines) + " \\\\"
    body = []
    for d in comp.datasets:
        best = best_in_row(comp, d)
        cells = [latex_escape(d)]
        for p in comp.pipelines:
            c = comp.cells.get((d, p))
            if c is None or c.mean != c.mean:
                cells += ["--", "", ""]
                continue
            mean = f"{scale * c.mean:.2f}"
            cells.append(f"\\textbf{{{mean}}}" if p in best else mean)
            spread = _worse_side_limit(c, comp.greater_is_better) if interval == "lcl" else c.ci
            if spread == spread:
                side = "\\geq" if comp.greater_is_better else "\\leq"
                cells.append(f"$({side} {scale * spread:.2f})$" if interval == "lcl" else f"$\\pm {scale * spread:.2f}$")
            else:
                cells.append("")
            mark = {"v": "$\\circ$", "*": "$\\bullet$"}.get(c.mark, "")
            if c.thesis and c.errors is not None:
                mark = f"({c.errors}) {mark}".strip()
            if c.expected is not None and c.n < c.expected:
                mark = f"[{c.n}/{c.expected}] {mark}".strip()
            cells.append(mark)
        body.append(" & ".join(cells) + " \\\\")
    body.append("\\midrule")
    footer = ["{(v/ /*)}"]  # braced: in a longtable, booktabs reads a "(" right after \\midrule as a trim
    for p in comp.pipelines:
        text = "baseline" if p == comp.baseline else "({}/{}/{})".format(*comp.wins.get(p, (0, 0, 0)))
        footer.append(f"\\multicolumn{{3}}{{c}}{{{text}}}")
    body.append(" & ".join(footer) + " \\\\")
    return cols, header, body


def latex_table(comp: Comparison, interval: str = "ci", caption: str = "") -> str:
    """booktabs: per pipeline three cells (mean, interval, mark), the best mean of each row in bold."""
    cols, header, body = latex_table_parts(comp, interval)
    return "\n".join([f"% {latex_escape(caption)}" if caption else "% needs \\usepackage{booktabs}",
                      f"\\begin{{tabular}}{{{cols}}}", "\\toprule", header, "\\midrule", *body, "\\bottomrule",
                      "\\end{tabular}"])
