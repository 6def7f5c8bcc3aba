"""WEKA's evaluation summary: what ``java weka.classifiers.bayes.NaiveBayes -t TRAIN -T TEST -i`` prints
for a test set (``weka.classifiers.Evaluation``: ``toSummaryString``, ``toClassDetailsString``,
``toMatrixString`` of WEKA 3.6), with the same numbers and layout.

:class:`EvaluationSummary` accumulates test parts the way WEKA's ``Evaluation`` object does: instance
weights count, an instance whose class is missing is ignored (and counted as such), the class priors
of the relative errors are the training part's class weights plus one (``setPriors``), set again for
every part (as WEKA's cross-validation does per fold), and the ROC areas pool the predictions of every
part. ``toolkit predict`` shows it for one labelled test set, ``toolkit evaluate --summary`` summed over
the repetitions of each (dataset, pipeline). The counting is :mod:`toolkit.evaluation.measures`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.control_characters import escape_controls
from toolkit.evaluation import measures

__all__ = ["EvaluationSummary", "weka_number", "results_summaries"]


def _weka_digits(value: float, decimals: int) -> str:
    """WEKA's ``Utils.doubleToString(value, decimals)``: rounded half away from zero to ``decimals``
    places, trailing zeros (and a trailing point) dropped."""
    if math.isnan(value) or math.isinf(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    temp = value * math.pow(10.0, decimals)
    if abs(temp) >= 9.223372036854776e18:
        return repr(value)
    fixed = int(temp + 0.5) if temp > 0 else -int(abs(temp) + 0.5)
    if decimals == 0:
        return str(fixed)
    digits = str(abs(fixed)).rjust(decimals + 1, "0")
    text = digits[:-decimals] + "." + digits[-decimals:]
    text = text.rstrip("0").rstrip(".")
    return ("-" + text) if fixed < 0 else text


def weka_number(value: float, width: int, decimals: int) -> str:
    """WEKA's ``Utils.doubleToString(value, width, decimals)``: the rounded number placed in a field of
    ``width`` characters with its decimal point where a number with ``decimals`` places would have it
    (the text alone when it does not fit)."""
    text = _weka_digits(value, decimals)
    if decimals >= width or "E" in text:
        return text
    point = text.find(".") if decimals > 0 else -1
    integer = text if point < 0 else text[:point]
    fraction = "" if point < 0 else text[point + 1:]
    offset = width - decimals - len(integer) - (1 if decimals > 0 else 0)
    if offset < 0:
        return text
    cells = [" "] * width
    if point >= 0:
        cells[width - decimals - 1] = "."
    for i, ch in enumerate(integer):
        cells[offset + i] = ch
    for i, ch in enumerate(fraction):
        cells[offset + len(integer) + 1 + i] = ch
    return "".join(cells)


def _short_id(num: int, width: int) -> str:
    """WEKA's ``num2ShortID``: a, b, ..., z, then two letters, right-aligned in ``width``."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    chars: list[str] = []
    while True:
        chars.insert(0, letters[num % 26])
        num = num // 26 - 1
        if num < 0 or len(chars) >= width:
            break
    return "".join(chars).rjust(width)


