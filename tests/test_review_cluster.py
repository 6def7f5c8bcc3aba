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
