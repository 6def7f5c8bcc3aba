"""``toolkit train`` and ``toolkit predict``: model files (JSON + npz in a zip, no pickle)."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sys
from collections.abc import Iterator
from typing import Optional, TextIO

import typer

from toolkit.cli.output import CLASS_OPTION_HELP, check_output_path, class_attribute as class_value, \
    err, out
from toolkit.evaluation.cells import aligned, display_width, plain_cell

__all__ = ["register"]


def train_command(
    dataset: str = typer.Argument(..., help="Training data: a dataset file (.arff, .csv, .libsvm, each optionally .gz) "
                                              "or a bundled name."),
    classifier: str = typer.Option(..., "--classifier", "-c", help="NAME[:k=v,...]"),
    output: str = typer.Option(..., "--out", "-o", "--output", help="Model file to write (.tkm)."),
    fs: Optional[str] = typer.Option(None, "--fs", help="Feature selector NAME[:k=v,...]."),
    text: Optional[str] = typer.Option(None, "--text", help="Text step for string attributes NAME[:k=v,...]."),
    no_tune: bool = typer.Option(False, "--no-tune", help="Use defaults; do not tune the grid."),
    seed: int = typer.Option(1, "--seed", help="Seed of the validation split used for tuning."),
    class_attribute: Optional[str] = typer.Option(None, "--class", "-C", help=CLASS_OPTION_HELP),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Train on an existing Dask cluster "
                                            "(tcp://HOST:8786), the workers reading byte ranges of the file."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="The same on a new local Dask cluster: local:N."),
    partition_mb: float = typer.Option(64.0, "--partition-mb", help="MiB of the file per task with "
                                                                    "--scheduler / --cluster."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
) -> None:
    """Fit on a whole dataset (tuning the grid on a validation part) and save a model file. With
    --scheduler or --cluster, count models (nb-multinomial, nb-bim, nb-weka, nb-gaussian, bma-nb) are
    fitted from statistics that workers compute on byte ranges of the file (no tuning)."""
    from toolkit import train

    _check_model_path(output, {"dataset": dataset})
    partitioned = bool(scheduler or cluster)
    fitted = train(dataset, classifier, feature_selector=fs, text=text or "auto", tune=not no_tune, seed=seed,
                   out=os.path.realpath(output),   # through a symbolic link to its file, not over the link
                   class_attribute=class_value(class_attribute), scheduler=scheduler, cluster=cluster,
                   partition_bytes=_partition_bytes(partition_mb) if partitioned else None,
                   notes=None if quiet else err)
    chosen = ", ".join(f"{k}={v}" for k, v in fitted.params.items())
    err(f"model written to {output}" + (f" (tuned: {chosen})" if chosen else ""))


def _partition_bytes(mb: float) -> int:
    from toolkit.errors import ParameterError

    if not (mb > 0 and mb != float("inf")):   # inf crashed int() with a traceback
        raise ParameterError(f"--partition-mb must be a finite number > 0, not {mb}")
    return max(1, int(mb * 2**20))


def _check_model_path(path: str, inputs: dict[str, str]) -> None:
    """A model file's path, before any work: what every output is checked for, and a regular file (the model
    is written in one step beside it and moved into place: a device (/dev/stdout) was replaced by a file)."""
    import os

    from toolkit.errors import ParameterError

    check_output_path(path, "--out", inputs)
    if os.path.exists(path) and not os.path.isfile(path):
        raise ParameterError(f"{path}: is not a regular file; a model file is written in one step beside it and "
                             f"moved into place, so give a file name")


def predict_command(
    model: str = typer.Argument(..., help="A model file written by `toolkit train`."),
    dataset: str = typer.Argument(..., help="Data with the training header (the class may be ?)."),
    proba: bool = typer.Option(False, "--proba", help="Include class probabilities."),
    fmt: Optional[str] = typer.Option(None, "--format", help="table, csv, json or arff (default: from the extension "
                                                             "of --out, .csv .json .arff, else table)."),
    output: Optional[str] = typer.Option(None, "--out", "-o", "--output", help="Write here instead of stdout."),
    allow_format_1: bool = typer.Option(False, "--allow-format-1",
                                        help="Read a model file of format 1 (toolkit 0.1), whose metadata no "
                                             "checksum covers."),
    summary: Optional[bool] = typer.Option(None, "--summary/--no-summary",
                                           help="WEKA's evaluation summary (default: when the data has class "
                                                "labels); on stderr when stdout holds csv or arff."),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Score on an existing Dask cluster "
                                            "(tcp://HOST:8786), the workers reading byte ranges of the file."),
    cluster: Optional[str] = typer.Option(None, "--cluster", help="The same on a new local Dask cluster: local:N."),
    partition_mb: float = typer.Option(64.0, "--partition-mb", help="MiB of the file per task with "
                                                                    "--scheduler / --cluster."),
) -> None:
    """Predict a dataset with a saved model: labels (and probabilities) as a table, CSV, JSON or ARFF (the
    instances with a predicted(CLASS) attribute beside their true class; unlabelled data gets the predicted
    class in its class column); on labelled data also WEKA's evaluation summary (accuracy, kappa, errors, per-class detail, confusion).
    With --scheduler or --cluster, workers score byte ranges of the file and the predictions are written
    in file order as they come (table, csv or json)."""
    from toolkit.errors import ParameterError
    from toolkit import predict
    from toolkit.models.training import prediction_rows

    if fmt is None:   # as report does: the extension of the output file chooses
        ext = os.path.splitext(output or "")[1].lower().lstrip(".")
        fmt = ext if ext in ("csv", "json", "arff") else "table"
    if fmt not in ("table", "csv", "json", "arff"):
        raise ParameterError(f"format must be table, csv, json or arff, not '{fmt}'")
    if output:
        check_output_path(output, "--out", {"model file": model, "dataset": dataset})
    if scheduler or cluster:
        if fmt == "arff":
            raise ParameterError("--format arff writes the instances back and is not offered with --scheduler / "
                                 "--cluster; use csv, json or table")
        _predict_partitioned(model, dataset, proba, fmt, output, allow_format_1, summary, scheduler, cluster,
                             _partition_bytes(partition_mb))
        return
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
        writer.writerow(_csv_header(saved.classes, label, proba))
        for r in rows:
            writer.writerow(_csv_row(r, key, proba))
        text = buf.getvalue().rstrip("\n")
    else:
        shown = "probabilities" if key == "probabilities" else "decision scores (no probabilities)"
        width = _label_width(saved.classes)
        lines = [_table_header(shown, proba, width)] + [_table_line(r, key, proba, width) for r in rows]
        text = "\n".join(lines)
    if weka is not None and fmt == "table":
        text += "\n\n" + weka.format()
    if output:
        with _written(output) as fh:
            fh.write(text + "\n")
        err(f"predictions written to {output}")
        if weka is not None and fmt in ("csv", "arff"):
            out(weka.format())
    else:
        out(text)
        if weka is not None and fmt in ("csv", "arff"):
            err(weka.format())


def _predict_partitioned(model, dataset, proba, fmt, output, allow_format_1, summary, scheduler, cluster,
                         partition_bytes) -> None:  # type: ignore[no-untyped-def]
    """Predictions of a partitioned run, streamed in file order (csv, json or table)."""
    import numpy as np

    from toolkit.api import Predictions
    from toolkit.errors import ParameterError
    from toolkit.models.partitioned import predict_partitioned
    from toolkit.models.training import prediction_rows

    saved, header, parts = predict_partitioned(model, dataset, scheduler=scheduler, cluster=cluster,
                                               partition_bytes=partition_bytes, allow_format_1=allow_format_1,
                                               notes=err)
    stack = contextlib.ExitStack()
    # the predictions stream into a file beside the output, which replaces it only once all are written: a
    # failure midway (a bad line in the data, a lost worker) keeps the old file instead of leaving it cut short
    fh = stack.enter_context(_written(output)) if output else None

    def write(text: str) -> None:
        if fh is not None:
            fh.write(text + "\n")
        else:
            out(text)

    kept: list[Predictions] = []
    width = _label_width(saved.classes)   # the table's class columns, once for every range
    pending = ""
    first, key, label = 1, None, None
    try:
        for part in parts:
            if key is None:
                key, label = ("probabilities", "p") if part.proba is not None else ("scores", "score")
                if proba and part.proba is None and part.scores is None:
                    raise ParameterError(f"{model}: the classifier gives neither probabilities nor scores; drop --proba")
                shown = "probabilities" if key == "probabilities" else "decision scores (no probabilities)"
                if fmt == "csv":   # csv's own line ends, as the local predict writes them
                    buf = io.StringIO()
                    csv.writer(buf).writerow(_csv_header(saved.classes, label, proba))
                    write(buf.getvalue().rstrip("\n"))
                elif fmt == "json":   # the layout of json.dumps(doc, indent=2), as the local predict writes it
                    head = json.dumps({"schema": "toolkit.predict/1", "model": model, "dataset": header.name,
                                       "classes": saved.classes}, indent=2)
                    write(head[:-2] + ',\n  "predictions": [')
                else:
                    write(_table_header(shown, proba, width))
            rows = prediction_rows(saved, part, proba, first)
            if fmt == "csv":
                buf = io.StringIO()
                writer = csv.writer(buf)
                for r in rows:
                    writer.writerow(_csv_row(r, key, proba))
                text = buf.getvalue().rstrip("\n")
            elif fmt == "json":
                text = ",\n".join(_indented(json.dumps(r, indent=2, allow_nan=False, default=str), 4) for r in rows)
                if text:                         # a range's rows go out when the next range's come (the comma)
                    text, pending = pending, text
                    text = text + "," if text else text
            else:
                text = "\n".join(_table_line(r, key, proba, width) for r in rows)
            if text:
                write(text)
            first += len(rows)
            if summary is not False:
                part.scores = None
                kept.append(part)
        labelled = any(bool((p.y_true >= 0).any()) for p in kept)
        weka = None
        if summary if summary is not None else labelled:
            joined = Predictions(np.concatenate([p.y_true for p in kept]) if kept else np.zeros(0, np.int64),
                                 np.concatenate([p.y_pred for p in kept]) if kept else np.zeros(0, np.int64),
                                 np.vstack([p.proba for p in kept]) if kept and kept[0].proba is not None else None,
                                 None, tuple(saved.classes))
            weights = np.concatenate([np.asarray(p.weights) for p in kept]) if kept else np.zeros(0)
            weka = _summary(saved, header, joined, weights)
        if fmt == "json":
            if pending:
                write(pending)
            tail = "  ]" if first > 1 else "]"
            if weka is not None:
                tail += ',\n  "summary": ' + _indented(json.dumps(weka.as_dict(), indent=2, allow_nan=False,
                                                                    default=str), 2).lstrip()
            write(tail + "\n}")
        if weka is not None:
            if fmt == "table":
                write("\n" + weka.format())
            elif fmt == "csv" and fh is not None:
                out(weka.format())
            elif fmt == "csv":
                err(weka.format())
    except BaseException:
        stack.__exit__(*sys.exc_info())
        raise
    stack.close()
    if output:
        err(f"predictions written to {output}")


@contextlib.contextmanager
def _written(path: str) -> Iterator[TextIO]:
    """``path`` opened for writing text. A new or regular file is written beside it and replaces it only when
    the block succeeds, so an error midway keeps the old file (not an empty or cut one); a device or a pipe
    (``-o /dev/stdout``) is written directly. A failed write (disk full) is one error line naming the file."""
    from toolkit.atomic_write import replaced_atomically
    from toolkit.errors import ToolkitError

    if os.path.exists(path) and not os.path.isfile(path):
        try:
            with open(path, "w", encoding="utf-8") as fh:
                yield fh
        except OSError as exc:
            raise ToolkitError(f"{path}: cannot write ({exc.strerror or exc})") from None
        return
    with replaced_atomically(os.path.realpath(path), ToolkitError) as tmp:   # a symbolic link stays one
        with open(tmp, "w", encoding="utf-8") as fh:
            yield fh


# one row layout for the local and the partitioned predict, so that their outputs stay byte-identical
def _csv_header(classes, label: str, proba: bool) -> list[str]:  # type: ignore[no-untyped-def]
    return ["instance", "actual", "predicted"] + ([f"{label}({c})" for c in classes] if proba else [])


def _csv_row(r: dict, key: str, proba: bool) -> list:  # type: ignore[type-arg]
    return ([r["instance"], r["actual"] or "?", r["predicted"]]
            + (["-inf" if p is None else repr(p) for p in r[key].values()] if proba else []))


def _label_width(classes) -> int:  # type: ignore[no-untyped-def]
    """The class columns' width: 16 (WEKA's), or the widest class label in terminal columns. From the
    model's classes, so that the partitioned predict, which streams its rows, lines up the same way."""
    return max([16] + [display_width(plain_cell(str(c))) for c in classes])


