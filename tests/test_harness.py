"""The nested resampling harness: splits exactly as documented, tuning, results files, resume, determinism."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

import toolkit
from conftest import ROOT
from toolkit.cli import app
from toolkit.data import arff
from toolkit.errors import ParameterError, ResultsFileError
from toolkit.evaluation.harness import Protocol
from toolkit.evaluation.resampling import ceil_share, kfold_parts, random_splits, thesis_split, weka_fold
from toolkit.evaluation.results import read_records

TINY = ROOT / "tests" / "data" / "tiny.arff"
runner = CliRunner()


def test_default_splits_are_the_documented_sentence():
    """algorithms.md 5.1.2: perm = default_rng(r).permutation(n); test = first ceil(n/10); validation = first
    ceil(|train|/10) of the rest. Recomputed here from that sentence alone."""
    n = 435
    splits = Protocol().splits(arff.read(ROOT / "datasets" / "vote.arff"))
    assert len(splits) == 10
    for r, split in enumerate(splits, start=1):
        perm = np.random.default_rng(r).permutation(n)
        n_test = (n + 9) // 10
        train = perm[n_test:]
        n_val = (len(train) + 9) // 10
        assert split.seed == r
        np.testing.assert_array_equal(split.test, perm[:n_test])
        np.testing.assert_array_equal(split.train, train)
        np.testing.assert_array_equal(split.validation, train[:n_val])
        np.testing.assert_array_equal(split.fit, train[n_val:])


def test_ceil_share_is_integer_arithmetic():
    for n in range(1, 2000):
        assert ceil_share(n, 0.1) == (n + 9) // 10
        assert ceil_share(n, 0.2) == (n + 4) // 5


def test_thesis_split_vote():
    """algorithms.md 7.10: vote n=435, fold 9 = 43 test rows, validation fold 0 = 44 rows."""
    split = thesis_split(435)
    assert len(split.test) == 43 and len(split.validation) == 44 and len(split.train) == 435 - 43
    assert len(split.fit) == 435 - 43 - 44
    assert weka_fold(435, 10, 0) == slice(0, 44) and weka_fold(435, 10, 9) == slice(392, 435)


@given(st.integers(2, 300), st.integers(1, 4), st.integers(0, 1000), st.booleans())
def test_random_splits_partition_and_reproduce(n, reps, seed, stratify):
    y = np.random.default_rng(seed).integers(0, 3, n) if stratify else None
    splits = random_splits(n, reps, seed, 0.1, y=y)
    again = random_splits(n, reps, seed, 0.1, y=y)
    for s, t in zip(splits, again):
        np.testing.assert_array_equal(s.test, t.test)
        assert len(np.intersect1d(s.train, s.test)) == 0
        np.testing.assert_array_equal(np.sort(np.concatenate([s.train, s.test])), np.arange(n))
        np.testing.assert_array_equal(np.sort(np.concatenate([s.fit, s.validation])), np.sort(s.train)) \
            if len(s.fit) != len(s.train) else None
        assert len(s.test) == ceil_share(n, 0.1)
        if y is not None:
            for c in range(3):
                share = np.sum(y == c) * len(s.test) / n
                assert abs(np.sum(y[s.test] == c) - share) <= 1
    if reps > 1 and n > 20:
        assert not np.array_equal(splits[0].test, splits[1].test)


@given(st.integers(10, 200), st.integers(2, 10))
def test_inner_folds_partition_the_training_part(n, k):
    train = np.random.default_rng(n).permutation(n)
    parts = kfold_parts(train, k)
    vals = np.concatenate([v for _, v in parts])
    np.testing.assert_array_equal(np.sort(vals), np.sort(train))
    for fit, val in parts:
        assert len(np.intersect1d(fit, val)) == 0 and len(fit) + len(val) == n


class Threshold(toolkit.ClassifierBase):
    """Predicts class 1 when feature 0 exceeds ``t``: a classifier whose tuning outcome is known."""

    def __init__(self, *, t: float = 0.0):
        self.t = t

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, X):
        p = (np.asarray(X)[:, 0] > self.t).astype(float)
        return np.column_stack([1 - p, p])


def _threshold_dataset(n=200, cut=0.3):
    x = np.linspace(0, 1, n).tolist()
    text = "@relation t\n@attribute x numeric\n@attribute c {a,b}\n@data\n"
    text += "".join(f"{v!r},{'b' if v > cut else 'a'}\n" for v in x)
    return arff.read_text(text, name="threshold")


def test_tuning_keeps_the_first_best_grid_point():
    ds = _threshold_dataset()
    from toolkit.models.pipeline import Pipeline, Step

    step = Step("classifier", "thr", grid={"t": [0.9, 0.3, 0.31, 0.1, 0.3]}, obj=Threshold())
    pipeline = Pipeline(step, name="thr")
    results = toolkit.evaluate(ds, pipelines=[pipeline], runs=3, metrics=["error"])
    for rec in results.ok():
        errors = [t["validation_errors"] for t in rec["tuning"]]
        best = min(errors)
        assert rec["chosen_params"] == rec["tuning"][errors.index(best)]["params"]
        assert rec["chosen_params"]["clf.t"] in (0.3, 0.31)  # 0.3 comes first; 0.31 only if strictly better


def test_results_file_resume_and_identical_reruns(tmp_path):
    out = tmp_path / "r.jsonl"
    first = toolkit.evaluate(TINY, ["nb-weka", "nb-gaussian"], runs=4, out=out)
    assert len(first.ok()) == 8
    lines = out.read_text().splitlines()
    # a second run with the same seed gives the same records apart from timing
    out2 = tmp_path / "r2.jsonl"
    toolkit.evaluate(TINY, ["nb-weka", "nb-gaussian"], runs=4, out=out2)

    def strip(line):
        rec = json.loads(line)
        rec.pop("timing")
        return rec

    assert [strip(a) for a in lines] == [strip(b) for b in out2.read_text().splitlines()]
    # resuming a complete file adds nothing; a new file name is refused without --resume
    toolkit.evaluate(TINY, ["nb-weka", "nb-gaussian"], runs=4, out=out, resume=True)
    assert out.read_text().splitlines() == lines
    with pytest.raises(ResultsFileError, match="--resume"):
        toolkit.evaluate(TINY, ["nb-weka"], runs=4, out=out)


@pytest.mark.parametrize("cut", ["record", "header", "newline"])
def test_resume_drops_a_torn_last_line(tmp_path, cut):
    """A run killed in mid-write leaves a line without its end; --resume must cut it off and redo that
    repetition, so the file ends with the records of an uninterrupted run (apart from timing)."""
    whole = tmp_path / "whole.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=whole)
    data = whole.read_bytes()
    lines = data.splitlines(keepends=True)
    if cut == "record":     # half of the last record
        torn = b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    elif cut == "header":   # the header itself, torn
        torn = lines[0][:40]
    else:                   # a whole last record without its newline
        torn = data[:-1]
    out = tmp_path / "torn.jsonl"
    out.write_bytes(torn)
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=out, resume=True)

    def strip(line):
        rec = json.loads(line)
        rec.pop("timing", None)
        return rec

    got = [strip(line) for line in out.read_text().splitlines()]
    want = [strip(line) for line in data.decode().splitlines()]
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, want))
    assert len(read_records(out)) == 3


def test_parallel_jobs_give_the_same_records(tmp_path):
    serial = toolkit.evaluate(TINY, ["nb-weka"], runs=4, out=tmp_path / "a.jsonl")
    parallel = toolkit.evaluate(TINY, ["nb-weka"], runs=4, jobs=2, out=tmp_path / "b.jsonl")

    def canon(path):
        recs = []
        for line in Path(path).read_text().splitlines():
            rec = json.loads(line)
            rec.pop("timing")
            recs.append(json.dumps(rec, sort_keys=True))
        return sorted(recs)

    assert canon(tmp_path / "a.jsonl") == canon(tmp_path / "b.jsonl")
    assert len(serial.ok()) == len(parallel.ok()) == 4


def test_parallel_groups_of_small_repetitions_give_the_same_records(tmp_path):
    """Many small repetitions travel to the workers in groups; the records are those of --jobs 1."""
    from toolkit.evaluation.dispatch import RepetitionGroups

    names = ["iris", "vote", "labor", "glass", "weather.nominal", "contact-lenses"]
    data = [ROOT / "datasets" / f"{n}.arff" for n in names]
    sent = []
    real = RepetitionGroups.next

    def spy(self):
        group = real(self)
        sent.append(group)
        return group

    toolkit.evaluate(data, ["nb-weka", "nb-gaussian"], runs=10, out=tmp_path / "a.jsonl")
    RepetitionGroups.next = spy
    try:
        toolkit.evaluate(data, ["nb-weka", "nb-gaussian"], runs=10, jobs=2, out=tmp_path / "b.jsonl")
    finally:
        RepetitionGroups.next = real
    assert max(len(g) for g in sent) > 1 and sum(map(len, sent)) == 120  # groups of several were sent

    def canon(path):
        recs = [json.loads(line) for line in Path(path).read_text().splitlines()]
        for rec in recs:
            rec.pop("timing")
        return sorted(json.dumps(rec, sort_keys=True) for rec in recs if "key" in rec)

    a, b = canon(tmp_path / "a.jsonl"), canon(tmp_path / "b.jsonl")
    assert len(a) == 120 and a == b


SLOW_PLUGIN = '''
import time
from toolkit import hookimpl, Capabilities

class Slow:
    def __init__(self, *, delay: float = 0.4):
        self.delay = delay
    def get_params(self, deep=True):
        return {"delay": self.delay}
    def fit(self, X, y, sample_weight=None):
        import numpy as np
        time.sleep(self.delay)
        self.classes_ = np.unique(y)
        return self
    def predict_proba(self, X):
        import numpy as np
        return np.full((X.shape[0], len(self.classes_)), 1.0 / len(self.classes_))

@hookimpl
def register_classifiers(register):
    register("slow-uniform", Slow, description="sleeps in fit (resume test)",
             capabilities=Capabilities(nominal=True, missing=True))
'''


def test_killed_run_resumes_without_redoing_finished_repetitions(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow.py").write_text(SLOW_PLUGIN)
    out = tmp_path / "run.jsonl"
    args = [sys.executable, "-m", "toolkit", "--plugins-dir", str(plugins), "evaluate", str(TINY), "-c", "slow-uniform",
            "--runs", "10", "--out", str(out), "-q"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:
        if out.exists() and len(out.read_text().splitlines()) >= 4:  # the experiment and 3 records
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = read_records(out)
    assert 3 <= len(before) < 10, "the run should have been killed midway"
    finished = {r["key"]: r for r in before}
    resumed = subprocess.run(args + ["--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    after = read_records(out)
    keys = [r["key"] for r in after]
    assert len(keys) == len(set(keys)) == 10  # every repetition exactly once
    for rec in after[:len(before)]:
        assert rec == finished[rec["key"]]  # finished ones were kept, not redone
    assert sorted(r["repetition"] for r in after) == list(range(10))


def test_fixed_protocol_uses_the_given_test_set(tmp_path):
    ds = arff.read(TINY)
    train, test = ds.subset(range(15)), ds.subset(range(15, 20))
    results = toolkit.evaluate(train, ["nb-weka"], test=test)
    (rec,) = results.ok()
    assert rec["n_train"] == 15 and rec["n_test"] == 5 and rec["protocol"]["name"] == "fixed"


def test_cli_evaluate_table_json_and_errors(tmp_path):
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-c", "nb-gaussian", "--runs", "3"])
    assert result.exit_code == 0, result.output
    assert "nb-weka" in result.stdout and "(v/ /*)" in result.stdout
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "--runs", "2", "--json"])
    doc = json.loads(result.stdout)
    assert doc["schema"] == "toolkit.evaluate/1" and len(doc["records"]) == 2
    # ROC AUC is undefined on a test part of one class: null, not NaN (which is no JSON)
    result = runner.invoke(app, ["evaluate", "weather.nominal", "-c", "nb-weka", "-m", "roc-auc", "--runs", "5",
                                 "--json"])
    assert result.exit_code == 0, result.output

    def refuse(constant):
        raise AssertionError(f"{constant} in --json output")

    doc = json.loads(result.stdout, parse_constant=refuse)
    assert None in [r["metrics"]["roc-auc"] for r in doc["records"]]
    bad = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-wekka"])
    assert bad.exit_code == 2 and "did you mean 'nb-weka'" in bad.stderr and "Traceback" not in bad.stderr
    bad = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-gaussian:var_smothing=1"])
    assert bad.exit_code == 2 and "did you mean 'var_smoothing'" in bad.stderr
    bad = runner.invoke(app, ["evaluate", "irs", "-c", "nb-weka"])
    assert bad.exit_code == 2 and "did you mean 'iris'" in bad.stderr


def test_cli_compare_from_result_files(tmp_path):
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(TINY, ["nb-weka", "nb-gaussian"], runs=5, out=out)
    result = runner.invoke(app, ["compare", str(out), "--format", "markdown"])
    assert result.exit_code == 0 and result.stdout.startswith("| dataset | nb-weka | nb-gaussian |")
    result = runner.invoke(app, ["compare", str(out), "--json", "--baseline", "nb-gaussian"])
    doc = json.loads(result.stdout)
    assert doc["baseline"] == "nb-gaussian" and doc["rows"][0]["dataset"] == "tiny"
    assert len(doc["rows"][0]["nb-weka"]["values"]) == 5
    broken = tmp_path / "broken.jsonl"
    broken.write_text("not json\n{}\n")
    result = runner.invoke(app, ["compare", str(broken)])
    assert result.exit_code == 2 and f"{broken}:1:" in result.stderr


def test_protocol_validation():
    with pytest.raises(ParameterError):
        Protocol(name="bootstrap")
    with pytest.raises(ParameterError, match="between 0 and 1"):
        random_splits(10, 1, 1, test_fraction=1.5)
    assert os.environ.get("TOOLKIT_DEBUG") is None


def _class_first_folder(tmp_path):
    """A folder of two datasets: one with the class last (WEKA's default), one with it first."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    rows = [(1.0, "a"), (1.2, "a"), (0.9, "a"), (3.1, "b"), (2.9, "b"), (3.3, "b")] * 4
    last = "@relation last\n@attribute x numeric\n@attribute label {a,b}\n@data\n"
    last += "".join(f"{x},{c}\n" for x, c in rows)
    first = "@relation first\n@attribute kind {a,b}\n@attribute x numeric\n@attribute y numeric\n@data\n"
    first += "".join(f"{c},{x},{x * 2}\n" for x, c in rows)
    (folder / "last.arff").write_text(last)
    (folder / "first.arff").write_text(first)
    return folder


def test_class_attribute_per_dataset(tmp_path):
    folder = _class_first_folder(tmp_path)
    # default: the last attribute; 'first' ends in a numeric attribute and is skipped with a warning
    with pytest.warns(UserWarning, match="first: class attribute 'y' is numeric"):
        plain = toolkit.evaluate(folder, ["nb-gaussian"], runs=2)
    assert {r["dataset"]["name"] for r in plain.records} == {"last"}
    both = toolkit.evaluate(folder, ["nb-gaussian"], runs=2, class_attribute={"first": "kind"})
    by_name = {r["dataset"]["name"]: r for r in both.records}
    assert set(by_name) == {"first", "last"}
    assert by_name["first"]["dataset"]["n_classes"] == 2  # 'kind' is the only nominal attribute there
    # "*" covers the datasets without their own entry
    star = toolkit.evaluate(folder, ["nb-gaussian"], runs=1, class_attribute={"*": "kind", "last": "label"})
    assert {r["dataset"]["name"] for r in star.records} == {"first", "last"}
    with pytest.raises(ParameterError, match="'frist'"):
        toolkit.evaluate(folder, ["nb-gaussian"], runs=1, class_attribute={"frist": "kind"})


def test_class_option_on_the_command_line(tmp_path):
    from toolkit.cli.commands.evaluate import parse_class_options

    assert parse_class_options([]) == -1
    assert parse_class_options(["label"]) == "label"
    assert parse_class_options(["first=kind", "label"]) == {"first": "kind", "*": "label"}
    for bad in (["a", "b"], ["first=kind", "first=x"], ["=kind"], ["first="]):
        with pytest.raises(ParameterError):
            parse_class_options(bad)
    folder = _class_first_folder(tmp_path)
    result = runner.invoke(app, ["compare", str(folder), "-c", "nb-gaussian", "--runs", "2", "--class", "first=kind",
                                 "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert "first" in result.stdout and "last" in result.stdout
    bad = runner.invoke(app, ["compare", str(folder), "-c", "nb-gaussian", "--class", "frist=kind"])
    assert bad.exit_code == 2 and "frist" in bad.output and "Traceback" not in bad.output


def _one_line_error(result, needle):
    lines = result.stderr.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and needle in lines[0], result.stderr
    assert "Traceback" not in result.stderr


def test_two_datasets_of_one_name_are_refused_up_front(tmp_path):
    """Records are keyed by dataset name: two files named x.arff (or one file given twice) would be
    pooled into one row of the table and break the report."""
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    (tmp_path / "a" / "x.arff").write_text(TINY.read_text())
    (tmp_path / "b" / "x.arff").write_text(TINY.read_text().replace("@data", "% another file\n@data"))
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", str(tmp_path / "a" / "x.arff"), str(tmp_path / "b" / "x.arff"),
                                 "-c", "nb-weka", "-r", "2", "--out", str(out)])
    _one_line_error(result, "dataset name 'x' is given twice")
    assert "a/x.arff" in result.stderr and "b/x.arff" in result.stderr
    assert not out.exists()          # refused before anything was written
    result = runner.invoke(app, ["evaluate", str(TINY), str(TINY), "-c", "nb-weka", "-r", "2"])
    _one_line_error(result, "is given twice")
    with pytest.raises(ParameterError, match="given twice"):
        toolkit.evaluate([TINY, TINY], ["nb-weka"], runs=2)


def test_a_file_that_joins_two_experiments_is_refused(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=a)
    toolkit.evaluate(TINY, ["nb-weka"], runs=2, seed=5, out=b)
    head, *records = a.read_text().splitlines(keepends=True)
    joined = tmp_path / "joined.jsonl"
    joined.write_text(a.read_text() + b.read_text())            # two statements
    grafted = tmp_path / "grafted.jsonl"
    grafted.write_text(a.read_text() + "".join(b.read_text().splitlines(keepends=True)[1:]))  # records only
    for path, needle in ((joined, "holds more than one experiment (runs 3 -> 2)"),
                         (grafted, "grafted.jsonl: line 5 ran under another protocol")):
        for command in (["compare", str(path)], ["report", str(path), "-o", str(tmp_path / "r.json")]):
            _one_line_error(runner.invoke(app, command), needle)
    assert runner.invoke(app, ["compare", str(a)]).exit_code == 0


def test_records_the_statement_does_not_cover_are_refused_not_pooled(tmp_path):
    """Records joined from another file under the same protocol were pooled into the table: a repetition
    twice under two identities (a 4-run cell of 5 values), a repetition past the runs, a dataset or a
    pipeline the statement does not name (a row of its own). The message names the line an editor shows
    (the statement and a blank line count), not the record's count among the records."""
    a, other = tmp_path / "a.jsonl", tmp_path / "other.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=a)
    toolkit.evaluate(TINY, ["nb-gaussian"], runs=3, out=other)
    head, *records = a.read_text().splitlines()
    first = json.loads(records[0])

    def case(name, lines):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return path

    twin = dict(first, key="0" * 24)                                 # the same cell under another identity
    past = dict(json.loads(records[1]), repetition=99, key="1" * 24)
    renamed = json.loads(records[2])
    renamed["dataset"] = dict(renamed["dataset"], name="another", sha256="ab" * 32)
    for path, needle in (
            (case("twin", [head, *records, "", json.dumps(twin)]), ".jsonl: line 2 and line 6 are both dataset"),
            (case("past", [head, *records, "", json.dumps(past)]), "line 6 is repetition 99, past the experiment's 3"),
            (case("dataset", [head, *records, "", json.dumps(renamed)]), "line 6 is of dataset 'another'"),
            (case("pipeline", [head, *records, "", other.read_text().splitlines()[1]]),
             "line 6 is of pipeline 'nb-gaussian'")):
        for command in (["compare", str(path)], ["report", str(path), "-o", str(tmp_path / "r.json")]):
            _one_line_error(runner.invoke(app, command), needle)
    assert runner.invoke(app, ["compare", str(a)]).exit_code == 0


def test_a_results_line_longer_than_the_limit_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    """The reader held the whole file (readlines) and any line, however long: a torn 1.4 GB line ran out of
    memory. Lines are read one at a time, each at most MAX_RECORD_CHARS (here lowered to 4,000)."""
    from toolkit.evaluation import results

    good = tmp_path / "good.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=2, out=good)
    monkeypatch.setattr(results, "MAX_RECORD_CHARS", 4_000)
    longest = max(map(len, good.read_text().splitlines()))
    assert longest < 4_000                                     # the real records pass
    assert len(results.read_file(good)[1]) == 2
    for tail in ('{"extra": "' + "x" * 10_000 + '"}\n', '{"' + "x" * 10_000):   # whole, or torn without end
        long = tmp_path / "long.jsonl"
        long.write_text(good.read_text() + tail)
        with pytest.raises(ResultsFileError, match=r"long\.jsonl:4: a line of more than 4,000 characters"):
            results.read_file(long)


def test_a_results_line_that_would_expand_in_memory_is_refused_before_parsing(tmp_path, monkeypatch):
    """A record whose unknown key held a list of 50 million empty lists (150 MB) took 3.9 GB to parse.
    What a line would cost is estimated from its brackets and commas first (the limits lowered here: a
    line of 30,000 characters may cost 8 times its length)."""
    from toolkit import json_limits
    from toolkit.evaluation import results

    good = tmp_path / "good.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=2, out=good, store_proba=True)
    monkeypatch.setattr(json_limits, "MIN_CHECKED", 1_000)
    monkeypatch.setattr(json_limits, "EXPANSION_FLOOR", 0)
    assert len(results.read_file(good)[1]) == 2                 # real records, probabilities and all, pass
    lines = good.read_text().splitlines()
    for junk, needle in (("[]," * 10_000 + "[]", r"10,0\d\d lists and objects"), ("1," * 20_000 + "1", r"20,0\d\d elements")):
        record = json.loads(lines[1])
        bomb = json.dumps(record)[:-1] + ', "extra_junk": [' + junk + "]}"
        bad = tmp_path / "bomb.jsonl"
        bad.write_text("\n".join([lines[0], bomb, *lines[2:]]) + "\n")
        with pytest.raises(ResultsFileError, match=rf"bomb\.jsonl:2: .*{needle} .*would take about"):
            results.read_file(bad)


def test_compare_refuses_a_metric_the_results_lack_and_an_empty_file(tmp_path):
    a = tmp_path / "a.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=2, out=a)
    _one_line_error(runner.invoke(app, ["compare", str(a), "-m", "roc-auc"]),
                    "metric 'roc-auc' is not in the results (they hold: error, accuracy, log-loss)")
    with pytest.raises(ParameterError, match="metric 'roc-auc' is not in the results"):  # the API too, not
        toolkit.compare(str(a), metric="roc-auc")                                       # an empty table
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    _one_line_error(runner.invoke(app, ["compare", str(empty)]), "nothing to compare")
    # report named no file (a review of hostile inputs): which of several files was empty?
    _one_line_error(runner.invoke(app, ["report", str(empty), "-o", str(tmp_path / "r.html")]),
                    f"{empty}: the results hold no finished repetition")
    _one_line_error(runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-r", "2", "--report", "kappa"]),
                    "add -m kappa")
    kappa = runner.invoke(app, ["compare", str(TINY), "-c", "nb-weka", "-r", "2", "--report", "kappa", "-q"])
    assert kappa.exit_code == 0 and "n/a" not in kappa.stdout, kappa.output


def test_infinite_values_are_refused_before_the_run(tmp_path):
    """A value of Infinity makes every model's sums inf or NaN (WEKA itself fails on it): refused up front,
    naming the attribute, not after repetitions have failed with numpy's warnings."""
    path = tmp_path / "inf.arff"
    path.write_text("@relation e\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n"
                    + "1,2,x\n2,1,y\n" * 6 + "3,-Infinity,x\n")
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", str(path), "-c", "nb-weka", "-c", "nb-gaussian", "-r", "2",
                                 "--out", str(out)])
    _one_line_error(result, "cannot use infinite values; attribute 'b' holds -inf")
    assert not out.exists()


