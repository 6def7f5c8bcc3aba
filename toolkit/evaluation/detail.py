"""Views of the dict-valued metrics (a confusion matrix, per-class measures) over the repetitions of a cell:
what the tables show instead of ``n/a``.

A confusion matrix is summed over the repetitions (counts of every test instance, as WEKA's
cross-validation summary pools its folds); per-class measures are averaged over the repetitions (as
the Experimenter averages every other measure). A confusion matrix is taken from the record's
``confusion-matrix`` metric when it was computed, else from the test predictions every record keeps.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from toolkit.control_characters import escape_controls
from toolkit.evaluation.cells import markdown_escape
from toolkit.evaluation.measures import confusion_matrix
from toolkit.evaluation.results import Results

__all__ = ["class_labels", "summed_confusion", "per_class_means", "format_confusion", "format_per_class",
           "format_dict_metric", "DICT_VIEWS", "is_dict_metric"]

#: the per-class measures of the ``per-class`` evaluator, in the order WEKA prints them (+ PR area)
PER_CLASS_COLUMNS = (("tp_rate", "TP Rate"), ("fp_rate", "FP Rate"), ("precision", "Precision"),
                     ("recall", "Recall"), ("f1", "F-Measure"), ("roc_auc", "ROC Area"), ("pr_auc", "PR Area"))
#: dict-valued metrics with a view of their own
DICT_VIEWS = ("confusion-matrix", "per-class")


def is_dict_metric(results: Results, metric: str) -> bool:
    """True when the metric's recorded values are dicts or lists (not numbers)."""
    for r in results.ok():
        value = r["metrics"].get(metric)
        if value is not None:
            return isinstance(value, (dict, list))
    return metric in DICT_VIEWS or metric == "pr-curve"


def class_labels(records: Sequence[dict[str, Any]]) -> list[str]:
    """The class labels of a dataset's records (stored since toolkit 0.2; else from a confusion matrix,
    else the codes)."""
    for r in records:
        labels = r["dataset"].get("classes")
        if labels:
            return list(labels)
        cm = r["metrics"].get("confusion-matrix")
        if isinstance(cm, dict) and cm.get("labels"):
            return list(cm["labels"])
    n = records[0]["dataset"].get("n_classes", 0) if records else 0
    return [str(k) for k in range(n)]


#: classes of the largest confusion matrix a report or table shows (K x K cells written out)
MAX_SHOWN_CLASSES = 256


def summed_confusion(results: Results, dataset: str, pipeline: str) -> tuple[list[str], np.ndarray] | None:
    """(labels, K x K counts summed over the cell's repetitions), or None without records or with more
    classes than a report shows (:data:`MAX_SHOWN_CLASSES`: a K x K table of 2,000 classes was a 76 MB
    HTML file, of 8,192 past 2.8 GB of memory)."""
    records = results.cell(dataset, pipeline)
    if not records:
        return None
    labels = class_labels(records)
    K = len(labels)
    if K > MAX_SHOWN_CLASSES:
        return None
    total = np.zeros((K, K))
    for r in records:
        cm = r["metrics"].get("confusion-matrix")
        if isinstance(cm, dict) and "matrix" in cm:
            total += np.asarray(cm["matrix"], dtype=np.float64)
            continue
        pred = r.get("predictions") or {}
        if "y_true" in pred and "y_pred" in pred:
            total += confusion_matrix(np.asarray(pred["y_true"]), np.asarray(pred["y_pred"]), K)
    return labels, total


def per_class_means(results: Results, dataset: str, pipeline: str) -> dict[str, Any] | None:
    """Means over the repetitions of every per-class measure (``per-class`` metric), or None when the
    records do not hold it."""
    rows = [r["metrics"].get("per-class") for r in results.cell(dataset, pipeline)]
    rows = [r for r in rows if isinstance(r, dict)]
    if not rows:
        return None
    out: dict[str, Any] = {"labels": rows[0]["labels"], "repetitions": len(rows)}
    for key, _title in (("support", "support"), *PER_CLASS_COLUMNS):
        values = np.array([[np.nan if v is None else v for v in r.get(key, [])] for r in rows], dtype=np.float64)
        if values.size == 0:
            continue
        with np.errstate(all="ignore"):
            counted = np.sum(~np.isnan(values), axis=0)
            sums = np.nansum(values, axis=0)
            out[key] = [float(s / c) if c else float("nan") for s, c in zip(sums, counted)]
    return out


