"""Running the harness's repetitions on a Dask cluster (``--scheduler tcp://HOST:PORT`` or
``--cluster local:N``).

A cluster changes where a repetition runs, never what it computes: each task carries the pipeline,
the split, the evaluators and a reference to its dataset, and runs the same ``_execute`` as a local
run. The client stays the only writer of the results file and writes records in completion order.

Datasets travel once per worker at most. Before submitting, every worker is asked whether it can
read the dataset's file itself; it loads it and compares a fingerprint of the content (arrays,
class, weights, string tables) with the client's, and keeps it in a per-process cache (for this run:
the next run on the same cluster drops it). When every worker can, tasks carry only the reference;
otherwise the dataset is scattered and each worker fetches it once from the cluster (Dask keeps it
there as a dependency). Scheduling, retries after a worker dies and data movement are Dask's; task
keys are the records' keys (with the run's token), so a retried task is one task and its record is
written once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from toolkit.errors import ParameterError, ToolkitError

__all__ = ["ClusterSpec", "parse_cluster", "dask_client", "fingerprint", "submit_tasks", "DASK_HINT"]

DASK_HINT = "running on a Dask cluster needs dask and distributed: pip install 'arff-toolkit[dask]'"


@dataclass(frozen=True)
class ClusterSpec:
    """Where to run: an existing scheduler's address, or a local cluster of ``n_workers`` processes."""

    address: str | None = None
    n_workers: int | None = None

    def describe(self) -> str:
        return self.address if self.address else f"local:{self.n_workers}"


def parse_cluster(scheduler: str | None = None, cluster: str | None = None) -> ClusterSpec | None:
    """``--scheduler tcp://HOST:PORT`` or ``--cluster local:N`` (not both), checked before any work."""
    if scheduler and cluster:
        raise ParameterError("give --scheduler (an existing cluster) or --cluster local:N (a new one), not both")
    if scheduler:
        if "://" not in scheduler:
            raise ParameterError(f"--scheduler {scheduler}: expected an address such as tcp://HOST:8786")
        _require_dask()
        return ClusterSpec(address=scheduler)
    if cluster:
        kind, _, count = cluster.partition(":")
        if kind != "local" or not count.isdigit() or int(count) < 1:
            raise ParameterError(f"--cluster {cluster}: expected local:N with N >= 1 worker processes")
        _require_dask()
        return ClusterSpec(n_workers=int(count))
    return None


def _require_dask() -> None:
    import importlib.util

    if importlib.util.find_spec("distributed") is None or importlib.util.find_spec("dask") is None:
        raise ToolkitError(DASK_HINT)


@contextmanager
def dask_client(spec: ClusterSpec) -> Iterator[Any]:
    """A ``distributed.Client`` for the spec; a local cluster is started and stopped here."""
    _require_dask()
    from distributed import Client, LocalCluster

    if spec.address:
        timeout = _probe_scheduler(spec.address)
        try:
            client = Client(spec.address, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise ToolkitError(f"--scheduler {spec.address}: cannot connect ({exc})") from None
        try:
            yield client
        finally:
            client.close()
        return
    # Dask's nannies set their workers' variables (OMP_NUM_THREADS=1, ...) in this process's environment
    # before each spawn and leave them: a later --jobs run or computation here would read them as the
    # user's cap. They are put back when the cluster is gone.
    saved = {name: os.environ.get(name) for name in _nanny_variables()}
    try:
        cluster = LocalCluster(n_workers=spec.n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=50)   # any free port; a failed task is
        # reported once, by the command (its worker's "Compute Failed" log and traceback were printed before)
        try:
            client = Client(cluster)
            try:
                yield client
            finally:
                client.close()
        finally:
            cluster.close()
    finally:
        _restore_environment(saved)


def _nanny_variables() -> list[str]:
    import dask

    return [str(name) for name in (dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})]