def test_resume_leaves_a_file_that_is_not_a_results_file_untouched(tmp_path):
    """--resume on a wrong --out (an ARFF file without a final newline) is refused before anything in it
    changes: the torn-line repair comes only after the file has been read as a results file."""
    notes = tmp_path / "notes.arff"
    notes.write_bytes(TINY.read_bytes() + b"last line")
    before = notes.read_bytes()
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-r", "2", "--out", str(notes), "--resume"])
    assert result.exit_code == 2 and "is this a toolkit results file?" in result.stderr
    assert notes.read_bytes() == before


@pytest.mark.parametrize("text", [b"my important notes, do not lose", b"\n\nsome text", b"[1, 2"])
def test_resume_leaves_a_file_of_one_unfinished_line_untouched(tmp_path, text):
    """A file whose only (or last) line has no newline and is not JSON was taken for a run killed in
    mid-write: --resume cut it back to its last newline (here the whole text) and wrote its statement.
    Only a line our writer began ('{"') is a torn record; the file is refused and left as it was."""
    notes = tmp_path / "notes.txt"
    notes.write_bytes(text)
    result = runner.invoke(app, ["evaluate", str(TINY), "-c", "nb-weka", "-r", "2", "--out", str(notes), "--resume"])
    assert result.exit_code == 2 and "is this a toolkit results file?" in result.stderr
    assert notes.read_bytes() == text