def _table_header(shown: str, proba: bool, width: int = 16) -> str:
    return f"{'inst':>6}  {aligned('actual', width)} {aligned('predicted', width)}" + (f"  {shown}" if proba else "")


def _number(p: float | None) -> str:
    # decision scores may be huge (1e300 printed 300 digits): four decimals, or four significant digits
    return "-inf" if p is None else f"{p:.4f}" if abs(p) < 1e6 else f"{p:.4g}"


def _table_line(r: dict, key: str, proba: bool, width: int = 16) -> str:  # type: ignore[type-arg]
    # a class label's line break or tab is shown escaped: it would split the row
    line = (f"{r['instance']:>6}  {aligned(plain_cell(str(r['actual'] or '?')), width)} "
            f"{aligned(plain_cell(str(r['predicted'])), width)}")
    if proba:
        line += "  " + " ".join(_number(p) for p in r[key].values())
    return line


def _indented(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "\n".join(pad + line for line in text.split("\n"))


def _summary(saved, ds, predictions, weights=None):  # type: ignore[no-untyped-def]
    """WEKA's evaluation summary of labelled predictions; the priors of its relative errors are the
    training data's class weights (model files before toolkit 0.2 do not hold them: no relative errors,
    as WEKA without a training file)."""
    from toolkit.evaluation.summary import EvaluationSummary

    train_weights = saved.meta.get("training", {}).get("class_weights")
    return EvaluationSummary(saved.classes, title="=== Error on test data ===").add(
        predictions.y_true, predictions.y_pred, predictions.proba, ds.weights if weights is None else weights,
        train_weights)


def _as_arff(saved, ds, predictions, proba: bool) -> str:  # type: ignore[no-untyped-def]
    """The input instances with their predictions. Unlabelled data (every class ?) gets the predicted class
    in its class column; labelled data keeps its true class, and the prediction comes as a nominal attribute
    ``predicted(CLASS)`` (as WEKA's AddClassification adds one): writing the predictions over the true labels
    lost them, and the file then scored 100 % against itself. Probability (or score) attributes follow. The
    new attributes go before the class when it is last, so that the file's class stays its last attribute."""
    import numpy as np

    from toolkit.data import arff
    from toolkit.data.dataset import Attribute

    result = ds.subset(np.arange(ds.n_instances))
    y_pred = predictions.y_pred.astype(np.int64)
    labelled = result.y is not None and bool((np.asarray(result.y) >= 0).any())
    extra: list = []
    columns: list = []
    if labelled:
        name = result.class_attribute.name if result.class_attribute is not None else "class"
        extra.append(Attribute(f"predicted({name})", "nominal", tuple(saved.classes)))
        columns.append(y_pred.astype(np.float64)[:, None])
    else:
        result.y = y_pred
    # without probabilities (liblinear-svm, cmls) the decision scores, labelled as such, as the other formats
    # show them (they were dropped without a word); a class the model never saw scores -Infinity
    values, label = ((predictions.proba, "p") if predictions.proba is not None else (predictions.scores, "score"))
    if proba and values is not None:
        extra += [Attribute(f"{label}({c})", "numeric") for c in saved.classes]
        columns.append(np.asarray(values, dtype=np.float64))
    if extra:
        attrs = list(result.attributes)
        # a name the data already has (an attribute p(yes), or two classes that differ in case only, as
        # ARFF names are compared) gets a suffix: the file was written and then refused as a duplicate
        taken = {a.name.lower() for a in attrs}
        for i, attribute in enumerate(extra):
            name, n = attribute.name, 2
            while name.lower() in taken:
                name, n = f"{attribute.name}_{n}", n + 1
            taken.add(name.lower())
            extra[i] = Attribute(name, attribute.kind, attribute.values)
        ci = result.class_index
        if ci is not None and ci == len(attrs) - 1:   # before a last class
            result.attributes = result.attributes[:ci] + extra + [attrs[ci]]
            result.class_index = ci + len(extra)
        else:
            result.attributes = result.attributes + extra
        block = np.hstack(columns)
        if result.is_sparse:
            import scipy.sparse as sp

            result.X = sp.hstack([result.X, sp.csr_matrix(block)], format="csr")
        else:
            result.X = np.hstack([result.X, block])
    return arff.to_text(result).rstrip("\n")


def register(app: typer.Typer) -> None:
    app.command("train")(train_command)
    app.command("predict")(predict_command)
