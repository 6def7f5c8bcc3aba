"""The report as LaTeX (booktabs, one number per cell, the best of each row in bold, the CD diagram in TikZ),
Markdown (the CD diagram as an SVG file beside it), CSV (the long format, one row per dataset, pipeline,
repetition and metric, and beside it a summary, one row per dataset, pipeline and metric) and JSON."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from typing import Any
from urllib.parse import quote

import numpy as np

from toolkit.evaluation.report import (
    LONG_CSV_HEADER, TEST_NAMES, _PERCENT_METRICS, format_comparison, latex_escape, latex_table_parts, long_csv_rows,
    markdown_escape,
)
from toolkit.evaluation.detail import MAX_SHOWN_CLASSES
from toolkit.evaluation.results import _clean
from toolkit.reporting.document import Report
from toolkit.reporting.figures import cd_diagram

__all__ = ["render_latex", "render_markdown", "render_long_csv", "render_summary_csv", "render_json", "cd_canvas"]


def cd_canvas(report: Report):  # type: ignore[no-untyped-def]
    """The CD diagram of the report's main metric, or None when there are too few datasets."""
    m = report.across
    if m.friedman is None or m.nemenyi is None:
        return None
    return cd_diagram(m.pipelines, m.friedman.average_ranks, m.nemenyi.critical_difference, m.nemenyi.cliques, m.alpha,
                      len(m.datasets), m.metric)


def _p(value: float | None) -> str:
    if value is None or value != value:
        return "n/a"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.2e}"


# ---------------------------------------------------------------------------- LaTeX

def _caption(comp, protocol: str) -> str:  # type: ignore[no-untyped-def]
    unit = " (\\%)" if comp.metric in _PERCENT_METRICS else ""
    if not comp.thesis():
        shown = "mean $\\pm$ 95\\,\\% confidence interval over the repetitions ($t_{0.975,R-1}\\,s/\\sqrt{R}$)"
    elif comp.metric == "error":  # stats.thesis_ci: the whole dataset's size, not the test fold's
        shown = ("the error on the one test fold $\\pm$ the thesis CI $2.228\\sqrt{e(1-e)/N}$, $N$ the instances of the "
                 "whole dataset, not of the test fold (the thesis's ``95\\,\\% CI'': narrower than a 95\\,\\% interval "
                 "of the fold's error), the fold's error count in parentheses")
    else:
        shown = "the value on the one test fold (no interval)"
    return (f"{latex_escape(comp.metric)}{unit}, {shown}"
            f"{' (' + latex_escape(protocol) + ')' if protocol else ''}; best mean per row in bold; $\\circ$ / $\\bullet$ = "
            f"significantly better / worse than {latex_escape(comp.baseline)} "
            f"({latex_escape(TEST_NAMES.get(comp.test, comp.test))}, $\\alpha = {comp.alpha:g}$); (v/ /*) counts the "
            f"datasets where a pipeline is better / not different / worse.")


def _longtable(size: str, cols: str, n_cols: int, header: str, rows: list[str], caption: str) -> list[str]:
    """A booktabs ``longtable``, which breaks across pages (a table of many datasets is taller than one): the
    caption above, the header repeated at the top of each page, "continued" at the foot of each but the last.
    (The caption is not below: a last foot taller than the others makes longtable end a page without its foot
    and start the next without the header.)"""
    return ["\\begingroup" + size, f"\\begin{{longtable}}{{{cols}}}", f"\\caption{{{caption}}} \\\\",
            "\\toprule", header, "\\midrule", "\\endfirsthead", "\\toprule", header, "\\midrule", "\\endhead",
            "\\midrule", f"\\multicolumn{{{n_cols}}}{{r}}{{\\emph{{continued on the next page}}}} \\\\", "\\endfoot",
            "\\bottomrule", "\\endlastfoot", *rows, "\\end{longtable}", "\\endgroup", ""]


