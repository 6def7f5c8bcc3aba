"""Fast paths added for issue 19 give what the slow paths they replace give (references computed here)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
import scipy.sparse as sp

from toolkit.api import _unique_labels, as_matrix
from toolkit.errors import CapabilityError
from toolkit.evaluation import stats


def test_t_functions_equal_scipy_stats():
    from scipy import stats as scipy_stats

    for df in (1, 2, 5, 9, 10, 29, 100):
        assert stats.t_critical(df) == scipy_stats.t.ppf(0.975, df)
        assert stats.t_critical(df, 0.9, two_sided=False) == scipy_stats.t.ppf(0.9, df)
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.random(10), rng.random(10)
        d = a - b
        t = d.mean() / math.sqrt((1 / 10 + 0.1) * d.var(ddof=1))
        assert stats.corrected_ttest(a, b, 0.1).p_value == pytest.approx(2 * scipy_stats.t.sf(abs(t), 9), rel=1e-13)
        assert stats.paired_ttest(a, b).p_value == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue, rel=1e-12)


def test_sign_test_is_the_exact_binomial_tail():
    for m in (1, 2, 7, 20, 61, 200):
        for wins in range(0, m + 1):
            upper = sum(math.comb(m, i) for i in range(wins, m + 1)) / 2 ** m
            lower = sum(math.comb(m, i) for i in range(0, wins + 1)) / 2 ** m
            assert stats.sign_test(wins, m - wins) == upper
            assert stats.sign_test(wins, m - wins, "two-sided") == min(1.0, 2 * min(upper, lower))
    assert stats.sign_test(0, 0) == 1.0


@pytest.mark.parametrize("labels", [
    np.array([3, 1, 1, 7, 3, 0]), np.array([5, 5, 5]), np.array([2, 10_000_000, 2]), np.array([-1, 4, -1, 2]),
    np.array([1.5, 0.5, 1.5]), np.array(["b", "a", "b", "c"], dtype=object), np.array([9], dtype=np.uint8),
])
def test_unique_labels_equal_numpy_unique(labels):
    classes, codes = _unique_labels(labels)
    want_classes, want_codes = np.unique(labels, return_inverse=True)
    np.testing.assert_array_equal(classes, want_classes)
    assert classes.dtype == want_classes.dtype
    np.testing.assert_array_equal(codes, want_codes.reshape(-1))
    assert codes.dtype == np.int64


def test_as_matrix_keeps_a_float64_csr_matrix():
    X = sp.random(50, 20, density=0.2, format="csr", random_state=0)
    assert as_matrix(X) is X
    other = as_matrix(sp.csr_array(X))
    assert type(other) is sp.csr_matrix and other is not X
    unsorted = sp.csr_matrix((np.array([1.0, 2.0]), np.array([3, 1]), np.array([0, 2])), shape=(1, 5))
    assert as_matrix(unsorted).has_sorted_indices


@pytest.mark.parametrize("bad,match", [(np.nan, "missing or infinite"), (np.inf, "missing or infinite"),
                                       (-np.inf, "missing or infinite"), (-2.0, "non-negative"),
                                       (-1e-300, "non-negative")])
def test_as_counts_refuses_what_it_refused(bad, match):
    from toolkit.plugins.text.counts import as_counts

    X = sp.csr_matrix(np.array([[1.0, 0.0, 3.0], [0.0, 2.0, 1.0]]))
    X.data[2] = bad
    with pytest.raises(CapabilityError, match=match):
        as_counts(X, "test")


def test_as_counts_accepts_negative_zero_and_large_counts():
    from toolkit.plugins.text.counts import as_counts

    X = sp.csr_matrix(np.array([[1.0, 5.0, 3.0]]))
    X.data[1] = -0.0
    X.data[2] = 1e308
    assert as_counts(X, "test") is X


def test_decision_and_proba_equal_the_two_calls():
    import toolkit
    from toolkit.api import ProbabilisticClassifier, Schema
    from toolkit.plugins.naive_bayes.bma import BMANaiveBayes

    ds = toolkit.load_arff("soybean")
    clf = BMANaiveBayes(H=0.8).fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
    scores, proba = clf.decision_and_proba(ds.X)
    np.testing.assert_array_equal(scores, clf.decision_function(ds.X))
    np.testing.assert_array_equal(proba, clf.predict_proba(ds.X))

    class Calibrated(BMANaiveBayes):       # a subclass that derives probabilities its own way keeps them
        def predict_proba(self, X):
            p = super().predict_proba(X) ** 0.5
            return p / p.sum(axis=1, keepdims=True)

    other = Calibrated(H=0.8).fit(ds.X, ds.y, schema=Schema.from_dataset(ds))
    np.testing.assert_array_equal(other.decision_and_proba(ds.X)[1], other.predict_proba(ds.X))
    assert issubclass(Calibrated, ProbabilisticClassifier)


def _worker_threads():
    import os

    from threadpoolctl import threadpool_info

    return [p["num_threads"] for p in threadpool_info() if p["user_api"] in ("blas", "openmp")], \
        os.environ.get("OMP_NUM_THREADS"), os.environ.get("OPENBLAS_NUM_THREADS")


def test_workers_cap_blas_and_openmp_threads(monkeypatch):
    """--jobs N: each worker starts with at most cores // N threads per BLAS/OpenMP pool."""
    import concurrent.futures as cf
    import multiprocessing
    import os

    from toolkit.evaluation import harness

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)   # a user's cap would lower the share (tested below)

    cores = len(os.sched_getaffinity(0))
    for jobs in (1, 2, cores + 3):
        threads = harness._threads_per_worker(jobs)
        assert threads == max(1, cores // jobs)
        with harness.forked_pool(jobs) as pool:
            pools, omp, openblas = pool.submit(_worker_threads).result()
        assert pools and all(n <= threads for n in pools), pools
        assert omp == openblas == str(threads)
        # a worker's own start-up sets what the parent's cap did not reach
        with cf.ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork"),
                                    initializer=harness._init_worker, initargs=(threads,)) as pool:
            pools, omp, openblas = pool.submit(_worker_threads).result()
        assert pools and all(n <= threads for n in pools), pools