@dataclass
class EvaluationSummary:
    """WEKA's ``Evaluation`` over one or more test parts of one dataset (a nominal class)."""

    classes: Sequence[str]
    title: str = "=== Summary ==="
    #: the K x K matrix, None past measures.MAX_CONFUSION_CLASSES classes (then left out, as the report
    #: leaves it out); every other number comes from ``counts``, which is O(K)
    confusion: np.ndarray | None = field(init=False)
    counts: measures.ClassCounts = field(init=False)
    with_class: float = 0.0
    missing_class: float = 0.0
    unclassified: float = 0.0
    sum_abs: float = 0.0
    sum_sq: float = 0.0
    sum_prior_abs: float = 0.0
    sum_prior_sq: float = 0.0
    priors_known: bool = True
    parts: int = 0
    _y: list[np.ndarray] = field(default_factory=list, repr=False)
    _p: list[np.ndarray] = field(default_factory=list, repr=False)
    _w: list[np.ndarray] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.classes = list(self.classes)
        K = len(self.classes)
        self.confusion = np.zeros((K, K)) if K <= measures.MAX_CONFUSION_CLASSES else None
        self.counts = measures.ClassCounts(np.zeros(K), np.zeros(K), np.zeros(K))

    def add(self, y_true: Any, y_pred: Any, proba: Any | None, weights: Any | None = None,
            train_counts: Any | None = None) -> EvaluationSummary:
        """One test part: true and predicted class codes (-1 = missing class), the class probabilities
        (None: the prediction counts as probability 1, as for a WEKA classifier without a distribution),
        instance weights, and the training part's class weights (None: no priors, so no relative errors,
        as WEKA with ``-l model`` and no training file)."""
        K = len(self.classes)
        y = np.asarray(y_true, dtype=np.int64)
        pred = np.asarray(y_pred, dtype=np.int64)
        w = np.ones(len(y)) if weights is None else np.asarray(weights, dtype=np.float64)
        if proba is None:
            p = np.zeros((len(y), K))
            p[np.arange(len(y))[pred >= 0], pred[pred >= 0]] = 1.0
        else:
            p = np.asarray(proba, dtype=np.float64)
        known = y >= 0
        self.missing_class += float(w[~known].sum())
        y, pred, p, w = y[known], pred[known], p[known], w[known]
        self.with_class += float(w.sum())
        unpredicted = pred < 0
        self.unclassified += float(w[unpredicted].sum())
        y, pred, p, w = y[~unpredicted], pred[~unpredicted], p[~unpredicted], w[~unpredicted]
        if self.confusion is not None:
            self.confusion += measures.confusion_matrix(y, pred, K, w)
        self.counts = self.counts + measures.ClassCounts.of(y, pred, K, w)
        _n, abs_err, sq_err = measures.absolute_squared_errors(y, p, w)
        self.sum_abs += abs_err
        self.sum_sq += sq_err
        if train_counts is None:
            self.priors_known = False
        else:
            counts = np.asarray(train_counts, dtype=np.float64) + 1.0  # WEKA's setPriors: weights + 1 each
            prior = np.tile(counts / counts.sum(), (len(y), 1))
            _n, prior_abs, prior_sq = measures.absolute_squared_errors(y, prior, w)
            self.sum_prior_abs += prior_abs
            self.sum_prior_sq += prior_sq
        self._y.append(y)
        self._p.append(p)
        self._w.append(w)
        self.parts += 1
        return self

    # ------------------------------------------------------------------ the numbers
    @property
    def correct(self) -> float:
        return float(self.counts.correct.sum())

    @property
    def incorrect(self) -> float:
        return self.counts.total - self.correct

    def _evaluated(self) -> float:
        return self.with_class - self.unclassified

    def numbers(self) -> dict[str, Any]:
        """Every number of the summary, unrounded."""
        n = self._evaluated()
        rates = measures.class_rates(self.counts)
        y = np.concatenate(self._y) if self._y else np.zeros(0, np.int64)
        p = np.concatenate(self._p) if self._p else np.zeros((0, len(self.classes)))
        w = np.concatenate(self._w) if self._w else np.zeros(0)
        auc = measures.roc_auc(y, p, w)
        support = rates["support"]
        total = support.sum()
        weighted = {k: (float(np.sum(rates[k] * support) / total) if total else float("nan"))
                    for k in ("tp_rate", "fp_rate", "precision", "recall", "f1")}
        weighted["roc_auc"] = measures.class_weighted_mean(auc, support, undefined="weka")
        out: dict[str, Any] = {
            "correct": self.correct, "incorrect": self.incorrect,
            "pct_correct": 100 * self.correct / self.with_class if self.with_class else float("nan"),
            "pct_incorrect": 100 * self.incorrect / self.with_class if self.with_class else float("nan"),
            "kappa": measures.kappa(self.counts),
            "mean_absolute_error": self.sum_abs / n if n else float("nan"),
            "root_mean_squared_error": math.sqrt(self.sum_sq / n) if n else float("nan"),
            "unclassified": self.unclassified, "total": self.with_class, "missing_class": self.missing_class,
            "classes": list(self.classes), "confusion": None if self.confusion is None else self.confusion.tolist(),
            "per_class": {k: v.tolist() for k, v in rates.items()}, "roc_auc": auc.tolist(), "weighted": weighted,
            "parts": self.parts,
        }
        if self.priors_known and self.with_class:
            prior_abs = self.sum_prior_abs / self.with_class
            prior_rms = math.sqrt(self.sum_prior_sq / self.with_class)
            out["relative_absolute_error"] = 100 * out["mean_absolute_error"] / prior_abs if prior_abs else math.nan
            out["root_relative_squared_error"] = (100 * out["root_mean_squared_error"] / prior_rms if prior_rms
                                                  else math.nan)
        return out

    def as_dict(self) -> dict[str, Any]:
        """The numbers (NaN as None) and the text, for JSON."""
        from toolkit.evaluation.results import _clean

        return _clean({**self.numbers(), "text": self.format()})

    # ------------------------------------------------------------------ WEKA's text
    def summary_text(self, title: str | None = None) -> str:
        """``Evaluation.toSummaryString(title, false)``."""
        v = self.numbers()
        lines = [self.title if title is None else title, ""]
        if self.with_class > 0:
            lines.append("Correctly Classified Instances     " + weka_number(v["correct"], 12, 4) + "     "
                         + weka_number(v["pct_correct"], 12, 4) + " %")
            lines.append("Incorrectly Classified Instances   " + weka_number(v["incorrect"], 12, 4) + "     "
                         + weka_number(v["pct_incorrect"], 12, 4) + " %")
            lines.append("Kappa statistic                    " + weka_number(v["kappa"], 12, 4))
            lines.append("Mean absolute error                " + weka_number(v["mean_absolute_error"], 12, 4))
            lines.append("Root mean squared error            " + weka_number(v["root_mean_squared_error"], 12, 4))
            if "relative_absolute_error" in v:
                lines.append("Relative absolute error            "
                             + weka_number(v["relative_absolute_error"], 12, 4) + " %")
                lines.append("Root relative squared error        "
                             + weka_number(v["root_relative_squared_error"], 12, 4) + " %")
        if self.unclassified > 0:
            pct = 100 * self.unclassified / self.with_class
            lines.append("UnClassified Instances             " + weka_number(self.unclassified, 12, 4) + "     "
                         + weka_number(pct, 12, 4) + " %")
        lines.append("Total Number of Instances          " + weka_number(self.with_class, 12, 4))
        if self.missing_class > 0:
            lines.append("Ignored Class Unknown Instances            " + weka_number(self.missing_class, 12, 4))
        return "\n".join(lines) + "\n"

    def class_details_text(self, title: str = "=== Detailed Accuracy By Class ===") -> str:
        """``Evaluation.toClassDetailsString(title)`` of WEKA 3.6 (TP and FP rate, precision, recall,
        F-measure, ROC area per class, and their class-frequency-weighted averages)."""
        v = self.numbers()
        pc = v["per_class"]
        lines = [title, "", "               TP Rate   FP Rate   Precision   Recall  F-Measure   ROC Area  Class"]

        def n7(x: float) -> str:
            return weka_number(x, 7, 3)

        for k, name in enumerate(self.classes):
            roc = v["roc_auc"][k]
            roc_text = "  ?    " if math.isnan(roc) else n7(roc)
            lines.append("               " + n7(pc["tp_rate"][k]) + "   " + n7(pc["fp_rate"][k]) + "    "
                         + n7(pc["precision"][k]) + "   " + n7(pc["recall"][k]) + "   " + n7(pc["f1"][k]) + "    "
                         + roc_text + "    " + escape_controls(name))   # a line break would split the row
        wt = v["weighted"]
        lines.append("Weighted Avg.  " + n7(wt["tp_rate"]) + "   " + n7(wt["fp_rate"]) + "    " + n7(wt["precision"])
                     + "   " + n7(wt["recall"]) + "   " + n7(wt["f1"]) + "    " + n7(wt["roc_auc"]))
        return "\n".join(lines) + "\n"

    def matrix_text(self, title: str = "=== Confusion Matrix ===") -> str:
        """``Evaluation.toMatrixString(title)``: letters for the classes, weights with two decimals when
        some are fractional."""
        cm = self.confusion
        K = len(self.classes)
        if cm is None:
            return (f"{title}\n\nleft out: {K:,} classes, more than {measures.MAX_CONFUSION_CLASSES:,} "
                    f"(the matrix has K x K cells)\n")
        magnitude = np.where(cm < 0, cm * -10, cm)
        maxval = float(magnitude.max()) if magnitude.size else 0.0
        fract = magnitude - np.rint(magnitude)
        with np.errstate(divide="ignore", invalid="ignore"):
            fractional = bool(np.any((fract > 0) & (np.log10(np.where(fract > 0, fract, 1.0)) >= -2)))
        digits = int(math.log(maxval) / math.log(10) + (3 if fractional else 0)) if maxval > 0 else -(2 ** 31)
        id_width = 1 + max(digits, int(math.log(K) / math.log(26)) if K > 0 else 0)
        head = ""
        for k in range(K):
            head += " " + (_short_id(k, id_width - 3) + "   " if fractional else _short_id(k, id_width))
        lines = [title, "", head + "   <-- classified as"]
        for i in range(K):
            row = "".join(" " + weka_number(float(cm[i, j]), id_width, 2 if fractional else 0) for j in range(K))
            lines.append(row + " | " + _short_id(i, id_width) + " = " + escape_controls(self.classes[i]))
        return "\n".join(lines) + "\n"

    def format(self, title: str | None = None) -> str:
        """The summary, the class details and the confusion matrix, as WEKA's ``-i`` prints them."""
        return "\n\n".join([self.summary_text(title), self.class_details_text(), self.matrix_text()])


