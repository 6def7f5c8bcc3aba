"""Bad input on the command line, as the developers' guide states the rules: exit code 2, one line on stderr
naming the option or file and what was expected, no traceback, before any computation, nothing lost."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from toolkit.cli import app

runner = CliRunner()
TINY = ROOT / "tests" / "data" / "tiny.arff"
IRIS = ROOT / "datasets" / "iris.arff"


def _one_error_line(result, *needles):
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("Error: "), lines
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    """Two pipelines on two datasets, two repetitions (a second or so)."""
    out = tmp_path_factory.mktemp("results") / "r.jsonl"
    toolkit.evaluate([TINY, IRIS], ["nb-weka", "nb-gaussian"], runs=2, out=out)
    return out


@pytest.mark.parametrize("alpha", ["0", "1", "1.5", "-0.1", "nan"])
def test_evaluate_refuses_an_alpha_outside_0_1_before_running(tmp_path, alpha):
    """--alpha is a significance level: evaluate (and compare) refused none and marked cells at alpha 1.5 or 0;
    toolkit report refused them. Refused before anything runs: the --out file is not even started."""
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-c", "nb-gaussian", "-r", "2", "-q",
                                 "--alpha", alpha, "--out", str(out)])
    _one_error_line(result, "--alpha", "between 0 and 1")
    assert not out.exists()


@pytest.mark.parametrize("alpha", ["0", "2", "nan"])
def test_compare_refuses_an_alpha_outside_0_1(results_file, alpha):
    _one_error_line(runner.invoke(app, ["compare", str(results_file), "--alpha", alpha]), "--alpha", "between 0 and 1")
    _one_error_line(runner.invoke(app, ["compare", str(TINY), "-c", "nb-weka", "-r", "2", "-q", "--alpha", alpha]),
                    "--alpha")


def test_vocab_curve_refuses_an_alpha_outside_0_1():
    _one_error_line(runner.invoke(app, ["vocab-curve", str(TINY), "--alpha", "7", "-q"]), "--alpha", "between 0 and 1")


@pytest.mark.parametrize("rope", ["nan", "inf"])
def test_report_refuses_a_rope_that_is_not_a_finite_number(results_file, tmp_path, rope):
    """--rope nan passed the `rope < 0` check and the report claimed P(equivalent) = 1 for a rope it wrote as null;
    the API (write_report) took it as well. Nothing is written."""
    out = tmp_path / "r.json"
    _one_error_line(runner.invoke(app, ["report", str(results_file), "-o", str(out), "--rope", rope]), "--rope", "finite")
    assert not out.exists()
    with pytest.raises(toolkit.errors.ParameterError, match="--rope"):
        toolkit.write_report(results_file, tmp_path / "api.json", rope=float(rope))
    assert not (tmp_path / "api.json").exists()


def test_an_output_file_that_is_an_input_is_refused_and_the_input_kept(tmp_path):
    """train d.arff -o d.arff wrote the model over the dataset, predict m.tkm d.arff -o d.arff the predicted
    labels over the true ones (the default format follows the .arff extension), predict ... -o m.tkm the
    predictions over the model, convert d.arff d.arff rewrote the file without its comments. Each is refused,
    also through another spelling of the path (./, absolute, a symbolic link), and the input stays as it was."""
    data = tmp_path / "d.arff"
    shutil.copy(IRIS, data)
    model = tmp_path / "m.tkm"
    assert runner.invoke(app, ["train", str(data), "-c", "nb-weka", "-o", str(model), "--no-tune"]).exit_code == 0
    link = tmp_path / "link.arff"
    link.symlink_to(data)
    before_data, before_model = data.read_bytes(), model.read_bytes()
    cases = [(["train", str(data), "-c", "nb-weka", "-o", str(data)], "dataset"),
             (["train", str(data), "-c", "nb-weka", "-o", str(link)], "dataset"),
             (["predict", str(model), str(data), "-o", str(data)], "dataset"),
             (["predict", str(model), str(link), "-o", str(tmp_path / "." / "d.arff")], "dataset"),
             (["predict", str(model), str(data), "-o", str(model), "--format", "csv"], "model file"),
             (["convert", str(data), str(data)], "dataset"),
             (["convert", str(data), str(link)], "dataset")]
    for args, what in cases:
        _one_error_line(runner.invoke(app, args), f"is the {what} this command reads", "another output file")
        assert data.read_bytes() == before_data, args
        assert model.read_bytes() == before_model, args
    # another existing file is still replaced, as -o always did
    other = tmp_path / "p.csv"
    other.write_text("old\n")
    assert runner.invoke(app, ["predict", str(model), str(data), "-o", str(other)]).exit_code == 0
    assert other.read_text().startswith("instance,actual,predicted")


def _model(tmp_path):
    model = tmp_path / "m.tkm"
    assert runner.invoke(app, ["train", str(IRIS), "-c", "nb-weka", "-o", str(model), "--no-tune"]).exit_code == 0
    return model


def test_partitioned_predict_keeps_the_old_output_when_it_fails(tmp_path):
    """predict --cluster opened (emptied) -o before scoring: a dataset cut short halfway left an empty file
    where the old output was. Now the old file stays until every prediction is written, and no temporary
    file is left behind; a run that succeeds replaces it."""
    pytest.importorskip("distributed")
    model = _model(tmp_path)
    cut = tmp_path / "cut.arff"
    cut.write_bytes(IRIS.read_bytes()[:3000])   # ends in the middle of a data line
    old = tmp_path / "p.csv"
    old.write_text("the previous predictions\n")
    failed = runner.invoke(app, ["predict", str(model), str(cut), "-o", str(old), "--cluster", "local:1"])
    assert failed.exit_code == 2 and "cut.arff:" in failed.stderr.strip().splitlines()[-1], failed.output
    assert old.read_text() == "the previous predictions\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.arff", "m.tkm", "p.csv"]
    done = runner.invoke(app, ["predict", str(model), str(IRIS), "-o", str(old), "--cluster", "local:1"])
    assert done.exit_code == 0, done.output
    assert len(old.read_text().splitlines()) == 151


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_predict_reports_a_failed_write_in_one_line():
    """A write that fails (disk full) gave a traceback; now one line naming the file, exit code 2."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        model = _model(Path(folder))
        _one_error_line(runner.invoke(app, ["predict", str(model), str(IRIS), "-o", "/dev/full"]), "/dev/full",
                        "cannot write")


