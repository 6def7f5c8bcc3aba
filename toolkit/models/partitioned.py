"""Training and prediction from a partitioned ARFF file on a Dask cluster.

``toolkit train BIG.arff -c nb-multinomial --scheduler tcp://HOST:8786`` (or ``--cluster local:N``): the
client reads the header, splits the data section into byte ranges (:func:`toolkit.data.arff.split_ranges`)
and submits one task per range. Each worker reads its range from the path (:func:`read_range`; the file
must be on a filesystem every worker sees, which is checked first) and returns the classifier's shard
statistics (the protocol of :mod:`toolkit.api`), without the schema; Dask merges them in a tree of merge
tasks and the client fits the model from the merged statistics and writes the model file. A classifier
that needs a global quantity first (TW-L's document frequencies) takes one such round per pass. A
worker holds one range and a few statistics at a time: its memory is bounded by the range size, never
by the file.

``toolkit predict MODEL BIG.arff --scheduler ...`` sends the model file's bytes to the workers once,
scores each range on a worker and hands the predictions back in file order.

Scheduling, retries (the range of a worker that dies is read again by another) and data movement are
Dask's; what goes over the network per task is the range's offsets and the classifier's parameters out,
and the statistics (or the predictions) back.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolkit.api import Predictions, Schema, SufficientStatistics, statistics_support
from toolkit.data.dataset import Dataset
from toolkit.errors import CapabilityError, ParameterError, ToolkitError
from toolkit.evaluation.distributed import _worker_versions, dask_client, parse_cluster
from toolkit.models.model_file import SavedModel, load_model, save_model
from toolkit.models.pipeline import FittedPipeline, Pipeline, _check_capabilities

__all__ = ["train_partitioned", "predict_partitioned", "partition_file", "DEFAULT_PARTITION_BYTES", "Partitions",
           "reduce_statistics"]

#: Bytes of ARFF text per task unless told otherwise: a few hundred MB of memory on the worker for sparse
#: word counts, and enough tasks to keep every worker busy on files of a few GB.
DEFAULT_PARTITION_BYTES = 64 << 20
#: How many statistics one merge task adds up.
SPLIT_EVERY = 8


@dataclass(frozen=True)
class Partitions:
    """A file's byte ranges and its header (a dataset of 0 rows with the file's attributes)."""

    path: str
    size: int
    ranges: list[tuple[int, int]]
    header: Dataset


#: bounds of :func:`partition_file`'s ranges, whatever size is asked for
MIN_PART_BYTES = 256
MAX_PARTS = 100_000


def partition_file(path: str | os.PathLike[str], *, class_attribute: Any = -1,
                   partition_bytes: int = DEFAULT_PARTITION_BYTES, min_parts: int = 1) -> Partitions:
    """Read the header of ``path`` and cut its data section into ranges of about ``partition_bytes``."""
    from toolkit.data import arff, is_gzip_name

    from toolkit.loading import resolve_dataset

    if partition_bytes < 1:
        raise ParameterError(f"the partition size must be at least 1 byte, not {partition_bytes}")
    if not os.path.isfile(path):
        path = resolve_dataset(path)   # a bundled name (iris), as a local train takes it; else its error
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise ToolkitError(f"{path}: no such file (partitioned training and prediction read an ARFF file)")
    if is_gzip_name(path):
        raise ToolkitError(f"{path}: a compressed file cannot be split into byte ranges (each range would "
                           f"decompress it from the start); decompress it first (gunzip -k)")
    header = arff.read_range(path, 0, 0, class_attribute=class_attribute)
    size = os.path.getsize(path)
    # at most MAX_PARTS ranges of at least MIN_PART_BYTES: 1e-300 MiB cut a file into 1-byte ranges, a task
    # each, and ran out of memory before the first one
    parts = math.ceil(max(size, 1) / max(partition_bytes, MIN_PART_BYTES))
    parts = max(int(min_parts), min(parts, MAX_PARTS))
    return Partitions(path, size, arff.split_ranges(path, parts), header)


# ----------------------------------------------------------------------------- on the workers

def _file_size(path: str) -> int | None:
    try:
        return os.path.getsize(path)
    except OSError:
        return None


def _read(path: str, start: int, stop: int, class_index: int | None) -> Dataset:
    from toolkit.data import arff

    return arff.read_range(path, start, stop, class_attribute=class_index)


def _range_statistics(path: str, start: int, stop: int, class_index: int | None, clf: Any, step: Any,
                      previous: SufficientStatistics | None) -> SufficientStatistics:
    """One range's statistics, without the schema (the client has it)."""
    ds = _read(path, start, stop, class_index)
    y = np.asarray(ds.y)
    weights = np.asarray(ds.weights, dtype=np.float64)
    schema = Schema.from_dataset(ds)
    _check_capabilities(step, ds.X, y, weights, schema, class_count=False)
    stats = clf.shard_statistics(ds.X, y, None if np.all(weights == 1.0) else weights, schema, previous=previous)
    return stats.detached()


def _merge(*parts: SufficientStatistics) -> SufficientStatistics:
    return functools.reduce(lambda a, b: a.merge(b), parts)


