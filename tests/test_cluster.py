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

    saved = dict(os.environ)   # the nannies set OMP_NUM_THREADS=1 & co. here (see dask_client)
    c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50)
    yield c
    c.close()
    os.environ.clear()
    os.environ.update(saved)


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
    before = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    remote = runner.invoke(app, [*args, "--cluster", "local:2"])
    assert local.exit_code == 0 and remote.exit_code == 0, remote.output
    assert local.stdout == remote.stdout
    # Dask's nannies set OMP_NUM_THREADS=1 & co. in this process; the command puts them back (a later
    # --jobs run took them as the user's cap: one thread per worker)
    assert {name: os.environ.get(name) for name in before} == before


# ----------------------------------------------------------------------------- partitioned training (issue 17)

def _one_pass(clf, ds):
    from toolkit.api import Schema

    stats = None
    for _ in range(clf.statistics_passes()):
        stats = clf.shard_statistics(ds.X, ds.y, None, Schema.from_dataset(ds), previous=stats)
    return stats


def _reduced_on_the_cluster(client, path, name, parts=7):
    from toolkit.data import arff
    from toolkit.models.partitioned import Partitions, reduce_statistics
    from toolkit.models.pipeline import Pipeline

    step = Pipeline(name, tune=False).classifier
    clf = step.build({})
    header = arff.read_range(path, 0, 0)
    partitions = Partitions(str(path), os.path.getsize(path), arff.split_ranges(path, parts), header)
    stats = None
    for _ in range(clf.statistics_passes()):
        stats = reduce_statistics(client, partitions, clf, step, previous=stats)
    assert stats.schema is None   # workers send the statistics without the schema
    from toolkit.api import Schema

    return clf, stats.attached(Schema.from_dataset(header))


@pytest.fixture(scope="module")
def counts_file(tmp_path_factory):
    from shard_data import word_count_arff

    return word_count_arff(tmp_path_factory.mktemp("cluster-counts") / "counts.arff")


def _check_on_cluster(cluster, path, names):
    from distributed import Client

    from shard_data import EXACT_WITH_COUNTS, assert_statistics_equal
    from toolkit.data import arff

    whole = arff.read(path)
    with Client(cluster.scheduler_address) as client:
        for name in names:
            clf, merged = _reduced_on_the_cluster(client, path, name)
            single = _one_pass(type(clf)(**clf.get_params()), whole)
            assert merged.n_rows == whole.n_instances    # every row once: none lost, none twice
            exact = name in EXACT_WITH_COUNTS      # sums of whole numbers (nb-gaussian's moments: to 1e-12)
            assert_statistics_equal(merged, single, exact)
            fitted = type(clf)(**clf.get_params()).fit_from_statistics(merged)
            reference = type(clf)(**clf.get_params()).fit(whole.X, whole.y, schema=toolkit.Schema.from_dataset(whole))
            assert (fitted.predict(whole.X) == reference.predict(whole.X)).all(), name


def test_statistics_reduced_on_the_cluster_equal_one_pass(cluster, counts_file):
    """Seven byte ranges of a generated word-count file, read by two worker processes and merged in a tree
    of Dask tasks, for every count model (nb-bim on a binary file of the same kind)."""
    from shard_data import COUNT_MODELS, word_count_arff

    _check_on_cluster(cluster, counts_file, [n for n in COUNT_MODELS if n != "nb-bim"])
    binary = word_count_arff(counts_file.with_name("binary.arff"), n_classes=2, seed=11)
    _check_on_cluster(cluster, binary, ["nb-bim"])


def test_statistics_of_a_shared_text_file_reduced_on_the_cluster(cluster):
    from conftest import shared_path
    from shard_data import COUNT_MODELS

    path = shared_path("text", "tr11.wc.arff")
    _check_on_cluster(cluster, path, [n for n in COUNT_MODELS if n != "nb-bim"])


def _cli(args):
    from typer.testing import CliRunner

    from toolkit.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    return result


def test_partitioned_train_and_predict_through_the_command_line(cluster, counts_file, tmp_path):
    """``toolkit train FILE --scheduler`` writes the model a local ``train --no-tune`` writes (same
    predictions, probabilities to rounding), and ``toolkit predict --scheduler`` writes what a local
    predict writes, byte for byte, in file order."""
    address = cluster.scheduler_address
    for spec in ["nb-multinomial:variant=C-TW-L-M", "bma-nb"]:
        remote, local = tmp_path / "remote.tkm", tmp_path / "local.tkm"
        result = _cli(["train", counts_file, "-c", spec, "--scheduler", address, "--partition-mb", "0.01", "-o", remote])
        assert result.exit_code == 0, result.output
        assert "does not tune" in result.stderr     # both have a grid (epsilon, H): the defaults are used
        assert _cli(["train", counts_file, "-c", spec, "--no-tune", "-o", local]).exit_code == 0
        a = toolkit.load_model(remote).predict(toolkit.load_arff(counts_file))
        b = toolkit.load_model(local).predict(toolkit.load_arff(counts_file))
        assert (a.y_pred == b.y_pred).all()
        assert abs(a.proba - b.proba).max() < 1e-9
        meta = toolkit.load_model(remote).meta["training"]
        assert meta["n_instances"] == 700 and meta["partitioned"]["ranges"] > 7
        for fmt in ["csv", "json", "table"]:
            distributed_out = _cli(["predict", remote, counts_file, "--format", fmt, "--proba", "--scheduler", address,
                                    "--partition-mb", "0.01"])
            local_out = _cli(["predict", remote, counts_file, "--format", fmt, "--proba"])
            assert distributed_out.exit_code == 0, distributed_out.output
            assert distributed_out.stdout == local_out.stdout