def _counts_file(tmp_path):
    rows = []
    for i in range(24):
        label = "a" if i % 2 else "b"
        rows.append(f"{i % 3},{(i * 7) % 4},{3 if label == 'a' else 0},{1 if label == 'b' else i % 2},{label}")
    path = tmp_path / "counts.arff"
    path.write_text("@relation counts\n" + "".join(f"@attribute w{j} numeric\n" for j in range(4))
                    + "@attribute class {a,b}\n@data\n" + "\n".join(rows) + "\n")
    return path


def test_vocab_curve_refuses_an_unknown_baseline_before_running(tmp_path):
    """--baseline nope ran the whole curve and printed 'significantly better / worse than nope' over a table
    that could mark nothing. Now an error naming the selectors, before any work (TINY has nominal attributes
    that kl refuses: the baseline is checked first)."""
    _one_error_line(runner.invoke(app, ["vocab-curve", str(TINY), "--baseline", "nope", "-q"]),
                    "--baseline 'nope'", "kl, dkl, mi")
    _one_error_line(runner.invoke(app, ["vocab-curve", str(TINY), "-s", "kl", "-s", "mi", "--baseline", "dkl", "-q"]),
                    "--baseline 'dkl'", "(kl, mi)")
    ok = runner.invoke(app, ["vocab-curve", str(_counts_file(tmp_path)), "-s", "kl", "-s", "mi", "--baseline", "kl",
                             "-r", "2", "--sizes", "2,full", "-q"])
    assert ok.exit_code == 0, ok.output
    assert "than kl" in ok.stdout


@pytest.mark.parametrize("options, named", [
    (["-o", "again.jsonl"], "--out"), (["--runs", "20"], "--runs"), (["--resume"], "--resume"),
    (["--jobs", "2"], "--jobs"), (["--seed", "3"], "--seed"), (["--keep-going"], "--keep-going"),
    (["--protocol", "thesis"], "--protocol"), (["-C", "play"], "--class")])
def test_compare_of_result_files_refuses_the_options_that_run(results_file, tmp_path, monkeypatch, options, named):
    """compare RESULTS.jsonl -o again.jsonl wrote no file and --runs 20 ran nothing, without a word (only -c
    was refused): each is refused, naming the option."""
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["compare", str(results_file), *options])
    _one_error_line(result, named, "result files are only tabulated")
    assert not (tmp_path / "again.jsonl").exists()
    # the options of the table are still taken
    assert runner.invoke(app, ["compare", str(results_file), "--interval", "lcl", "-q", "--format", "csv"]).exit_code == 0