def _restore_environment(saved: dict[str, str | None]) -> None:
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def _probe_scheduler(address: str) -> float:
    """Raise one line unless a Dask scheduler answers at ``address`` within Dask's connect timeout
    (``distributed.comm.timeouts.connect``, 30 s by default), which is returned for the client.

    ``distributed.Client`` bounds only the TCP connection: a port where something else listens (the
    dashboard's 8787, a web server) accepts it and then never answers the handshake (the client waited
    for ever), or answers bytes read as a frame of exabytes (a MemoryError with a traceback). Here the
    whole handshake is bounded, in a thread of its own (the caller may run an event loop, as Jupyter does).
    """
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    import dask
    from dask.utils import parse_timedelta
    from distributed.comm import connect
    from distributed.security import Security

    timeout = float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds"))

    async def hello() -> None:
        comm = await asyncio.wait_for(connect(address, timeout=timeout, **Security().get_connection_args("client")),
                                      timeout + 1)
        await comm.close()

    with ThreadPoolExecutor(1, thread_name_prefix="toolkit-scheduler-probe") as pool:
        try:
            pool.submit(asyncio.run, hello()).result()
        except asyncio.TimeoutError:
            raise ToolkitError(f"--scheduler {address}: connected, but no Dask scheduler answered within "
                               f"{timeout:g} s (the scheduler's port is 8786 unless set; 8787 is its dashboard)") from None
        except OSError as exc:
            raise ToolkitError(f"--scheduler {address}: cannot connect ({exc})") from None
        except Exception as exc:   # a malformed address, TLS without a configuration, another protocol's answer
            raise ToolkitError(f"--scheduler {address}: not a Dask scheduler's address, or it does not answer as "
                               f"one ({type(exc).__name__}: {str(exc)[:200]})") from None
    return timeout


def fingerprint(ds: Any) -> str:
    """What a worker's own copy must match: the dataset's content, class and string tables."""
    h = hashlib.sha256(ds.content_sha256().encode())
    for col in sorted(ds.strings):
        h.update(str(col).encode())
        for text in ds.strings[col]:
            h.update(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest())
    h.update(repr((ds.name, ds.task)).encode())
    return h.hexdigest()


# ----------------------------------------------------------------------------- on the workers

_WORKER_DATASETS: dict[str, Any] = {}


def _reference(ds: Any) -> dict[str, Any]:
    return {"path": ds.path, "fingerprint": fingerprint(ds), "class_index": ds.class_index,
            "sparse": bool(ds.is_sparse), "task": ds.task}


def _from_path(ref: dict[str, Any]) -> Any | None:
    """The dataset read by this worker from its own path, if it is the same content."""
    hit = _WORKER_DATASETS.get(ref["fingerprint"])
    if hit is not None:
        return hit
    path = ref.get("path")
    if not path or not os.path.isfile(path):
        return None
    from toolkit.data import arff

    try:
        ds = arff.read(path, class_attribute=ref["class_index"], sparse=ref["sparse"])
        if ref.get("task") is not None:
            ds = ds.one_vs_rest(ref["task"])
    except ToolkitError:
        return None
    if fingerprint(ds) != ref["fingerprint"]:
        return None
    ds.sha256 = ref.get("sha256", ds.sha256)
    _WORKER_DATASETS[ref["fingerprint"]] = ds
    return ds


def _can_read(ref: dict[str, Any]) -> bool:
    return _from_path(ref) is not None


def _keep_only(fingerprints: list[str]) -> None:
    """Drop the datasets of earlier runs from this worker's cache (a cluster that stays up between runs
    held every dataset it had ever read)."""
    keep = set(fingerprints)
    for key in [k for k in _WORKER_DATASETS if k not in keep]:
        del _WORKER_DATASETS[key]


def _worker_versions() -> str:
    from toolkit import __version__

    return __version__