def _short_ids(K: int) -> list[str]:
    """a, b, ..., z, aa, ab, ...: WEKA's column letters."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    ids = []
    for k in range(K):
        text, n = "", k
        while True:
            text = letters[n % 26] + text
            n = n // 26 - 1
            if n < 0:
                break
        ids.append(text)
    return ids


def format_confusion(labels: Sequence[str], matrix: np.ndarray, title: str = "") -> str:
    """WEKA's confusion-matrix layout: a column letter per predicted class, a row per true class."""
    ids = _short_ids(len(labels))
    whole = np.all(np.asarray(matrix) == np.round(matrix))
    cells = [[(f"{int(v)}" if whole else f"{v:.2f}") for v in row] for row in np.asarray(matrix)]
    width = max([len(i) for i in ids] + [len(c) for row in cells for c in row])
    lines = [title] if title else []
    lines.append(" ".join(i.rjust(width) for i in ids) + "   <-- classified as")
    for i, row in enumerate(cells):
        lines.append(" ".join(c.rjust(width) for c in row) + f" | {ids[i].rjust(width)} = {escape_controls(labels[i])}")
    return "\n".join(lines)


def _num(value: Any, digits: int = 3) -> str:
    return "?" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def format_per_class(means: dict[str, Any], title: str = "") -> str:
    """WEKA's "Detailed Accuracy By Class" layout, each cell the mean over the repetitions."""
    columns = [(k, t) for k, t in PER_CLASS_COLUMNS if k in means]
    header = [t for _k, t in columns] + ["Class"]
    rows = [[_num(means[k][i]) for k, _t in columns] + [escape_controls(label)] for i, label in enumerate(means["labels"])]
    widths = [max(len(header[j]), *(len(r[j]) for r in rows)) for j in range(len(columns))]
    lines = [title] if title else []
    lines.append("  ".join(h.rjust(w) for h, w in zip(header, widths)) + "  Class")
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) + "  " + r[-1] for r in rows]
    return "\n".join(lines)


def _markdown_matrix(labels: Sequence[str], matrix: np.ndarray) -> str:
    whole = np.all(np.asarray(matrix) == np.round(matrix))
    lines = ["| true \\ predicted | " + " | ".join(map(markdown_escape, labels)) + " |",
             "| --- |" + " ---: |" * len(labels)]
    for label, row in zip(labels, np.asarray(matrix)):
        lines.append(f"| {markdown_escape(label)} | " + " | ".join(f"{int(v)}" if whole else f"{v:.2f}" for v in row) + " |")
    return "\n".join(lines)


def format_dict_metric(results: Results, metric: str, fmt: str = "table") -> str:
    """A dict-valued metric shown per (dataset, pipeline): summed confusion matrices, mean per-class tables,
    or (for any other dict metric) where to find it."""
    blocks = []
    name = markdown_escape if fmt == "markdown" else escape_controls   # a name's line break would split a line
    for d in results.datasets():
        for p in results.pipelines():
            records = results.cell(d, p)
            if not records:
                continue
            title = f"{metric}: {name(d)} / {name(p)} ({len(records)} repetitions)"
            if metric == "confusion-matrix":
                got = summed_confusion(results, d, p)
                if got is None:
                    blocks.append(f"{title}: left out, more than {MAX_SHOWN_CLASSES:,} classes")
                    continue
                labels, matrix = got
                title = f"confusion matrix: {name(d)} / {name(p)}, summed over {len(records)} repetitions"
                if fmt == "markdown":
                    blocks.append(f"**{title}**\n\n{_markdown_matrix(labels, matrix)}")
                else:
                    blocks.append(format_confusion(labels, matrix, title))
            elif metric == "per-class":
                means = per_class_means(results, d, p)
                if means is None:
                    continue
                title = f"per class: {name(d)} / {name(p)}, means over {means['repetitions']} repetitions"
                text = format_per_class(means, title)
                if fmt == "markdown":
                    body = text.split("\n", 1)[1]
                    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", body)), default=0))
                    blocks.append(f"**{title}**\n\n{fence}text\n{body}\n{fence}")   # longer than any in it
                else:
                    blocks.append(text)
    if metric not in DICT_VIEWS:
        where = {"pr-curve": "draw them with toolkit pr-plot RESULTS.jsonl"}.get(metric, "see --format json or the "
                                                                                           "results file")
        return f"{metric}: a value per class or point, not one number per repetition; {where}"
    return "\n\n".join(blocks) if blocks else f"{metric}: no record holds it"