def test_compare_running_datasets_shows_the_interval_asked_for():
    """--interval lcl was taken silently and the table showed mean ± CI when compare ran the datasets."""
    ran = runner.invoke(app, ["compare", str(TINY), "-c", "nb-weka", "-c", "nb-gaussian", "-r", "2", "-q",
                              "--interval", "lcl"])
    assert ran.exit_code == 0, ran.output
    assert "(≤ " in ran.stdout and " ± " not in ran.stdout.splitlines()[2]   # error: the upper limit


def test_convert_refuses_two_types_for_one_column(tmp_path):
    """--nominal class --numeric class wrote the class as nominal without a word about the --numeric."""
    csv = tmp_path / "d.csv"
    csv.write_text("a,b,class\n1,2,x\n3,4,y\n")
    out = tmp_path / "d.arff"
    _one_error_line(runner.invoke(app, ["convert", str(csv), str(out), "--nominal", "class", "--numeric", "class"]),
                    "--nominal and --numeric", "'class'")
    _one_error_line(runner.invoke(app, ["convert", str(csv), str(out), "--nominal", "b,class", "--string", "a,b"]),
                    "--nominal and --string", "'b'")
    assert not out.exists()
    assert runner.invoke(app, ["convert", str(csv), str(out), "--nominal", "b", "--string", "a"]).exit_code == 0
    assert "@attribute b {2,4}" in out.read_text()


@pytest.mark.parametrize("command", [["evaluate", str(TINY)], ["compare", str(TINY)]])
def test_json_and_another_format_are_refused_together(tmp_path, command):
    """--json --format latex printed JSON and dropped the LaTeX without a word."""
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, [*command, "-c", "nb-weka", "-r", "2", "-q", "--json", "--format", "latex",
                                 "-o", str(out)])
    _one_error_line(result, "--json and --format latex")
    assert not out.exists()
    ran = runner.invoke(app, [*command, "-c", "nb-weka", "-r", "2", "-q", "--json"])
    assert ran.exit_code == 0 and json.loads(ran.stdout), ran.output


def test_compare_of_result_files_refuses_json_with_another_format(results_file):
    _one_error_line(runner.invoke(app, ["compare", str(results_file), "--json", "--format", "csv"]), "--json and --format csv")
    assert runner.invoke(app, ["compare", str(results_file), "--json", "--format", "json"]).exit_code == 0


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_jobs_with_a_cluster_is_refused_before_any_work(tmp_path, command):
    """--jobs 4 --cluster local:1 ran on the one-worker cluster and dropped --jobs without a word. Refused
    before a cluster is started or a dataset read (the dataset named does not exist)."""
    result = runner.invoke(app, [command, str(tmp_path / "absent.arff"), "-c", "nb-weka", "-r", "2", "-q", "--jobs", "4",
                                 "--cluster", "local:1"])
    _one_error_line(result, "--jobs 4", "--cluster")


@pytest.mark.parametrize("command", ["evaluate", "compare"])
@pytest.mark.parametrize("option, needle", [("--resume", "--resume continues"), ("--save-proba", "--save-proba")])
def test_options_of_the_results_file_need_out(command, option, needle):
    """--resume without --out ran everything again and kept nothing (a user who forgot -o on the second call
    lost the hours the first run saved nowhere); --save-proba without --out stored the probabilities nowhere."""
    if command == "compare" and option == "--save-proba":
        pytest.skip("compare has no --save-proba")
    _one_error_line(runner.invoke(app, [command, str(TINY), "-c", "nb-weka", "-r", "2", "-q", option]), needle, "--out")


