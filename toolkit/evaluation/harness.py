"""The nested random-resampling cross-validation harness (thesis Algorithm 4, algorithms.md 5.1).

For every dataset, pipeline and outer split: tune the pipeline's grid on the training part only
(a fixed validation part, or inner k folds), keep the first grid point with the fewest validation
errors, refit on the whole training part, score the test part with every evaluator, and write the
record at once. The harness owns all resampling; components never see a test part while fitting.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import platform
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from toolkit.data.dataset import Dataset
from toolkit.errors import ParameterError, ToolkitError
from toolkit.evaluation.resampling import Split, random_splits, thesis_split
from toolkit.evaluation.results import RECORD_SCHEMA, Results, ResultsWriter, record_key
from toolkit.models.pipeline import Pipeline
from toolkit.plugin_host.registry import ComponentSpec

__all__ = ["Protocol", "Task", "run", "DEFAULT_METRICS"]

DEFAULT_METRICS = ("error", "accuracy", "log-loss")


@dataclass(frozen=True)
class Protocol:
    """How the outer splits and the tuning parts are made.

    ``name="random"`` is algorithms.md 5.1.2 (R repetitions, seeds ``seed .. seed+R-1``);
    ``name="thesis"`` is the thesis-compatibility protocol 5.1.3 (one reported fold);
    ``name="fixed"`` uses a given test dataset once (e.g. 20 Newsgroups bydate).
    """

    name: str = "random"
    repetitions: int = 10
    test_fraction: float = 0.1
    validation_fraction: float = 0.1
    seed: int = 1
    stratified: bool = False
    inner_folds: int | None = None
    thesis_seed: int = 10
    folds: int = 10

    def __post_init__(self) -> None:
        if self.name not in ("random", "thesis", "fixed"):
            raise ParameterError(f"protocol must be 'random', 'thesis' or 'fixed', not '{self.name}'")

    def describe(self) -> dict[str, Any]:
        if self.name == "thesis":
            return {"name": "thesis", "seed": self.thesis_seed, "folds": self.folds, "reported_fold": self.folds - 1}
        data = asdict(self)
        for key in ("thesis_seed", "folds"):
            data.pop(key)
        if self.name == "fixed":
            data.pop("repetitions")
            data.pop("test_fraction")
        return data

    def splits(self, ds: Dataset, n_train: int | None = None) -> list[Split]:
        n = ds.n_instances
        y = ds.y if self.stratified else None
        if self.name == "thesis":
            return [thesis_split(n, self.thesis_seed, self.folds, self.folds - 1)]
        if self.name == "fixed":
            assert n_train is not None
            train_all = np.arange(n_train)
            perm = np.random.default_rng(self.seed).permutation(n_train)
            from toolkit.evaluation.resampling import _split_head, ceil_share, kfold_parts

            n_val = ceil_share(n_train, self.validation_fraction)
            validation, fit = _split_head(perm, n_val, y[:n_train] if y is not None else None)
            inner = kfold_parts(perm, self.inner_folds, y) if self.inner_folds else []
            return [Split(0, self.seed, train_all, np.arange(n_train, n), fit, validation, inner)]
        return random_splits(n, self.repetitions, self.seed, self.test_fraction, self.validation_fraction,
                             y=y, inner_folds=self.inner_folds)


@dataclass
class Task:
    dataset_index: int
    pipeline_index: int
    split: Split
    key: str


def _versions() -> dict[str, str]:
    import numpy
    import scipy

    from toolkit import __version__

    return {"toolkit": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
            "scipy": scipy.__version__}


def _plugin_versions(pipeline: Pipeline) -> dict[str, str | None]:
    out = {}
    for step in pipeline.steps:
        if step.spec is not None:
            out[step.name] = step.spec.distribution or step.spec.plugin
    return out


def _errors(pred_codes: np.ndarray, true_codes: np.ndarray) -> int:
    known = true_codes >= 0
    return int(np.sum(pred_codes[known] != true_codes[known]))


def _tune(pipeline: Pipeline, ds: Dataset, split: Split, seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """First grid point with the fewest validation errors (summed over the tuning parts)."""
    points = pipeline.grid_points()
    if len(points) <= 1:
        return (points[0] if points else {}), []
    trace = []
    best: dict[str, Any] | None = None
    best_errors = None
    parts = split.tuning_parts
    for params in points:
        errors = 0
        for fit_rows, val_rows in parts:
            fitted = pipeline.fit(ds.subset(fit_rows), params, seed=seed)
            pred = fitted.predict(ds.subset(val_rows), keep_model=False)
            errors += _errors(pred.y_pred, pred.y_true)
        trace.append({"params": params, "validation_errors": errors})
        if best_errors is None or errors < best_errors:
            best, best_errors = params, errors
    return dict(best or {}), trace


def _evaluate_task(ds: Dataset, pipeline: Pipeline, split: Split, evaluators: Sequence[ComponentSpec],
                   store_proba: bool) -> dict[str, Any]:
    seed = split.seed
    t0 = time.perf_counter()
    chosen, trace = _tune(pipeline, ds, split, seed)
    t1 = time.perf_counter()
    fitted = pipeline.fit(ds.subset(split.train), chosen, seed=seed)
    t2 = time.perf_counter()
    test = ds.subset(split.test)
    pred = fitted.predict(test)
    t3 = time.perf_counter()
    metrics: dict[str, Any] = {"errors": _errors(pred.y_pred, pred.y_true),
                               "n_evaluated": int(np.sum(pred.y_true >= 0))}
    for ev in evaluators:
        func = ev.create()
        metrics[ev.name] = func(pred)
    predictions: dict[str, Any] = {"test_index": split.test.tolist(), "y_true": pred.y_true.tolist(),
                                   "y_pred": pred.y_pred.tolist()}
    if store_proba and pred.proba is not None:
        predictions["proba"] = np.round(pred.proba, 10).tolist()
    extra = {}
    if fitted.selected_rows is not None:
        extra["n_selected_examples"] = int(len(fitted.selected_rows))
    if fitted.support is not None:
        extra["n_selected_features"] = int(len(fitted.support))
    return {
        "chosen_params": chosen,
        "tuning": trace,
        "metrics": metrics,
        "predictions": predictions,
        "extra": extra,
        "timing": {"tune_seconds": t1 - t0, "fit_seconds": t2 - t1, "predict_seconds": t3 - t2},
    }


# state shared with worker processes (set before forking)
_STATE: dict[str, Any] = {}


def _run_task(task: Task) -> dict[str, Any]:
    ds = _STATE["datasets"][task.dataset_index]
    pipeline = _STATE["pipelines"][task.pipeline_index]
    evaluators = _STATE["evaluators"]
    return _execute(ds, pipeline, task, evaluators, _STATE["store_proba"])


def _execute(ds: Dataset, pipeline: Pipeline, task: Task, evaluators: Sequence[ComponentSpec],
             store_proba: bool) -> dict[str, Any]:
    try:
        body = _evaluate_task(ds, pipeline, task.split, evaluators, store_proba)
        body["status"] = "ok"
    except ToolkitError as exc:
        body = {"status": "skipped", "error": str(exc), "timing": {}}
    except Exception as exc:  # a plugin bug: keep going, report it, exit 1 at the end
        body = {"status": "failed", "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=8), "timing": {}}
    body["timing"]["finished_utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return body


def _configure_plugins(protocol: Protocol, jobs: int, out: str | None) -> None:
    """Broadcast the run's configuration to plugins (the historic ``toolkit_configure`` hook)."""
    from pathlib import Path

    from toolkit.config import RunConfig
    from toolkit.plugin_host.manager import default_manager

    folder = Path(out).resolve().parent if out else Path.cwd()
    config = RunConfig(seed=protocol.seed, n_jobs=jobs, output_dir=folder)
    default_manager().hook.toolkit_configure.call_historic(kwargs={"config": config})


