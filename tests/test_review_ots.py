"""Review of the OTS family against brute-force computations of algorithms.md (2.5, 3.3, 4.1, 4.3, 5.2.3).

The reference below recomputes everything the plain way: counts by summing rows, weights from the formula
log(p(1-q)/(q(1-p))), each leave-one-out score by retraining without the document, AP by sorting every
document (score descending, rounded at 1e-9 as the ties of algorithms.md 0.2, then row index)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp

from toolkit.plugins.ots.search import optimal_training_set


# ----------------------------------------------------------------------------- brute-force reference

def _counts(B, rows, y):
    rows = np.asarray(rows, dtype=int)
    P, N = rows[y[rows] == 1], rows[y[rows] != 1]
    return B[P].sum(0).astype(float), B[N].sum(0).astype(float), float(len(P)), float(len(N))


def _weights(B, rows, y, a, fset):
    npos, nneg, Np, Nn = _counts(B, rows, y)
    out = []
    for t in range(B.shape[1]):
        if not fset[t]:
            out.append(0.0)
            continue
        p, q = (npos[t] + a) / (Np + 2 * a), (nneg[t] + a) / (Nn + 2 * a)
        out.append(math.log(p * (1 - q) / (q * (1 - p))))
    return out


def _score(w, b, tau):
    return sum(w[t] for t in range(len(w)) if b[t] and abs(w[t]) > tau)


def _feature_set(B, rows, y, features):
    return [any(B[d, t] and (features == "all" or y[d] == 1) for d in rows) for t in range(B.shape[1])]


def _ap(scores, y, rows):
    ranked = sorted(rows, key=lambda d: (-round(scores[d], 9), d))
    hits, total = 0, 0.0
    for k, d in enumerate(ranked, 1):
        if y[d] == 1:
            hits += 1
            total += hits / k
    return total / hits if hits else float("nan")


def _loo(B, rows, y, d, a, tau, fset):
    w = _weights(B, [r for r in rows if r != d], y, a, fset)
    return _score(w, B[d], tau)


def reference_ots(X, y, *, tau=1.0, M=1, init="wts", scorer="sts", evaluate="wts", features="positive",
                  patience=None, max_size=None, a=1.0):
    """algorithms.md 4.1 step by step: [(|STS|, sorted added rows, AP)], sorted OTS rows."""
    B = np.asarray(X) > 0
    y = np.asarray(y)
    train = [d for d in range(len(y)) if y[d] in (0, 1)]
    pos = [d for d in train if y[d] == 1]
    pool = [d for d in train if y[d] == 0]
    fset = _feature_set(B, train, y, features)
    f0 = f = _weights(B, train if init == "wts" else pos, y, a, fset)
    sts, trace = list(pos), []
    best, best_ap, since = -1, -math.inf, 0
    while pool:
        sc = {d: _score(f, B[d], tau) for d in pool}
        pick = sorted(pool, key=lambda d: (-round(sc[d], 9), d))[:M]
        sts += pick
        pool = [d for d in pool if d not in pick]
        w_sts = _weights(B, sts, y, a, fset)
        scores = {d: _loo(B, sts, y, d, a, tau, fset) for d in sts}
        if evaluate == "wts":
            scores.update({d: _score(w_sts, B[d], tau) for d in pool})
            value = _ap(scores, y, train)
        else:
            value = _ap(scores, y, sts)
        trace.append((len(sts), sorted(pick), value))
        if value > best_ap:
            best, best_ap, since = len(trace) - 1, value, 0
        else:
            since += 1
        f = w_sts if scorer == "sts" else f0
        if patience is not None and since >= patience:
            break
        if max_size is not None and len(sts) >= max_size:
            break
    return trace, (sorted(sts[:trace[best][0]]) if best >= 0 else sorted(pos))


def _assert_same_search(result, trace, rows):
    assert result.sizes.tolist() == [s for s, _, _ in trace]
    np.testing.assert_allclose(result.average_precision, [v for _, _, v in trace], rtol=0, atol=1e-9)
    assert [sorted(result.added[k - len(p):k].tolist()) for k, (_, p, _) in zip(result.n_added, trace)] == \
        [p for _, p, _ in trace]
    assert result.rows().tolist() == rows


# ----------------------------------------------------------------------------- ots-trace with unlabelled rows

def _arff_with_missing_classes(path):
    rng = np.random.default_rng(5)
    X = (rng.random((70, 6)) < 0.35).astype(int)
    codes = rng.integers(0, 3, 70)
    codes[[0, 1, 2, 9, 20, 33, 47, 61]] = -1          # class missing: the pipeline drops these rows
    labels = ["x", "y", "z"]
    lines = ["@relation miss"] + [f"@attribute a{j} numeric" for j in range(6)] + ["@attribute class {x,y,z}", "@data"]
    lines += [",".join(map(str, X[i])) + "," + (labels[codes[i]] if codes[i] >= 0 else "?") for i in range(70)]
    path.write_text("\n".join(lines) + "\n")
    return X, codes


def test_ots_trace_with_unlabelled_rows_searches_the_labelled_rows(tmp_path):
    # found by running ots-trace -p on an ARFF with '?' classes: the prepared corpus had lost the unlabelled
    # rows while the class codes had not, and the search died on a shape mismatch (a traceback, exit 1)
    from typer.testing import CliRunner

    from toolkit.cli import app

    path = tmp_path / "miss.arff"
    X, codes = _arff_with_missing_classes(path)
    result = CliRunner().invoke(app, ["ots-trace", str(path), "-p", "x", "-p", "z", "--es", "ots:step=2", "--json"])
    assert result.exit_code == 0, result.output
    traces = json.loads(result.stdout)["traces"]
    kept = codes >= 0
    for label, k in (("x", 0), ("z", 2)):
        y = np.where(codes[kept] == k, 1, 0)
        trace, rows = reference_ots(X[kept], y, tau=1.0, M=2)
        got = traces[f"miss:{label}"]
        assert got["size"] == [s for s, _, _ in trace]
        np.testing.assert_allclose(got["average_precision"], [v for _, _, v in trace], rtol=0, atol=1e-9)
        assert got["best_size"] == len(rows)


def test_cluster_worker_corpus_keeps_codes_and_rows_aligned(tmp_path):
    # the Dask path (one term per task) read the corpus the same way and had the same mismatch
    from toolkit.plugins.ots.cluster import _term_task
    from toolkit.plugins.ots.selectors import OTSSelector

    path = tmp_path / "miss.arff"
    X, codes = _arff_with_missing_classes(path)
    kept = codes >= 0
    r = _term_task(str(path), 6, "y", OTSSelector(step=3)._ots_params("ots"))
    trace, rows = reference_ots(X[kept], np.where(codes[kept] == 1, 1, 0), tau=1.0, M=3)
    _assert_same_search(r, trace, rows)


# ----------------------------------------------------------------------------- step M larger than the pool

def _small_corpus(seed, n=40, F=8, n_pos=6):
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, n_pos, replace=False)] = 1
    X = (rng.random((n, F)) < np.where(y[:, None] == 1, 0.45, 0.2)).astype(float)
    return X, y


@pytest.mark.parametrize("M", [35, 10**9])
def test_a_step_larger_than_the_pool_takes_the_whole_pool_in_one_round(M):
    # found by trying a huge M: the round kernel sized its candidate buffer by M and raised MemoryError
    from toolkit.plugins.ots.selectors import OTSSelector

    X, y = _small_corpus(3)
    trace, rows = reference_ots(X, y, tau=1.0, M=M)
    assert [s for s, _, _ in trace] == [40]   # one round: every negative at once
    r = optimal_training_set(sp.csr_matrix(X), y == 1, y == 0, step=M)
    _assert_same_search(r, trace, rows)
    assert r.step == M                        # the trace reports the M that was asked for
    assert OTSSelector(step=M).select(X, y).tolist() == rows


# ----------------------------------------------------------------------------- the search against the reference

def _corpus(seed, n, F, n_pos, unlabelled=4):
    rng = np.random.default_rng(seed)
    y = np.zeros(n, dtype=np.int64)
    y[rng.choice(n, n_pos, replace=False)] = 1
    y[rng.choice(np.flatnonzero(y == 0), unlabelled, replace=False)] = -1     # neither class: left out
    rates = np.where(y[:, None] == 1, rng.uniform(0.05, 0.5, F), rng.uniform(0.01, 0.3, F))
    X = (rng.random((n, F)) < rates) * rng.integers(1, 4, (n, F)).astype(float)   # counts, read as presence
    X[rng.choice(n, 6)] = 0            # empty documents
    X[rng.choice(n, 6)] = X[0]         # duplicates: ties
    X[:, 1] = 1                        # a feature in every document
    X[y == 1, 2] = 0                   # a feature absent from the positives
    return X, y


SEARCHES = [dict(tau=1.0, M=8, init="wts", scorer="sts", evaluate="wts", features="positive"),
            dict(tau=0.0, M=5, init="sts", scorer="sts", evaluate="wts", features="all"),
            dict(tau=0.5, M=12, init="wts", scorer="wts_fixed", evaluate="sts", features="positive"),
            dict(tau=2.0, M=7, init="sts", scorer="wts_fixed", evaluate="wts", features="positive", patience=3),
            dict(tau=1.0, M=6, init="wts", scorer="sts", evaluate="sts", features="all", max_size=90)]


@pytest.mark.parametrize("k", range(len(SEARCHES)))
def test_search_equals_the_plain_procedure_on_random_corpora(k):
    o = dict(SEARCHES[k])
    X, y = _corpus(k, 160 + 20 * k, 12, 10 + 3 * k)
    trace, rows = reference_ots(X, y, **o)
    tau, M = o.pop("tau"), o.pop("M")
    r = optimal_training_set(sp.csr_matrix(X) if k % 2 else X, y == 1, y == 0, threshold=tau, step=M, **o)
    _assert_same_search(r, trace, rows)


# ----------------------------------------------------------------------------- M from a share, rounded half up

@pytest.mark.parametrize("share, n_positive, expected", [
    (0.29, 50, 15),    # 14.5 exactly, but 0.29 * 50 is 14.499999999999998 in binary floating point
    (0.57, 50, 29),    # 28.5 (28.499999999999996)
    (0.01, 150, 2),    # 1.5
    (0.01, 250, 3),    # 2.5: half up, not to even
    (0.01, 49, 1),     # 0.49: at least 1
    (0.01, 351, 4),    # 3.51
])
def test_step_share_is_rounded_half_up_in_decimal(share, n_positive, expected):
    # docs/plugins.md (ots): "step below 1 is a share of the positives, rounded half up, at least 1"
    from toolkit.plugins.ots.search import step_size

    assert step_size(share, n_positive) == expected


# ----------------------------------------------------------------------------- nb-bim and bim-threshold, brute force

def _bim_brute(X, y, a, tau, features, w=None):
    """Weights and the intercept b of algorithms.md 2.5, by loops over documents and features."""
    B = np.asarray(X) > 0
    n, F = B.shape
    w = np.ones(n) if w is None else w
    Np = sum(w[d] for d in range(n) if y[d] == 1)
    Nn = sum(w[d] for d in range(n) if y[d] == 0)
    weights, b = [], 0.0
    for t in range(F):
        npos = sum(w[d] for d in range(n) if y[d] == 1 and B[d, t])
        nneg = sum(w[d] for d in range(n) if y[d] == 0 and B[d, t])
        p, q = (npos + a) / (Np + 2 * a), (nneg + a) / (Nn + 2 * a)
        inset = npos > 0 if features == "positive" else npos + nneg > 0
        weights.append(math.log(p * (1 - q) / (q * (1 - p))) if inset else 0.0)
        if abs(weights[-1]) > tau:
            b += math.log((1 - p) / (1 - q))
    return np.array(weights), b + math.log(Np / Nn)


@pytest.mark.parametrize("seed", range(12))
def test_nb_bim_and_bim_threshold_equal_the_formulas(seed):
    from toolkit.plugins.ots.bim_threshold import BIMThresholdSelector
    from toolkit.plugins.ots.nb_bim import BIMNaiveBayes

    rng = np.random.default_rng(seed)
    n, F = int(rng.integers(4, 30)), int(rng.integers(2, 10))
    y = (rng.random(n) < 0.3).astype(int)
    y[:2] = (1, 0)
    if seed % 4 == 0:
        y[2:] = 0                                   # one positive
    X = (rng.random((n, F)) < 0.3) * rng.integers(1, 4, (n, F)).astype(float)
    X[:, 0] = 2                                     # in every document
    X[y == 1, F - 1] = 0                            # absent from the positives
    a, tau = (1.0, 0.5, 2.0)[seed % 3], (0.0, 1.0, 0.5, 3.0)[seed % 4]
    features = ("positive", "all")[seed % 2]
    sw = rng.integers(1, 4, n).astype(float) if seed % 3 == 1 else None
    Xin = sp.csr_matrix(X) if seed % 2 else X
    Xt = (rng.random((6, F)) < 0.4).astype(float)
    W, b = _bim_brute(X, y, a, tau, features, sw)
    m = BIMNaiveBayes(alpha=a, threshold=tau, features=features).fit(Xin, y, sample_weight=sw)
    s = np.array([sum(W[t] for t in range(F) if Xt[i, t] > 0 and abs(W[t]) > tau) for i in range(6)])
    np.testing.assert_allclose(m.weights_, W, rtol=0, atol=1e-9)
    np.testing.assert_allclose(m.score_documents(Xt), s, rtol=0, atol=1e-9)
    assert m.intercept_ == pytest.approx(b, abs=1e-9)
    np.testing.assert_allclose(m.predict_proba(Xt)[:, 1], 1 / (1 + np.exp(-(s + b))), rtol=0, atol=1e-9)
    W, _ = _bim_brute(X, y, a, tau, features)
    sel = BIMThresholdSelector(threshold=tau, alpha=a, features=features).fit(Xin, y)
    assert sel.support_.tolist() == [t for t in range(F) if abs(W[t]) > tau]


@pytest.mark.parametrize("seed", range(4))
def test_optcut_equals_brute_force_leave_one_out(seed):
    from toolkit.plugins.ots.nb_bim import BIMNaiveBayes

    rng = np.random.default_rng(50 + seed)
    n, F = 14, 5
    y = (rng.random(n) < 0.35).astype(int)
    y[:2] = (1, 0)
    X = (rng.random((n, F)) < 0.35).astype(float)
    features = ("positive", "all")[seed % 2]
    B, rows = X > 0, list(range(n))
    fset = _feature_set(B, rows, y, features)
    grid = [round(0.1 * i, 10) for i in range(101)]
    aps = [_ap({d: _loo(B, rows, y, d, 1.0, tau, fset) for d in rows}, y, rows) for tau in grid]
    m = BIMNaiveBayes(threshold="loo", features=features).fit(X, y)
    np.testing.assert_allclose(m.loo_ap_, aps, rtol=0, atol=1e-9)
    assert m.threshold_ == grid[int(np.argmax(aps))]


# ----------------------------------------------------------------------------- several terms, random STS

@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_select_many_equals_one_reference_search_per_term(backend):
    from toolkit.plugins.ots.selectors import OTSSelector

    rng = np.random.default_rng(4)
    codes = rng.integers(0, 4, 150)
    codes[:5] = -1
    X = (rng.random((150, 10)) < 0.25).astype(float)
    sel = OTSSelector(step=4, threshold=0.5)
    out = sel.select_many(sp.csr_matrix(X), codes, n_jobs=2, backend=backend)
    for c in range(4):
        trace, rows = reference_ots(X, np.where(codes == c, 1, np.where(codes >= 0, 0, -1)), tau=0.5, M=4)
        assert out[c].tolist() == rows
        assert sel.traces_[c]["size"] == [s for s, _, _ in trace]


def test_random_sts_draws_as_many_negatives_as_the_reference_ots():
    from toolkit.plugins.ots.selectors import RandomSTSSelector

    X, y = _corpus(9, 120, 10, 9, unlabelled=0)
    _, rows = reference_ots(X, y, M=2)
    k = int(np.sum(y[rows] == 0))
    got = RandomSTSSelector(step=2, random_state=11).select(X, y)
    negatives = np.flatnonzero(y == 0)
    expected = np.sort(np.r_[np.flatnonzero(y == 1), np.random.default_rng(11).choice(negatives, k, replace=False)])
    assert got.tolist() == expected.tolist()


@pytest.mark.parametrize("threshold", [-1.0, float("nan"), "loo", None])
def test_search_refuses_a_threshold_that_is_not_a_number_at_least_0(threshold):
    # optimal_training_set (and the data-parallel search) took float(threshold) unchecked: -1 and NaN ran a
    # search (NaN: no feature ever passes |w| > tau), 'loo' and None died with a bare ValueError/TypeError
    from toolkit.errors import ParameterError

    X, y = _small_corpus(1)
    with pytest.raises(ParameterError, match="threshold"):
        optimal_training_set(X, y == 1, y == 0, threshold=threshold)


# ----------------------------------------------------------------------------- degenerate corpora

def _degenerate(kind):
    y = np.array([1, 1] + [0] * 10)
    if kind == "identical":
        return np.ones((12, 3)), y
    if kind == "empty":
        return np.zeros((12, 3)), y
    rng = np.random.default_rng(0)
    X = (rng.random((12, 4)) < 0.4).astype(float)
    if kind == "one-positive":
        return X, np.r_[0, 1, np.zeros(10, dtype=int)]
    X[3:7] = 0
    return X, y


@pytest.mark.parametrize("kind", ["identical", "empty", "one-positive", "some-empty"])
@pytest.mark.parametrize("evaluate", ["wts", "sts"])
@pytest.mark.parametrize("M", [1, 3, 100])
def test_degenerate_corpora_follow_the_reference(kind, evaluate, M):
    X, y = _degenerate(kind)
    for tau in (0.0, 1.0):
        trace, rows = reference_ots(X, y, tau=tau, M=M, evaluate=evaluate)
        r = optimal_training_set(sp.csr_matrix(X), y == 1, y == 0, threshold=tau, step=M, evaluate=evaluate)
        _assert_same_search(r, trace, rows)


def test_no_negative_gives_the_positives_and_an_empty_trace():
    from toolkit.plugins.ots.selectors import OTSSelector, RandomSTSSelector

    X, y = np.eye(4), np.ones(4, dtype=int)
    r = optimal_training_set(X, y == 1, y == 0)
    assert r.rows().tolist() == [0, 1, 2, 3] and r.trace()["size"] == [] and r.trace()["best_size"] == 4
    assert OTSSelector().select(X, y).tolist() == [0, 1, 2, 3]
    assert RandomSTSSelector(random_state=1).select(X, y).tolist() == [0, 1, 2, 3]