_WORKER_MODELS: dict[str, SavedModel] = {}


def _worker_model(blob: bytes, digest: str, allow_format_1: bool) -> SavedModel:
    """The model of ``blob``, loaded once per worker process (from a private temporary file)."""
    saved = _WORKER_MODELS.get(digest)
    if saved is None:
        fd, tmp = tempfile.mkstemp(suffix=".tkm", prefix="toolkit-model-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            saved = load_model(tmp, allow_format_1=allow_format_1)
        finally:
            os.unlink(tmp)
        _WORKER_MODELS.clear()      # one model at a time per worker
        _WORKER_MODELS[digest] = saved
    return saved


def _range_predictions(path: str, start: int, stop: int, class_index: int | None, blob: bytes, digest: str,
                       allow_format_1: bool) -> Predictions:
    saved = _worker_model(blob, digest, allow_format_1)
    pred = saved.fitted.predict(_read(path, start, stop, class_index), keep_model=False)
    pred.X = None
    return pred


# ----------------------------------------------------------------------------- on the client

def _check_workers_see(client: Any, path: str, size: int) -> None:
    """Every worker runs this toolkit version and sees the file, of the same size, at the same path."""
    from toolkit import __version__

    versions = client.run(_worker_versions)
    if not versions:
        raise ToolkitError("the cluster has no workers")
    other = sorted(w for w, v in versions.items() if v != __version__)
    if other:
        raise ToolkitError(f"{len(other)} of {len(versions)} workers run toolkit {versions[other[0]]}, this client "
                           f"{__version__} (e.g. {other[0]}); install the same version everywhere")
    answers = client.run(_file_size, path)
    bad = sorted(w for w, s in answers.items() if s != size)
    if bad:
        raise ToolkitError(f"{path}: {len(bad)} of {len(answers)} workers cannot read it (or see another size), "
                           f"e.g. {bad[0]}; the workers read the file themselves: put it on a filesystem every "
                           f"worker mounts, at the same path")


def _progress(notes: Callable[[str], None] | None, what: str, futures: list[Any]) -> None:
    """Lines on progress while ``futures`` complete (at most one every 10 s, and the last)."""
    if notes is None:
        return
    from distributed import as_completed

    start = last = time.monotonic()
    for done, future in enumerate(as_completed(futures), 1):
        if future.status != "finished":   # a failed range: its error is what the caller reports next
            return
        now = time.monotonic()
        if now - last >= 10 or done == len(futures):
            last = now
            notes(f"{what}: {done}/{len(futures)} ranges read, {now - start:.0f} s")


def reduce_statistics(client: Any, parts: Partitions, clf: Any, step: Any, *, previous: SufficientStatistics | None = None,
                      split_every: int = SPLIT_EVERY, notes: Callable[[str], None] | None = None,
                      what: str = "statistics") -> SufficientStatistics:
    """The merged statistics of every range of ``parts`` (one pass), reduced on the cluster in a tree."""
    token = uuid.uuid4().hex[:12]
    class_index = parts.header.class_index
    prev = client.scatter(previous, broadcast=True, hash=False) if previous is not None else None
    level = [client.submit(_range_statistics, parts.path, a, b, class_index, clf, step, prev,
                           key=f"toolkit-range-statistics-{token}-{i}", pure=False)
             for i, (a, b) in enumerate(parts.ranges)]
    leaves = list(level)
    every = list(level)   # every level held until the end: a forced cancel walks from a leaf to the tasks that
    depth = 0             # depend on it and fails (an AssertionError traceback on stderr) at one no future wants
    while len(level) > 1:
        depth += 1
        level = [client.submit(_merge, *level[i:i + split_every], key=f"toolkit-merge-{token}-{depth}-{i}", pure=False)
                 for i in range(0, len(level), split_every)]
        every += level
    try:
        _progress(notes, what, leaves)
        return level[0].result()
    except BaseException:
        client.cancel(every, force=True)
        raise


def _pipeline(classifier: Any, feature_selector: Any, text: Any) -> Pipeline:
    if feature_selector is not None:
        raise ParameterError("partitioned training takes a classifier alone: a feature selector would need every "
                             "document at once (select features on a sample, then fix the columns)")
    if text not in (None, "auto"):
        raise ParameterError("partitioned training takes word counts, not a text step: vectorise the text first")
    return Pipeline(classifier, text=None, tune=False)


def train_partitioned(dataset: str | os.PathLike[str], classifier: Any, *, scheduler: str | None = None,
                      cluster: str | None = None, out: str | os.PathLike[str] | None = None,
                      class_attribute: str | int | None = -1, tune: bool = True, feature_selector: Any = None,
                      text: Any = "auto", partition_bytes: int = DEFAULT_PARTITION_BYTES,
                      notes: Callable[[str], None] | None = None, client: Any = None) -> FittedPipeline:
    """Fit ``classifier`` on an ARFF file read by ranges on a Dask cluster and save it to ``out``.

    The classifier must offer the shard-statistics protocol (refused with one line otherwise, before any
    work); its parameters are the defaults and those fixed in ``classifier`` (a partitioned fit does not
    tune a grid: ``notes`` says so). The model equals ``toolkit.train`` on the whole file with the same
    parameters (to float rounding in sums).
    """
    pipeline = _pipeline(classifier, feature_selector, text)
    spec = None if client is not None else parse_cluster(scheduler, cluster)
    if spec is None and client is None:
        raise ParameterError("partitioned training runs on a Dask cluster: give --scheduler or --cluster")
    pipeline.validate_components()
    step = pipeline.classifier
    clf = step.build({})
    reason = statistics_support(clf)
    if reason:
        raise CapabilityError(f"{step.name} cannot be trained from a partitioned file: {reason}")
    grid = {k: v for k, v in step.grid.items() if len(v) > 1}
    if tune and grid and notes is not None:
        defaults = ", ".join(f"{k}={getattr(clf, k, '?')}" for k in grid)
        notes(f"{step.name}: a partitioned fit does not tune {', '.join(grid)}; using {defaults} (fix a value with "
              f"-c {step.name}:{next(iter(grid))}=..., chosen with toolkit evaluate on a sample)")
    parts = partition_file(dataset, class_attribute=class_attribute, partition_bytes=partition_bytes)
    header = parts.header
    header.require_nominal_class()
    schema = Schema.from_dataset(header)
    _check_capabilities(step, header.X, np.zeros(0, np.int64), np.zeros(0), schema, class_count=False)
    passes = clf.statistics_passes()
    with (_given(client) if client is not None else dask_client(spec)) as c:
        _check_workers_see(c, parts.path, parts.size)
        if notes is not None:
            notes(f"{step.name}: {_describe(parts)} on {len(c.scheduler_info()['workers'])} workers"
                  + (f", {passes} passes" if passes > 1 else ""))
        stats = None
        for p in range(passes):
            stats = reduce_statistics(c, parts, clf, step, previous=stats, notes=notes,
                                      what=f"pass {p + 1} of {passes}" if passes > 1 else "statistics")
    assert stats is not None
    stats = stats.attached(schema)
    present = int(np.count_nonzero(stats.class_weight > 0))
    if present < step.capabilities.min_classes:
        raise CapabilityError(f"{step.name} needs at least {step.capabilities.min_classes} classes in the training data")
    clf.fit_from_statistics(stats)
    fitted = FittedPipeline(pipeline, {})
    fitted.classifier = clf
    fitted.schema = schema
    if out is not None:
        save_model(fitted, header, out, training={
            "dataset_sha256": None, "n_instances": stats.n_rows, "class_weights": stats.class_weight.tolist(),
            "partitioned": {"ranges": len(parts.ranges), "bytes": parts.size}})
    return fitted


def _size(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def _describe(parts: Partitions) -> str:
    return f"{len(parts.ranges)} ranges of about {_size(parts.size / len(parts.ranges))} ({_size(parts.size)})"


class _given:
    """A client the caller owns, as a context manager that leaves it open."""

    def __init__(self, client: Any):
        self.client = client

    def __enter__(self) -> Any:
        return self.client

    def __exit__(self, *exc: Any) -> None:
        return None


def predict_partitioned(model: str | os.PathLike[str], dataset: str | os.PathLike[str], *,
                        scheduler: str | None = None, cluster: str | None = None,
                        partition_bytes: int = DEFAULT_PARTITION_BYTES, allow_format_1: bool = False,
                        notes: Callable[[str], None] | None = None, client: Any = None,
                        ) -> tuple[SavedModel, Dataset, Iterator[Predictions]]:
    """Score an ARFF file by ranges on a Dask cluster: the model, the file's header and an iterator of
    :class:`Predictions`, one per range, in file order (the cluster stays up while it is consumed)."""
    spec = None if client is not None else parse_cluster(scheduler, cluster)
    if spec is None and client is None:
        raise ParameterError("partitioned prediction runs on a Dask cluster: give --scheduler or --cluster")
    model = os.fspath(model)
    saved = load_model(model, allow_format_1=allow_format_1)
    parts = partition_file(dataset, class_attribute=None, partition_bytes=partition_bytes)
    saved.check_header(parts.header)
    class_index = saved.meta["header"]["class_index"]
    header = parts.header.with_class(class_index)
    with open(model, "rb") as fh:
        blob = fh.read()
    digest = hashlib.sha256(blob).hexdigest()

    def results() -> Iterator[Predictions]:
        with (_given(client) if client is not None else dask_client(spec)) as c:
            _check_workers_see(c, parts.path, parts.size)
            if notes is not None:
                notes(f"{_describe(parts)} on {len(c.scheduler_info()['workers'])} workers")
            shared = c.scatter(blob, broadcast=True, hash=False)
            token = uuid.uuid4().hex[:12]
            futures = [c.submit(_range_predictions, parts.path, a, b, class_index, shared, digest, allow_format_1,
                                key=f"toolkit-range-predictions-{token}-{i}", pure=False)
                       for i, (a, b) in enumerate(parts.ranges)]
            try:
                for future in futures:       # in file order; later ranges run meanwhile
                    yield future.result()
                    future.release()
            finally:
                c.cancel(futures, force=True)

    return saved, header, results()