def _run_remote(payload: dict[str, Any], scattered: Any = None) -> dict[str, Any]:
    from toolkit import __version__
    from toolkit.evaluation.allocator import tune_allocator

    tune_allocator()  # once per worker process, as for local runs
    if payload["toolkit_version"] != __version__:
        return {"status": "failed", "error_kind": "ToolkitError", "timing": {},
                "error": f"this worker runs toolkit {__version__}, the client {payload['toolkit_version']}"}
    ds = scattered if scattered is not None else _from_path(payload["dataset"])
    if ds is None:
        return {"status": "failed", "error_kind": "ToolkitError", "timing": {},
                "error": f"this worker cannot read {payload['dataset']['path']} (or its content differs)"}
    ds.sha256 = payload["sha256"]
    task = payload["task"]
    if hasattr(task.splits, "with_classes"):   # stratified splits travel without the class vector
        task = dataclasses.replace(task, splits=task.splits.with_classes(ds.y))
    execute = payload["execute"]  # the harness's own function, passed by reference (no import cycle)
    return execute(ds, payload["pipeline"], task, payload["evaluators"], payload["store_proba"])


# ----------------------------------------------------------------------------- on the client

def submit_tasks(client: Any, datasets: Sequence[Any], pipelines: Sequence[Any], tasks: Sequence[Any],
                 evaluators: Sequence[Any], store_proba: bool, finish: Callable[[Any, dict[str, Any]], None],
                 execute: Callable[..., dict[str, Any]], notes: Callable[[str], None] | None = None) -> None:
    """Run ``tasks`` on the cluster with ``execute(ds, pipeline, task, evaluators, store_proba)``;
    ``finish(task, body)`` is called on the client as each completes."""
    from distributed import as_completed

    from toolkit import __version__

    refs: dict[int, dict[str, Any]] = {}
    scattered: dict[int, Any] = {}
    for d in sorted({t.dataset_index for t in tasks}):
        refs[d] = _reference(datasets[d])
        refs[d]["sha256"] = datasets[d].sha256
    client.run(_keep_only, [ref["fingerprint"] for ref in refs.values()])
    for d, ref in refs.items():
        ds = datasets[d]
        answers = client.run(_can_read, ref) if ds.path else {}
        if not answers or not all(answers.values()):
            scattered[d] = client.scatter(ds, hash=False, broadcast=False)
            if notes is not None:
                where = "no worker" if not any(answers.values()) else "not every worker"
                # the file may be there, but hold other data than the run's (CSV or LIBSVM read, a test
                # set merged in) or differ on that worker
                notes(f"{ds.name}: {where} reads this run's data from {ds.path or 'a file'}; "
                      f"sent to the cluster once")
    # this run's own keys: a key of the record alone was shared with another client's run of the same
    # repetitions on the cluster (other metrics, --save-proba), whose result Dask handed back instead
    token = uuid.uuid4().hex[:12]
    futures = {}
    light: dict[int, Any] = {}   # each dataset's splits without the class vector they stratify by
    for task in tasks:
        d = task.dataset_index
        sent = task
        if hasattr(task.splits, "without_classes"):
            if id(task.splits) not in light:
                light[id(task.splits)] = task.splits.without_classes()
            sent = dataclasses.replace(task, splits=light[id(task.splits)])
        payload = {"dataset": refs[d], "sha256": datasets[d].sha256, "pipeline": pipelines[task.pipeline_index],
                   "task": sent, "evaluators": list(evaluators), "store_proba": store_proba,
                   "toolkit_version": __version__, "execute": execute}
        future = client.submit(_run_remote, payload, scattered.get(d), key=f"toolkit-repetition-{token}-{task.key}",
                               pure=False)
        futures[future] = task
    try:
        for future in as_completed(futures):
            task = futures[future]
            try:
                body = future.result()
            except Exception as exc:  # the task itself could not run (a worker died too often, ...)
                body = {"status": "failed", "error_kind": "cluster", "timing": {},
                        "error": f"on the cluster: {type(exc).__name__}: {str(exc)[:300]}"}
            finish(task, body)
    except BaseException:
        client.cancel(list(futures), force=True)
        raise

