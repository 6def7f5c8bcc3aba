"""Review of the evaluation harness: splits against the spec's sentences and WEKA's own output, tuning
against a brute-force loop, results files across kills and hand edits, and what travels to Dask workers.
Every expected value is computed here from algorithms.md 5.1, read from WEKA's output
(scripts/weka/make_split_refs.py), or comes from a brute-force loop; none from the code under test alone."""

from __future__ import annotations

import json
import pickle
from contextlib import contextmanager
from dataclasses import replace

import numpy as np
import pytest

import toolkit
from conftest import ROOT
from toolkit.data import arff
from toolkit.evaluation.resampling import random_splits, thesis_split, weka_randomize
from toolkit.models.pipeline import Pipeline

UCI = ROOT.parent / "shared" / "datasets" / "uci"


def _uci(name):
    path = UCI / f"{name}.arff"
    if not path.exists():
        path = ROOT / "datasets" / f"{name}.arff"
    return arff.read(path)


# ----------------------------------------------------------------------------- splits

def test_thesis_split_is_wekas_randomize_and_folds():
    """algorithms.md 5.1.3 against WEKA 3.6.14 itself: Instances.randomize(new Random(10)), testCV(10, 9) as
    the test part, testCV(10, 0) as the validation part, trainCV(10, 9) (in its order) as the refit part."""
    ref = json.loads((ROOT / "tests" / "golden" / "weka_thesis_splits.json").read_text())
    assert ref["weka"] == "3.6.14" and len(ref["splits"]) == 12
    for n, weka in ref["splits"].items():
        n = int(n)
        assert weka_randomize(n, 10).tolist() == weka["order"]
        split = thesis_split(n)
        assert split.test.tolist() == weka["fold9"]
        assert split.validation.tolist() == weka["fold0"]
        assert split.train.tolist() == weka["train9"]
        fold0 = set(weka["fold0"])
        assert sorted(split.fit.tolist()) == sorted(i for i in weka["train9"] if i not in fold0)


@pytest.mark.parametrize("n", [2, 3, 11, 101, 435])
def test_random_splits_are_the_sentence_for_other_seeds(n):
    """5.1.2 with seed s: repetition r permutes with default_rng(s + r); test = first ceil(n/10), validation =
    the first ceil(|train|/10) of the rest (when that leaves something to fit on)."""
    for seed in (0, 7):
        splits = random_splits(n, 3, seed)
        for r in range(3):
            perm = np.random.default_rng(seed + r).permutation(n)
            n_test = (n + 9) // 10
            train = perm[n_test:]
            n_val = (len(train) + 9) // 10
            s = splits[r]
            assert s.seed == seed + r
            assert s.test.tolist() == perm[:n_test].tolist() and s.train.tolist() == train.tolist()
            if n_val < len(train):
                assert s.validation.tolist() == train[:n_val].tolist() and s.fit.tolist() == train[n_val:].tolist()


# ----------------------------------------------------------------------------- tuning

