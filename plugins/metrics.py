"""Built-in evaluators: error, accuracy, log-loss, average precision, break-even, confusion matrix."""

from __future__ import annotations

from toolkit import hookimpl


@hookimpl
def register_evaluators(register):  # type: ignore[no-untyped-def]
    from toolkit.plugins import _metrics_impl as m

    register("error", m.error, description="Share of misclassified test instances",
             greater_is_better=False, needs_proba=False)
    register("accuracy", m.accuracy, description="Share of correctly classified test instances",
             greater_is_better=True, needs_proba=False)
    register("log-loss", m.log_loss, description="Mean negative log-probability of the true class",
             greater_is_better=False, needs_proba=True)
    register("average-precision", m.average_precision,
             description="Non-interpolated average precision (binary: positive class; else one-vs-rest mean)",
             greater_is_better=True, needs_proba=False)
    register("pr-curve", m.pr_curve, description="Precision-recall points per class (one-vs-rest)",
             greater_is_better=True, needs_proba=False)
    register("bep-micro", m.bep_micro, description="Micro-averaged precision/recall break-even point",
             greater_is_better=True, needs_proba=False)
    register("bep-macro", m.bep_macro, description="Macro-averaged precision/recall break-even point",
             greater_is_better=True, needs_proba=False)
    register("confusion-matrix", m.confusion_matrix, description="Counts of (true class, predicted class)",
             greater_is_better=True, needs_proba=False)
