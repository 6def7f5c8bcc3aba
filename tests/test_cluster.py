"""The harness on a real Dask cluster (distributed.LocalCluster, two worker processes): the records equal
a local run's, whether workers read the dataset from its path or receive it, and a worker killed
mid-run changes nothing (Dask retries its task; the client writes each record once)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import pytest

pytest.importorskip("distributed")

import toolkit  # noqa: E402
from conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning")


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50)
    yield c
    c.close()


def _canonical(path):
    out = []
    for line in open(path, encoding="utf-8"):
        rec = json.loads(line)
        rec.pop("timing", None)
        out.append(json.dumps(rec, sort_keys=True))
    return sorted(out)


def test_a_cluster_run_writes_the_records_of_a_local_run(cluster, tmp_path):
    datasets = [ROOT / "datasets" / "iris.arff", ROOT / "datasets" / "vote.arff"]
    local = toolkit.evaluate(datasets, ["nb-weka", "bma-nb"], runs=4, out=tmp_path / "local.jsonl")
    notes: list[str] = []
    remote = toolkit.evaluate(datasets, ["nb-weka", "bma-nb"], runs=4, out=tmp_path / "cluster.jsonl",
                              scheduler=cluster.scheduler_address, notes=notes.append)
    assert len(remote.ok()) == len(local.ok()) == 16
    assert _canonical(tmp_path / "local.jsonl") == _canonical(tmp_path / "cluster.jsonl")
    assert not any("sent to the cluster" in n for n in notes)  # both workers read the files themselves


def test_a_dataset_the_workers_cannot_read_is_sent_once(cluster, tmp_path):
    """A one-vs-rest task and an in-memory dataset: no worker file has that content, so it is scattered."""
    vote = toolkit.load_arff("vote")
    in_memory = vote.subset(range(200))
    in_memory.path = None
    local = toolkit.evaluate([in_memory], ["nb-weka"], runs=3, out=tmp_path / "a.jsonl")
    notes: list[str] = []
    toolkit.evaluate([in_memory], ["nb-weka"], runs=3, out=tmp_path / "b.jsonl", scheduler=cluster.scheduler_address,
                     notes=notes.append)
    assert any("sent to the cluster once" in n for n in notes)
    assert _canonical(tmp_path / "a.jsonl") == _canonical(tmp_path / "b.jsonl") and len(local.ok()) == 3
    tasks_local = toolkit.evaluate("iris", ["nb-gaussian"], runs=2, positive="Iris-setosa", out=tmp_path / "c.jsonl")
    toolkit.evaluate("iris", ["nb-gaussian"], runs=2, positive="Iris-setosa", out=tmp_path / "d.jsonl",
                     scheduler=cluster.scheduler_address)
    assert _canonical(tmp_path / "c.jsonl") == _canonical(tmp_path / "d.jsonl") and len(tasks_local.ok()) == 2


def test_a_worker_killed_mid_run_changes_nothing(cluster, tmp_path):
    from distributed import Client

    dataset = ROOT / "datasets" / "ionosphere.arff"
    expected = toolkit.evaluate(dataset, ["liblinear-lr"], runs=8, out=tmp_path / "local.jsonl")
    assert len(expected.ok()) == 8
    out = tmp_path / "cluster.jsonl"
    with Client(cluster.scheduler_address) as client:
        pids = list(client.run(os.getpid).values())
    errors: list[BaseException] = []

    def run() -> None:
        try:
            toolkit.evaluate(dataset, ["liblinear-lr"], runs=8, out=out, scheduler=cluster.scheduler_address)
        except BaseException as exc:  # reported below
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.time() + 120
    while time.time() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 3):
        time.sleep(0.05)
    assert len(out.read_text().splitlines()) < 9, "the run finished before a worker could be killed"
    os.kill(pids[0], signal.SIGKILL)
    thread.join(300)
    assert not thread.is_alive() and not errors, errors
    assert _canonical(tmp_path / "local.jsonl") == _canonical(out)
    keys = [json.loads(line).get("key") for line in out.read_text().splitlines()[1:]]
    assert len(keys) == len(set(keys)) == 8  # every repetition written exactly once


def test_the_command_line_table_is_the_same_with_a_local_cluster():
    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    args = ["compare", str(ROOT / "datasets" / "iris.arff"), str(ROOT / "datasets" / "labor.arff"), "-c", "nb-weka",
            "-c", "nb-gaussian", "--runs", "3", "-q"]
    local = runner.invoke(app, args)
    remote = runner.invoke(app, [*args, "--cluster", "local:2"])
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert local.stdout == remote.stdout
