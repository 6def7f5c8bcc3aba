"""Review of running on a cluster (toolkit/evaluation/distributed.py, toolkit/models/partitioned.py):
the cases a review found wrong, each checked against the local / in-memory path."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

pytest.importorskip("distributed")

from conftest import ROOT  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::ResourceWarning")


# ----------------------------------------------------------------------------- a scheduler address that does not answer

class _Listener:
    """A TCP port that accepts connections and then answers ``reply`` (or nothing), as a web server or the
    dashboard's port does to a Dask handshake."""

    def __init__(self, reply: bytes | None):
        self.reply = reply
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stop = threading.Event()
        self.accepted: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted.append(conn)
            if self.reply is not None:
                try:
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        for conn in self.accepted:
            conn.close()
        self.sock.close()


@pytest.fixture(params=["silent", "http"])
def not_a_scheduler(request):
    listener = _Listener(None if request.param == "silent" else
                         b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>bad request</html>\r\n")
    yield listener
    listener.close()


def test_an_address_that_does_not_answer_as_a_scheduler_is_one_line_soon(not_a_scheduler, tmp_path):
    """Something listens but is no Dask scheduler (the dashboard's port, a web server): the client hung for
    ever on the handshake (silent) or died with a MemoryError traceback (an HTTP answer read as a frame of
    exabytes). Now: exit 2, one line naming the address, within the connect timeout."""
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "3s"}
    start = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "toolkit", "evaluate", str(ROOT / "datasets" / "iris.arff"),
                               "-c", "nb-weka", "--runs", "2", "-q", "--scheduler", not_a_scheduler.address],
                              capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("the command still waited for the scheduler after 60 s")
    assert time.monotonic() - start < 40
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and not_a_scheduler.address in lines[0], done.stderr