def _os_and_python_threads_after_blas():
    import os
    import threading

    a = np.random.default_rng(0).random((400, 400))
    a @ a   # large enough for OpenBLAS to use every thread it may
    return len(os.listdir("/proc/self/task")), threading.active_count()


def test_workers_do_not_start_blas_threads_they_may_not_use():
    """The cap is set in the parent before the fork: set in a forked worker, OpenBLAS re-creates the thread
    pool the fork shut down, and its threads spin ~0.1 s each beside the worker's own work (on the main job
    that was a tenth of --jobs 2's CPU). The parent gets its own cap back after the run."""
    import os
    import sys

    from threadpoolctl import threadpool_info

    from toolkit.evaluation import harness

    blas = [p for p in threadpool_info() if p["internal_api"] == "openblas"]
    if not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2 or not blas:
        pytest.skip("needs Linux's /proc, two cores and numpy on OpenBLAS")
    before = [(p["filepath"], p["num_threads"]) for p in threadpool_info()]
    with harness.forked_pool(2) as pool:
        os_threads, python_threads = pool.submit(_os_and_python_threads_after_blas).result()
    assert os_threads == python_threads, (os_threads, python_threads)
    assert [(p["filepath"], p["num_threads"]) for p in threadpool_info()] == before


def _blas_threads():
    from threadpoolctl import threadpool_info

    return sorted(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")


def test_a_lower_thread_limit_of_the_caller_is_kept(monkeypatch):
    """forked_pool lowers pools above the workers' share of the cores; it raised a limit the caller had
    set lower (to 4 on 8 cores, for the parent during the run and for the workers)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from toolkit.evaluation import harness

    if not any(p["user_api"] == "blas" for p in threadpool_info()):
        pytest.skip("no BLAS library loaded")
    monkeypatch.setattr(harness, "_usable_cores", lambda: 8)   # 4 threads per worker of 2
    with threadpool_limits(limits=1, user_api="blas"):
        with harness.forked_pool(2) as pool:
            assert _blas_threads() == [1] * len(_blas_threads())
            worker = pool.submit(_blas_threads).result()
        assert worker and set(worker) == {1}
        assert set(_blas_threads()) == {1}


def _worker_omp_and_compute_threads():
    import os

    from toolkit.api import compute_threads

    return os.environ.get("OMP_NUM_THREADS"), compute_threads()


def test_a_lower_omp_num_threads_of_the_user_is_kept_in_the_workers(monkeypatch):
    """Workers set OMP_NUM_THREADS to their share of the cores, which compute_threads() (the threads of
    nb-multinomial's scores and the OTS search) reads: a user's lower OMP_NUM_THREADS=1 became 4 on 8 cores."""
    from toolkit.evaluation import harness

    monkeypatch.setattr(harness, "_usable_cores", lambda: 8)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    with harness.forked_pool(2) as pool:
        assert pool.submit(_worker_omp_and_compute_threads).result() == ("1", 1)
    monkeypatch.delenv("OMP_NUM_THREADS")
    with harness.forked_pool(2) as pool:
        assert pool.submit(_worker_omp_and_compute_threads).result() == ("4", 4)


_CLI_THEN_POOLS = """
import json, sys
from threadpoolctl import threadpool_info
from toolkit.cli import main
sys.argv = ["toolkit", "evaluate", "iris", "-c", "nb-weka", "--runs", sys.argv[2], "--jobs", sys.argv[1], "-q"]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps([p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]))
"""


def test_the_command_line_keeps_the_workers_blas_cap_after_a_parallel_run():
    """``toolkit evaluate --jobs 2`` ends after its run: it keeps the workers' cap rather than giving its
    OpenBLAS pools their threads back, which re-creates them to spin ~0.1 s beside its last steps;
    ``--jobs 1`` leaves them alone."""
    import json
    import os
    import subprocess
    import sys

    from toolkit.evaluation import harness

    env = {k: v for k, v in os.environ.items() if k not in harness._THREAD_VARIABLES}

    def pools_after(jobs, runs=2):
        done = subprocess.run([sys.executable, "-c", _CLI_THEN_POOLS, str(jobs), str(runs)], capture_output=True,
                              text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    cores = len(os.sched_getaffinity(0))
    full = pools_after(1)
    if cores < 2 or not full or min(full) < 2:
        pytest.skip("needs two cores and numpy on OpenBLAS with more than one thread")
    assert pools_after(2) == [max(1, cores // 2)] * len(full)
    # one repetition runs in this process: no worker, no cap (it ran with 1 BLAS thread of 2)
    assert pools_after(2, runs=1) == full


def test_the_app_called_from_python_gives_its_blas_threads_back():
    """Only the console script keeps the cap: the app invoked in a process that goes on (tests, a
    notebook) gets its BLAS threads back after a --jobs 2 run."""
    from threadpoolctl import threadpool_info
    from typer.testing import CliRunner

    from toolkit.cli.application import app

    before = [p["num_threads"] for p in threadpool_info()]
    done = CliRunner().invoke(app, ["evaluate", "iris", "-c", "nb-weka", "--runs", "2", "--jobs", "2", "-q"])
    assert done.exit_code == 0, done.output
    assert [p["num_threads"] for p in threadpool_info()] == before


def test_the_command_line_skips_the_garbage_collection_of_its_shutdown():
    """The toolkit command freezes its objects as it ends: the collection at shutdown over every module's
    objects took ~40 ms of each command."""
    import subprocess
    import sys

    code = ("import gc, sys\nsys.argv = ['toolkit', '--version']\nfrom toolkit.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\nprint(gc.get_freeze_count())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.splitlines()[-1]) > 10_000


def test_the_command_line_parses_its_options_without_pydantic():
    """typer 0.29 coerces every option through a pydantic TypeAdapter: importing pydantic and building the
    adapters added ~0.1 s to each command (a sixth of the main job's serial start). pyproject keeps typer
    below 0.29; this fails if a typer that brings pydantic is installed."""
    import subprocess
    import sys

    code = ("import sys\nsys.argv = ['toolkit', 'info', 'iris', '--class', 'class']\nfrom toolkit.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "iris" in done.stdout
    assert done.stdout.splitlines()[-1] == "[]"


def test_repetition_groups_are_short_in_time_and_cover_the_order_once():
    """--jobs sends repetitions in groups: every position once, in order; an unmeasured kind alone; a group
    of several stays within the seconds budget by the measured times of its kinds."""
    from toolkit.evaluation.dispatch import RepetitionGroups

    rng = np.random.default_rng(3)
    kinds = np.repeat(np.arange(40), 10).tolist()
    true_seconds = dict(enumerate(np.exp(rng.uniform(np.log(0.0005), np.log(0.08), size=40))))
    groups = RepetitionGroups(kinds, group_seconds=0.05)
    sent = []
    in_flight = []
    while groups or in_flight:
        while groups and len(in_flight) < 4:  # as the harness: two groups per worker in flight
            in_flight.append(groups.next())
        group = in_flight.pop(0)
        sent.append(group)
        for i in group:
            groups.learn(i, true_seconds[kinds[i]])
    assert [i for g in sent for i in g] == list(range(len(kinds)))
    for g in sent:
        if len(g) > 1:
            assert sum(true_seconds[kinds[i]] for i in g) <= 0.05
    assert len(sent) <= 0.7 * len(kinds) and max(map(len, sent)) >= 5  # the cheap kinds did travel together
    # a kind costlier than the budget always goes alone; the first of each kind too
    assert all(len(g) == 1 for g in sent if true_seconds[kinds[g[0]]] > 0.05)
    starts = {g[0]: len(g) for g in sent}
    assert all(starts.get(kinds.index(k)) == 1 for k in set(kinds))  # the first of each kind is measured alone
    assert groups.next() == []


def test_repetition_groups_shrink_near_the_end_so_that_workers_finish_together():
    """Once every kind left is measured, a group holds at most a quarter of the work left per worker
    (guided self-scheduling), checked against the true seconds left, summed here."""
    from toolkit.evaluation.dispatch import RepetitionGroups

    rng = np.random.default_rng(5)
    kinds = np.repeat(np.arange(8), 50).tolist()
    true_seconds = dict(enumerate(np.sort(rng.uniform(0.0005, 0.004, size=8))[::-1]))
    groups = RepetitionGroups(kinds, group_seconds=0.05, workers=2)
    sent, measured, checked = [], set(), 0
    while groups:
        first = groups.position
        left = sum(true_seconds[k] for k in kinds[first:])
        all_measured = set(kinds[first:]) <= measured
        group = groups.next()
        for i in group:
            groups.learn(i, true_seconds[kinds[i]])
            measured.add(kinds[i])
        sent.append(group)
        cost = sum(true_seconds[kinds[i]] for i in group)
        if len(group) > 1:
            assert cost <= (min(0.05, left / 8) if all_measured else 0.05) + 1e-12
            checked += all_measured
    assert checked >= 5
    assert [i for g in sent for i in g] == list(range(len(kinds)))
    sizes = [len(g) for g in sent]
    assert max(sizes) >= 10 and sizes[-1] == 1 and sizes[-3:] < sizes[len(sizes) // 2:len(sizes) // 2 + 3]


def test_an_unmeasured_kind_is_estimated_by_the_next_costlier_kind_of_its_family():
    from toolkit.evaluation.dispatch import RepetitionGroups

    # positions 0-3: kind A (pipeline 0); 4-7: kind B (pipeline 0, cheaper); 8-9: kind C (pipeline 1)
    kinds = ["A"] * 4 + ["B"] * 4 + ["C"] * 2
    families = [0] * 8 + [1] * 2
    groups = RepetitionGroups(kinds, families, group_seconds=0.05)
    assert groups.next() == [0]  # nothing measured: alone
    groups.learn(0, 0.02)
    assert groups.next() == [1, 2]  # A's own time: two fit in 0.05
    assert groups.next() == [3, 4]  # B not measured: estimated by A (0.02 s)
    groups.learn(4, 0.001)
    assert groups.next() == [5, 6, 7]  # B's own time now; C has no estimate (another pipeline)
    assert groups.next() == [8]
    groups.learn(3, 0.2)  # a later measurement of A does not replace B as the nearest of family 0
    assert groups.estimate(9) is None and groups.estimate(7) == 0.001
    assert groups.next() == [9] and groups.next() == [] and not groups


def _forking_lock_is_free():
    from toolkit.evaluation import harness

    free = harness._FORKING.acquire(timeout=2)
    if free:
        harness._FORKING.release()
    return free


def test_a_worker_does_not_inherit_the_parents_held_forking_lock():
    """The parent holds _FORKING while its workers fork; a worker that ran a parallel run of its own (a plugin
    calling toolkit.evaluate(jobs=2)) waited for a lock nobody would release."""
    from toolkit.evaluation import harness

    with harness._FORKING:
        with harness.forked_pool(1) as pool:
            assert pool.submit(_forking_lock_is_free).result(timeout=30)