def _brute_force_choice(ds, clf, seed, r):
    """Fit every grid point on the fit part, count validation errors on rows with a known class, keep the
    first with the fewest (algorithms.md 5.1.2, 0.2)."""
    pipeline = Pipeline(clf)
    points = pipeline.grid_points()
    n = ds.n_instances
    perm = np.random.default_rng(seed + r).permutation(n)
    train = perm[(n + 9) // 10:]
    n_val = (len(train) + 9) // 10
    val, fit = train[:n_val], train[n_val:]
    y_val = np.asarray(ds.y)[val]
    errors = []
    for point in points:
        pred = pipeline.fit(ds.subset(fit), point, seed=seed + r).predict(ds.subset(val))
        errors.append(int(sum(1 for p, t in zip(pred.y_pred, y_val) if t >= 0 and p != t)))
    best = min(range(len(points)), key=lambda i: (errors[i], i))
    return points[best], errors


@pytest.mark.parametrize("clf", ["bma-nb", "nb-gaussian", "cmls:C=[0.01,1,100]"])
def test_tuning_is_the_brute_force_choice_with_missing_classes_and_weights(clf):
    """Iris with 25 classes removed and weights 0.5/1/3: the chosen point and every validation count equal
    the loop's (bma-nb has validation ties; bma-nb and nb-gaussian score the grid from one fit, cmls refits)."""
    ds = _uci("iris")
    rng = np.random.default_rng(5)
    y = np.asarray(ds.y).copy()
    y[rng.choice(ds.n_instances, 25, replace=False)] = -1
    ds = replace(ds, y=y, weights=rng.choice([0.5, 1.0, 3.0], ds.n_instances), relation="iris-mw", sha256=None,
                 path=None)
    results = toolkit.evaluate(ds, [clf], runs=2, seed=3, metrics=["error"])
    assert len(results.records) == 2
    for rec in results.records:
        best, errors = _brute_force_choice(ds, clf, 3, rec["repetition"])
        assert rec["chosen_params"] == best
        assert [t["validation_errors"] for t in rec["tuning"]] == errors


# ----------------------------------------------------------------------------- Dask payloads

def _synthetic(path, n, classes=3):
    rng = np.random.default_rng(0)
    lines = [f"{a:.3f},c{int(c)}" for a, c in zip(rng.normal(size=n), rng.integers(0, classes, n))]
    path.write_text("@relation synthetic\n@attribute a numeric\n@attribute class {"
                    + ",".join(f"c{i}" for i in range(classes)) + "}\n@data\n" + "\n".join(lines) + "\n")
    return path


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _FakeClient:
    """Runs each submitted task at once, in this process, after pickling its payload as Dask would."""

    def __init__(self):
        self.task_bytes = []

    def run(self, fn, *args):
        return {}   # no worker can read the file: the dataset is scattered once

    def scatter(self, ds, **kwargs):
        return ds

    def submit(self, fn, payload, scattered, key=None, pure=None):
        self.task_bytes.append(len(pickle.dumps(payload["task"])))
        payload = pickle.loads(pickle.dumps({k: v for k, v in payload.items() if k != "execute"}))
        from toolkit.evaluation.harness import _execute

        return _Done(fn({**payload, "execute": _execute}, pickle.loads(pickle.dumps(scattered))))

    def cancel(self, *args, **kwargs):
        pass


def test_a_stratified_cluster_task_does_not_carry_the_class_column(tmp_path, monkeypatch):
    """The dataset travels to a worker once (distributed.py); a stratified run's task carried the whole
    class vector with it (8 bytes an instance, every repetition: 8 MB a task for a million instances). The
    records must still be those of a local run."""
    import distributed

    from toolkit.evaluation import distributed as dist

    client = _FakeClient()

    @contextmanager
    def fake_client(spec):
        yield client

    monkeypatch.setattr(dist, "dask_client", fake_client)
    monkeypatch.setattr(distributed, "as_completed", lambda futures: iter(list(futures)))
    path = _synthetic(tmp_path / "synthetic.arff", 20000)
    on_cluster = toolkit.evaluate(path, ["nb-weka"], runs=3, stratified=True, cluster="local:2", metrics=["error"])
    local = toolkit.evaluate(path, ["nb-weka"], runs=3, stratified=True, metrics=["error"])
    assert len(client.task_bytes) == 3
    assert max(client.task_bytes) < 8 * 20000 / 10   # a tenth of the class column, at most
    strip = lambda recs: sorted(json.dumps({k: v for k, v in r.items() if k != "timing"}, sort_keys=True)
                                for r in recs)
    assert strip(on_cluster.records) == strip(local.records)


# ----------------------------------------------------------------------------- hostile sizes

def _declared(path, n=60, classes=10_000):
    """A small dataset that declares many classes (7 of them used)."""
    rows = "\n".join(f"{i / n:.4f},c{i % 7}" for i in range(n))
    path.write_text("@relation declared\n@attribute a numeric\n@attribute class {"
                    + ",".join(f"c{i}" for i in range(classes)) + "}\n@data\n" + rows + "\n")
    return path


def test_records_of_a_dataset_with_many_classes_are_counted_before_the_run(tmp_path):
    """A run keeps every record until it ends; MAX_REPETITIONS promised about 3 GB at most (3 kB a record).
    A record of a dataset declaring 10,000 classes holds 10,000 class counts: measured here, far more than
    3 kB, so 10,000 repetitions of it (fewer than MAX_REPETITIONS) must be refused before any repetition."""
    import gc
    import tracemalloc

    from toolkit.evaluation.harness import Protocol, check_experiment
    from toolkit.evaluation.resampling import MAX_REPETITIONS

    path = _declared(tmp_path / "declared.arff")
    toolkit.evaluate(path, ["nb-weka"], runs=1, metrics=["error"])   # imports and caches out of the count

    def held(runs):
        gc.collect()
        tracemalloc.start()
        results = toolkit.evaluate(path, ["nb-weka"], runs=runs, metrics=["error"], keep_predictions=False)
        gc.collect()
        size = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert len(results.records) == runs
        return size

    per_record = (held(12) - held(2)) / 10
    assert per_record > 100 * 3_000 / 2   # well above the 3 kB the repetition limit assumed
    runs = 10_000
    assert runs < MAX_REPETITIONS and runs * per_record > MAX_REPETITIONS * 3_000
    ds = arff.read(path)
    pipelines = [Pipeline("nb-weka")]
    with pytest.raises(toolkit.errors.ParameterError, match="10,000 class counts.*GB"):
        check_experiment([ds], pipelines, Protocol(repetitions=runs), [])
    check_experiment([ds], pipelines, Protocol(repetitions=100), [])   # 30 MB: runs


def _largest_remainder(counts, m):
    """m shared out over the classes in proportion to their counts: whole parts, then one more each to the
    largest exact remainders, ties to the class that comes first (algorithms.md 0.2)."""
    n = sum(counts)
    take = [c * m // n for c in counts]
    remainders = [c * m % n for c in counts]
    for i in sorted(range(len(counts)), key=lambda i: (-remainders[i], i))[:m - sum(take)]:
        take[i] += 1
    return take


def test_stratified_shares_break_equal_remainders_by_class_order():
    """A stratified head of m instances out of n: float remainders made equal shares unequal (counts 4, 7,
    28, 9 and m = 16: each third is a tie, which went to the class of 28, not the first), so a test part
    differed from the rule's. The head is the first of each class in the given order."""
    from toolkit.evaluation.resampling import _stratified_head

    rng = np.random.default_rng(0)
    cases = [([4, 7, 28, 9], 16), ([4, 6, 1, 37], 16), ([21, 2, 27], 16)]
    cases += [([int(c) for c in rng.integers(1, 40, int(rng.integers(2, 6)))], 0) for _ in range(400)]
    for counts, m in cases:
        n = sum(counts)
        m = m or int(rng.integers(1, n))
        shift = m % 2          # then the first "class" is -1, a missing class, as the harness passes it
        y = np.repeat(np.arange(len(counts)), counts) - shift
        order = rng.permutation(n)
        head = _stratified_head(order, y, m)
        want = _largest_remainder(counts, m)
        expected = [i for i in order
                    if sum(1 for j in order[:list(order).index(i) + 1] if y[j] == y[i]) <= want[y[i] + shift]]
        assert sorted(head.tolist()) == sorted(expected), (counts, m)
        assert np.bincount(y[head] + shift, minlength=len(counts)).tolist() == want, (counts, m)


def test_the_thesis_protocol_refuses_fewer_instances_than_folds(tmp_path):
    """Nine instances in ten folds: WEKA's testCV throws "Can't have more folds than instances!"; the thesis
    protocol ran with an empty test fold 9 and recorded an 'ok' repetition with no error rate. The command
    now stops with one line and exit code 2, and 10 instances still run (test fold of 1)."""
    from typer.testing import CliRunner

    from toolkit.cli import app

    source = (ROOT / "datasets" / "weather.nominal.arff").read_text()
    head, _, data = source.partition("@data")
    rows = [line for line in data.splitlines() if line.strip() and not line.startswith("%")]
    for n, code in ((9, 2), (10, 0)):
        path = tmp_path / f"w{n}.arff"
        path.write_text(head + "@data\n" + "\n".join(rows[:n]) + "\n")
        result = CliRunner().invoke(app, ["evaluate", str(path), "-c", "nb-weka", "--protocol", "thesis", "-q",
                                          "--json"])
        assert result.exit_code == code, result.stderr
        if code:
            assert len(result.stderr.strip().splitlines()) == 1 and "folds" in result.stderr
        else:
            assert [r["n_test"] for r in json.loads(result.stdout)["records"]] == [1]


def test_the_fixed_protocol_refuses_an_empty_training_or_test_file(tmp_path):
    """--test with an empty file recorded an 'ok' repetition with no error rate; an empty training file ran
    and failed (exit 1). Both are the user's input: one line, exit 2, and no results file."""
    from typer.testing import CliRunner

    from toolkit.cli import app

    full = ROOT / "datasets" / "weather.nominal.arff"
    empty = tmp_path / "empty.arff"
    empty.write_text(full.read_text().partition("@data")[0] + "@data\n")
    for train, test, part in ((full, empty, "test"), (empty, full, "training")):
        out = tmp_path / f"{part}.jsonl"
        result = CliRunner().invoke(app, ["evaluate", str(train), "--test", str(test), "-c", "nb-weka", "-q",
                                          "--out", str(out)])
        assert result.exit_code == 2, (part, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and f"{part} set holds no instances" in result.stderr
        assert not out.exists()
    ok = CliRunner().invoke(app, ["evaluate", str(full), "--test", str(full), "-c", "nb-weka", "-q"])
    assert ok.exit_code == 0, ok.stderr


def test_a_numpy_seed_resumes_the_same_records(tmp_path):
    """seed=numpy.int64(1) is accepted, but record keys hashed it as the string "1": resuming a seed-1 file
    with it redid all 3 repetitions under new keys, and compare then counted 6 values for 3 repetitions."""
    out = tmp_path / "r.jsonl"
    iris = ROOT / "datasets" / "iris.arff"
    first = toolkit.evaluate(iris, ["nb-weka"], runs=3, seed=1, out=out, metrics=["error"])
    again = toolkit.evaluate(iris, ["nb-weka"], runs=3, seed=np.int64(1), out=out, resume=True, metrics=["error"])
    lines = out.read_text().splitlines()
    assert len(lines) == 1 + 3
    assert sorted(r["key"] for r in again.records) == sorted(r["key"] for r in first.records)
    assert toolkit.compare(out).as_dict()["rows"][0]["nb-weka"]["n"] == 3


def test_a_file_without_its_statement_resumes_with_the_same_metrics(tmp_path):
    """A results file whose experiment line is gone (toolkit 0.1 files have none; here deleted by hand) is
    read from its records, whose metrics come in sorted-key order: resuming it with the very same metrics
    was refused as 'metrics accuracy, error, log-loss -> error, accuracy, log-loss'."""
    from typer.testing import CliRunner

    from toolkit.cli import app

    out = tmp_path / "r.jsonl"
    args = ["evaluate", str(ROOT / "datasets" / "iris.arff"), "-c", "nb-weka", "--runs", "3", "-q", "--out", str(out)]
    assert CliRunner().invoke(app, args).exit_code == 0
    lines = out.read_text().splitlines()
    out.write_text("\n".join(lines[1:]) + "\n")
    result = CliRunner().invoke(app, [*args, "--resume"])
    assert result.exit_code == 0, result.stderr
    assert out.read_text().splitlines() == lines[1:]     # nothing redone, nothing added
    refused = CliRunner().invoke(app, [*args, "--resume", "-m", "error"])
    assert refused.exit_code == 2 and "metrics" in refused.stderr


class _CountingList(list):
    passes = 0

    def __iter__(self):
        type(self).passes += 1
        return super().__iter__()


def test_a_table_of_many_datasets_reads_the_records_once():
    """compare asks Results for every (dataset, pipeline) cell; each cell scanned all records, so a table of
    2,000 datasets x 2 pipelines x 10 runs took about a minute (quadratic). The cells must equal their
    definition (the finished records of the pair, by repetition) and the records be read a bounded number
    of times; a record added later is seen."""
    from toolkit.evaluation.results import Results

    rng = np.random.default_rng(1)
    records = _CountingList()
    for d in range(60):
        for p in range(2):
            for r in rng.permutation(5):
                records.append({"key": f"{d}-{p}-{r}", "status": "failed" if (d + r) % 7 == 0 else "ok",
                                "dataset": {"name": f"d{d}"}, "pipeline": {"name": f"p{p}"},
                                "repetition": int(r), "metrics": {"error": float(rng.random())}})
    res = Results(records)
    _CountingList.passes = 0
    for d in range(60):
        for p in range(2):
            want = sorted((x for x in list.__iter__(records) if x["status"] == "ok" and x["dataset"]["name"] == f"d{d}"
                           and x["pipeline"]["name"] == f"p{p}"), key=lambda x: x["repetition"])
            assert res.cell(f"d{d}", f"p{p}") == want
            assert res.values(f"d{d}", f"p{p}") == [x["metrics"]["error"] for x in want]
    assert _CountingList.passes <= 3
    records.append({"key": "new", "status": "ok", "dataset": {"name": "d0"}, "pipeline": {"name": "p0"},
                    "repetition": 9, "metrics": {"error": 0.5}})
    assert res.cell("d0", "p0")[-1]["key"] == "new"


def test_a_protocol_object_does_not_silently_drop_a_test_set_or_settings():
    """evaluate(protocol=Protocol(...), test=T) ran the random protocol and ignored T; runs=5 next to a
    Protocol object was ignored too (2 records). Both are refused; a fixed Protocol object takes T."""
    from toolkit.errors import ParameterError
    from toolkit.evaluation.harness import Protocol

    iris = ROOT / "datasets" / "iris.arff"
    with pytest.raises(ParameterError, match="test set"):
        toolkit.evaluate(iris, ["nb-weka"], protocol=Protocol(repetitions=2), test=iris, metrics=["error"])
    with pytest.raises(ParameterError, match="runs would be ignored"):
        toolkit.evaluate(iris, ["nb-weka"], protocol=Protocol(repetitions=2), runs=5, metrics=["error"])
    fixed = toolkit.evaluate(iris, ["nb-weka"], protocol=Protocol(name="fixed"), test=iris, metrics=["error"])
    assert [(r["n_train"], r["n_test"]) for r in fixed.records] == [(150, 150)]
    assert len(toolkit.evaluate(iris, ["nb-weka"], protocol=Protocol(repetitions=2), metrics=["error"]).records) == 2


def test_the_fixed_protocol_tunes_on_a_single_training_instance_as_the_random_one_does(tmp_path):
    """One training instance: the random protocol fits and validates on it (resampling.check_validation_share);
    the fixed protocol made it the validation part and left the fit part empty, so a tuned classifier failed
    ('0 instances', exit 1)."""
    from typer.testing import CliRunner

    from toolkit.cli import app

    source = (ROOT / "datasets" / "iris.arff").read_text()
    at = source.lower().index("@data")
    first = next(line for line in source[at + 5:].splitlines() if line.strip() and not line.startswith("%"))
    train = tmp_path / "one.arff"
    train.write_text(source[:at] + "@data\n" + first + "\n")
    result = CliRunner().invoke(app, ["evaluate", str(train), "--test", str(ROOT / "datasets" / "iris.arff"),
                                      "-c", "bma-nb", "-q", "--json"])
    assert result.exit_code == 0, result.stderr
    (record,) = json.loads(result.stdout)["records"]
    assert (record["n_train"], record["n_fit"], record["n_validation"], record["n_test"]) == (1, 1, 1, 150)
    assert record["status"] == "ok" and len(record["tuning"]) == 11


def test_a_stratified_split_of_many_classes_takes_one_pass():
    """_stratified_head scanned the data once per class: 45 s for 100,000 classes of a million instances.
    Counted here, not timed: no comparison of the whole class column per class (the old code made one per
    class), and each class keeps its share, as a per-class loop in this test picks it."""
    from toolkit.evaluation.resampling import _stratified_head

    class Counting(np.ndarray):
        whole_scans = 0

        def __eq__(self, other):
            if np.ndim(other) == 0 and self.size > 1000:
                Counting.whole_scans += 1
            return np.asarray(self).__eq__(other)

    n, classes = 20_000, 2_000
    y = np.random.default_rng(0).integers(0, classes, n)
    order = np.random.default_rng(1).permutation(n)
    head = _stratified_head(order, y.view(Counting), n // 10)
    assert Counting.whole_scans <= 2, Counting.whole_scans
    head = np.asarray(head)
    # the definition: per class, its first `take` instances in `order`
    counts = np.bincount(y, minlength=classes)
    assert len(head) == n // 10
    assert np.all(np.abs(np.bincount(y[head], minlength=classes) - counts / 10) < 1)
    chosen = set(head.tolist())
    labels = y[order]
    for c in range(0, classes, 97):
        members = order[labels == c]
        took = int(np.sum(y[head] == c))
        assert set(members[:took].tolist()) <= chosen and not set(members[took:].tolist()) & chosen


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_killed_and_resumed_run_equals_an_uninterrupted_one(tmp_path, jobs):
    """SIGKILL a run after some records (with --jobs 1 and 2), resume it: the records (timing aside) are
    exactly those of an uninterrupted --jobs 1 run, each once."""
    import os
    import signal
    import subprocess
    import sys
    import time

    vote = ROOT / "datasets" / "vote.arff"
    base = [sys.executable, "-m", "toolkit", "evaluate", str(vote), "-c", "bma-nb", "-c", "nb-weka", "--runs", "60",
            "-q"]
    full, cut = tmp_path / "full.jsonl", tmp_path / "cut.jsonl"
    subprocess.run([*base, "--out", str(full)], check=True, timeout=300, stdout=subprocess.DEVNULL)
    proc = subprocess.Popen([*base, "--jobs", jobs, "--out", str(cut)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if cut.exists() and len(cut.read_text().splitlines()) > 20:
            break
        time.sleep(0.001)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = len(cut.read_text().splitlines())
    resumed = subprocess.run([*base, "--jobs", jobs, "--out", str(cut), "--resume"], capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr

    def canonical(path):
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for rec in lines:
            rec.pop("timing", None)
        return sorted(json.dumps(rec, sort_keys=True) for rec in lines)

    assert canonical(cut) == canonical(full) and len(canonical(full)) == 1 + 120
    assert proc.returncode == -signal.SIGKILL and 21 <= killed_at < 121   # it was killed midway


def test_the_protocol_legend_says_how_a_fixed_test_set_run_was_tuned():
    """A fixed test set tuned by 3 inner folds, stratified, was described as 'validation 0.1' (a part it
    never used) without 'stratified'; the random protocol named both its validation part and its folds."""
    from toolkit.evaluation import experiment
    from toolkit.evaluation.harness import Protocol

    fixed = experiment.describe({"protocol": Protocol(name="fixed", inner_folds=3, stratified=True).describe()})
    assert "3-fold tuning" in fixed and "stratified" in fixed and "validation" not in fixed
    plain = experiment.describe({"protocol": Protocol(name="fixed").describe()})
    assert "validation 0.1" in plain and "stratified" not in plain
    random = experiment.describe({"protocol": Protocol(inner_folds=5).describe()})
    assert "5-fold tuning" in random and "validation" not in random
    assert experiment.describe({"protocol": Protocol().describe()}) == \
        "10 runs, test fraction 0.1, validation 0.1, seeds 1..10"
