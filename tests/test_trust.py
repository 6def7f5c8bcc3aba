"""Experiments a researcher can trust (issue 13): checked before they start, one experiment per results
file, one writer at a time, workers that die with their parent, no traceback from any command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from toolkit.cli import app
from toolkit.errors import ResultsFileError

runner = CliRunner()
TINY = ROOT / "tests" / "data" / "tiny.arff"


def _one_error_line(result, *needles):
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def no_computation(monkeypatch):
    """Fail the test if any repetition is run (the problems must be found before)."""
    import toolkit.evaluation.harness as harness

    def forbidden(*args, **kwargs):
        raise AssertionError("a repetition ran although the experiment was invalid")

    monkeypatch.setattr(harness, "_execute", forbidden)
    monkeypatch.setattr(harness, "_evaluate_task", forbidden)


@pytest.mark.parametrize("args, needles", [
    (["iris", "-c", "nb-weka", "-c", "bma-nb:H=abc"], ["bma-nb", "H", "'abc'"]),
    (["iris", "-c", "nb-weka:laplace=abc"], ["nb-weka", "laplace", "'abc'"]),
    (["vote", "-c", "nb-multinomial"], ["vote", "nb-multinomial", "nominal"]),
    (["iris", "-c", "nb-bim", "--es", "ots"], ["iris", "ots", "two classes", "--positive"]),
    (["iris", "-c", "nb-weka", "--runs", "0"], ["runs"]),
    (["iris", "-c", "nb-weka", "--test-fraction", "1.5"], ["test fraction"]),
    (["iris", "-c", "nb-weka", "--format", "xlsx"], ["--format"]),
    (["iris", "-c", "nb-weka", "--significance", "z-test"], ["--significance"]),
    (["iris", "-c", "nb-weka", "--baseline", "nb-wek"], ["--baseline", "nb-wek"]),
    (["iris", "-c", "nb-weka", "-m", "accuracyy"], ["accuracyy"]),
    (["iris", "-c", "nb-weka", "--jobs", "0"], ["jobs"]),
])
def test_a_bad_experiment_is_refused_before_anything_runs(tmp_path, no_computation, args, needles):
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", *args, "--out", str(out)])
    _one_error_line(result, *needles)
    assert not out.exists(), "no results file may be created for an experiment that cannot run"


def test_the_same_checks_in_the_python_api(tmp_path, no_computation):
    from toolkit.errors import CapabilityError, ParameterError

    with pytest.raises(ParameterError, match="bma-nb: parameter H must be a number, not 'abc'"):
        toolkit.evaluate("iris", ["bma-nb:H=abc"], out=tmp_path / "r.jsonl")
    with pytest.raises(CapabilityError, match="^vote: nb-multinomial does not handle nominal"):
        toolkit.evaluate("vote", ["nb-multinomial"])
    assert not (tmp_path / "r.jsonl").exists()


FAILING_PLUGIN = '''
import numpy as np
from toolkit import Capabilities, hookimpl
from toolkit.api import ClassifierBase

class FailsOnSomeSplits(ClassifierBase):
    """Fails to fit when the training part's first row is of class 0 (a 'solver error' on some splits)."""
    def __init__(self, *, bad_class: int = 0):
        self.bad_class = bad_class
    def fit(self, X, y, sample_weight=None, schema=None):
        X, codes, w = self._validate_fit(X, y, sample_weight, schema)
        if codes[0] == self.bad_class:
            raise RuntimeError("the solver did not converge")
        self.prior_ = np.bincount(codes, minlength=len(self.classes_)) / len(codes)
        return self
    def predict_proba(self, X):
        X = self._validate_predict(X)
        return np.tile(self.prior_, (X.shape[0], 1))

@hookimpl
def register_classifiers(register):
    register("sometimes-fails", FailsOnSomeSplits, description="fails on some training parts (test plugin)",
             capabilities=Capabilities(nominal=True, missing=True))