def test_a_full_disk_while_writing_results_is_one_error_and_the_file_resumes(tmp_path, monkeypatch):
    """ENOSPC while the records are written (here at the first fsync after the statement) was a 125-line
    traceback; now one error naming the file, and --resume then gives an uninterrupted run's records."""
    import errno

    from toolkit.evaluation import results

    whole = tmp_path / "whole.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=whole)
    real_fsync, calls = os.fsync, []

    def full(fd):
        calls.append(fd)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    out = tmp_path / "r.jsonl"
    monkeypatch.setattr(results.os, "fsync", full)
    with pytest.raises(ResultsFileError, match=r"r\.jsonl: cannot write \(No space left on device\).*--resume"):
        toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=out)
    monkeypatch.setattr(results.os, "fsync", real_fsync)
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=out, resume=True)

    def strip(path):
        return sorted(json.dumps({k: v for k, v in json.loads(line).items() if k != "timing"}, sort_keys=True)
                      for line in path.read_text().splitlines())

    assert strip(out) == strip(whole)


@pytest.mark.parametrize("metric, value, match", [
    ("kappa", 1e200, "finite number"), ("kappa", float("-inf"), "finite number"), ("log-loss", float("inf"), "finite"),
    ("kappa", 1.5, r"\[-1, 1\]"), ("roc-auc", -0.1, r"\[0, 1\]")])