def render_latex(report: Report) -> str:
    """A complete document (``pdflatex`` with booktabs, longtable and tikz); the tables are longtables, which
    break across pages."""
    protocol = report.protocol_line()
    exp = report.experiment or {}
    versions = exp.get("versions", {})
    out = ["% written by toolkit " + report.toolkit_version + " on " + report.created_utc,
           "\\documentclass[10pt]{article}", "\\usepackage[T1]{fontenc}", "\\usepackage[margin=2cm,landscape]{geometry}",
           "\\usepackage{booktabs}", "\\usepackage{longtable}", "\\setlength{\\LTcapwidth}{\\textwidth}",
           "\\usepackage{tikz}", "\\begin{document}",
           "\\section*{" + latex_escape(f"{len(report.main.pipelines)} pipelines on {len(report.main.datasets)} "
                                        f"datasets") + "}", "",
           "\\paragraph{Experiment.} " + latex_escape(protocol or "protocol not stated") + ". Metrics: "
           + latex_escape(", ".join(exp.get("metrics", [])) or "not stated") + ". Versions: "
           + latex_escape(", ".join(f"{k} {versions[k]}" for k in ("toolkit", "python", "numpy", "scipy") if k in versions))
           + ".", ""]
    out += [f"\\paragraph{{Warning.}} {latex_escape(w)}\n" for w in report.warnings]
    out += _longtable("\\scriptsize", "lrrl", 4, "dataset & instances & classes & sha256 \\\\",
                      [f"{latex_escape(d['name'])} & {d.get('n_instances')} & {d.get('n_classes')} & "
                       f"\\texttt{{{latex_escape((d.get('sha256') or '')[:16])}...}} \\\\" for d in report.datasets],
                      "Datasets (first 16 hex digits of each file's sha256).")
    for comp in report.tables:
        cols, header, body = latex_table_parts(comp, "ci")
        out += _longtable("\\small", cols, 1 + 3 * len(comp.pipelines), header, body, _caption(comp, protocol))
    m = report.across
    if m.friedman is not None and m.nemenyi is not None:
        f, n = m.friedman, m.nemenyi
        rows = [f"{latex_escape(m.pipelines[i])} & {f.average_ranks[i]:.3f} \\\\"
                for i in np.argsort(f.average_ranks, kind="stable")]
        rows += ["\\midrule",
                 f"Friedman $\\chi^2_F$ (df {f.n_methods - 1}) & {f.chi2:.3f} \\\\",
                 f"\\quad $p$ & {latex_escape(_p(f.p_value))} \\\\",
                 f"Iman-Davenport $F_F$ (df {f.df[0]}, {f.df[1]}) & "
                 + (f"{f.iman_davenport:.3f}" if f.iman_davenport == f.iman_davenport else "undefined") + " \\\\",
                 f"\\quad $p$ & {latex_escape(_p(f.iman_davenport_p))} \\\\",
                 f"Nemenyi $q_{{{m.alpha:g}}}$ & {n.q_alpha:.3f} \\\\",
                 f"critical difference & {n.critical_difference:.3f} \\\\"]
        out += _longtable("\\small", "lr", 2, "pipeline & average rank \\\\", rows,
                          f"Average ranks of {latex_escape(m.metric)} over {len(m.datasets)} datasets (1 = best), "
                          "Friedman and Nemenyi tests (Dem\\v{s}ar 2006).")
        out += ["\\begin{figure}[ht]\\centering", cd_canvas(report).to_tikz(),
                f"\\caption{{Critical-difference diagram of {latex_escape(m.metric)}: pipelines joined by a bar are not "
                f"significantly different (Nemenyi, $\\alpha = {m.alpha:g}$).}}", "\\end{figure}", ""]
        out += _longtable("\\small", "lrrl", 4, "pair & $p$ & Holm $p$ & significant \\\\",
                          [f"{latex_escape(m.pipelines[t.a])} vs {latex_escape(m.pipelines[t.b])} & "
                           f"{latex_escape(_p(t.p_value))} & {latex_escape(_p(t.p_holm))} & "
                           f"{'yes' if t.significant else 'no'} \\\\" for t in m.pairwise],
                          "Pairwise Wilcoxon signed-rank tests over the datasets, Holm-corrected.")
    out.append("\\end{document}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- Markdown

def _md_hash(value: Any) -> str:
    """A sha256 as code when it is one (a code span shows any text as it is, backticks included)."""
    text = str(value)
    return f"`{text}`" if re.fullmatch("[0-9a-f]{64}", text) else markdown_escape(text)


def _md_matrix(labels: list[str], matrix: np.ndarray) -> str:
    whole = bool((matrix == matrix.round()).all())
    md = markdown_escape
    lines = ["| true \\ predicted | " + " | ".join(md(lab) for lab in labels) + " |",
             "| --- |" + " ---: |" * len(labels)]
    for lab, row in zip(labels, matrix):
        lines.append(f"| {md(lab)} | " + " | ".join(str(int(v)) if whole else f"{v:.2f}" for v in row) + " |")
    return "\n".join(lines)


def render_markdown(report: Report, cd_svg: str | None) -> str:
    comp = report.main
    exp = report.experiment or {}
    versions = exp.get("versions", {})
    md = markdown_escape
    lines = [f"# {len(comp.pipelines)} pipelines on {len(comp.datasets)} datasets: {comp.metric}", "",
             f"Written by toolkit {report.toolkit_version} on {report.created_utc} from "
             f"{md(', '.join(report.files)) or 'results in memory'}.", "",
             *[f"**Warning:** {md(w)}\n" for w in report.warnings], "## Experiment", "",
             f"- protocol: {md(report.protocol_line()) or 'not stated'}"]
    # every value from the results file goes through md: the file is input, and any field may hold markup
    for key, value in (exp.get("protocol") or {}).items():
        lines.append(f"  - {md(key)}: {'none' if value is None else md(value)}")
    lines.append(f"- metrics: {md(', '.join(map(str, exp.get('metrics', [])))) or 'not stated'}")
    lines.append("- versions: " + md(", ".join(f"{k} {versions[k]}" for k in ("toolkit", "python", "numpy", "scipy")
                                                if k in versions)
                                      + "".join(f", {d} {v}" for d, v in sorted((versions.get("plugins") or {}).items()))))
    lines += ["", "| dataset | instances | classes | sha256 |", "| --- | ---: | ---: | --- |"]
    lines += [f"| {md(d['name'])} | {md(d.get('n_instances'))} | {md(d.get('n_classes'))} | {_md_hash(d.get('sha256'))} |"
              for d in report.datasets]
    lines += ["", "| pipeline | steps |", "| --- | --- |"]
    lines += [f"| {md(p['name'])} | {md('; '.join(p['steps']))} |" for p in report.pipelines]
    lines += ["", f"## Significance: {md(comp.metric)}", "", format_comparison(comp, "markdown"), ""]
    m = report.across
    text = m.format()
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", text)), default=0))   # longer than any in it
    lines += [f"## Across datasets: {md(m.metric)}", "", f"{fence}text", text, fence, ""]
    if cd_svg:   # percent-encoded: a space or a parenthesis in the file's name ended the link
        lines += [f"![critical-difference diagram]({quote(cd_svg)})", ""]
    if report.bayes:
        others = [p for p in comp.pipelines if p != comp.baseline]
        lines += [f"## Bayesian correlated t-test against {md(comp.baseline)} (rope {report.rope:g})", "",
                  "P(better) / P(equivalent) / P(worse) per dataset.", "",
                  "| dataset | " + " | ".join(md(p) for p in others) + " |", "| --- |" + " --- |" * len(others)]
        for d in comp.datasets:
            cells = []
            for p in others:
                b = report.bayes.get((d, p))
                cells.append("-" if b is None else f"{b.p_a_better:.3f} / {b.p_equivalent:.3f} / {b.p_b_better:.3f}")
            lines.append(f"| {md(d)} | " + " | ".join(cells) + " |")
        lines.append("")
    if len(report.tables) > 1:
        lines += ["## Every metric", ""]
        for t in report.tables[1:]:
            lines += [f"### {md(t.metric)}", "", format_comparison(t, "markdown"), ""]
    lines += ["## Confusion matrices (summed over the repetitions)", ""]
    for d in comp.datasets:
        for p in comp.pipelines:
            got = report.confusion(d, p)
            if got is None:
                if report.results.cell(d, p):   # records, but more classes than a table shows
                    lines += [f"**{md(d)} / {md(p)}**: left out, more than {MAX_SHOWN_CLASSES:,} classes", ""]
                continue
            lines += [f"**{md(d)} / {md(p)}**", "", _md_matrix(*got), ""]
    if report.tuned():
        lines += ["## Chosen hyperparameters per outer repetition", ""]
        for d in comp.datasets:
            for p in comp.pipelines:
                chosen = report.hyperparameters(d, p)
                if any(params for _r, params in chosen):
                    text = "; ".join(f"{r}: " + (", ".join(f"{k}={v}" for k, v in params.items()) or "-")
                                     for r, params in chosen)
                    lines.append(f"- {md(d)} / {md(p)}: {md(text)}")
        lines.append("")
    failures = report.failures()
    if failures:
        lines += [f"## Failed repetitions ({len(failures)})", ""]
        lines += [f"- {md(f['dataset'])} / {md(f['pipeline'])} #{f['repetition']}: {md(f['error'])}" for f in failures]
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------- CSV and JSON

def render_long_csv(report: Report) -> str:
    """dataset, pipeline, repetition, metric, value: every scalar metric of every repetition."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(LONG_CSV_HEADER)
    for comp in report.tables:
        writer.writerows(long_csv_rows(comp))
    return buf.getvalue()


def render_summary_csv(report: Report) -> str:
    """metric, dataset, pipeline, mean, sd, ci, lcl, n, p_value, mark, rank (rank within the dataset, 1 = best)."""
    from toolkit.evaluation import stats

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["metric", "dataset", "pipeline", "mean", "sd", "ci", "lcl", "n", "p_value", "mark", "rank"])

    def num(v: Any) -> str:
        return "" if v is None or (isinstance(v, float) and not math.isfinite(v)) else repr(float(v))

    for comp in report.tables:
        kept, scores = comp.means()
        ranks = stats.ranks(scores, comp.greater_is_better) if len(kept) and len(comp.pipelines) > 1 else None
        for d in comp.datasets:
            for j, p in enumerate(comp.pipelines):
                c = comp.cells.get((d, p))
                if c is None:
                    continue
                rank = "" if ranks is None or d not in kept else num(ranks[kept.index(d), j])
                writer.writerow([comp.metric, d, p, num(c.mean), num(c.sd), num(c.ci), num(c.lcl), c.n,
                                 num(c.p_value), c.mark, rank])
    return buf.getvalue()


def render_json(report: Report) -> str:
    doc: dict[str, Any] = {
        "schema": "toolkit.report/1", "toolkit": report.toolkit_version, "created_utc": report.created_utc,
        "files": report.files, "warnings": report.warnings, "experiment": report.experiment,
        "datasets": report.datasets,
        "pipelines": report.pipelines, "main_metric": report.main.metric,
        "tables": [c.as_dict() for c in report.tables], "across_datasets": report.across.as_dict(),
        "bayesian": {"rope": report.rope, "baseline": report.main.baseline,
                     "cells": [{"dataset": d, "pipeline": p, "p_better": b.p_a_better, "p_equivalent": b.p_equivalent,
                                "p_worse": b.p_b_better, "mean_difference": b.mean, "scale": b.scale, "df": b.df}
                               for (d, p), b in report.bayes.items()]},
        "confusion_matrices": [], "hyperparameters": [], "failures": report.failures(),
    }
    for d in report.main.datasets:
        for p in report.main.pipelines:
            got = report.confusion(d, p)
            if got is not None:
                doc["confusion_matrices"].append({"dataset": d, "pipeline": p, "labels": got[0],
                                                  "matrix": got[1].tolist()})
            chosen = report.hyperparameters(d, p)
            if any(params for _r, params in chosen):
                doc["hyperparameters"].append({"dataset": d, "pipeline": p,
                                               "chosen": [{"repetition": r, "params": params} for r, params in chosen]})
    return json.dumps(_clean(doc), indent=1, allow_nan=False, default=str) + "\n"
