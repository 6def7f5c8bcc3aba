"""The nested random-resampling cross-validation harness (thesis Algorithm 4, algorithms.md 5.1).

For every dataset, pipeline and outer split: tune the pipeline's grid on the training part only
(a fixed validation part, or inner k folds), keep the first grid point with the fewest validation
errors, refit on the whole training part, score the test part with every evaluator, and write the
record at once. The harness owns all resampling; components never see a test part while fitting.

Before the first repetition the whole experiment is checked (:func:`check_experiment`): every
component at every grid point is built and its parameters validated, every step's capabilities are
checked against every dataset, every split is made. A failure that only shows while running is
written as a ``failed`` record; the run then stops (:class:`RunFailed`, exit code 1) unless
``keep_going``.
"""

from __future__ import annotations

import concurrent.futures as cf
import gc
import multiprocessing
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from toolkit.config import compute_threads, process_ends, usable_cores
from toolkit.data.dataset import Dataset
from toolkit.errors import ParameterError, PluginError, ToolkitError
from toolkit.evaluation import experiment
from toolkit.evaluation.allocator import tune_allocator
from toolkit.evaluation.dispatch import RepetitionGroups
from toolkit.evaluation.resampling import MAX_REPETITIONS, Split, check_seed, random_splits, thesis_split
from toolkit.evaluation.results import RECORD_SCHEMA, Results, ResultsWriter, latest_records, record_key
from toolkit.evaluation.workers import die_with_parent
from toolkit.models.pipeline import Pipeline, gives_scores, refuse_undefined_scores
from toolkit.plugin_host.registry import ComponentSpec

__all__ = ["Protocol", "Task", "run", "check_experiment", "RunFailed", "DEFAULT_METRICS"]

DEFAULT_METRICS = ("error", "accuracy", "log-loss")