def test_metric_values_the_writer_never_writes_are_refused_naming_the_line(tmp_path, metric, value, match):
    """Infinite or out-of-range metric values (the writer never writes them) were read: -inf kappa got a
    significance mark in compare, 1e200 overflowed the t-test with a traceback."""
    out = tmp_path / "r.jsonl"
    toolkit.evaluate(TINY, ["nb-weka"], runs=3, out=out, metrics=["error", "kappa", "log-loss", "roc-auc"])
    lines = out.read_text().splitlines()
    rec = json.loads(lines[2])
    rec["metrics"][metric] = value
    lines[2] = json.dumps(rec)   # Python's json writes Infinity, as a hand edit would
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(ResultsFileError, match=rf"bad\.jsonl:3: .*metric '{metric}' must be .*{match}"):
        toolkit.compare(str(bad))
    result = runner.invoke(app, ["compare", str(bad), "-m", metric])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "bad.jsonl:3" in result.stderr


def test_resume_and_compare_refuse_another_class_attribute_or_another_grid(tmp_path):
    """An experiment's datasets are known by their class attribute too, and its pipelines by their grid and
    tuning: --resume with another --class ran nothing ('3 of 3 already done') and showed the other task's
    table; another grid or --no-tune ran the new records beside the old under one name and averaged both;
    compare pooled files of either kind."""
    def run(*args):
        return runner.invoke(app, ["evaluate", "vote", "--runs", "2", "-q", *args])

    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run("-c", "bma-nb", "--out", str(first)).exit_code == 0
    before = first.read_bytes()
    for extra, needle in ((["--class", "1"], "dataset 'vote': class attribute 'Class' -> 'handicapped-infants'"),
                          (["-c", "bma-nb", "--no-tune"], "pipeline 'bma-nb': tuning on -> off")):
        args = extra if extra[0] == "-c" else ["-c", "bma-nb", *extra]
        result = run(*args, "--out", str(first), "--resume")
        _one_line_error(result, needle)
        assert first.read_bytes() == before
    assert run("-c", "bma-nb", "--class", "1", "--out", str(second)).exit_code == 0
    result = runner.invoke(app, ["compare", str(first), str(second)])
    _one_line_error(result, "class attribute 'Class' -> 'handicapped-infants'")
    # the same experiment resumes as before
    again = run("-c", "bma-nb", "--out", str(first), "--resume")
    assert again.exit_code == 0 and first.read_bytes() == before
    # another grid is another pipeline (its name says the grid): it runs beside the first, not pooled with it
    other = run("-c", "bma-nb", "-c", "bma-nb:H=0.5|3.0", "--out", str(first), "--resume")
    assert other.exit_code == 0, other.output
    assert first.read_bytes().startswith(before)
    names = [r["pipeline"]["name"] for r in map(json.loads, first.read_text().splitlines())
             if r.get("schema") == "toolkit.result/1"]
    assert names.count("bma-nb") == 2 and names.count("bma-nb:H=0.5|3.0") == 2


