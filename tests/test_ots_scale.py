"""The OTS search at scale (issue 18): the fast rounds against the plain computation (tests/ots_plain.py: the
whole corpus multiplied by the full weight vectors each round, a full sort, ``ranked_average_precision``), bit
for bit, on corpora of 10^4-10^5 documents with ties; the round kernel against its numpy twin and a brute
force; many terms at once against one search at a time (threads, processes, the command, R52); the
data-parallel rounds on a 2-worker Dask cluster against one machine."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from ots_plain import plain_ots, tied_corpus
from toolkit.plugins.ots import kernel
from toolkit.plugins.ots.search import optimal_training_set
from toolkit.plugins.ots.selectors import OTSSelector

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def _same(result, plain):
    added, n_added, ap, best = plain
    assert np.array_equal(result.added, added)
    assert np.array_equal(result.n_added, n_added)
    assert np.array_equal(result.average_precision, ap)  # bit for bit, not approximately
    assert result.best == best


CASES = [dict(seed=1, step=9),
         dict(seed=2, step=5, threshold=0.5, alpha=0.5),
         dict(seed=3, step=12, threshold=2.0, init="sts"),
         dict(seed=4, step=7, scorer="wts_fixed"),
         dict(seed=5, step=6, evaluate="sts", threshold=0.0),
         dict(seed=6, step=10, features="all", threshold=1.5),
         dict(seed=7, step=8, scorer="wts_fixed", evaluate="sts", init="sts")]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in c.items()))
def test_rounds_equal_the_plain_computation_on_10k_documents(case):
    params = dict(case)
    X, y = tied_corpus(params.pop("seed"), 10_000, 2_500)
    plain = plain_ots(X, y == 1, y == 0, **params)
    assert len(plain[2]) > 150
    _same(optimal_training_set(X, y == 1, y == 0, **params), plain)


def test_rounds_equal_the_plain_computation_on_100k_documents_in_threads():
    X, y = tied_corpus(11, 100_000, 20_000, positive_share=0.01)
    params = dict(step=4, max_size=int((y == 1).sum()) + 4 * 150)
    plain = plain_ots(X, y == 1, y == 0, **params)
    for threads in (1, 2):
        _same(optimal_training_set(X, y == 1, y == 0, n_threads=threads, **params), plain)


def test_the_search_runs_as_many_threads_as_the_process_may(monkeypatch):
    """Without n_threads, a large corpus is searched in toolkit.api.compute_threads() threads: in a --jobs
    worker (OMP_NUM_THREADS set to its share) one, not one per core."""
    import os

    from toolkit.plugins.ots import search

    seen = []
    real = search.RoundEngine

    def engine(*args, n_threads, **kwargs):
        seen.append(n_threads)
        return real(*args, n_threads=n_threads, **kwargs)

    monkeypatch.setattr(search, "RoundEngine", engine)
    monkeypatch.setattr(search, "_PARALLEL_MIN_NNZ", 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    X, y = tied_corpus(3, 2_000, 500)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    one = optimal_training_set(X, y == 1, y == 0, step=9, max_size=int((y == 1).sum()) + 30)
    monkeypatch.delenv("OMP_NUM_THREADS")
    two = optimal_training_set(X, y == 1, y == 0, step=9, max_size=int((y == 1).sum()) + 30)
    assert seen == [1, 2]
    assert np.array_equal(one.added, two.added) and np.array_equal(one.average_precision, two.average_precision)


@pytest.mark.parametrize("tail_cost, pack_max", [(0, 10**9), (50, 40_000)], ids=["tail-kept", "tail-repacked"])
def test_restricted_rows_grow_combine_and_shrink_without_changing_a_bit(tail_cost, pack_max):
    # a long search on a Zipf corpus: features gain and lose weight as the STS grows, so the restricted
    # rows take features in (extra part), combine the parts and filter features out; the rows touched by
    # an addition and the new STS negatives are visited in the tail (kept until the next filter, or packed
    # again every few rounds); the trace stays plain
    import toolkit.plugins.ots.rounds as rounds

    X, y = tied_corpus(21, 20_000, 6_000, positive_share=0.01)
    params = dict(step=6, threshold=1.0, max_size=int((y == 1).sum()) + 6 * 400)
    changes = {"build": 0, "add": 0, "combine": 0, "filter": 0}
    original = rounds.RoundEngine.close

    def counting(self):
        for key, value in self.changes.items():
            changes[key] += value
        original(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rounds, "_FILTER_EVERY", 8)
        mp.setattr(rounds, "LOOKAHEAD", 0)  # take features in only when they gain weight: many additions
        mp.setattr(rounds, "_COMBINE_MIN", 0)
        mp.setattr(rounds, "_FILTER_SLACK", 0)
        mp.setattr(rounds, "_TAIL_COST", tail_cost)  # 0: packed again only when filtered; 50: every few rounds
        mp.setattr(rounds, "_PACK_MAX_NNZ", pack_max)  # 40,000: the first rounds in the tail, not packed
        mp.setattr(rounds.RoundEngine, "close", counting)
        result = optimal_training_set(X, y == 1, y == 0, **params)
    _same(result, plain_ots(X, y == 1, y == 0, **params))
    assert changes["add"] >= 5 and changes["filter"] >= 1 and changes["combine"] >= 1, changes


# ----------------------------------------------------------------------------- the round kernel

def _brute_force_pass(A, kind, vec, F, row_base, sel, count_pool, count_sts, pos_keys, pos_rows, m):
    """Counts and best rows from explicit sorted lists (the definition, not the kernel's buckets)."""
    pool_keys = np.round(A @ vec[:F], 9)
    sts_keys = np.round(A @ vec[F:2 * F], 9)
    sel_keys = np.round(A @ vec[sel:sel + F], 9) if sel >= 0 else pool_keys
    order = sorted(range(len(pos_keys)), key=lambda i: (-pos_keys[i], pos_rows[i]))
    counts = np.zeros(len(pos_keys) + 1, dtype=np.int64)
    pool = []
    for i in range(A.shape[0]):
        r = row_base + i
        if kind[i] == kernel.POOL:
            pool.append((-sel_keys[i], r))
        key = {kernel.POOL: pool_keys[i], kernel.STS_NEGATIVE: sts_keys[i]}.get(kind[i])
        if key is None or not (count_pool if kind[i] == kernel.POOL else count_sts):
            continue
        counts[sum(1 for p in order if pos_keys[p] > key or (pos_keys[p] == key and pos_rows[p] < r))] += 1
    top = sorted(pool)[:m]
    return counts, np.array([-k for k, _ in top]), np.array([r for _, r in top], dtype=np.int64)


@pytest.mark.parametrize("seed", range(6))
def test_round_kernel_equals_a_brute_force_and_its_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    n, F = 400, 30
    dense = rng.random((n, F)) < rng.uniform(0.02, 0.3)
    dense[rng.integers(0, n, 40)] = dense[rng.integers(0, n, 40)]  # copied rows: exact ties
    A = sp.csr_matrix(dense.astype(float))
    values = rng.choice([0.0, 0.5, -0.5, 1.25, -2.0, 3.0], 4 * F)  # few values: many equal sums
    vec = np.where(rng.random(4 * F) < 0.6, values, 0.0)
    kind = rng.choice([kernel.NOT_TRAINING, kernel.POOL, kernel.STS_NEGATIVE, kernel.POSITIVE], n,
                      p=[0.05, 0.6, 0.2, 0.15]).astype(np.uint8)
    base = int(rng.integers(0, 1000))
    # positives elsewhere in the corpus: keys that tie with the rows' keys, rows on both sides
    # (a row is a positive or not: never both a positive and a counted row)
    candidates = np.r_[np.arange(base - 50, base), base + np.flatnonzero(kind == kernel.POSITIVE),
                       np.arange(base + n, base + n + 50)]
    pos_rows = np.sort(rng.choice(candidates, 25, replace=False)).astype(np.int64)
    pos_keys = np.round(rng.choice(np.round(A @ vec[:F], 9), 25) + rng.choice([0.0, 0.0, 0.25], 25), 9)
    order = kernel.positive_order(pos_keys, pos_rows)
    # split into a base and an extra part with disjoint columns, as the restricted rows keep them
    extra_cols = rng.random(F) < 0.3
    parts = []
    for keep in (~extra_cols, extra_cols):
        M = A[:, np.flatnonzero(keep)]
        M = sp.csr_matrix((M.data, np.flatnonzero(keep)[M.indices], M.indptr), shape=A.shape)
        parts.append(M)
    rows = kernel.Rows(parts[0].indptr.astype(np.int64), parts[0].indices.astype(np.int32),
                       parts[1].indptr.astype(np.int64), parts[1].indices.astype(np.int32))
    for sel, count_pool, count_sts, m in ((-1, True, True, 7), (3 * F, True, True, 300), (-1, False, True, 1)):
        expected = _brute_force_pass(A, kind, vec, F, base, sel, count_pool, count_sts, pos_keys, pos_rows, m)
        twin = kernel._round_pass_numpy(rows, kind, vec, F, 0, n, base, sel, count_pool, count_sts, order, m)
        for got in (twin, kernel.round_pass(rows, kind, vec, F, 0, n, base, sel, count_pool, count_sts, order, m)):
            assert np.array_equal(got[0], expected[0])
            assert np.array_equal(got[1], expected[1]) and np.array_equal(got[2], expected[2])
        # blocks of rows add up to the whole
        halves = [kernel.round_pass(rows, kind, vec, F, a, b, base, sel, count_pool, count_sts, order, m)
                  for a, b in ((0, n // 3), (n // 3, n))]
        assert np.array_equal(halves[0][0] + halves[1][0], expected[0])
    assert np.array_equal(kernel.row_keys(rows, np.arange(n), vec, 2 * F, F), np.round(A @ vec[2 * F:3 * F], 9))


@pytest.mark.skipif(not kernel.compiled(), reason="the compiled round kernel is not built")
def test_round_kernel_refuses_inconsistent_arrays():
    from toolkit.plugins.ots import _rounds

    rows = kernel.Rows.of(np.array([0, 1, 2]), np.array([0, 1]))
    order = kernel.positive_order(np.array([1.0]), np.array([5]))
    kind = np.array([1, 1], dtype=np.uint8)
    with pytest.raises(ValueError, match="sizes"):
        kernel.round_pass(rows, kind, np.zeros(3), 2, 0, 2, 0, -1, True, True, order, 1)  # vec too short
    with pytest.raises(ValueError, match="sizes"):
        kernel.round_pass(rows, kind, np.zeros(8), 2, 0, 5, 0, -1, True, True, order, 1)  # rows out of range
    with pytest.raises(TypeError, match="indices"):
        _rounds.row_keys(rows.indptr, rows.indptr, rows.extra_indptr, rows.extra_indices, np.array([0]),
                         np.zeros(8), 0, 2, np.zeros(1))
    with pytest.raises(ValueError, match="row"):
        kernel.row_keys(rows, np.array([7]), np.zeros(8), 0, 2)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_pattern_passes_equal_scipy(compiled, monkeypatch):
    # the restricted rows' building blocks against scipy's own slicing, conversion and addition
    if compiled and not kernel.compiled():
        pytest.skip("the compiled round kernel is not built")
    if not compiled:
        monkeypatch.setattr(kernel, "_rounds", None)
    rng = np.random.default_rng(8)
    n, F = 700, 90
    A = sp.random(n, F, density=0.08, format="csr", random_state=rng)
    A.data[:] = 1.0
    A = sp.csr_matrix(sp.diags((rng.random(n) > 0.05).astype(float)) @ A)  # some empty rows
    A.eliminate_zeros()
    A.sort_indices()
    indptr, indices = A.indptr.astype(np.int64), A.indices.astype(np.int32)
    kept = np.flatnonzero(rng.random(F) < 0.4)
    mapping = np.full(F, -1, dtype=np.int32)
    mapping[kept] = np.arange(len(kept), dtype=np.int32)
    sub = A[:, kept].tocsr()
    sub.sort_indices()
    got_ptr, got = kernel.restrict_rows(indptr, indices, mapping, sub.nnz, chunk=500)
    assert np.array_equal(got_ptr, sub.indptr) and np.array_equal(got, sub.indices)
    colptr, colrows = kernel.column_index(indptr, indices, F)
    csc = A.tocsc()
    csc.sort_indices()
    assert np.array_equal(colptr, csc.indptr) and np.array_equal(colrows, csc.indices)
    extra = np.sort(rng.choice(np.setdiff1d(np.arange(F), kept), 20, replace=False))
    ids = (np.arange(len(extra)) * 3 + 1).astype(np.int32)
    g_ptr, g = kernel.gather_columns(colptr, colrows, extra, ids, n)
    ref = A[:, extra].tocsr()
    ref.sort_indices()
    assert np.array_equal(g_ptr, ref.indptr) and np.array_equal(g, ids[ref.indices])
    # merge: the kept columns and the gathered ones, both in the original numbering
    base = kernel.Rows(got_ptr, kept.astype(np.int32)[got], g_ptr, extra.astype(np.int32)[np.searchsorted(ids, g)])
    m_ptr, m = kernel.merge_rows(base)
    union = A[:, np.union1d(kept, extra)].tocsr()
    union.sort_indices()
    assert np.array_equal(m_ptr, union.indptr)
    assert np.array_equal(m, np.union1d(kept, extra)[union.indices])
    # the same in row ranges (threads), down to ranges of a few rows
    monkeypatch.setattr(kernel, "PACK_ROWS_PER_PART", 50)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(3) as pool:
        def run(calls):
            return [f.result() for f in [pool.submit(c) for c in calls]]

        for parts in (2, 3, 13):
            assert all(np.array_equal(a, b) for a, b in zip(kernel.gather_columns(colptr, colrows, extra, ids, n,
                                                                                  parts, run), (g_ptr, g)))
            assert all(np.array_equal(a, b) for a, b in zip(kernel.merge_rows(base, parts, run), (m_ptr, m)))
    keep = rng.random(F) < 0.5
    f_ptr, f = kernel.filter_rows(m_ptr.copy(), m.copy(), keep)
    ref = A[:, np.flatnonzero(keep & np.isin(np.arange(F), np.union1d(kept, extra)))].tocsr()
    ref.sort_indices()
    assert np.array_equal(f_ptr, ref.indptr)
    assert np.array_equal(f, np.flatnonzero(keep & np.isin(np.arange(F), np.union1d(kept, extra)))[ref.indices])


def test_positive_order_compiled_equals_the_stable_sort_from_any_first_guess():
    if not kernel.compiled():
        pytest.skip("the compiled round kernel is not built")
    rng = np.random.default_rng(5)
    for P in (1, 2, 7, 300, 5_000):
        keys = np.round(rng.choice([-1.5, 0.0, -0.0, 0.25, 2.0, 3.125], P) + rng.choice([0, 0, 1e-9], P), 9)
        rows = np.sort(rng.choice(10 * P + 10, P, replace=False)).astype(np.int64)
        order = np.argsort(-keys, kind="stable")  # the definition: key descending, ties by row
        for guess in (np.arange(P), rng.permutation(P), order.copy(), order[::-1].copy()):
            perm = np.ascontiguousarray(guess, dtype=np.int64)
            got = kernel.positive_order(keys, rows, perm)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(kernel, "_rounds", None)
                twin = kernel.positive_order(keys, rows)
            assert np.array_equal(got.keys, keys[order]) and np.array_equal(got.rows, rows[order])
            assert np.array_equal(perm, order)
            assert np.array_equal(got.start, twin.start)
            assert (got.kmax, got.kmin, got.scale) == (twin.kmax, twin.kmin, twin.scale)


def test_round_weights_compiled_equal_numpy_bit_for_bit():
    if not kernel.compiled():
        pytest.skip("the compiled round kernel is not built")
    rng = np.random.default_rng(9)
    F, tau = 5_000, 1.0
    arrays = [rng.normal(0, 2, F) for _ in range(5)]
    arrays[0][:50] = arrays[2][:50] - arrays[4][:50] + tau  # weights at the threshold
    arrays[3][50:60] = np.nan
    outs = []
    for use in (True, False):
        vec, w = np.full(3 * F, 7.0), [np.empty(F) for _ in range(3)]
        active = np.zeros(F, dtype=bool)
        if use:
            kernel.round_weights(*arrays, tau, vec, *w, active)
        else:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(kernel, "_rounds", None)
                kernel.round_weights(*arrays, tau, vec, *w, active)
        outs.append((vec, w, active))
    (v1, w1, a1), (v2, w2, a2) = outs
    assert np.array_equal(v1.view(np.int64), v2.view(np.int64))  # the same bits, signed zeros included
    assert all(np.array_equal(x.view(np.int64), y.view(np.int64)) for x, y in zip(w1, w2))
    assert np.array_equal(a1, a2) and a1.any() and not a1.all()
    lp, llp, lna, ln1a, lr = arrays
    expected = np.where(np.abs(lp - (lna - lr)) > tau, lp - (lna - lr), 0.0)
    assert np.array_equal(v1[:F], expected)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
def test_round_weights_at_some_features_equal_the_full_weights_there(compiled, monkeypatch):
    if compiled and not kernel.compiled():
        pytest.skip("the compiled round kernel is not built")
    if not compiled:
        monkeypatch.setattr(kernel, "_rounds", None)
    rng = np.random.default_rng(10)
    F, tau = 4_000, 1.0
    lp, llp, lna, ln1a, lr = [rng.normal(0, 2, F) for _ in range(5)]
    lp[:40] = lna[:40] - lr[:40] + tau  # weights exactly at the thresholds
    lp[40:80] = lna[40:80] - lr[40:80] - tau
    lr[80:90] = np.nan
    for at in (np.zeros(0, dtype=np.int64), np.arange(F), np.flatnonzero(rng.random(F) < 0.3)):
        full_vec, full_w = np.full(3 * F, 7.0), [np.empty(F) for _ in range(3)]
        full_active = np.zeros(F, dtype=bool)
        with monkeypatch.context() as mp:  # the full weights by the plain numpy formulas
            mp.setattr(kernel, "_rounds", None)
            kernel.round_weights(lp, llp, lna, ln1a, lr, tau, full_vec, *full_w, full_active)
        vec, w = np.full(3 * F, 5.0), [np.full(F, 3.0) for _ in range(3)]
        active, safe = np.ones(F, dtype=bool), np.full(F, 11.0)
        kernel.round_weights_at(lp, llp, lna, ln1a, at, lr[at], tau, 1000.0, 1.0, vec, *w, active, safe)
        rest = np.setdiff1d(np.arange(F), at)
        for b in range(3):
            assert np.array_equal(vec[b * F + at].view(np.int64), full_vec[b * F + at].view(np.int64))
            assert np.all(vec[b * F + rest] == 5.0)
            assert np.array_equal(w[b][at].view(np.int64), full_w[b][at].view(np.int64))
            assert np.all(w[b][rest] == 3.0)
        assert np.array_equal(active[at], full_active[at]) and np.all(active[rest])
        assert np.all(safe[rest] == 11.0)
        # a feature with a weight, at a threshold or with a NaN is seen again next round
        assert np.all(safe[at][full_active[at] | (at < 90)] == -np.inf)
        assert np.all(safe[at][~full_active[at] & (at >= 90)] > 1000.0)


@pytest.mark.parametrize("tau, alpha, step", [(1.0, 1.0, 100), (0.5, 0.5, 3), (2.0, 1.0, 2_000), (0.0, 1.0, 50)])
def test_task_weights_skipping_features_without_weight_equal_the_full_weights_every_round(tau, alpha, step):
    # counts of a long search: each round adds `step` negatives, a few features at a time, so most features keep
    # their n for many rounds while N grows and their weights rise towards the threshold
    from toolkit.plugins.ots.bim import BIMCounts
    from toolkit.plugins.ots.rounds import TaskWeights
    from toolkit.plugins.ots.search import task_spec

    rng = np.random.default_rng(int(tau * 10 + step))
    F, P = 3_000, 400
    n_pos = rng.integers(1, P, F).astype(float)
    spec = task_spec(P, alpha=alpha, threshold=tau, step=step, init="sts")
    weights = TaskWeights(BIMCounts(n_pos, np.zeros(F), P, 0.0), None, F, spec)
    assert weights.Fm == F
    n, N, skipped = np.zeros(F), 0.0, 0
    for _ in range(300):
        changed = np.unique(rng.integers(0, F, rng.integers(0, 30)))
        increment = rng.integers(1, step + 1, len(changed)).astype(float)
        increment = np.minimum(increment, step)
        weights.add(changed, increment, step)
        n[changed] += increment
        N += step
        skipped += int(np.sum(weights.safe_until >= weights.N))
        weights.update()
        log_rest = np.log(np.maximum(N - n, 0.0) + alpha)
        vec, w, active = np.zeros(3 * F), [np.empty(F) for _ in range(3)], np.zeros(F, dtype=bool)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(kernel, "_rounds", None)
            kernel.round_weights(weights.lp, weights.llp, np.log(n + alpha), np.log(np.maximum(n - 1.0, 0.0) + alpha),
                                 log_rest, tau, vec, *w, active)
        assert np.array_equal(weights.vec[:3 * F].view(np.int64), vec.view(np.int64))
        assert np.array_equal(weights._active, active)
        weights._refresh()  # the forecast's unthresholded weights, every feature
        for got, want in zip((weights.w_sts, weights.w_loo_neg, weights.w_loo_pos), w):
            assert np.array_equal(got.view(np.int64), want.view(np.int64))
    if tau > 0:
        assert skipped > 0  # the skipping was exercised


def test_average_precision_from_counts_is_the_ranking_ap():
    from toolkit.plugins.ots.leave_one_out import ranked_average_precision

    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(5, 3000))
        scores = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # ties when rounded
        relevant = rng.random(n) < rng.uniform(0.01, 0.5)
        relevant[0] = True
        rows = np.arange(n)
        order = kernel.positive_order(np.round(scores[relevant], 9), rows[relevant])
        negatives = np.flatnonzero(~relevant)
        kind = np.where(relevant, kernel.POSITIVE, kernel.STS_NEGATIVE).astype(np.uint8)
        A = sp.identity(n, format="csr")
        vec = np.r_[np.zeros(n), scores, np.zeros(2 * n)]
        counts, _, _ = kernel.round_pass(kernel.Rows.of(A.indptr, A.indices), kind, vec, n, 0, n, 0, -1, True, True,
                                         order, 0)
        assert counts.sum() == len(negatives)
        assert kernel.average_precision_from_counts(counts) == ranked_average_precision(scores, relevant)


# ----------------------------------------------------------------------------- many terms

def _multiclass(seed, n=3000, F=800, k=5):
    rng = np.random.default_rng(seed)
    y = rng.choice(k, n, p=np.r_[0.6, np.full(k - 1, 0.4 / (k - 1))])
    y[rng.random(n) < 0.02] = -1
    topics = rng.choice(F, (k, 15), replace=False)
    X = (rng.random((n, F)) < 2.0 / (np.arange(F) + 8.0)[rng.permutation(F)]).astype(float)
    for c in range(k):
        rows = np.flatnonzero(y == c)
        X[rows[:, None], topics[c]] = np.maximum(X[rows[:, None], topics[c]], rng.random((len(rows), 15)) < 0.3)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_many_terms_give_each_term_its_own_search(backend):
    X, y = _multiclass(0)
    alone = {c: optimal_training_set(X, y == c, (y >= 0) & (y != c), step=3) for c in range(1, 5)}
    selector = OTSSelector(step=3)
    rows = selector.select_many(X, y, [1, 2, 3, 4], n_jobs=2, backend=backend)
    assert list(rows) == [1, 2, 3, 4]
    for c, r in alone.items():
        assert np.array_equal(rows[c], r.rows())
        assert selector.traces_[c] == r.trace()
    # a multi-label indicator matrix: column j against every other row
    labels = np.stack([y == 1, (y == 2) | (y == 3)], axis=1)
    multi = OTSSelector(step=3).select_many(X, labels=labels, n_jobs=2, backend=backend)
    assert np.array_equal(multi[0], optimal_training_set(X, labels[:, 0], ~labels[:, 0], step=3).rows())
    assert np.array_equal(multi[1], optimal_training_set(X, labels[:, 1], ~labels[:, 1], step=3).rows())


def test_ots_trace_with_several_classes_equals_one_class_at_a_time():
    from typer.testing import CliRunner

    from toolkit.cli import app

    runner = CliRunner()
    together = runner.invoke(app, ["ots-trace", "iris", "--positive-below", "0.5", "--es", "ots:step=2", "--json",
                                   "-j", "2"])
    assert together.exit_code == 0, together.stderr
    traces = json.loads(together.stdout)["traces"]
    assert len(traces) == 3
    for name, trace in traces.items():
        alone = runner.invoke(app, ["ots-trace", "iris", "-p", name.split(":", 1)[1], "--es", "ots:step=2", "--json"])
        assert json.loads(alone.stdout)["traces"] == {name: trace}
    bad = runner.invoke(app, ["ots-trace", "iris", "-p", "Iris-setosa", "-p", "nope"])
    assert bad.exit_code == 2 and "nope" in bad.stderr


R52 = SHARED / "text" / "reuters21578-r52-train.arff.gz"


@pytest.mark.skipif(not R52.exists(), reason=f"{R52} is absent")
def test_r52_all_rare_classes_at_once_equal_one_search_at_a_time():
    # every class under 10 % of R52's training documents, searched together (threads sharing the corpus)
    # and one at a time; patience keeps it short, the comparison is the same
    import toolkit

    ds = toolkit.load_dataset(str(R52))
    classes = ds.rare_classes(0.1)
    assert len(classes) >= 40
    labels = list(ds.require_nominal_class())
    X = toolkit.Pipeline("nb-bim", tune=False).prepare(ds.one_vs_rest(classes[0])).X
    codes = [labels.index(c) for c in classes]
    selector = OTSSelector(patience=5)
    together = selector.select_many(X, ds.y, codes, n_jobs=2)
    for c, code in zip(classes, codes):
        task = ds.one_vs_rest(c)
        alone = OTSSelector(patience=5)
        rows = alone.select(toolkit.Pipeline("nb-bim", tune=False).prepare(task).X, task.y)
        assert np.array_equal(together[code], rows), c
        assert selector.traces_[code] == alone.trace_


# ----------------------------------------------------------------------------- data-parallel rounds

class _Partitions:
    """Rows of the tied corpus by partition, regenerated on each worker from the seed (nothing large is
    shipped with the task)."""

    def __init__(self, seed, n, F, parts):
        self.seed, self.n, self.F = seed, n, F
        self.cuts = np.linspace(0, n, parts + 1).astype(int)

    def __call__(self, part):
        X, y = tied_corpus(self.seed, self.n, self.F, positive_share=0.01)
        a, b = self.cuts[part], self.cuts[part + 1]
        return X[a:b], y[a:b]


def test_data_parallel_rounds_on_a_local_cluster_equal_one_machine():
    pytest.importorskip("distributed")
    from distributed import Client, LocalCluster

    from toolkit.plugins.ots.cluster import data_parallel_search

    loader = _Partitions(31, 100_000, 20_000, 3)
    X, y = tied_corpus(31, 100_000, 20_000, positive_share=0.01)
    params = dict(step=40, max_size=int((y == 1).sum()) + 40 * 60)
    single = optimal_training_set(X, y == 1, y == 0, **params)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        result, partitions = data_parallel_search(client, loader, 3, 1, **params)
        memory = [p.memory().result() for p in partitions]
        # the loaded partitions serve another search (another step) without reading the corpus again
        again, _ = data_parallel_search(client, loader, 3, 1, partitions=partitions, step=60,
                                        max_size=params["max_size"])
    assert len(result.average_precision) == 60
    for r in (result,):
        assert np.array_equal(r.added, single.added)
        assert np.array_equal(r.average_precision, single.average_precision)
        assert r.best == single.best
    other = optimal_training_set(X, y == 1, y == 0, step=60, max_size=params["max_size"])
    assert np.array_equal(again.added, other.added) and np.array_equal(again.average_precision,
                                                                       other.average_precision)
    assert all(m["peak"] > 0 for m in memory) or not Path("/proc/self/status").exists()


def test_without_the_compiled_kernel_the_search_is_the_same(monkeypatch):
    X, y = tied_corpus(41, 4_000, 1_500)
    params = dict(step=5, threshold=0.5)
    plain = plain_ots(X, y == 1, y == 0, **params)
    monkeypatch.setattr(kernel, "_rounds", None)
    assert not kernel.compiled()
    _same(optimal_training_set(X, y == 1, y == 0, **params), plain)


@pytest.mark.skipif(not kernel.compiled(), reason="the compiled round kernel is not built")
@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_packing_in_row_ranges_equals_the_numpy_packing(parts, monkeypatch):
    # the compiled packing counts and writes row ranges separately (in threads); any number of ranges must
    # give what the numpy packing (one pass, sorts) gives: the same classes, patterns, groups and states
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(40 + parts)
    n, F = 3_000, 60
    lengths = rng.choice([0, 1, 1, 2, 3, 4, 5, 9], n)
    base_ptr, base_idx, extra_ptr, extra_idx = [0], [], [0], []
    for L in lengths:
        cols = np.sort(rng.choice(F, L, replace=False))
        in_extra = rng.random(L) < 0.3
        base_idx.extend(cols[~in_extra]); extra_idx.extend(cols[in_extra])
        base_ptr.append(len(base_idx)); extra_ptr.append(len(extra_idx))
    rows = kernel.Rows(np.array(base_ptr, dtype=np.int64), np.array(base_idx, dtype=np.int32),
                       np.array(extra_ptr, dtype=np.int64), np.array(extra_idx, dtype=np.int32))
    kind = rng.choice([kernel.POOL, kernel.STS_NEGATIVE, kernel.NOT_TRAINING], n).astype(np.uint8)
    want_state = np.full(n, 9, dtype=np.uint8)
    with monkeypatch.context() as mp:
        mp.setattr(kernel, "_rounds", None)
        want_packed, want_single = kernel.pack_rows(rows, kind, kernel.POOL, F, want_state)
    monkeypatch.setattr(kernel, "PACK_ROWS_PER_PART", 100)
    state = np.full(n, 9, dtype=np.uint8)
    with ThreadPoolExecutor(3) as pool:
        packed, single = kernel.pack_rows(rows, kind, kernel.POOL, F, state, parts,
                                          lambda calls: [f.result() for f in [pool.submit(c) for c in calls]])
    assert np.array_equal(state, want_state) and set(np.unique(state)) <= {0, kernel.HELD_PACKED, kernel.HELD_SINGLE}
    for name in ("rows", "seg", "idx", "ioff", "gptr", "alive", "pos"):
        assert np.array_equal(getattr(packed, name), getattr(want_packed, name)), name
    for name in ("ptr", "rows", "live"):
        assert np.array_equal(getattr(single, name), getattr(want_single, name)), name
    # and both against the patterns themselves: packed row j is row rows[j], merged by column
    union = rows.as_csr(F)
    assert (packed.as_csr(F) != union[packed.rows]).nnz == 0
    assert np.all(np.diff(union.indptr)[packed.rows] >= 2)
