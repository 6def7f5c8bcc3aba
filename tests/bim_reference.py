"""Brute-force references for the BIM and the OTS search, written with explicit loops and the textbook
formulas of algorithms.md 2.5, 4.1, 4.3 and 5.2.3, independent of the vectorised code under test.
Leave-one-out here really refits without the document, on the feature set of the whole training part
(``features="positive"``: the features present in one of its positives, algorithms.md 2.5)."""

from __future__ import annotations

import math

import numpy as np


def feature_set(X: np.ndarray, y: np.ndarray, features: str = "positive") -> list[bool]:
    """Which features may carry a weight: those present in a C1 document, or all."""
    n, F = X.shape
    if features == "all":
        return [True] * F
    return [any(y[i] == 1 and X[i, t] > 0 for i in range(n)) for t in range(F)]


def weights(X: np.ndarray, y: np.ndarray, alpha: float = 1.0, features: str = "positive",
            fixed: list[bool] | None = None) -> list[float]:
    """w_t = log[p (1 - q) / (q (1 - p))] from documents X (presence = value > 0) and labels (1 = C1), for
    the features in ``fixed`` (default: the feature set of X and y); 0 for the others."""
    kept = fixed if fixed is not None else feature_set(X, y, features)
    n, F = X.shape
    N_pos = sum(1 for i in range(n) if y[i] == 1)
    N_neg = sum(1 for i in range(n) if y[i] == 0)
    out = []
    for t in range(F):
        n_pos = sum(1 for i in range(n) if y[i] == 1 and X[i, t] > 0)
        n_neg = sum(1 for i in range(n) if y[i] == 0 and X[i, t] > 0)
        p = (n_pos + alpha) / (N_pos + 2 * alpha)
        q = (n_neg + alpha) / (N_neg + 2 * alpha)
        out.append(math.log(p * (1 - q) / (q * (1 - p))) if kept[t] else 0.0)
    return out


def score(w: list[float], x: np.ndarray, tau: float) -> float:
    """Eq. A.5: the sum of the weights of the present features with |w| > tau."""
    total = 0.0
    for t in range(len(w)):
        if x[t] > 0 and abs(w[t]) > tau:
            total += w[t]
    return total


def loo_scores(X: np.ndarray, y: np.ndarray, alpha: float, tau: float, features: str = "positive") -> list[float]:
    """Refit on every other document, on the feature set of all of them, and score the one left out."""
    n = X.shape[0]
    kept = feature_set(X, y, features)
    out = []
    for d in range(n):
        keep = [i for i in range(n) if i != d]
        w = weights(X[keep], y[keep], alpha, fixed=kept)
        out.append(score(w, X[d], tau))
    return out


def tie(value: float) -> float:
    """Scores are equal when they agree to 9 decimals (the ranking convention under test)."""
    return round(value, 9)


def average_precision(scores: list[float], relevant: list[bool]) -> float:
    """Rank by score descending, ties (at 1e-9) by position; mean precision at the relevant ranks."""
    order = sorted(range(len(scores)), key=lambda i: (-tie(scores[i]), i))
    hits, total = 0, 0.0
    for rank, i in enumerate(order, start=1):
        if relevant[i]:
            hits += 1
            total += hits / rank
    return total / hits if hits else float("nan")


def ots(X: np.ndarray, y: np.ndarray, *, alpha: float = 1.0, tau: float = 1.0, M: int = 1, init: str = "wts",
        scorer: str = "sts", evaluate: str = "wts",
        features: str = "positive") -> tuple[list[tuple[int, list[int], float]], list[int]]:
    """The OTS loop of algorithms.md 4.1 done the slow way; returns the trace (|STS|, added, AP) and
    the OTS rows (sorted). The feature set is fixed once, from the positives."""
    n = X.shape[0]
    pos = [i for i in range(n) if y[i] == 1]
    pool = [i for i in range(n) if y[i] == 0]
    kept = feature_set(X, y, features)
    if init == "wts":
        w = weights(X, y, alpha, fixed=kept)
    else:
        w = weights(X[pos], y[pos], alpha, fixed=kept)
    w0 = w
    sts = list(pos)
    trace = []
    while pool:
        ranked = sorted(pool, key=lambda i: (-tie(score(w, X[i], tau)), i))
        chosen = ranked[:M]
        sts += chosen
        pool = [i for i in pool if i not in chosen]
        members = sorted(sts)
        w_sts = weights(X[members], y[members], alpha, fixed=kept)
        scored: dict[int, float] = {}
        for d in members:
            others = [i for i in members if i != d]
            scored[d] = score(weights(X[others], y[others], alpha, fixed=kept), X[d], tau)
        if evaluate == "wts":
            for d in pool:
                scored[d] = score(w_sts, X[d], tau)
        rows = sorted(scored)
        ap = average_precision([scored[i] for i in rows], [y[i] == 1 for i in rows])
        trace.append((len(sts), chosen, ap))
        w = w_sts if scorer == "sts" else w0
    best = 0
    for k, (_, _, ap) in enumerate(trace):
        if ap > trace[best][2]:
            best = k
    chosen_negatives = [i for _, added, _ in trace[: best + 1] for i in added]
    return trace, sorted(pos + chosen_negatives)