DAMAGE = {  # one field of the second record, as a hand-edited or foreign file might hold it
    "no dataset": (lambda r: r.pop("dataset"), "'dataset' must be an object with a name"),
    "dataset as a string": (lambda r: r.__setitem__("dataset", "vote"), "'dataset' must be an object"),
    "pipeline null": (lambda r: r.__setitem__("pipeline", None), "'pipeline' must be an object with a name"),
    "no metrics": (lambda r: r.pop("metrics"), "'metrics' must be an object"),
    "metric a string": (lambda r: r["metrics"].__setitem__("error", "abc"), "metric 'error' must be a number"),
    "error infinite": (lambda r: r["metrics"].__setitem__("error", float("inf")), "metric 'error' must be a finite number"),
    "error above 1": (lambda r: r["metrics"].__setitem__("error", 1.5), "metric 'error' must be in [0, 1]"),
    "repetition a string": (lambda r: r.__setitem__("repetition", "x"), "'repetition' must be a whole number"),
    "chosen_params a string": (lambda r: r.__setitem__("chosen_params", "x"), "'chosen_params' must be an object"),
    "predictions of two lengths": (lambda r: r["predictions"]["y_pred"].pop(), "'predictions' lists of different"),
    "no key": (lambda r: r.pop("key"), "'key' must be the record's identity"),
    "no protocol": (lambda r: r.pop("protocol"), "'protocol' must be an object"),
    "no n_test": (lambda r: r.pop("n_test"), "'n_test' must be a whole number"),
    # report summed a confusion matrix of the stored codes: a traceback (reshape) on a code past the classes
    "a prediction past the classes": (lambda r: r["predictions"]["y_pred"].__setitem__(0, 99),
                                      "'predictions.y_pred' holds class code 99, outside -1 (missing) to 1"),
    "a true class below -1": (lambda r: r["predictions"]["y_true"].__setitem__(0, -2),
                              "'predictions.y_true' holds class code -2"),
    "a code as text": (lambda r: r["predictions"]["y_pred"].__setitem__(0, "1"),
                       "'predictions.y_pred' must hold class codes"),
    "a stored confusion matrix of other classes": (
        lambda r: r["metrics"].__setitem__("confusion-matrix", {"labels": ["a"], "matrix": [[1.0]]}),
        "metric 'confusion-matrix' must be 2 x 2 numbers"),
    # from the hostile-input review: report's AttributeError / TypeError / IndexError on these
    "env a string": (lambda r: r.__setitem__("env", "x"), "'env' must be an object"),
    "env plugins a list": (lambda r: r["env"].__setitem__("plugins", []), "'env' must be an object (its 'plugins'"),
    "classifier name a number": (lambda r: r["pipeline"]["classifier"].__setitem__("name", 5),
                                 "'pipeline.classifier' must be an object with a name"),
    "classifier params a list": (lambda r: r["pipeline"]["classifier"].__setitem__("params", []),
                                 "'pipeline.classifier' must be an object with a name, 'params'"),
    "class counts one short": (lambda r: r.__setitem__("train_class_counts", r["train_class_counts"][:1]),
                               "'train_class_counts' must be 2 numbers"),
    "probabilities of three classes": (lambda r: r["predictions"].__setitem__(
        "proba", [[0.2, 0.3, 0.5]] * len(r["predictions"]["y_true"])), "'predictions.proba' must hold one list of 2"),
    "per-class recall one short": (lambda r: r["metrics"].__setitem__("per-class", {"recall": [0.5]}),
                                   "metric 'per-class' must hold lists of 2 values"),
    "pr-curve of two lengths": (lambda r: r["metrics"].__setitem__(
        "pr-curve", {"democrat": {"precision": [1.0, 0.5], "recall": [0.5]}}), "metric 'pr-curve' of class 'democrat'"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_record_is_one_error_line_naming_the_file_and_line(case, tmp_path):
    """compare and report read results files written by hand or by other tools too: a record whose fields are
    JSON but not of the types the toolkit writes gave a traceback (KeyError, AttributeError, OverflowError)."""
    good = tmp_path / "good.jsonl"
    assert runner.invoke(app, ["evaluate", "vote", "-c", "nb-weka", "--runs", "2", "-q", "--out", str(good)]).exit_code == 0
    lines = good.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    change, needle = DAMAGE[case]
    change(record)
    lines[2] = json.dumps(record)
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    statement = json.loads(lines[0])   # and the statement's objects (report's AttributeError on them)
    for key, value in (("timing", 1), ("versions", {"plugins": "x"})):
        broken = tmp_path / f"statement-{key}.jsonl"
        broken.write_text("\n".join([json.dumps({**statement, key: value}), *lines[1:]]) + "\n", encoding="utf-8")
        _one_line_error(runner.invoke(app, ["report", str(broken), "-o", str(tmp_path / "s.html")]),
                        f"{broken}:1: a damaged experiment statement: '{key}")
    for command in (["compare", str(bad)], ["report", str(bad), "-o", str(tmp_path / "r.html")]):
        _one_line_error(runner.invoke(app, command), f"{bad}:3: a damaged toolkit.result/1 record: {needle}")
    assert not (tmp_path / "r.html").exists()


def test_parallel_runs_in_two_threads_of_one_process_keep_their_own_tasks():
    """--jobs workers fork with the run's state in a module global: a second run in another thread
    replaced it before the first run's fork, whose workers then ran the other dataset's repetitions (iris
    records with vote's predictions); and the runs' BLAS caps, saved and put back out of order, left the
    process at one thread. Parallel runs of one process now take turns."""
    import threading

    from threadpoolctl import threadpool_info

    before = [p["num_threads"] for p in threadpool_info()]
    serial = {name: toolkit.evaluate(name, ["nb-weka"], runs=12, metrics=["error"]).records for name in ("iris", "vote")}
    got: dict[str, list] = {}

    def run(name):
        got[name] = toolkit.evaluate(name, ["nb-weka"], runs=12, metrics=["error"], jobs=2).records

    for _ in range(3):
        threads = [threading.Thread(target=run, args=(name,)) for name in ("iris", "vote")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name in ("iris", "vote"):
            def canon(records):
                return sorted(json.dumps({k: v for k, v in r.items() if k != "timing"}, sort_keys=True) for r in records)

            assert canon(got[name]) == canon(serial[name]), name
        assert [p["num_threads"] for p in threadpool_info()] == before


def test_a_killed_worker_is_one_error_line_and_resume_finishes(tmp_path):
    """kill -9 of a --jobs worker (what the kernel's out-of-memory killer does) gave a 93-line
    BrokenProcessPool traceback; now one line that says what was kept, and --resume finishes the run."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "slow.py").write_text(SLOW_PLUGIN)
    out = tmp_path / "run.jsonl"
    args = [sys.executable, "-m", "toolkit", "--plugins-dir", str(plugins), "evaluate", str(TINY), "-c", "slow-uniform",
            "--runs", "12", "--jobs", "2", "--out", str(out), "-q"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    workers: list[int] = []
    while time.time() < deadline and not workers:
        if out.exists() and len(out.read_text().splitlines()) >= 3:   # the experiment and 2 records
            workers = [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and _parent(p) == proc.pid
                       and b"resource_tracker" not in (p / "cmdline").read_bytes()]   # the forked workers only
        time.sleep(0.05)
    assert workers, "no worker process found"
    os.kill(workers[0], signal.SIGKILL)
    _, stderr = proc.communicate(timeout=120)
    lines = stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1, stderr
    assert "a worker process of --jobs 2 died" in lines[0] and "--resume" in lines[0] and "Traceback" not in stderr
    resumed = subprocess.run(args + ["--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    keys = [r["key"] for r in read_records(out)]
    assert len(keys) == len(set(keys)) == 12


def _parent(proc_dir: Path) -> int:
    try:
        return int((proc_dir / "stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def test_splits_are_made_when_a_repetition_asks_for_them():
    """--runs 2000000 built every split's index arrays before the first repetition (2.7 GB, no record
    written after 30 s): the checks before a run now make one split, and a task its own when it runs.
    The splits are those of algorithms.md 5.1.2 computed here from its sentence."""
    import tracemalloc

    from toolkit.evaluation.harness import check_experiment
    from toolkit.models.pipeline import Pipeline

    ds = toolkit.load_arff("iris")
    tracemalloc.start()
    splits = check_experiment([ds], [Pipeline("nb-weka")], Protocol(repetitions=1_000_000), [])[0]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(splits) == 1_000_000 and peak < 20_000_000, peak
    for r in (0, 1, 999_999, 123_456):
        perm = np.random.default_rng(1 + r).permutation(150)
        split = splits[r]
        assert split.repetition == r and split.seed == 1 + r
        np.testing.assert_array_equal(split.test, perm[:15])
        np.testing.assert_array_equal(split.validation, perm[15:29])   # ceil(135 * 0.1) = 14
        np.testing.assert_array_equal(split.fit, perm[29:])


class _Recording:
    """A third-party-style component (no ClassifierBase): keeps the class codes it was fitted on."""

    def __init__(self) -> None:
        self.seen: np.ndarray | None = None

    def fit(self, X, y, sample_weight=None):
        self.seen = np.asarray(y).copy()
        self.classes_ = np.unique(self.seen)
        counts = np.bincount(self.seen, minlength=2).astype(float)
        self.prior_ = counts / counts.sum()
        return self

    def predict_proba(self, X):
        return np.tile(self.prior_, (X.shape[0], 1))

    def predict(self, X):
        return np.full(X.shape[0], int(np.argmax(self.prior_)))


class _RecordingSelector:
    def fit(self, X, y):
        self.seen = np.asarray(y).copy()
        self.support_ = np.arange(X.shape[1])
        return self


def test_rows_with_a_missing_class_reach_no_component(tmp_path):
    """WEKA's classifiers skip a training row whose class is '?'; a plugin that does not know to do so
    was given code -1 as a class of its own (its probabilities then summed to 0.86 over the real classes)."""
    rows = ["1,a", "2,a", "3,?", "4,b", "5,?", "6,a", "7,b", "8,?"]
    path = tmp_path / "m.arff"
    path.write_text("@relation m\n@attribute x numeric\n@attribute c {a,b}\n@data\n" + "\n".join(rows) + "\n")
    ds = toolkit.load_arff(str(path))
    clf, fs = _Recording(), _RecordingSelector()
    fitted = toolkit.Pipeline(clf, feature_selector=fs).fit(ds)
    assert fitted.classifier.seen.tolist() == [0, 0, 1, 0, 1]     # the labelled rows, in order
    assert fitted.feature_selector.seen.tolist() == [0, 0, 1, 0, 1]
    proba = fitted.predict(ds).proba
    np.testing.assert_allclose(proba, np.tile([3 / 5, 2 / 5], (8, 1)))


def test_resuming_with_an_object_component_of_other_parameters_is_refused(tmp_path):
    """An object's parameters belong to the experiment's statement: resuming k=8's file with k=1 reused
    k=8's records as if they were k=1's."""
    from toolkit.api import FeatureSelectorBase

    class FirstColumns(FeatureSelectorBase):
        def __init__(self, *, k: int = 2):
            self.k = k

        def fit(self, X, y, schema=None):
            self.support_ = np.arange(min(self.k, X.shape[1]))
            return self

    out = tmp_path / "r.jsonl"
    toolkit.evaluate(str(TINY), [toolkit.Pipeline("nb-weka", feature_selector=FirstColumns(k=3))], runs=2,
                     out=str(out))
    with pytest.raises(ResultsFileError, match="another experiment"):
        toolkit.evaluate(str(TINY), [toolkit.Pipeline("nb-weka", feature_selector=FirstColumns(k=1))], runs=2,
                         out=str(out), resume=True)
    again = toolkit.evaluate(str(TINY), [toolkit.Pipeline("nb-weka", feature_selector=FirstColumns(k=3))], runs=2,
                             out=str(out), resume=True)
    assert len(again.records) == 2


def test_an_instance_of_a_registered_classifier_keeps_its_capabilities(tmp_path):
    """Given as an object, liblinear-svm was asked for probabilities it does not give (every run failed) and
    nb-multinomial met nominal attributes at fit time instead of being refused up front."""
    from toolkit.errors import CapabilityError

    svm = toolkit.evaluate(str(TINY), [toolkit.get_classifier("liblinear-svm")], runs=2)
    assert [r["status"] for r in svm.records] == ["ok", "ok"]
    assert "log-loss" not in svm.records[0]["metrics"] and "error" in svm.records[0]["metrics"]
    with pytest.raises(CapabilityError, match="nominal"):
        toolkit.evaluate(str(TINY), [toolkit.get_classifier("nb-multinomial")], runs=2)
    # and it can be saved like the named component, since its registered name is known
    path = tmp_path / "svm.tkm"
    ds = toolkit.load_arff(str(TINY))
    fitted = toolkit.Pipeline(toolkit.get_classifier("liblinear-svm", C=0.5)).fit(ds)
    toolkit.save_model(fitted, ds, str(path))
    loaded = toolkit.load_model(str(path))
    np.testing.assert_array_equal(loaded.predict(ds).y_pred, fitted.predict(ds).y_pred)


def test_results_to_frame_without_pandas_says_what_is_missing(monkeypatch):
    from toolkit.errors import CapabilityError

    results = toolkit.evaluate(str(TINY), ["nb-weka"], runs=2)
    monkeypatch.setitem(sys.modules, "pandas", None)   # import pandas then raises ImportError
    with pytest.raises(CapabilityError, match="needs pandas"):
        results.to_frame()


def test_baseline_in_the_spelling_of_c_and_two_grids_of_one_classifier(tmp_path):
    """--baseline compared raw strings with the canonical names (sorted parameters, JSON values), so the
    README's `-c liblinear-lr:C=1,B=1 --baseline liblinear-lr:C=1,B=1` was refused; and a grid was not part
    of a pipeline's name, so two grids of one classifier were 'given twice'."""
    out = tmp_path / "r.jsonl"
    result = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-c", "liblinear-lr:C=1,B=1", "-c",
                                 "nb-multinomial:variant=L-M", "--runs", "2", "-q", "--out", str(out),
                                 "--baseline", "liblinear-lr:C=1,B=1"])
    assert result.exit_code == 0, result.output
    assert "better / worse than liblinear-lr:B=1,C=1" in result.stdout
    comparison = toolkit.compare(out, baseline='nb-multinomial:variant="L-M"')
    assert comparison.baseline == 'nb-multinomial:variant="L-M"'
    assert toolkit.compare(out, baseline="nb-multinomial:variant=L-M").baseline == comparison.baseline
    with pytest.raises(toolkit.ToolkitError, match="not among the results"):
        toolkit.compare(out, baseline="liblinear-lr:C=2,B=1")
    grids = runner.invoke(app, ["evaluate", "iris", "-c", "bma-nb:H=0.5|0.6", "-c", "bma-nb:H=1.4|1.5", "-c", "bma-nb",
                                "--runs", "2", "-q", "--json", "--baseline", "bma-nb:H=1.5|1.4"])
    assert grids.exit_code == 2 and "not among the pipelines" in grids.stderr  # a grid's order is its own
    grids = runner.invoke(app, ["evaluate", "iris", "-c", "bma-nb:H=0.5|0.6", "-c", "bma-nb:H=1.4|1.5", "-c", "bma-nb",
                                "--runs", "2", "-q", "--out", str(tmp_path / "g.jsonl")])
    assert grids.exit_code == 0, grids.output
    records = [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()]
    chosen = {}
    for r in records:
        if r.get("schema") == "toolkit.result/1":
            chosen.setdefault(r["pipeline"]["name"], set()).add(r["chosen_params"]["clf.H"])
    assert set(chosen) == {"bma-nb:H=0.5|0.6", "bma-nb:H=1.4|1.5", "bma-nb"}
    assert chosen["bma-nb:H=0.5|0.6"] <= {0.5, 0.6} and chosen["bma-nb:H=1.4|1.5"] <= {1.4, 1.5}
    untuned = runner.invoke(app, ["evaluate", "iris", "-c", "bma-nb:H=0.5|0.6", "-c", "bma-nb:H=1.4|1.5", "--no-tune",
                                  "--runs", "2", "-q"])
    # untuned, a grid was dropped for the default (both were then 'given twice'): refused, naming the grid
    assert untuned.exit_code == 2 and "is given a grid for H (0.5|0.6) but tuning is off" in untuned.stderr