def test_a_malformed_scheduler_address_is_one_line():
    from typer.testing import CliRunner

    from toolkit.cli import app

    result = CliRunner().invoke(app, ["evaluate", str(ROOT / "datasets" / "iris.arff"), "-c", "nb-weka", "--runs", "2",
                                      "-q", "--scheduler", "tcp://"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "--scheduler tcp://" in result.stderr


def test_a_scheduler_that_cannot_be_reached_leaves_no_results_file(tmp_path):
    """The results file was made (its header line) before the client connected: the same command, once the
    scheduler was up, was then refused ('already exists; pass --resume')."""
    import dask
    from typer.testing import CliRunner

    from toolkit.cli import app

    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    address = f"tcp://127.0.0.1:{free.getsockname()[1]}"
    free.close()   # nothing listens there now: connections are refused
    out = tmp_path / "r.jsonl"
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        result = CliRunner().invoke(app, ["evaluate", str(ROOT / "datasets" / "iris.arff"), "-c", "nb-weka", "--runs",
                                          "2", "-q", "--scheduler", address, "--out", str(out)])
    assert result.exit_code == 2 and "cannot connect" in result.stderr, result.output
    assert not out.exists()


# ----------------------------------------------------------------------------- partitioned training

def test_a_bad_line_in_one_range_of_a_partitioned_fit_is_one_line(tmp_path):
    """A range that cannot be read stops the run with the reader's own line (as a local ``train`` gives it),
    and nothing else: the cancel of the other ranges walked into merge tasks no future held any more and the
    scheduler printed an AssertionError traceback before it."""
    lines = (ROOT / "datasets" / "iris.arff").read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line[:1].isdigit())
    lines[first + 120] = "5.1,3.5,abc,0.2,Iris-setosa"
    bad = tmp_path / "bad.arff"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    local = subprocess.run([sys.executable, "-m", "toolkit", "train", str(bad), "-c", "nb-weka", "-q", "-o",
                            str(tmp_path / "local.tkm")], capture_output=True, text=True, timeout=120)
    assert local.returncode == 2 and len(local.stderr.strip().splitlines()) == 1, local.stderr
    done = subprocess.run([sys.executable, "-m", "toolkit", "train", str(bad), "-c", "nb-weka", "-q", "--cluster",
                           "local:2", "--partition-mb", "0.0005", "-o", str(tmp_path / "m.tkm")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip() == local.stderr.strip()
    assert not (tmp_path / "m.tkm").exists()


# ----------------------------------------------------------------------------- the harness on a cluster that stays up

@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50,
                     memory_limit="600MB")
    yield c
    c.close()


def _cached_names():
    from toolkit.evaluation import distributed

    return sorted(ds.name for ds in distributed._WORKER_DATASETS.values())


def test_a_cluster_that_stays_up_does_not_keep_every_dataset_it_ever_read(cluster, tmp_path):
    """Each worker cached every dataset of every run on the cluster, for as long as it lived (a cluster kept up
    for many runs grew without bound); now it holds the current run's only."""
    from distributed import Client

    import toolkit

    first = [ROOT / "datasets" / "iris.arff", ROOT / "datasets" / "vote.arff"]
    second = [ROOT / "datasets" / "labor.arff"]
    toolkit.evaluate(first, ["nb-weka"], runs=2, scheduler=cluster.scheduler_address)
    with Client(cluster.scheduler_address) as client:
        assert set(map(tuple, client.run(_cached_names).values())) == {("iris", "vote")}   # the cache is used
        local = toolkit.evaluate(second, ["nb-weka"], runs=2, out=tmp_path / "a.jsonl")
        remote = toolkit.evaluate(second, ["nb-weka"], runs=2, out=tmp_path / "b.jsonl",
                                  scheduler=cluster.scheduler_address)
        assert set(map(tuple, client.run(_cached_names).values())) == {("labor",)}
    assert len(local.ok()) == 2
    assert sorted((r["key"], r["metrics"]["errors"]) for r in remote.ok()) == \
        sorted((r["key"], r["metrics"]["errors"]) for r in local.ok())


def _other_runs_body(*args):
    return {"status": "ok", "metrics": {"errors": -1}, "timing": {}}


def test_a_run_does_not_take_the_results_of_another_clients_tasks(cluster, tmp_path):
    """Task keys were the records' keys alone, which hold neither the metrics nor --save-proba: while another
    client held the same repetitions on the cluster (the same experiment run with other metrics), Dask handed
    its results to this run and the records were the other run's. Here the other run is a client holding a
    result under each key of this run's records."""
    from distributed import Client

    import toolkit

    local = toolkit.evaluate(ROOT / "datasets" / "iris.arff", ["nb-weka"], runs=2, out=tmp_path / "a.jsonl")
    keys = sorted(r["key"] for r in local.ok())
    assert len(keys) == 2
    with Client(cluster.scheduler_address) as other:
        held = [other.submit(_other_runs_body, key=f"toolkit-repetition-{k}", pure=False) for k in keys]
        other.gather(held)
        remote = toolkit.evaluate(ROOT / "datasets" / "iris.arff", ["nb-weka"], runs=2, out=tmp_path / "b.jsonl",
                                  scheduler=cluster.scheduler_address)
    assert sorted((r["key"], r["metrics"]["errors"]) for r in remote.ok()) == \
        sorted((r["key"], r["metrics"]["errors"]) for r in local.ok())


def test_partitioned_reading_takes_a_bundled_name_as_a_local_train_does():
    """`toolkit train iris --cluster ...` was refused as 'iris: no such file' (a local train reads the bundled
    file); an unknown name keeps the loader's own error."""
    from toolkit.errors import DatasetError
    from toolkit.loading import resolve_dataset
    from toolkit.models.partitioned import partition_file

    parts = partition_file("iris", partition_bytes=1000)
    assert parts.path == os.path.abspath(resolve_dataset("iris")) and len(parts.ranges) > 1
    assert parts.header.n_instances == 0 and parts.header.classes == ("Iris-setosa", "Iris-versicolor", "Iris-virginica")
    with pytest.raises(DatasetError, match="no such file or bundled dataset"):
        partition_file("irsi")


def _range_that_fails(i):
    if i == 0:
        raise ValueError("a damaged range")
    return i


def test_the_progress_line_does_not_count_a_range_that_failed(cluster):
    """``N/N ranges read`` was printed when the last range came back, failed or not: a run that then stopped
    on the failed range had just said that every range was read."""
    from distributed import Client, wait

    from toolkit.models.partitioned import _progress

    with Client(cluster.scheduler_address) as client:
        futures = [client.submit(_range_that_fails, i, pure=False) for i in range(3)]
        wait(futures)
        lines: list[str] = []
        _progress(lines.append, "statistics", futures)
        assert not any("3/3 ranges read" in line for line in lines), lines
        good = [client.submit(_range_that_fails, i, pure=False) for i in (1, 2)]
        lines = []
        _progress(lines.append, "statistics", good)
        assert lines and lines[-1].startswith("statistics: 2/2 ranges read"), lines