def test_a_model_without_statistics_is_refused_before_any_work(monkeypatch, counts_file, tmp_path):
    import toolkit.models.partitioned as partitioned

    def no_cluster(*args, **kwargs):
        raise AssertionError("a cluster was started")

    monkeypatch.setattr(partitioned, "dask_client", no_cluster)
    for spec, why in [("liblinear-lr", "no shard-statistics protocol"), ("nb-bim:threshold=loo", "leave-one-out"),
                      ("nb-bim", "two classes only")]:
        result = _cli(["train", counts_file, "-c", spec, "--cluster", "local:2", "-o", tmp_path / "m.tkm"])
        assert result.exit_code == 2, result.output
        assert why in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    result = _cli(["train", counts_file, "-c", "nb-weka", "--fs", "kl", "--cluster", "local:2", "-o", tmp_path / "m"])
    assert result.exit_code == 2 and "classifier alone" in result.stderr
    assert not (tmp_path / "m.tkm").exists()


def test_a_worker_killed_during_partitioned_training_changes_nothing(cluster, counts_file, tmp_path):
    """Many small ranges; one worker process is SIGKILLed while they are read: Dask reads its ranges again
    and the model is the one of a run without the kill (every row counted once)."""
    from distributed import Client

    from toolkit.models.partitioned import train_partitioned

    reference = train_partitioned(counts_file, "nb-multinomial", scheduler=cluster.scheduler_address,
                                  partition_bytes=4096)
    with Client(cluster.scheduler_address) as client:
        pids = list(client.run(os.getpid).values())
    result: dict = {}

    def run() -> None:
        try:
            result["fitted"] = train_partitioned(counts_file, "nb-multinomial", scheduler=cluster.scheduler_address,
                                                 partition_bytes=1024, out=tmp_path / "killed.tkm")
        except BaseException as exc:  # reported below
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.time() + 120

    def done_ranges() -> int:
        try:   # the scheduler runs in this process (LocalCluster); its table may change while read
            return sum(1 for key, ts in list(cluster.scheduler.tasks.items())
                       if str(key).startswith("toolkit-range-statistics") and ts.state == "memory")
        except RuntimeError:
            return 0

    while time.time() < deadline and done_ranges() < 20 and thread.is_alive():
        time.sleep(0.01)
    assert thread.is_alive(), "the training finished before a worker could be killed"
    os.kill(pids[0], signal.SIGKILL)
    thread.join(300)
    assert not thread.is_alive() and "error" not in result, result
    fitted = result["fitted"].classifier
    assert (fitted.feature_count_ == reference.classifier.feature_count_).all()   # whole-number sums: exact
    assert toolkit.load_model(tmp_path / "killed.tkm").meta["training"]["n_instances"] == 700


def test_a_worker_of_another_toolkit_version_is_refused(cluster, counts_file, tmp_path):
    """A worker importing another toolkit release could compute other statistics: refused with one
    line naming both versions, before any range is read and without a model file."""
    from distributed import Client

    from toolkit.errors import ToolkitError
    from toolkit.models.partitioned import train_partitioned

    with Client(cluster.scheduler_address) as client:
        client.wait_for_workers(2, timeout=60)     # a worker killed by an earlier test is back
        worker = min(client.scheduler_info()["workers"])
        client.run(setattr, toolkit, "__version__", "0.0.1-other", workers=[worker])
        try:
            with pytest.raises(ToolkitError, match=r"1 of 2 workers run toolkit 0\.0\.1-other, this client "
                                                   + toolkit.__version__.replace(".", r"\.")):
                train_partitioned(counts_file, "nb-multinomial", scheduler=cluster.scheduler_address,
                                  out=tmp_path / "m.tkm")
        finally:
            client.run(setattr, toolkit, "__version__", toolkit.__version__, workers=[worker])
        assert set(client.run(lambda: __import__("toolkit").__version__).values()) == {toolkit.__version__}
    assert not (tmp_path / "m.tkm").exists()