def test_a_resumed_run_reports_the_last_record_of_each_task(tmp_path):
    """evaluate --resume built its table, warnings and exit code from every line of the file: a failed record
    of a task that was retried and then succeeded still counted (exit 1, 'repetitions failed'), and a record
    written twice counted twice in its cell; compare read the same file right."""
    out = tmp_path / "r.jsonl"
    assert runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-c", "liblinear-lr", "--runs", "3", "-q",
                               "--out", str(out)]).exit_code == 0
    lines = out.read_text().splitlines()
    records = [json.loads(x) for x in lines[1:]]
    target = next(i for i, r in enumerate(records) if r["pipeline"]["name"] == "liblinear-lr" and r["repetition"] == 1)
    failed = {k: v for k, v in records[target].items() if k not in ("metrics", "predictions", "chosen_params",
                                                                     "tuning")}
    failed.update(status="failed", error="made up for this test", error_kind="bug")
    twice = next(i for i, r in enumerate(records) if r["pipeline"]["name"] == "liblinear-lr" and r["repetition"] == 0)
    edited = [lines[0]] + [json.dumps(failed)] + lines[1:] + [lines[1 + twice]]
    out.write_text("\n".join(edited) + "\n")
    clean = runner.invoke(app, ["compare", str(out), "--json"])
    resumed = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-c", "liblinear-lr", "--runs", "3", "-q",
                                  "--out", str(out), "--resume", "--json"])
    assert resumed.exit_code == 0 and "failed" not in resumed.stderr, resumed.stderr
    assert clean.exit_code == 0
    mine = json.loads(resumed.stdout)
    keys = [r["key"] for r in mine["records"]]
    assert len(keys) == len(set(keys)) == 6 and all(r["status"] == "ok" for r in mine["records"])
    theirs = json.loads(clean.stdout)
    assert mine["comparison"] == theirs


