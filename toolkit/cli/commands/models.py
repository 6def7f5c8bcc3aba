"""``toolkit train`` and ``toolkit predict``: model files (JSON + npz in a zip, no pickle)."""

from __future__ import annotations

import csv
import io
import json
from typing import Optional

import typer

from toolkit.cli.output import CLASS_OPTION_HELP, class_attribute as class_value, err, out

__all__ = ["register"]


def train_command(
    dataset: str = typer.Argument(..., help="Training data: ARFF file or bundled name."),
    classifier: str = typer.Option(..., "--classifier", "-c", help="NAME[:k=v,...]"),
    output: str = typer.Option(..., "--out", "-o", "--output", help="Model file to write (.tkm)."),
    fs: Optional[str] = typer.Option(None, "--fs", help="Feature selector NAME[:k=v,...]."),
    text: Optional[str] = typer.Option(None, "--text", help="Text step for string attributes NAME[:k=v,...]."),
    no_tune: bool = typer.Option(False, "--no-tune", help="Use defaults; do not tune the grid."),
    seed: int = typer.Option(1, "--seed", help="Seed of the validation split used for tuning."),
    class_attribute: Optional[str] = typer.Option(None, "--class", "-C", help=CLASS_OPTION_HELP),
) -> None:
    """Fit on a whole dataset (tuning the grid on a validation part) and save a model file."""
    from toolkit import train

    _check_writable(output)
    fitted = train(dataset, classifier, feature_selector=fs, text=text or "auto", tune=not no_tune, seed=seed,
                   out=output, class_attribute=class_value(class_attribute))
    chosen = ", ".join(f"{k}={v}" for k, v in fitted.params.items())
    err(f"model written to {output}" + (f" (tuned: {chosen})" if chosen else ""))


def _check_writable(path: str) -> None:
    """Refuse an output path that cannot be written, before any work."""
    import os

    from toolkit.errors import ParameterError

    if os.path.isdir(path):
        raise ParameterError(f"{path}: is a folder; give the file to write")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ParameterError(f"{path}: the folder {folder} does not exist")


def predict_command(
    model: str = typer.Argument(..., help="A model file written by `toolkit train`."),
    dataset: str = typer.Argument(..., help="Data with the training header (the class may be ?)."),
    proba: bool = typer.Option(False, "--proba", help="Include class probabilities."),
    fmt: str = typer.Option("table", "--format", help="table, csv, json or arff."),
    output: Optional[str] = typer.Option(None, "--out", "-o", "--output", help="Write here instead of stdout."),
    allow_format_1: bool = typer.Option(False, "--allow-format-1",
                                        help="Read a model file of format 1 (toolkit 0.1), whose metadata no "
                                             "checksum covers."),
    summary: Optional[bool] = typer.Option(None, "--summary/--no-summary",
                                           help="WEKA's evaluation summary (default: when the data has class "
                                                "labels); on stderr when stdout holds csv or arff."),
) -> None:
    """Predict a dataset with a saved model: labels (and probabilities) as a table, CSV, JSON or ARFF; on
    labelled data also WEKA's evaluation summary (accuracy, kappa, errors, per-class detail, confusion)."""
    from toolkit.errors import ParameterError
    from toolkit import predict
    from toolkit.models.training import prediction_rows

    if fmt not in ("table", "csv", "json", "arff"):
        raise ParameterError(f"format must be table, csv, json or arff, not '{fmt}'")
    if output:
        _check_writable(output)
    saved, ds, predictions = predict(model, dataset, allow_format_1=allow_format_1)
    rows = prediction_rows(saved, predictions, proba)
    # without probabilities (liblinear-svm, cmls) --proba shows the decision scores, labelled as such
    key, label = ("probabilities", "p") if predictions.proba is not None else ("scores", "score")
    if proba and predictions.proba is None and predictions.scores is None:
        raise ParameterError(f"{model}: the classifier gives neither probabilities nor scores; drop --proba")
    labelled = bool((predictions.y_true >= 0).any())
    weka = _summary(saved, ds, predictions) if (summary if summary is not None else labelled) else None
    if fmt == "arff":
        text = _as_arff(saved, ds, predictions, proba)
    elif fmt == "json":
        doc = {"schema": "toolkit.predict/1", "model": model, "dataset": ds.name, "classes": saved.classes,
               "predictions": rows}
        if weka is not None:
            doc["summary"] = weka.as_dict()
        text = json.dumps(doc, indent=2, allow_nan=False, default=str)
    elif fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(["instance", "actual", "predicted"] + ([f"{label}({c})" for c in saved.classes] if proba else []))
        for r in rows:
            writer.writerow([r["instance"], r["actual"] or "?", r["predicted"]]
                            + (["-inf" if p is None else repr(p) for p in r[key].values()] if proba else []))
        text = buf.getvalue().rstrip("\n")
    else:
        shown = "probabilities" if key == "probabilities" else "decision scores (no probabilities)"
        lines = [f"{'inst':>6}  {'actual':<16} {'predicted':<16}" + (f"  {shown}" if proba else "")]
        for r in rows:
            line = f"{r['instance']:>6}  {str(r['actual'] or '?'):<16} {r['predicted']:<16}"
            if proba:
                line += "  " + " ".join("-inf" if p is None else f"{p:.4f}" for p in r[key].values())
            lines.append(line)
        text = "\n".join(lines)
    if weka is not None and fmt == "table":
        text += "\n\n" + weka.format()
    if output:
        with open(output, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        err(f"predictions written to {output}")
        if weka is not None and fmt in ("csv", "arff"):
            out(weka.format())
    else:
        out(text)
        if weka is not None and fmt in ("csv", "arff"):
            err(weka.format())


def _summary(saved, ds, predictions):  # type: ignore[no-untyped-def]
    """WEKA's evaluation summary of labelled predictions; the priors of its relative errors are the
    training data's class weights (model files before toolkit 0.2 do not hold them: no relative errors,
    as WEKA without a training file)."""
    from toolkit.evaluation.summary import EvaluationSummary

    weights = saved.meta.get("training", {}).get("class_weights")
    return EvaluationSummary(saved.classes, title="=== Error on test data ===").add(
        predictions.y_true, predictions.y_pred, predictions.proba, ds.weights, weights)


def _as_arff(saved, ds, predictions, proba: bool) -> str:  # type: ignore[no-untyped-def]
    """The input instances with the class set to the prediction (and probability attributes)."""
    import numpy as np

    from toolkit.data import arff
    from toolkit.data.dataset import Attribute

    result = ds.subset(np.arange(ds.n_instances))
    result.y = predictions.y_pred.astype(np.int64)
    if proba and predictions.proba is not None:
        extra = [Attribute(f"p({c})", "numeric") for c in saved.classes]
        result.attributes = result.attributes + extra
        if result.is_sparse:
            import scipy.sparse as sp

            result.X = sp.hstack([result.X, sp.csr_matrix(predictions.proba)], format="csr")
        else:
            result.X = np.hstack([result.X, predictions.proba])
    return arff.to_text(result).rstrip("\n")


def register(app: typer.Typer) -> None:
    app.command("train")(train_command)
    app.command("predict")(predict_command)