def run(datasets: Sequence[Dataset], pipelines: Sequence[Pipeline], protocol: Protocol,
        evaluators: Sequence[ComponentSpec], *, out: str | None = None, resume: bool = False, jobs: int = 1,
        store_proba: bool = False, progress: Callable[[int, int, str], None] | None = None,
        test_datasets: Sequence[Dataset] | None = None) -> Results:
    """Evaluate every pipeline on every dataset; returns all records (including earlier ones on resume)."""
    if protocol.name == "fixed" and (test_datasets is None or len(test_datasets) != len(datasets)):
        raise ParameterError("the fixed protocol needs one test dataset per training dataset")
    for pipeline in pipelines:
        pipeline.check_evaluators(list(evaluators))
    prepared: list[Dataset] = []
    n_trains: list[int | None] = []
    for i, ds in enumerate(datasets):
        ds.require_nominal_class()
        if protocol.name == "fixed":
            assert test_datasets is not None
            n_trains.append(ds.n_instances)
            merged = ds.concat(test_datasets[i])
            merged.sha256 = f"{ds.sha256 or ds.content_sha256()}+{test_datasets[i].sha256}"
            merged.path = ds.path
            prepared.append(merged)
        else:
            n_trains.append(None)
            prepared.append(ds)
    _configure_plugins(protocol, jobs, out)
    writer = ResultsWriter(out, resume=resume)
    records: list[dict[str, Any]] = list(writer.previous)
    tasks: list[Task] = []
    headers: dict[str, dict[str, Any]] = {}
    protocol_desc = protocol.describe()
    versions = _versions()
    for d, ds in enumerate(prepared):
        splits = protocol.splits(ds, n_trains[d])
        sha = ds.sha256 or ds.content_sha256()
        for p, pipeline in enumerate(pipelines):
            desc = pipeline.describe()
            for split in splits:
                key = record_key(sha, desc, protocol_desc, split.repetition)
                if key in writer.done:
                    continue
                tasks.append(Task(d, p, split, key))
                headers[key] = {
                    "schema": RECORD_SCHEMA,
                    "key": key,
                    "dataset": {"name": ds.name, "path": ds.path, "sha256": sha, "n_instances": ds.n_instances,
                                "n_classes": len(ds.classes), "relation": ds.relation},
                    "pipeline": desc,
                    "protocol": protocol_desc,
                    "repetition": split.repetition,
                    "split_seed": split.seed,
                    "n_train": int(len(split.train)),
                    "n_test": int(len(split.test)),
                    "n_fit": int(len(split.fit)),
                    "n_validation": int(len(split.validation)),
                    "env": {**versions, "plugins": _plugin_versions(pipeline)},
                }
    total = len(tasks)
    done = 0

    def finish(task: Task, body: dict[str, Any]) -> None:
        nonlocal done
        record = {**headers[task.key], **body}
        writer.write(record)
        records.append(record)
        done += 1
        if progress is not None:
            progress(done, total, f"{record['dataset']['name']} / {record['pipeline']['name']}")

    try:
        if jobs <= 1 or total <= 1:
            for task in tasks:
                finish(task, _execute(prepared[task.dataset_index], pipelines[task.pipeline_index], task,
                                      evaluators, store_proba))
        else:
            _STATE.update(datasets=prepared, pipelines=list(pipelines), evaluators=list(evaluators),
                          store_proba=store_proba)
            context = multiprocessing.get_context("fork")
            with cf.ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                futures = {pool.submit(_run_task, task): task for task in tasks}
                try:
                    for future in cf.as_completed(futures):
                        finish(futures[future], future.result())
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
    finally:
        writer.close()
        _STATE.clear()
    return Results(records)