def test_protocol_options_that_would_be_ignored_or_tune_on_the_fit_data_are_refused(tmp_path):
    """--protocol thesis ran with --inner-folds/--stratified/--seed/--runs silently ignored (one fixed split),
    and a validation fraction taking the whole training part tuned on the instances it fitted (n_fit =
    n_validation = n_train = 135 on iris)."""
    thesis = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--protocol", "thesis", "--inner-folds", "5",
                                 "--seed", "7", "-q"])
    _one_line_error(thesis, "--seed, --inner-folds would be ignored")
    assert runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--protocol", "thesis", "-q"]).exit_code == 0
    out = tmp_path / "r.jsonl"
    wide = runner.invoke(app, ["evaluate", "iris", "-c", "bma-nb", "--validation-fraction", "0.999", "-q",
                               "--out", str(out)])
    _one_line_error(wide, "validation fraction 0.999 leaves no data to fit on for 135 training instances")
    assert not out.exists()
    fixed = runner.invoke(app, ["evaluate", "iris", "--test", "iris", "-c", "bma-nb", "--validation-fraction", "0.999",
                                "-q"])
    _one_line_error(fixed, "validation fraction 0.999 leaves no data to fit on for 150 training instances")
    # the largest share that leaves one instance to fit on is accepted: 134 validate, 1 fits
    ok = runner.invoke(app, ["evaluate", "iris", "-c", "bma-nb", "--validation-fraction", "0.99", "--runs", "1", "-q",
                             "--out", str(out)])
    assert ok.exit_code == 0, ok.output
    record = json.loads(out.read_text().splitlines()[1])
    assert (record["n_train"], record["n_validation"], record["n_fit"]) == (135, 134, 1)