def results_summaries(results: Any) -> list[EvaluationSummary]:
    """One summary per (dataset, pipeline) of a run stored with its test probabilities, summed over its
    repetitions with each repetition's training class weights as the priors."""
    from toolkit.evaluation.detail import class_labels

    out = []
    for d in results.datasets():
        for p in results.pipelines():
            records = results.cell(d, p)
            if not records:
                continue
            stored = [(r.get("predictions") or {}).get("proba") is not None for r in records]
            if any(stored) and not all(stored):
                from toolkit.errors import ResultsFileError

                raise ResultsFileError(
                    f"{d} / {p}: {stored.count(False)} of {len(records)} repetitions were stored without their test "
                    f"probabilities (run before --summary or --save-proba was given), the others with them; a summary "
                    f"would score the first as certain: evaluate into a new --out with --summary")
            reps = f"{len(records)} repetition{'s' if len(records) != 1 else ''}"
            summary = EvaluationSummary(class_labels(records),
                                        title=escape_controls(f"=== Summary: {d} / {p}, {reps} ==="))
            for r in records:
                pred = r.get("predictions") or {}
                summary.add(pred.get("y_true", []), pred.get("y_pred", []), pred.get("proba"),
                            pred.get("weights"), r.get("train_class_counts"))
            out.append(summary)
    return out