#: memory a finished record of a dataset of up to RECORD_CLASSES classes keeps until the run ends (without its
#: predictions), and what each further class adds to it (its training count: a float and its list slot; the
#: label list is shared by a dataset's records)
RECORD_BYTES = 3_000
RECORD_CLASSES = 20
CLASS_BYTES = 32


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
        if isinstance(self.repetitions, bool) or not isinstance(self.repetitions, int) or self.repetitions < 1:
            raise ParameterError(f"runs must be a whole number >= 1, not {self.repetitions!r}")
        if self.repetitions > MAX_REPETITIONS:
            raise ParameterError(f"runs must be at most {MAX_REPETITIONS:,} (a run keeps every repetition's record "
                                 f"in memory), not {self.repetitions:,}")
        for name in ("test_fraction", "validation_fraction"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
                raise ParameterError(f"{name.replace('_', ' ')} must be a number between 0 and 1, not {value!r}")
        if self.inner_folds is not None and (isinstance(self.inner_folds, bool) or not isinstance(self.inner_folds, int)
                                             or self.inner_folds < 2):
            raise ParameterError(f"inner folds must be a whole number >= 2, not {self.inner_folds!r}")
        check_seed(self.seed)
        # a numpy integer seed (accepted) is stored as an int: record keys hash the protocol as JSON, where
        # numpy.int64(1) became the string "1", so a resume with it redid every repetition under other keys
        # and the file then held each repetition twice (compare counted both)
        object.__setattr__(self, "seed", int(self.seed))
        if self.inner_folds is not None and self.validation_fraction != 0.1:
            raise ParameterError("--inner-folds tunes on folds of the training part, so --validation-fraction would be "
                                 "ignored: give one of them")
        if self.name == "fixed" and (self.repetitions != 10 or self.test_fraction != 0.1):
            changed = [o for o, v, d in (("--runs", self.repetitions, 10), ("--test-fraction", self.test_fraction, 0.1))
                       if v != d]
            raise ParameterError(f"a fixed test set is tested once, as given; {', '.join(changed)} would be ignored: "
                                 f"leave {'it' if len(changed) == 1 else 'them'} out")
        if self.name == "thesis":
            # the thesis protocol is one fixed split (java.util.Random(10), fold 9 tested, fold 0 validating):
            # the random protocol's options would be silently ignored
            defaults = {"repetitions": 10, "test_fraction": 0.1, "validation_fraction": 0.1, "seed": 1,
                        "stratified": False, "inner_folds": None}
            changed = [k for k, v in defaults.items() if getattr(self, k) != v]
            if changed:
                options = {"repetitions": "--runs", "test_fraction": "--test-fraction",
                           "validation_fraction": "--validation-fraction", "seed": "--seed",
                           "stratified": "--stratified", "inner_folds": "--inner-folds"}
                raise ParameterError(f"the thesis protocol is one fixed split (algorithms.md 5.1.3); "
                                     f"{', '.join(options[k] for k in changed)} would be ignored: leave "
                                     f"{'it' if len(changed) == 1 else 'them'} out")

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

    def splits(self, ds: Dataset, n_train: int | None = None) -> Sequence[Split]:
        n = ds.n_instances
        y = ds.y if self.stratified else None
        if self.name == "thesis":
            return [thesis_split(n, self.thesis_seed, self.folds, self.folds - 1)]
        if self.name == "fixed":
            assert n_train is not None
            # an empty test file gave an 'ok' record without an error rate, an empty training file failed
            # only once its repetition ran (exit 1, not 2)
            for part, size in (("training", n_train), ("test", n - n_train)):
                if size == 0:
                    raise ParameterError(f"the {part} set holds no instances")
            train_all = np.arange(n_train)
            perm = np.random.default_rng(self.seed).permutation(n_train)
            from toolkit.evaluation.resampling import _split_head, ceil_share, check_validation_share, kfold_parts

            check_validation_share(n_train, self.validation_fraction)
            n_val = ceil_share(n_train, self.validation_fraction)
            # one training instance is fitted and validated on itself, as in the random protocol (an empty fit
            # part failed every tuned repetition)
            validation, fit = (_split_head(perm, n_val, y[:n_train] if y is not None else None) if n_val < n_train
                               else (perm, perm))
            inner = kfold_parts(perm, self.inner_folds, y) if self.inner_folds else []
            return [Split(0, self.seed, train_all, np.arange(n_train, n), fit, validation, inner)]
        return random_splits(n, self.repetitions, self.seed, self.test_fraction, self.validation_fraction,
                             y=y, inner_folds=self.inner_folds)


@dataclass
class Task:
    """One repetition of one pipeline on one dataset; its split is made when it is asked for (``splits``: the
    dataset's splits, a sequence that may make them on demand)."""

    dataset_index: int
    pipeline_index: int
    splits: Sequence[Split]
    index: int
    key: str

    @property
    def split(self) -> Split:
        return self.splits[self.index]

    @property
    def train_size(self) -> int:
        size = getattr(self.splits, "train_size", None)
        return int(size) if size is not None else len(self.split.train)


def _largest_first(tasks: Sequence[Task], datasets: Sequence[Dataset]) -> list[Task]:
    """Tasks by decreasing cost estimate (training instances x attributes), stable among equals."""
    def cost(task: Task) -> int:
        return -task.train_size * max(1, len(datasets[task.dataset_index].attributes))

    return sorted(tasks, key=cost)


class RunFailed(ToolkitError):
    """A repetition failed while running (its record says why); the run stopped there."""

    exit_code = 1


class WorkerDied(ToolkitError):
    """A worker process of ``--jobs`` was killed (by the user, or by the kernel out of memory)."""

    exit_code = 1


def _versions() -> dict[str, str]:
    return experiment.environment()


def _plugin_versions(pipeline: Pipeline) -> dict[str, str | None]:
    out = {}
    for step in pipeline.steps:
        if step.spec is not None:
            out[step.name] = step.spec.distribution or step.spec.plugin
    return out


def _class_counts(ds: Dataset, rows: np.ndarray) -> list[float]:
    """Summed instance weights per class in a training part: the class priors of WEKA's evaluation
    summary (its relative errors)."""
    y = np.asarray(ds.y)[rows]
    known = y >= 0
    weights = np.asarray(ds.weights, dtype=np.float64)[rows][known]
    return np.bincount(y[known], weights=weights, minlength=len(ds.classes)).tolist()


def _split_fields(ds: Dataset, split: Split) -> dict[str, Any]:
    """What a record says of its split."""
    return {
        "repetition": split.repetition,
        "split_seed": split.seed,
        "n_train": int(len(split.train)),
        "n_test": int(len(split.test)),
        # the parts tuning used: with inner folds the first fold's (the others differ by one at most),
        # not the validation share's, which inner folds leave unused
        "n_fit": int(len(split.inner[0][0]) if split.inner else len(split.fit)),
        "n_validation": int(len(split.inner[0][1]) if split.inner else len(split.validation)),
        "train_class_counts": _class_counts(ds, split.train),
    }


#: the body's key for :func:`_split_fields`, made where the repetition ran (a ``--jobs`` parent would
#: otherwise make every split a second time); the record takes them into its header
_SPLIT_FIELDS = "_split_fields"


def _errors(pred_codes: np.ndarray, true_codes: np.ndarray) -> int:
    known = true_codes >= 0
    return int(np.sum(pred_codes[known] != true_codes[known]))


def _tune(pipeline: Pipeline, ds: Dataset, split: Split, seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """First grid point with the fewest validation errors (summed over the tuning parts)."""
    points = pipeline.grid_points()
    if len(points) <= 1:
        return (points[0] if points else {}), []
    errors = [0] * len(points)
    for fit_rows, val_rows in split.tuning_parts:
        fit_part, val_part = ds.subset(fit_rows), ds.subset(val_rows)
        for i, e in _grid_errors(pipeline, fit_part, val_part, points, seed):
            errors[i] += e
    trace = [{"params": params, "validation_errors": e} for params, e in zip(points, errors)]
    best = int(np.argmin(errors))  # the first of the fewest
    return dict(points[best]), trace


def _shared_keys(pipeline: Pipeline) -> set[str]:
    """Grid keys (``clf.NAME``) that the classifier scores from one fit (its ``grid_params``). None for a
    classifier predicted by its ``predict`` (no probabilities, no decision function of its own): the
    scores ``grid_decision_function`` yields would be those it does not have."""
    step = pipeline.classifier
    cls = step.spec.factory if step.spec is not None and isinstance(step.spec.factory, type) else type(step.obj)
    names = getattr(cls, "grid_params", ())
    if not names or not callable(getattr(cls, "grid_decision_function", None)):
        return set()
    if not gives_scores(cls, step.capabilities.probabilities):   # as FittedPipeline.predict decides
        return set()
    return {f"clf.{name}" for name in names}


def _grid_errors(pipeline: Pipeline, fit_part: Dataset, val_part: Dataset, points: list[dict[str, Any]],
                 seed: int) -> list[tuple[int, int]]:
    """(grid index, validation errors) of every point on one tuning part.

    Points that differ only in parameters the classifier scores from one fit form a group: the
    steps before the classifier are fitted once per group and the classifier's
    ``grid_decision_function`` scores the group's settings; every other point is refitted.
    """
    shared = _shared_keys(pipeline)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for i, params in enumerate(points):
        key = tuple(sorted((k, repr(v)) for k, v in params.items() if k not in shared))
        groups.setdefault(key, []).append(i)
    out: list[tuple[int, int]] = []
    for members in groups.values():
        if not shared or len(members) == 1:
            for i in members:
                pred = pipeline.fit(fit_part, points[i], seed=seed).predict(val_part, keep_model=False)
                out.append((i, _errors(pred.y_pred, pred.y_true)))
            continue
        fixed = {k: v for k, v in points[members[0]].items() if k not in shared}
        prepared = pipeline.prepare(fit_part, fixed, seed)
        settings = [{k[4:]: v for k, v in points[i].items() if k in shared} for i in members]
        clf = pipeline.classifier.build({**prepared.classifier_params, **settings[0]}, seed)
        X_val = prepared.fitted.transform(val_part)
        kwargs = prepared.fit_kwargs(clf)
        scores = iter(clf.grid_decision_function(prepared.X, prepared.y, X_val, settings,
                                                 sample_weight=kwargs.get("sample_weight"),
                                                 schema=kwargs.get("schema")))
        true = np.asarray(val_part.y, dtype=np.int64)
        given = 0
        for i, s in zip(members, scores):
            given += 1
            s = np.asarray(s, dtype=np.float64)
            if s.ndim == 1:  # a binary margin, as FittedPipeline.predict reads it
                s = np.column_stack([-s, s])
            refuse_undefined_scores(clf, s)    # as FittedPipeline.predict: NaN is a refusal, not a guess
            y_pred = np.asarray(clf.classes_, dtype=np.int64)[np.argmax(s, axis=1)]
            out.append((i, _errors(y_pred, true)))
        if given < len(members) or next(scores, None) is not None:   # else points left out kept 0 errors
            raise PluginError(f"{pipeline.classifier.name}: grid_decision_function gave "
                              f"{'fewer' if given < len(members) else 'more'} score arrays than the "
                              f"{len(members)} settings it was given")
    return out


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
        predictions["proba"] = pred.proba.tolist()  # full precision: summaries and ROC ties need it
    if store_proba and pred.scores is not None:
        # the decision scores too: the ranking metrics (ROC and PR areas of two classes, AP, break-even) rank
        # by their log-odds, which do not round to 0 or 1 as text posteriors do, so the probabilities alone
        # could not give the stored values back; for a model without probabilities (liblinear-svm, cmls)
        # they are all there is. A class the model never saw scores -inf, stored as null (JSON has no inf)
        scores = np.asarray(pred.scores, dtype=np.float64)
        predictions["scores"] = np.where(np.isfinite(scores), scores, None).tolist()
    if pred.weights is not None and np.any(np.asarray(pred.weights) != 1):  # instance weights, when not all 1
        predictions["weights"] = np.asarray(pred.weights, dtype=np.float64).tolist()
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


# state shared with worker processes (set before forking), one run's at a time: runs of one process in
# several threads take turns (``_FORKING``), or a run's workers would fork with another's tasks
_STATE: dict[str, Any] = {}
_FORKING = threading.Lock()

#: environment variables read by BLAS / OpenMP libraries that a worker loads after it starts
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                     "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


#: local worker processes at most (each is a forked copy of the run; more would only thrash)
MAX_JOBS = 1024


_usable_cores = usable_cores   # a module name of its own: tests set the cores the workers share


def _threads_per_worker(jobs: int) -> int:
    """The cores this process may use, shared out over ``jobs`` workers (at least 1 thread each), and never
    above the user's own OMP_NUM_THREADS (the workers set it to this share, which ``compute_threads`` reads)."""
    return max(1, min(_usable_cores() // max(1, jobs), compute_threads()))


def _init_worker(threads: int) -> None:
    """Worker start-up: the worker dies with its parent (a kill -9 of the run leaves no orphan), and BLAS
    and OpenMP thread pools are capped so that N workers do not oversubscribe the cores.

    The pools of libraries already loaded (numpy's and scipy's OpenBLAS, loaded before the fork) no
    longer read environment variables: :func:`forked_pool` caps them in the parent before the fork, and
    only a pool still above the cap is set here (setting OpenBLAS's count in a forked child re-creates the
    thread pool that the fork shut down, and its new threads spin ~0.1 s each beside the worker's own
    work). The variables cover libraries the worker loads later.
    """
    global _FORKING
    _FORKING = threading.Lock()   # the parent's is held while it forks: a run inside this worker would wait forever
    die_with_parent()
    for name in _THREAD_VARIABLES:
        os.environ[name] = str(threads)
    _lower_thread_pools(threads)
    # the objects inherited from the parent stay out of this worker's garbage collections, which would
    # otherwise touch (and so copy) every page that holds one
    gc.freeze()


def _lower_thread_pools(threads: int) -> list[tuple[Any, int]]:
    """Cap this process's BLAS/OpenMP pools above ``threads`` at it (a limit already lower, the user's,
    stays); returns (pool, its former count) of those changed."""
    from threadpoolctl import ThreadpoolController

    lowered = [(library, library.num_threads) for library in ThreadpoolController().lib_controllers
               if library.num_threads > threads]
    for library, _ in lowered:
        library.set_num_threads(threads)
    return lowered


@contextmanager
def forked_pool(jobs: int) -> Iterator[cf.ProcessPoolExecutor]:
    """A pool of ``jobs`` forked workers, each with its share of the cores for BLAS and OpenMP.

    The share is set in this process for the pool's life, so the workers inherit it at the fork (see
    :func:`_init_worker`); other threads of this process computing meanwhile are capped too. A library
    already limited lower keeps its limit. This process's own limits come back when the pool is shut
    down: the fork shut OpenBLAS's thread pool down, so that re-creates its threads, which spin about
    0.1 s (some 0.2 CPU-seconds on 2 cores) before they sleep. That cost falls once per run, after it,
    where setting the cap in each worker paid it in every worker, during the run; a process that ends with
    its command (the console script, ``config.process_ends``) keeps the cap and skips it.
    """
    threads = _threads_per_worker(jobs)
    lowered = _lower_thread_pools(threads)
    try:
        pool = cf.ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
                                      initializer=_init_worker, initargs=(threads,))
        try:
            # a fork pool starts every worker at its first task: with Ctrl-C (SIGINT) blocked in this thread,
            # which the workers inherit. A terminal sends Ctrl-C to the whole process group; a worker
            # interrupted inside the result queue's put kept its lock, and the run hung for good
            # (killing the workers instead hangs the pool's own thread on a result cut in the middle). After a
            # Ctrl-C the parent waits for the groups running to end, as after any failure
            with _interrupts_blocked():
                pool.submit(int).result()
            yield pool
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # on a failure: the groups not started are dropped
    finally:
        # a process that ends with its command (config.process_ends: the console script) keeps the cap:
        # giving the threads back re-creates OpenBLAS threads that spin ~0.1 s beside its last steps
        for library, count in ([] if process_ends() else lowered):
            library.set_num_threads(count)


@contextmanager
def _interrupts_blocked() -> Iterator[None]:
    """SIGINT blocked in this thread meanwhile (a SIGINT that comes is delivered when it ends)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _run_tasks_at(indices: Sequence[int]) -> list[dict[str, Any]]:
    """Run these tasks of the run (positions in its order); the tasks (and their splits) came with the
    fork, so only the positions travel to the worker."""
    return [_run_task(_STATE["tasks"][i]) for i in indices]


def _run_on_workers(order: Sequence[Task], jobs: int, finish: Callable[[Task, dict[str, Any]], None]) -> None:
    """Run ``order`` (largest first) on ``jobs`` forked workers, two groups in flight per worker so that
    none waits for the parent; ``finish`` gets each record as its group comes back."""
    groups = RepetitionGroups([(t.dataset_index, t.pipeline_index) for t in order], [t.pipeline_index for t in order],
                              workers=jobs)
    in_flight: dict[cf.Future[list[dict[str, Any]]], list[int]] = {}
    with forked_pool(jobs) as pool:
        def refill() -> None:
            while groups and len(in_flight) < 2 * jobs:
                group = groups.next()
                in_flight[pool.submit(_run_tasks_at, group)] = group

        refill()
        while in_flight:
            done, _ = cf.wait(in_flight, return_when=cf.FIRST_COMPLETED)
            for future in done:
                group = in_flight.pop(future)
                for i, body in zip(group, future.result()):
                    timing = body.get("timing", {})
                    groups.learn(i, sum(timing.get(k, 0.0) for k in ("tune_seconds", "fit_seconds",
                                                                    "predict_seconds")))
                    finish(order[i], body)
            refill()


def _run_task(task: Task) -> dict[str, Any]:
    ds = _STATE["datasets"][task.dataset_index]
    pipeline = _STATE["pipelines"][task.pipeline_index]
    evaluators = _STATE["evaluators"]
    return _execute(ds, pipeline, task, evaluators, _STATE["store_proba"])


def _execute(ds: Dataset, pipeline: Pipeline, task: Task, evaluators: Sequence[ComponentSpec],
             store_proba: bool) -> dict[str, Any]:
    split = task.split
    try:
        body = _evaluate_task(ds, pipeline, split, evaluators, store_proba)
        body["status"] = "ok"
    except ToolkitError as exc:  # what this training part cannot do (e.g. a class absent from it)
        body = {"status": "failed", "error": str(exc), "error_kind": type(exc).__name__, "timing": {}}
    except Exception as exc:  # a plugin bug: recorded with its traceback
        body = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "error_kind": "bug",
                "traceback": traceback.format_exc(limit=8), "timing": {}}
    body["timing"]["finished_utc"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    body[_SPLIT_FIELDS] = _split_fields(ds, split)
    return body


def check_experiment(datasets: Sequence[Dataset], pipelines: Sequence[Pipeline], protocol: Protocol,
                     evaluators: Sequence[ComponentSpec], n_trains: Sequence[int | None] | None = None
                     ) -> list[list[Split]]:
    """Everything that can be known before the first repetition, checked at once: each component at
    each grid point (names, parameter types and ranges), each evaluator against each classifier, each
    step's capabilities against each dataset, and each dataset's splits. The first problem raises,
    naming the dataset and the component. Returns each dataset's splits (the run uses them)."""
    for pipeline in pipelines:
        pipeline.validate_components()
        pipeline.check_evaluators(list(evaluators))
    _check_dataset_names(datasets)
    for evaluator in evaluators:
        limit = getattr(evaluator, "max_classes", None)
        wide = [ds for ds in datasets if limit is not None and len(ds.classes) > limit]
        if wide:
            raise ParameterError(f"{wide[0].name}: {len(wide[0].classes):,} classes are more than evaluator "
                                 f"'{evaluator.name}' takes ({limit:,}: its value has K x K cells); leave it out")
    per_dataset = 1 if protocol.name != "random" else protocol.repetitions
    total = len(pipelines) * per_dataset * len(datasets)
    if total > MAX_REPETITIONS:
        raise ParameterError(f"{total:,} repetitions in all (runs x datasets x classifiers) are more than one run "
                             f"keeps in memory ({MAX_REPETITIONS:,}): run the experiment in parts, e.g. a dataset "
                             f"or a classifier per run with its own --out, and report the files together")
    # a record also holds its training part's count of every class (CLASS_BYTES each): 10,000 classes make a
    # record of 300 kB, not 3 kB, and a run that passed the count above could need terabytes
    held = sum(len(pipelines) * per_dataset * (RECORD_BYTES + CLASS_BYTES * max(0, len(ds.classes) - RECORD_CLASSES)) for ds in datasets)
    if held > MAX_REPETITIONS * RECORD_BYTES:
        widest = max(datasets, key=lambda ds: len(ds.classes))
        raise ParameterError(f"{total:,} repetitions of records with up to {len(widest.classes):,} class counts "
                             f"('{widest.name}') would hold about {held / 1e9:.1f} GB until the run ends (at most "
                             f"{MAX_REPETITIONS * RECORD_BYTES / 1e9:.1f} GB): run fewer repetitions, or the "
                             f"experiment in parts, each with its own --out")
    all_splits: list[Sequence[Split]] = []
    for d, ds in enumerate(datasets):
        try:
            all_splits.append(protocol.splits(ds, None if n_trains is None else n_trains[d]))
        except ToolkitError as exc:
            raise type(exc)(f"{ds.name}: {exc}") from None
        for pipeline in pipelines:
            try:
                pipeline.check_data(ds)
            except ToolkitError as exc:
                text = str(exc)
                raise type(exc)(text if text.startswith(ds.name) else f"{ds.name}: {text}") from None
    return all_splits


def _check_dataset_names(datasets: Sequence[Dataset]) -> None:
    """Records are keyed by dataset name: two datasets of one name would be pooled into one row."""
    first: dict[str, Dataset] = {}
    for ds in datasets:
        other = first.setdefault(ds.name, ds)
        if other is ds:
            continue
        if other.path and ds.path and str(other.path) != str(ds.path):
            where = f" ({other.path} and {ds.path})"
            fix = "rename one of the files"
        else:
            where, fix = "", "give each dataset once"
        raise ParameterError(f"dataset name '{ds.name}' is given twice{where}; its results would be mixed up: {fix}")


def _check_same_content(datasets: Sequence[Dataset], identities: Sequence[str]) -> None:
    """Records are keyed by the data's content (a renamed file resumes its results): two files of the
    same content and class would give the same keys, and one of them would silently lose its results."""
    first: dict[str, Dataset] = {}
    for ds, identity in zip(datasets, identities):
        other = first.setdefault(identity, ds)
        if other is not ds:
            where = f" ({other.path} and {ds.path})" if other.path and ds.path else ""
            raise ParameterError(f"datasets '{other.name}' and '{ds.name}' hold the same data{where}; their results "
                                 f"could not be told apart: give the data once")


def _configure_plugins(protocol: Protocol, jobs: int, out: str | None) -> None:
    """Broadcast the run's configuration to plugins (the historic ``toolkit_configure`` hook)."""
    from pathlib import Path

    from toolkit.config import RunConfig, debug_enabled
    from toolkit.plugin_host.manager import default_manager

    folder = Path(out).resolve().parent if out else Path.cwd()
    config = RunConfig(seed=protocol.seed, n_jobs=jobs, output_dir=folder, debug=debug_enabled())
    default_manager().hook.toolkit_configure.call_historic(kwargs={"config": config})


def run(datasets: Sequence[Dataset], pipelines: Sequence[Pipeline], protocol: Protocol,
        evaluators: Sequence[ComponentSpec], *, out: str | None = None, resume: bool = False, jobs: int = 1,
        store_proba: bool = False, progress: Callable[[int, int, str], None] | None = None,
        test_datasets: Sequence[Dataset] | None = None, keep_going: bool = False,
        notes: Callable[[str], None] | None = None, cluster: Any = None, keep_predictions: bool = True) -> Results:
    """Evaluate every pipeline on every dataset; returns all records (including earlier ones on resume).
    ``keep_predictions=False`` keeps the returned records without their test predictions (the results
    file has them): a long run then holds about a kilobyte a repetition, not the test part's lists.

    The experiment is checked as a whole first, before any results file is touched. ``progress(done,
    total, what)`` is called once before the first repetition (done = 0) and after each; ``notes``
    receives what a resumed run adds and skips. A failed repetition is recorded; unless ``keep_going``
    the run then stops with :class:`RunFailed`. ``cluster`` (a
    :class:`toolkit.evaluation.distributed.ClusterSpec`) runs the repetitions on Dask workers instead of
    ``jobs`` local processes; the records are the same.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= MAX_JOBS:
        raise ParameterError(f"jobs must be a whole number from 1 to {MAX_JOBS}, not {jobs!r}")
    if protocol.name == "fixed" and (test_datasets is None or len(test_datasets) != len(datasets)):
        raise ParameterError("the fixed protocol needs one test dataset per training dataset")
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
    all_splits = check_experiment(prepared, pipelines, protocol, evaluators, n_trains)
    protocol_desc = protocol.describe()
    versions = _versions()
    plugin_versions: dict[str, str] = {}
    for pipeline in pipelines:
        for value in _plugin_versions(pipeline).values():
            if isinstance(value, str) and " " in value:
                dist, _, version = value.rpartition(" ")
                plugin_versions[dist] = version
    shas = [ds.sha256 or ds.content_sha256() for ds in prepared]
    classes = [ds.class_attribute.name if ds.class_attribute is not None else None for ds in prepared]
    identities = [sha if ds.class_index is None or ds.class_index == len(ds.attributes) - 1 else f"{sha}|class={c}"
                  for ds, sha, c in zip(prepared, shas, classes)]
    _check_same_content(prepared, identities)
    statement = experiment.statement(protocol_desc, [{"name": ds.name, "sha256": sha, "class": c}
                                                     for ds, sha, c in zip(prepared, shas, classes)],
                                     [p.name for p in pipelines], [ev.name for ev in evaluators],
                                     {**versions, "plugins": plugin_versions},
                                     {p.name: p.describe() for p in pipelines})
    if cluster is not None and cluster.address:   # before the results file is made: a run that cannot start
        from toolkit.evaluation.distributed import _probe_scheduler   # leaves no file that --resume must name

        _probe_scheduler(cluster.address)
    _configure_plugins(protocol, jobs, out)
    writer = ResultsWriter(out, resume=resume, experiment=statement)
    records: list[dict[str, Any]] = list(writer.previous if keep_predictions else
                                         ({k: v for k, v in r.items() if k != "predictions"} for r in writer.previous))
    tasks: list[Task] = []
    n_all = 0
    descriptions = [pipeline.describe() for pipeline in pipelines]
    for d, ds in enumerate(prepared):
        # a class attribute other than the last is another task on the same file: its records get other keys
        # (the last one's keys are those of files written before the class was part of the identity)
        identity = identities[d]
        splits = all_splits[d]
        for p in range(len(pipelines)):
            for r in range(len(splits)):   # a split's repetition is its position (made when its task runs)
                key = record_key(identity, descriptions[p], protocol_desc, r)
                n_all += 1
                if key not in writer.done:
                    tasks.append(Task(d, p, splits, r, key))

    class_lists = [list(ds.classes) for ds in prepared]   # one label list per dataset, shared by its records

    def header(task: Task, about_split: dict[str, Any] | None) -> dict[str, Any]:
        """What a record says of its dataset, pipeline and split (made as its repetition finishes, so
        that --jobs workers start sooner; the split's part comes with the body when the repetition ran)."""
        ds = prepared[task.dataset_index]
        return {
            "schema": RECORD_SCHEMA,
            "key": task.key,
            "dataset": {"name": ds.name, "path": ds.path, "sha256": shas[task.dataset_index],
                        "n_instances": ds.n_instances, "n_classes": len(ds.classes), "classes": class_lists[task.dataset_index],
                        "relation": ds.relation},
            "pipeline": descriptions[task.pipeline_index],
            "protocol": protocol_desc,
            **(about_split if about_split is not None else _split_fields(ds, task.split)),
            "env": {**versions, "plugins": _plugin_versions(pipelines[task.pipeline_index])},
        }

    if notes is not None:
        for note in writer.notes:
            notes(note)
        if resume and out is not None and writer.previous:
            notes(f"{out}: {n_all - len(tasks)} of {n_all} repetitions already done, running {len(tasks)}")
    total = len(tasks)
    done = 0

    def label(task: Task) -> str:
        return f"{prepared[task.dataset_index].name} / {pipelines[task.pipeline_index].name}"

    def finish(task: Task, body: dict[str, Any]) -> None:
        nonlocal done
        about_split = body.pop(_SPLIT_FIELDS, None)
        record = {**header(task, about_split), **body}
        writer.write(record)
        records.append(record if keep_predictions else {k: v for k, v in record.items() if k != "predictions"})
        done += 1
        if progress is not None:
            progress(done, total, label(task))
        if record["status"] != "ok" and not keep_going:
            where = f"; finished results are in {out} (--resume continues)" if out else ""
            raise RunFailed(f"{label(task)} (repetition {record['repetition']}) failed: {record['error']}{where}; "
                            f"--keep-going runs past failures")

    if progress is not None and tasks:
        progress(0, total, label(tasks[0]))
    if tasks and cluster is None:
        tune_allocator()  # here and in the forked workers: freed arrays stay mapped for the next repetition
    try:
        if cluster is not None and tasks:
            from toolkit.evaluation.distributed import dask_client, submit_tasks

            with dask_client(cluster) as client:
                # largest first as with --jobs: Dask runs independent tasks in submission order
                submit_tasks(client, prepared, pipelines, _largest_first(tasks, prepared), evaluators, store_proba,
                             finish, _execute, notes)
        elif jobs <= 1 or total <= 1:
            for task in tasks:
                finish(task, _execute(prepared[task.dataset_index], pipelines[task.pipeline_index], task,
                                      evaluators, store_proba))
        else:
            # the largest first (longest-processing-time order): the run does not end waiting for one big
            # repetition that started last
            order = _largest_first(tasks, prepared)
            with _FORKING:   # the workers fork with this run's state; another run's waits (each uses every core)
                _STATE.update(datasets=prepared, pipelines=list(pipelines), evaluators=list(evaluators),
                              store_proba=store_proba, tasks=order)
                try:
                    # a forked pool starts all of its workers at once: no more than the repetitions, and no
                    # more than 4 per core (each holds a copy of its working memory; more would only thrash)
                    _run_on_workers(order, min(jobs, total, 4 * _usable_cores()), finish)
                except BrokenProcessPool:
                    where = (f"the {done} repetitions finished are in {out}: run the same command with --resume "
                             f"to finish" if out else "run again (--out F keeps each finished repetition)")
                    raise WorkerDied(f"a worker process of --jobs {jobs} died (killed, or out of memory) after "
                                     f"{done} of {total} repetitions; {where}") from None
                finally:
                    _STATE.clear()
    finally:
        writer.close()
    # a resumed file may hold a failed record of a task retried now, or a record written twice: the last of
    # each key, as compare and report read the file
    return Results(latest_records(records), writer.file_experiment or statement,
                   sources=[os.fspath(out)] if out is not None else [])