def test_a_summary_over_records_with_and_without_probabilities_is_refused(tmp_path):
    """Resuming a run started without --summary, now with it, scored the earlier repetitions (stored without
    probabilities) as certain: MAE, RMSE and ROC area of the summary moved (ROC 0.886 for 0.956), exit 0."""
    out = tmp_path / "r.jsonl"
    assert runner.invoke(app, ["evaluate", "vote", "-c", "nb-weka", "--runs", "4", "-q", "--out", str(out)]).exit_code == 0
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[:3]) + "\n")     # two repetitions left to run
    resumed = runner.invoke(app, ["evaluate", "vote", "-c", "nb-weka", "--runs", "4", "-q", "--out", str(out),
                                  "--resume", "--summary"])
    _one_line_error(resumed, "vote / nb-weka: 2 of 4 repetitions were stored without their test probabilities")
    fresh = runner.invoke(app, ["evaluate", "vote", "-c", "nb-weka", "--runs", "4", "-q", "--summary"])
    assert fresh.exit_code == 0 and "Summary: vote / nb-weka, 4 repetitions" in fresh.stdout


def test_the_command_keeps_records_without_predictions_in_memory(tmp_path, monkeypatch):
    """Every finished record stayed in memory with its test predictions until the run ended (about 120 kB a
    letter repetition; --runs 100000 would need ~12 GB): the command keeps them only for --summary, the
    results file has them all."""
    import toolkit.evaluation.api as api

    kept = []
    real = api.run

    def spy(*args, **kwargs):
        results = real(*args, **kwargs)
        kept.append((kwargs.get("keep_predictions"), results.records))
        return results

    monkeypatch.setattr(api, "run", spy)
    out = tmp_path / "r.jsonl"
    assert runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--runs", "3", "-q", "--out", str(out)]).exit_code == 0
    (flag, records), = kept
    assert flag is False and len(records) == 3 and all("predictions" not in r for r in records)
    on_disk = [json.loads(x) for x in out.read_text().splitlines()[1:]]
    assert all(len(r["predictions"]["y_pred"]) == 15 for r in on_disk)
    assert [{k: v for k, v in r.items() if k != "predictions"} for r in on_disk] == records
    kept.clear()
    summary = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--runs", "3", "-q", "--summary"])
    assert summary.exit_code == 0 and "Correctly Classified Instances" in summary.stdout
    assert kept[0][0] is True and all("predictions" in r for r in kept[0][1])
    # the Python API keeps them by default, and drops them when asked (a resume's earlier records too)
    first = tmp_path / "a.jsonl"
    assert all("predictions" in r for r in toolkit.evaluate("iris", ["nb-weka"], runs=3, out=first))
    first.write_text("\n".join(first.read_text().splitlines()[:3]) + "\n")   # one repetition left to run
    light = toolkit.evaluate("iris", ["nb-weka"], runs=3, out=first, resume=True, keep_predictions=False)
    assert len(light.records) == 3 and all("predictions" not in r for r in light.records)


@pytest.mark.parametrize("stratified", [False, True])
def test_kfold_parts_are_the_definition_and_made_on_demand(stratified):
    """The folds as the definition makes them one by one (WEKA's fold sizes, or each class dealt round-robin
    over the folds in permutation order), the fit part being the other folds in fold order."""
    rng = np.random.default_rng(7)
    for n, k in [(10, 2), (37, 5), (100, 100), (101, 7)]:
        train = rng.permutation(3 * n)[:n]
        y = rng.integers(0, 3, 3 * n) if stratified else None
        if stratified:
            cls = y[train]
            slot = np.empty(n, dtype=np.int64)
            position = 0
            for c in range(3):                       # class by class, in permutation order
                for i in np.flatnonzero(cls == c):
                    slot[i] = position % k
                    position += 1
            folds = [train[slot == f] for f in range(k)]
        else:
            folds, start = [], 0
            for f in range(k):
                size = n // k + (1 if f < n % k else 0)
                folds.append(train[start:start + size])
                start += size
        parts = kfold_parts(train, k, y)
        assert len(parts) == k
        for f in (*range(k), -1):
            fit, val = parts[f]
            want_val = folds[f]
            want_fit = np.concatenate([folds[g] for g in range(k) if g != f % k])
            np.testing.assert_array_equal(val, want_val)
            np.testing.assert_array_equal(fit, want_fit)
        assert [len(v) for _, v in parts] == [len(v) for v in folds]
        with pytest.raises(IndexError):
            parts[k]


def test_leave_one_out_inner_folds_on_many_instances_stay_linear():
    """k = n folds: the parts hold the n instances once (O(k n) lists were 20 GB at n = 50,000)."""
    import tracemalloc

    n = 50_000
    train = np.random.default_rng(0).permutation(n)
    tracemalloc.start()
    parts = kfold_parts(train, n)
    fit, val = parts[n - 1]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(parts) == n and len(val) == 1 and len(fit) == n - 1 and val[0] == train[-1]
    assert peak < 20 * 8 * n          # a few copies of the n indices, not n of them


def test_runs_beyond_what_a_run_holds_are_refused_up_front():
    from toolkit.evaluation.harness import check_experiment
    from toolkit.evaluation.resampling import MAX_REPETITIONS
    from toolkit.models.pipeline import Pipeline

    with pytest.raises(ParameterError, match="at most 1,000,000"):
        Protocol(repetitions=MAX_REPETITIONS + 1)
    with pytest.raises(ParameterError, match="from 1 to 1,000,000"):
        random_splits(100, 10**9)
    ds = toolkit.load_dataset("iris")
    protocol = Protocol(repetitions=MAX_REPETITIONS // 2 + 1)
    with pytest.raises(ParameterError, match="1,000,002 repetitions in all"):
        check_experiment([ds], [Pipeline("nb-weka"), Pipeline("nb-gaussian")], protocol, [])


def test_a_resumed_run_states_the_experiment_of_its_file(tmp_path):
    """A resumed run reported an experiment started at the resume (its own new statement), where the file,
    and compare reading it, say when the experiment began; and what the resume adds is part of it."""
    out = tmp_path / "r.jsonl"
    assert runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--runs", "2", "-q", "--out", str(out)]).exit_code == 0
    lines = out.read_text().splitlines()
    head = json.loads(lines[0])
    head["timing"]["created_utc"] = "2001-02-03T04:05:06+00:00"
    out.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")
    resumed = runner.invoke(app, ["evaluate", "iris", "-c", "nb-weka", "-c", "nb-gaussian", "--runs", "2", "-q",
                                  "--out", str(out), "--resume", "--json"])
    assert resumed.exit_code == 0, resumed.stderr
    mine = json.loads(resumed.stdout)["comparison"]["experiment"]
    theirs = json.loads(runner.invoke(app, ["compare", str(out), "--json"]).stdout)["experiment"]
    assert mine["timing"]["created_utc"] == "2001-02-03T04:05:06+00:00"
    assert mine["pipelines"] == ["nb-weka", "nb-gaussian"]
    assert mine == theirs