def _strict_json(text):
    """JSON as jq or a browser's JSON.parse read it: NaN and Infinity are no JSON."""
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_vocab_curve_json_of_one_repetition_is_valid_json(tmp_path):
    """With one repetition the sd is undefined and --format json wrote it as NaN, which is no JSON (the other
    commands write null, as json_text documents)."""
    result = runner.invoke(app, ["vocab-curve", str(_counts_file(tmp_path)), "-s", "kl", "-r", "1", "--sizes", "2",
                                 "-q", "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = _strict_json(result.stdout)
    assert doc["summary"][0]["n"] == 1 and doc["summary"][0]["sd"] is None


MULTILINE_PLUGIN = '''
import numpy as np
from toolkit import Capabilities, hookimpl
from toolkit.api import ClassifierBase

class FailsInLines(ClassifierBase):
    def fit(self, X, y, sample_weight=None, schema=None):
        X, codes, w = self._validate_fit(X, y, sample_weight, schema)
        if codes[0] == 0:
            raise RuntimeError("the solver did not converge\\nat iteration 7\\n  (residual 1e3)")
        self.prior_ = np.bincount(codes, minlength=len(self.classes_)) / len(codes)
        return self
    def predict_proba(self, X):
        X = self._validate_predict(X)
        return np.tile(self.prior_, (X.shape[0], 1))

@hookimpl
def register_classifiers(register):
    register("fails-in-lines", FailsInLines, description="fails with a message of three lines (test plugin)",
             capabilities=Capabilities(nominal=True, missing=True))
'''


def test_an_error_message_of_several_lines_is_one_line_on_stderr(tmp_path):
    """A plugin's exception whose message holds line breaks came out as three lines after 'Error:' (and after
    'Warning: ... failed' with --keep-going); the rule is one line."""
    import subprocess
    import sys

    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "lines.py").write_text(MULTILINE_PLUGIN)
    base = [sys.executable, "-m", "toolkit", "--plugins-dir", str(folder), "evaluate", str(TINY), "-c", "fails-in-lines",
            "-r", "6", "-q"]
    stopped = subprocess.run(base, capture_output=True, text=True, timeout=120)
    lines = stopped.stderr.strip().splitlines()
    assert stopped.returncode == 1 and len(lines) == 1, stopped.stderr
    assert lines[0].startswith("Error: ") and "did not converge / at iteration 7 / (residual 1e3)" in lines[0]
    going = subprocess.run(base + ["--keep-going"], capture_output=True, text=True, timeout=120)
    lines = going.stderr.strip().splitlines()
    assert going.returncode == 1 and len(lines) == 1, going.stderr
    assert lines[0].startswith("Warning: ") and "did not converge / at iteration 7 / (residual 1e3)" in lines[0]


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [["list"], ["info", "iris"]])
def test_stdout_on_a_full_disk_is_one_error_line(args):
    """`toolkit list > file` on a full disk ended in a traceback of 25 lines; now one line, exit code 2."""
    import subprocess
    import sys

    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "toolkit", *args], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0] == "Error: cannot write the results to stdout (No space left on device)"


def test_a_model_is_written_through_a_symbolic_link_and_never_over_a_device(tmp_path):
    """train -o current.tkm, a link to the model in use, replaced the link with a new file; train -o /dev/full
    (as root) replaced the device node itself with a regular file. A named pipe stands for the device here
    (replacing it would harm nothing outside this test's folder)."""
    import os
    import stat

    real = tmp_path / "models" / "v2.tkm"
    real.parent.mkdir()
    real.write_text("old model")
    link = tmp_path / "current.tkm"
    link.symlink_to(real)
    assert runner.invoke(app, ["train", str(IRIS), "-c", "nb-weka", "--no-tune", "-o", str(link)]).exit_code == 0
    assert link.is_symlink() and real.read_bytes()[:2] == b"PK"   # a zip, not 'old model'
    pipe = tmp_path / "pipe.tkm"
    os.mkfifo(pipe)
    _one_error_line(runner.invoke(app, ["train", str(IRIS), "-c", "nb-weka", "--no-tune", "-o", str(pipe)]),
                    "pipe.tkm: is not a regular file")
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)


@pytest.mark.parametrize("fmt", ["json", "csv", "csv-long"])
def test_summary_keeps_a_machine_readable_stdout(fmt):
    """--summary --format json wrote WEKA's text summary after the JSON on stdout (json.load: 'Extra data'), and
    after the CSV rows with csv; stdout now holds the document alone and the summary goes to stderr, as predict
    does for csv and arff."""
    import csv
    import io

    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-r", "2", "-q", "--summary", "--format", fmt])
    assert result.exit_code == 0, result.output
    if fmt == "json":
        _strict_json(result.stdout)
    else:
        rows = list(csv.reader(io.StringIO(result.stdout)))
        assert len({len(r) for r in rows if r}) == 1 and all(rows), rows[-3:]
    assert "=== Summary: tiny / nb-weka, 2 repetitions ===" in result.stderr
    table = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-r", "2", "-q", "--summary"])
    assert "=== Summary: tiny / nb-weka" in table.stdout    # the text table keeps it on stdout


def test_train_through_a_link_still_takes_its_other_options(tmp_path):
    """The change that writes a model through a symbolic link first swallowed --class, --scheduler and --cluster
    into a comment (tests/test_cluster.py caught the scheduler): the class asked for is the model's class."""
    model = tmp_path / "m.tkm"
    result = runner.invoke(app, ["train", str(TINY), "-c", "nb-weka", "--no-tune", "--class", "outlook", "-o", str(model)])
    assert result.exit_code == 0, result.output
    assert list(toolkit.load_model(model).classes) == ["sunny", "overcast", "rainy"]
