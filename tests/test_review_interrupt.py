"""Found by a review of interrupts and resumes (2026-12-07, late night): Ctrl-C on a ``--jobs 2`` run, as a
terminal sends it (SIGINT to the whole process group), hung the run for good in 7 of 12 tries (a worker
interrupted inside the result queue's put kept its lock) and printed the workers' tracebacks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process groups and fork: Linux")


def _dataset(path) -> None:
    rng = np.random.default_rng(3)
    n, F, K = 20000, 16, 26   # letter's shape: a --save-proba record is ~100 kB, long in the result queue's put
    X = rng.integers(0, 16, size=(n, F))
    y = rng.integers(0, K, n)
    X[:, :4] = (X[:, :4] + y[:, None]) % 16
    classes = ",".join(f"c{k}" for k in range(K))
    head = ["@relation slow", *[f"@attribute a{j} numeric" for j in range(F)], f"@attribute class {{{classes}}}", "@data"]
    rows = [",".join(map(str, row)) + f",c{label}" for row, label in zip(X.tolist(), y)]
    path.write_text("\n".join(head + rows) + "\n", encoding="utf-8")


def _records(path) -> int:
    return sum('"toolkit.result/1"' in line for line in path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_ctrl_c_on_a_parallel_run_ends_it_with_one_line_and_resume_finishes_it(tmp_path):
    data = tmp_path / "slow.arff"
    _dataset(data)
    out = tmp_path / "r.jsonl"
    command = [sys.executable, "-m", "toolkit", "evaluate", str(data), "-c", "bma-nb", "-c", "nb-weka", "--runs", "15",
               "--jobs", "2", "-q", "--save-proba", "--out", str(out), "--resume"]
    interrupted = 0
    for attempt, delay in enumerate((0.9, 1.7, 2.5, 3.3)):   # in start-up, forking, running, writing
        run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)   # its own process group, as a terminal's job
        time.sleep(delay)
        if run.poll() is not None:
            break   # finished before an interrupt: nothing left to test
        os.killpg(run.pid, signal.SIGINT)   # what Ctrl-C in a terminal does
        try:
            _, stderr = run.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            run.communicate()
            pytest.fail(f"attempt {attempt}: the run hung after Ctrl-C")
        lines = stderr.strip().splitlines()
        assert run.returncode == 130, (attempt, stderr)
        assert len(lines) == 1 and lines[0].startswith("Error: interrupted; every finished repetition is saved"), stderr
        time.sleep(0.2)   # no worker outlives the run
        left = subprocess.run(["pgrep", "-s", str(run.pid)], capture_output=True, text=True).stdout.split()
        assert not left, (attempt, left)
        interrupted += 1
    assert interrupted >= 2   # the run was interrupted, not finished first
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert _records(out) == 30   # 15 repetitions x 2 classifiers, none lost or twice


def test_resuming_with_the_same_data_under_a_new_name_is_refused_and_the_file_kept(tmp_path):
    """A copy vote2.arff of vote.arff was taken as an added dataset: nothing ran (records are keyed by the
    data's content), and the statement then promised repetitions of 'vote2' that never came, so compare
    and report warned of an unfinished run for good."""
    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    tiny = Path(__file__).parent / "data" / "tiny.arff"
    first, copy, other = tmp_path / "vote.arff", tmp_path / "vote2.arff", tmp_path / "other.arff"
    first.write_text(tiny.read_text(encoding="utf-8"), encoding="utf-8")
    copy.write_text(tiny.read_text(encoding="utf-8"), encoding="utf-8")
    other.write_text(tiny.read_text(encoding="utf-8").replace("sunny,85,85", "sunny,86,85"), encoding="utf-8")
    out = tmp_path / "r.jsonl"
    base = ["-c", "nb-weka", "--runs", "3", "-q", "--out", str(out)]
    assert runner.invoke(app, ["evaluate", str(first), *base]).exit_code == 0
    before = out.read_bytes()
    result = runner.invoke(app, ["evaluate", str(copy), *base, "--resume"])
    assert result.exit_code == 2 and "dataset 'vote2' is the data of 'vote'" in result.stderr, result.output
    assert out.read_bytes() == before
    # other data under a new name is an addition, as before; the first name resumes
    assert runner.invoke(app, ["evaluate", str(first), str(other), *base, "--resume"]).exit_code == 0
    compared = runner.invoke(app, ["compare", str(out)])
    assert compared.exit_code == 0 and "Warning" not in compared.output, compared.output