'''


@pytest.fixture
def failing_plugin(tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "failing.py").write_text(FAILING_PLUGIN)
    return folder


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "toolkit", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def test_a_run_time_failure_stops_the_run_unless_keep_going(tmp_path, failing_plugin):
    out = tmp_path / "r.jsonl"
    stopped = _cli("--plugins-dir", failing_plugin, "evaluate", TINY, "-c", "sometimes-fails", "-c", "nb-weka",
                   "--runs", "10", "--out", out, "-q")
    assert stopped.returncode == 1, stopped.stderr
    lines = stopped.stderr.strip().splitlines()
    assert len(lines) == 1 and "failed: RuntimeError: the solver did not converge" in lines[0], lines
    assert "--keep-going" in lines[0] and str(out) in lines[0]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[0]["schema"] == "toolkit.experiment/1"
    assert records[-1]["status"] == "failed" and "did not converge" in records[-1]["error"]
    assert all(r["status"] == "ok" for r in records[1:-1])

    going = _cli("--plugins-dir", failing_plugin, "evaluate", TINY, "-c", "sometimes-fails", "-c", "nb-weka",
                 "--runs", "10", "--out", tmp_path / "all.jsonl", "--keep-going", "-q")
    assert going.returncode == 1
    all_records = [json.loads(line) for line in (tmp_path / "all.jsonl").read_text().splitlines()][1:]
    failed = [r for r in all_records if r["status"] == "failed"]
    assert len(all_records) == 20 and 1 <= len(failed) < 10
    warnings = [line for line in going.stderr.splitlines() if "failed" in line]
    assert len(warnings) == 1 and f"{len(failed)} repetition" in warnings[0]  # summarised once, not per repetition
    assert f"[{10 - len(failed)}/10]" in going.stdout  # the table marks the incomplete cell


def test_resume_continues_only_the_same_experiment(tmp_path):
    out = tmp_path / "r.jsonl"
    assert runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "--runs", "3", "--out", str(out)]).exit_code == 0
    before = out.read_text()
    for change, needle in ((["--seed", "2"], "seed 1 -> 2"), (["--runs", "5"], "runs 3 -> 5"),
                           (["--test-fraction", "0.2"], "test fraction 0.1 -> 0.2"),
                           (["--protocol", "thesis"], "protocol random -> thesis"),
                           (["--stratified"], "stratified False -> True"),
                           (["-m", "error"], "metrics")):
        runs = [] if "thesis" in change else ["--runs", "3"]   # the thesis protocol refuses --runs
        result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", *runs, "--out", str(out),
                                     "--resume", *change])
        _one_error_line(result, needle, "another --out")
        assert out.read_text() == before
    # the same protocol with a pipeline added: only the new pipeline's repetitions run
    added = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-c", "nb-gaussian", "--runs", "3",
                                "--out", str(out), "--resume"])
    assert added.exit_code == 0, added.output
    assert "adds pipeline nb-gaussian" in added.stderr and "3 of 6 repetitions already done, running 3" in added.stderr
    lines = out.read_text().splitlines()
    assert lines[: len(before.splitlines())] == before.splitlines()
    new = [json.loads(line) for line in lines[len(before.splitlines()):]]
    assert new[0]["kind"] == "extension" and new[0]["pipelines"] == ["nb-gaussian"]
    assert [r["pipeline"]["name"] for r in new[1:]] == ["nb-gaussian"] * 3


def test_compare_refuses_to_pool_different_experiments(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, seed=1, out=a)
    toolkit.evaluate(TINY, ["nb-gaussian"], runs=3, seed=2, out=b)
    result = runner.invoke(app, ["compare", str(a), str(b)])
    _one_error_line(result, "different experiments", "seed 1 -> 2")
    c = tmp_path / "c.jsonl"
    toolkit.evaluate(TINY, ["nb-gaussian"], runs=3, seed=1, out=c)
    pooled = runner.invoke(app, ["compare", str(a), str(c)])
    assert pooled.exit_code == 0 and "nb-gaussian" in pooled.stdout and "3 runs, test fraction 0.1" in pooled.stdout


def test_a_second_writer_fails_at_once(tmp_path):
    out = tmp_path / "r.jsonl"
    from toolkit.evaluation.results import ResultsWriter

    with ResultsWriter(out, experiment={"schema": "toolkit.experiment/1", "kind": "start", "protocol": {}}):
        with pytest.raises(ResultsFileError, match="being written by another toolkit process"):
            ResultsWriter(out, resume=True)
        second = _cli("evaluate", TINY, "-c", "nb-weka", "--runs", "2", "--out", out, "--resume", timeout=60)
        assert second.returncode == 2 and "being written by another toolkit process" in second.stderr
    assert len(out.read_text().splitlines()) == 1  # nothing was written by the refused writer


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses ps and /proc")
def test_workers_die_when_the_parent_is_killed(tmp_path):
    plugin = tmp_path / "plugins"
    plugin.mkdir()
    (plugin / "slow.py").write_text('''
