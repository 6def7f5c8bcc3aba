"""``toolkit.train`` and ``toolkit.predict``: fit once on a whole dataset, save, predict later."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from toolkit.config import LoadOptions
from toolkit.data.dataset import Dataset
from toolkit.errors import CapabilityError, ComponentFailed, ModelFileError, ParameterError, ToolkitError
from toolkit.evaluation.api import load_datasets
from toolkit.evaluation.harness import _tune
from toolkit.evaluation.resampling import Split, _split_head, ceil_share, check_seed
from toolkit.models.model_file import SavedModel, load_model, save_model
from toolkit.models.pipeline import FittedPipeline, Pipeline

__all__ = ["train", "predict", "predict_file", "prediction_rows"]


@contextlib.contextmanager
def _component_bugs(what: str) -> Iterator[None]:
    """An exception that is no ToolkitError, raised by a component, as one error naming the pipeline (a
    plugin's bug printed a traceback from train); TOOLKIT_DEBUG=1 keeps the traceback."""
    try:
        yield
    except (ToolkitError, MemoryError):
        raise
    except Exception as exc:
        from toolkit.config import debug_enabled

        if debug_enabled():
            raise
        raise ComponentFailed(f"{what}: {type(exc).__name__}: {str(exc)[:300]} (a bug in the component or its "
                              f"plugin; TOOLKIT_DEBUG=1 shows the traceback)") from exc


def train(dataset: Dataset | str | os.PathLike[str], classifier: Any, *, feature_selector: Any = None,
          text: Any = "auto", tune: bool = True, seed: int = 1, validation_fraction: float = 0.1,
          out: str | os.PathLike[str] | None = None, class_attribute: str | int | None = -1,
          scheduler: str | None = None, cluster: str | None = None, partition_bytes: int | None = None,
          notes: Any = None) -> FittedPipeline:
    """Fit a pipeline on the whole dataset; with a grid, tune it first on a validation part
    (the first ceil(10 %) of ``default_rng(seed).permutation(n)``, as the harness does). Saves to
    ``out`` when given. ``seed`` is a whole number >= 0 (None would tune on an unseeded split: another
    model at every call).

    With ``scheduler`` (``tcp://HOST:8786``) or ``cluster`` (``local:N``), the file is read by byte
    ranges on a Dask cluster and the classifier fitted from merged shard statistics
    (:func:`toolkit.models.partitioned.train_partitioned`; no tuning, no feature selection)."""
    check_seed(seed)   # before any work: a bad seed was a "bug in the component" once a grid was tuned
    ceil_share(1, validation_fraction)   # a fraction strictly between 0 and 1
    if out is not None and os.path.isdir(out):
        raise ModelFileError(f"{out}: is a folder; give the model file's path (e.g. model.tkm)")
    if scheduler or cluster:
        from toolkit.models.partitioned import DEFAULT_PARTITION_BYTES, train_partitioned

        if isinstance(dataset, Dataset):
            raise ParameterError("partitioned training reads a file: give its path, not a loaded dataset")
        return train_partitioned(dataset, classifier, scheduler=scheduler, cluster=cluster, out=out,
                                 class_attribute=class_attribute, tune=tune, feature_selector=feature_selector,
                                 text=text, partition_bytes=partition_bytes or DEFAULT_PARTITION_BYTES, notes=notes)
    (ds,) = load_datasets([dataset], LoadOptions(class_attribute=class_attribute), skip_unusable=False)
    pipeline = Pipeline(classifier, feature_selector=feature_selector, text=text, tune=tune)
    pipeline.check_untuned_grids()
    pipeline.validate_components()
    pipeline.check_data(ds)
    chosen: dict[str, Any] = {}
    with _component_bugs(f"{pipeline.name} failed while fitting {ds.name}"):
        if tune and len(pipeline.grid_points()) > 1:
            perm = np.random.default_rng(seed).permutation(ds.n_instances)
            validation, fit = _split_head(perm, ceil_share(ds.n_instances, validation_fraction), None)
            chosen, _trace = _tune(pipeline, ds, Split(0, seed, perm, np.zeros(0, np.int64), fit, validation), seed)
        fitted = pipeline.fit(ds, chosen, seed=seed)
    if out is not None:
        save_model(fitted, ds, out)
    return fitted


def predict_file(model: str | os.PathLike[str] | SavedModel, dataset: Dataset | str | os.PathLike[str], *,
                 allow_format_1: bool = False) -> tuple[SavedModel, Dataset, Any]:
    """Load a model file (unless given) and a dataset with its training header; return predictions.
    ``allow_format_1`` reads a file of model format 1 (toolkit 0.1), whose metadata no checksum covers."""
    saved = model if isinstance(model, SavedModel) else load_model(model, allow_format_1=allow_format_1)
    ds = saved.read(dataset)
    with _component_bugs(f"{saved.meta.get('pipeline', 'the model')} failed while predicting {ds.name}"):
        try:
            predictions = saved.fitted.predict(ds)   # read already: not renumbered and checked twice
        except CapabilityError as exc:   # what the data holds (an infinite value): the file is named
            raise CapabilityError(f"{ds.path or ds.name}: {exc}") from None
    return saved, ds, predictions


predict = predict_file


def prediction_rows(saved: SavedModel, predictions: Any, with_proba: bool, first: int = 1) -> list[dict[str, Any]]:
    """One dict per instance: index (from ``first``), actual label (or None), predicted label, probabilities."""
    classes = saved.classes
    rows = []
    for i, (actual, predicted) in enumerate(zip(predictions.y_true.tolist(), predictions.y_pred.tolist())):
        row: dict[str, Any] = {"instance": i + first, "actual": classes[actual] if actual >= 0 else None,
                               "predicted": classes[predicted]}
        if with_proba and predictions.proba is not None:
            row["probabilities"] = {c: float(p) for c, p in zip(classes, predictions.proba[i])}
        elif with_proba and predictions.scores is not None:  # a model without probabilities: its scores
            row["scores"] = {c: (float(s) if np.isfinite(s) else None) for c, s in zip(classes, predictions.scores[i])}
        rows.append(row)
    return rows
