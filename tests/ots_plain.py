"""The OTS search computed the plain way (algorithms.md 4.1, 4.3), as the reference for the fast rounds:
every round rebuilds the weight vectors over all features from the counts, multiplies the whole corpus
by them (one scipy CSR product, pool / STS-negative / positive rows reading their own block of columns),
picks the pool's M best by a full sort and ranks the training documents with ``ranked_average_precision``.
No restriction, no incremental state beyond the counts; a few lines per step."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from toolkit.plugins.ots.bim import bim_counts, bim_weights, feature_mask, presence, restricted, smoothed_logit
from toolkit.plugins.ots.bim import thresholded
from toolkit.plugins.ots.leave_one_out import loo_smoothed_logit, ranked_average_precision
from toolkit.plugins.ots.search import step_size


def plain_ots(X, positive, negative, *, alpha=1.0, threshold=1.0, step=0.01, init="wts", scorer="sts",
              evaluate="wts", features="positive", patience=None, max_size=None):
    """(added rows in order, negatives after each round, AP after each round)."""
    B = presence(X)
    n, F = B.shape
    tau = float(threshold)
    pos_rows = np.flatnonzero(positive)
    pool = np.flatnonzero(negative & ~positive)
    M = step_size(step, len(pos_rows))
    pc = bim_counts(B, positive, np.zeros(n, dtype=bool))
    mask = feature_mask(bim_counts(B, positive, negative), features)   # the training set's feature set
    logit_p = smoothed_logit(pc.n_pos, pc.N_pos, alpha)
    loo_logit_p = loo_smoothed_logit(pc.n_pos, pc.N_pos, alpha)
    if init == "wts":
        v0 = thresholded(bim_weights(bim_counts(B, positive, negative), alpha, mask), tau)
    else:
        v0 = thresholded(restricted(logit_p, mask), tau)
    block = np.zeros(n, dtype=np.int64)
    block[pos_rows] = 2

    def product(vec):
        cols = B.indices + F * np.repeat(block, np.diff(B.indptr))
        return sp.csr_matrix((B.data, cols, B.indptr), shape=(n, 3 * F)) @ vec

    vec = np.zeros(3 * F)
    vec[:F] = v0
    scores = product(vec)
    n_neg, N_neg = np.zeros(F), 0.0
    in_sts = positive.copy()
    train = np.flatnonzero(positive | negative)
    added, n_added, aps = [], [], []
    best, best_ap, since = -1, -np.inf, 0
    while len(pool):
        keys = np.round(scores[pool], 9)
        chosen = pool[np.lexsort((pool, -keys))[:M]]
        added.extend(chosen.tolist())
        in_sts[chosen] = True
        pool = pool[~in_sts[pool]]
        block[chosen] = 1
        n_neg += np.asarray(B[chosen].sum(axis=0)).ravel()
        N_neg += len(chosen)
        logit_q = smoothed_logit(n_neg, N_neg, alpha)
        v_sts = thresholded(restricted(logit_p - logit_q, mask), tau)
        vec[:F] = v_sts if scorer == "sts" else v0
        vec[F:2 * F] = thresholded(restricted(logit_p - loo_smoothed_logit(n_neg, N_neg, alpha), mask), tau)
        vec[2 * F:] = thresholded(restricted(loo_logit_p - logit_q, mask), tau)
        scores = product(vec)
        if evaluate == "sts":
            rows = np.flatnonzero(in_sts)
            ap = ranked_average_precision(scores[rows], positive[rows])
        else:
            ranked = scores.copy()
            if scorer != "sts":
                ranked[pool] = B[pool] @ v_sts
            ap = ranked_average_precision(ranked[train], positive[train])
        aps.append(ap)
        n_added.append(len(added))
        if ap > best_ap:
            best, best_ap, since = len(aps) - 1, ap, 0
        else:
            since += 1
        if patience is not None and since >= patience:
            break
        if max_size is not None and len(pos_rows) + len(added) >= max_size:
            break
    return np.asarray(added, dtype=np.int64), np.asarray(n_added), np.asarray(aps), best


def tied_corpus(seed, n, F, positive_share=0.02, duplicates=0.3):
    """A sparse binary corpus with Zipf-like features, topic features for the positives, and many ties:
    a share of the rows are copies of other rows (same score exactly), some negatives copy positives."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < positive_share).astype(np.int64)
    y[:2] = 1
    lengths = np.maximum(rng.poisson(rng.uniform(4, 20), n), 1)
    rank = np.searchsorted(np.cumsum(1.0 / (np.arange(F) + 3.0)) / np.sum(1.0 / (np.arange(F) + 3.0)),
                           rng.random(int(lengths.sum())))
    idx = rng.permutation(F)[np.minimum(rank, F - 1)]
    topic = rng.choice(F, max(3, F // 50), replace=False)
    rows = np.repeat(np.arange(n), lengths)
    hot = rng.random(len(idx)) < np.where(y[rows] == 1, 0.3, 0.03)
    idx[hot] = topic[rng.integers(0, len(topic), int(hot.sum()))]
    X = sp.csr_matrix((np.ones(len(idx)), idx, np.r_[0, np.cumsum(lengths)]), shape=(n, F))
    X.sum_duplicates()
    X.data[:] = 1.0
    copies = rng.random(n) < duplicates
    source = rng.integers(0, n, n)
    # a copy keeps its own label: negatives with a positive's features, rows that tie exactly
    order = np.where(copies, source, np.arange(n))
    X = X[order]
    unlabelled = rng.random(n) < 0.01
    y = y.copy()
    y[unlabelled & (y == 0)] = -1
    return sp.csr_matrix(X), y