import time
import numpy as np
from toolkit import Capabilities, hookimpl
class Slow:
    def __init__(self, *, delay: float = 3.0):
        self.delay = delay
    def get_params(self, deep=True):
        return {"delay": self.delay}
    def fit(self, X, y, sample_weight=None):
        time.sleep(self.delay)
        self.classes_ = np.unique(y)
        return self
    def predict_proba(self, X):
        return np.full((X.shape[0], len(self.classes_)), 1.0 / len(self.classes_))
@hookimpl
def register_classifiers(register):
    register("slow-two", Slow, description="sleeps in fit (orphan test)", capabilities=Capabilities(nominal=True))
''')
    proc = subprocess.Popen([sys.executable, "-m", "toolkit", "--plugins-dir", str(plugin), "evaluate", str(TINY),
                             "-c", "slow-two", "--runs", "10", "--jobs", "2", "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    deadline = time.time() + 60
    while time.time() < deadline and len(workers) < 2:
        time.sleep(0.2)
        workers = _children(proc.pid)
    assert len(workers) >= 2, "the run did not start its two workers"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(10)
    survivors = [w for w in workers if _alive(w)]
    assert survivors == [], f"workers {survivors} outlived their parent"


def test_interrupt_messages_say_what_was_saved(tmp_path, monkeypatch):
    import toolkit.evaluation.harness as harness

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(harness, "_execute", interrupt)
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "--runs", "2"])
    assert result.exit_code == 130 and "no results were saved" in result.stderr and "Traceback" not in result.output
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "--runs", "2", "--out", str(out)])
    assert result.exit_code == 130 and f"saved in {out}" in result.stderr and "--resume" in result.stderr


def test_plain_progress_lines_without_a_terminal():
    from toolkit.cli.output import _PlainProgress

    now = [0.0]
    lines: list[str] = []
    progress = _PlainProgress(interval=10.0, clock=lambda: now[0])
    import toolkit.cli.output as output

    original = output.err
    output.err = lambda text, **kw: lines.append(text)
    try:
        progress(0, 40, "iris / nb-weka")            # at the start, with the total
        for done in range(1, 20):
            now[0] += 1.0                             # 1 s per repetition: a line every 10 s
            progress(done, 40, "iris / nb-weka")
        now[0] += 1.0
        progress(20, 40, "vote / nb-weka")            # a new dataset: a line at once
        now[0] += 20.0
        progress(40, 40, "vote / nb-weka")            # the end
    finally:
        output.err = original
    assert lines[0].startswith("progress: 0/40 repetitions (0%), iris / nb-weka") and "ETA unknown" in lines[0]
    assert [line.split()[1] for line in lines] == ["0/40", "10/40", "19/40", "20/40", "40/40"] or \
        [line.split()[1] for line in lines] == ["0/40", "10/40", "20/40", "40/40"]
    assert any("ETA 0:00:" in line for line in lines[1:3]) and lines[-1].endswith("done")


# ----------------------------------------------------------------------------- every command, bad options

def _model(tmp_path, classifier="nb-weka", data="vote"):
    model = tmp_path / f"{classifier}.tkm"
    if not model.exists():
        assert runner.invoke(app, ["train", data, "-c", classifier, "-o", str(model)]).exit_code == 0
    return model


def _results(tmp_path):
    out = tmp_path / "pr.jsonl"
    if not out.exists():
        assert runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "--runs", "2", "-m", "pr-curve",
                                   "--out", str(out), "-q"]).exit_code == 0
    return out


BAD = {
    "info": [["no-such-dataset"], ["iris", "--class", "0"], ["iris", "--class", "nosuch"]],
    "list": [["gizmos"]],
    "convert": [["iris", "out.xlsx"], ["iris", "/no/such/folder/x.csv"], ["no-such-dataset", "x.csv"],
                ["iris", "x.csv", "--class", "0"]],
    "plugins": [["--hook", "no_such_hook"]],
    "evaluate": [["iris", "-c", "nb-weka", "--out", "/no/such/folder/r.jsonl"], ["iris", "-c", "nb-weka", "--seed", "x"],
                 ["iris", "-c", "nb-weka", "--cluster", "remote:3"], ["iris", "-c", "nb-weka", "--scheduler", "host"],
                 ["iris", "-c", "nb-weka", "--cluster", "local:2", "--scheduler", "tcp://h:1"]],
    "compare": [["iris", "-c", "nb-weka", "--interval", "p"], ["nothing.jsonl"]],
    "explain": [["iris", "-c", "nb-weka"], ["iris", "-c", "bma-nb:H=-"]],
    "train": [["iris", "-c", "nb-weka", "-o", "/no/such/folder/m.tkm"], ["iris", "-c", "nb-weka:laplace=x", "-o", "m.tkm"]],
    "predict": [["MODEL", "iris", "--format", "xml"], ["MODEL", "iris", "-o", "/no/such/folder/p.csv"]],
    "bma-curve": [["iris", "-o", "curve.xyz"], ["iris", "-o", "/no/such/folder/c.png"], ["iris", "--runs", "many"]],
    "ots-trace": [["iris", "-o", "t.gif"], ["iris", "-o", "/no/such/folder/t.png"]],
    "pr-plot": [["RESULTS", "-o", "pr.bmp"], ["RESULTS", "-o", "/no/such/folder/pr.png"]],
    "report": [["RESULTS", "-o", "r.docx"], ["RESULTS", "-o", "/no/such/folder/r.html"],
               ["RESULTS", "-o", "r.html", "--significance", "bayes"], ["RESULTS", "-o", "r.html", "-m", "kappa"]],
    "vocab-curve": [["ReutersGrain-train", "-o", "v.jpeg"], ["ReutersGrain-train", "-o", "/no/such/dir/v.png"],
                    ["ReutersGrain-train", "--format", "yaml"]],
}


def test_every_command_is_covered_here():
    from typer.main import get_command

    names = set(get_command(app).commands)
    assert names <= set(BAD), f"commands without a bad-input case: {sorted(names - set(BAD))}"


@pytest.mark.parametrize("command", sorted(BAD))
def test_bad_options_give_one_line_and_exit_2_before_any_work(command, tmp_path, monkeypatch, no_computation):
    import toolkit.evaluation.curves as curves

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(curves, "vocabulary_curve", lambda *a, **k: (_ for _ in ()).throw(
        AssertionError("vocab-curve computed before checking its options")))
    for args in BAD[command]:
        if "MODEL" in args:
            monkeypatch.undo()  # training the model runs the pipeline (not the harness)
            args = [str(_model(tmp_path)) if a == "MODEL" else a for a in args]
        if "RESULTS" in args:
            monkeypatch.undo()
            args = [str(_results(tmp_path)) if a == "RESULTS" else a for a in args]
        result = runner.invoke(app, [command, *args])
        assert result.exit_code == 2, (command, args, result.exit_code, result.output)
        assert "Traceback" not in result.output, (command, args, result.output)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) >= 1 and (lines[0].startswith("Error: ") or "Usage:" in result.stderr), (command, args)
        if lines[0].startswith("Error: "):
            assert len(lines) == 1, (command, args, lines)


def test_plots_without_matplotlib_are_refused_before_the_work(tmp_path, monkeypatch, no_computation):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    result = runner.invoke(app, ["bma-curve", "iris", "-o", str(tmp_path / "c.png")])
    _one_error_line(result, "arff-toolkit[plot]")


def test_predict_proba_without_probabilities_shows_labelled_scores(tmp_path):
    model = _model(tmp_path, "liblinear-svm", "iris")
    for fmt, needle in (("table", "decision scores (no probabilities)"), ("csv", "score(Iris-setosa)")):
        result = runner.invoke(app, ["predict", str(model), "iris", "--proba", "--format", fmt])
        assert result.exit_code == 0, result.output
        assert needle in result.stdout
    doc = json.loads(runner.invoke(app, ["predict", str(model), "iris", "--proba", "--format", "json"]).stdout)
    assert "scores" in doc["predictions"][0] and "probabilities" not in doc["predictions"][0]


@pytest.mark.parametrize("value, expected", [("first", 0), ("last", -1), ("1", 0), ("5", 4), ("class", "class"),
                                             (None, -1)])
def test_class_option_means_the_same_everywhere(value, expected):
    from toolkit.cli import class_attribute

    assert class_attribute(value) == expected


def test_class_positions_are_weka_s(tmp_path):
    fifth = runner.invoke(app, ["info", "iris", "--class", "5", "--json"])
    assert fifth.exit_code == 0 and json.loads(fifth.stdout)["class"]["name"] == "class"
    first = runner.invoke(app, ["info", "iris", "--class", "first", "--json"])
    assert first.exit_code == 0 and json.loads(first.stdout)["class"]["name"] == "sepallength"
    zero = runner.invoke(app, ["info", "iris", "--class", "0"])
    assert zero.exit_code == 2 and "count from 1" in zero.stderr


def test_csv_is_numeric_and_long_format_has_one_row_per_repetition(tmp_path):
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(TINY, ["nb-weka", "nb-gaussian"], runs=3, out=out)
    wide = runner.invoke(app, ["compare", str(out), "--format", "csv"]).stdout.splitlines()
    assert wide[0].split(",")[:8] == ["metric", "dataset", "nb-weka mean", "nb-weka ci", "nb-weka sd", "nb-weka n",
                                      "nb-weka p_value", "nb-weka mark"]
    cells = wide[1].split(",")[1:]
    assert wide[1].startswith("error,")
    float(cells[1]), float(cells[2]), float(cells[3])  # numbers, not "4.37 ± 6.22"
    assert cells[4] == "3"
    long = runner.invoke(app, ["compare", str(out), "--format", "csv-long"]).stdout.splitlines()
    assert long[0] == "dataset,pipeline,repetition,metric,value" and len(long) == 1 + 2 * 3
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    by_key = {(r["pipeline"]["name"], r["repetition"]): r["metrics"]["error"] for r in records}
    for row in long[1:]:
        _d, p, rep, metric, value = row.split(",")
        assert metric == "error" and float(value) == by_key[(p, int(rep))]


def test_compare_json_is_the_comparison_in_both_modes(tmp_path):
    ran = runner.invoke(app, ["compare", str(TINY), "-c", "nb-weka", "--runs", "2", "--json", "-q"])
    assert ran.exit_code == 0, ran.output
    doc = json.loads(ran.stdout)
    assert doc["schema"] == "toolkit.compare/1"


def test_legend_states_the_protocol_and_the_counts_row(tmp_path):
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-c", "nb-gaussian", "--runs", "3", "-q"])
    assert "3 runs, test fraction 0.1" in result.stdout and "(v/ /*) counts the datasets" in result.stdout


def test_list_shows_parameters_with_types_and_defaults_and_capabilities():
    result = runner.invoke(app, ["list", "classifiers"])
    assert "laplace: float = 1.0" in result.stdout and "accepts: numeric, nominal" in result.stdout


def test_text_selectors_refuse_non_integer_values_unless_asked(tmp_path, no_computation):
    text = "@relation w\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n"
    text += "".join(f"{i % 3}.5,{i % 2},{'xy'[i % 2]}\n" for i in range(20))
    path = tmp_path / "weights.arff"
    path.write_text(text)
    result = runner.invoke(app, ["evaluate", str(path), "-c", "nb-multinomial", "--fs", "kl:k=1"])
    _one_error_line(result, "kl needs whole-number counts", "0.5", "allow_fractional=true")
    result = runner.invoke(app, ["evaluate", str(path), "-c", "nb-multinomial", "--fs", "mi:k=1"])
    _one_error_line(result, "mi needs whole-number counts")


def test_text_selectors_take_fractional_values_when_asked(tmp_path):
    text = "@relation w\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n"
    text += "".join(f"{i % 3}.5,{i % 2},{'xy'[i % 2]}\n" for i in range(20))
    path = tmp_path / "weights.arff"
    path.write_text(text)
    result = runner.invoke(app, ["evaluate", str(path), "-c", "nb-multinomial", "--fs", "kl:k=1,allow_fractional=true",
                                 "--runs", "2", "-q"])
    assert result.exit_code == 0, result.output
