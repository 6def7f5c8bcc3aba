"""Review of the BMA naive Bayes family (bma-nb, bma-nb-zh): regressions for the bugs found. Expected values come
from an independent reference written here straight from algorithms.md 2.6 / 2.3 (loops over rows, own Laplace
and NormalEstimator, a sum over every feature subset), never from the classifier's own tables."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp, ndtr

from toolkit.api import Schema
from toolkit.data.dataset import Attribute
from toolkit.errors import CapabilityError, ParameterError, ToolkitError
from toolkit.plugins.naive_bayes.bma import BMANaiveBayes


# ----------------------------------------------------------------------------------------------- reference

def _precision(column):
    """WEKA's precision: the gaps between consecutive distinct sorted values, added in order, over their number."""
    values = sorted(v for v in column if not math.isnan(v))
    total, gaps = 0.0, 0
    for last, value in zip(values, values[1:]):
        if value != last:
            total += value - last
            gaps += 1
    return total / gaps if gaps else 0.01


def _normal(values, weights, precision):
    """log P(x) of WEKA's NormalEstimator (final sums), as a function of x."""
    sw = sv = sq = 0.0
    for v, w in zip(values, weights):
        if not math.isnan(v) and w:
            r = float(np.rint(v / precision)) * precision
            sw, sv, sq = sw + w, sv + w * r, sq + w * r * r
    mean, sigma = 0.0, precision / 6
    if sw > 0:
        mean = sv / sw
        sd = math.sqrt(abs(sq - mean * sv) / sw)
        sigma = max(precision / 6, sd) if sd > 1e-10 else precision / 6

    def lp(x):
        r = float(np.rint(x / precision)) * precision
        return math.log(max(1e-75, ndtr((r - mean + precision / 2) / sigma) - ndtr((r - mean - precision / 2) / sigma)))
    return lp


class Reference:
    """algorithms.md 2.6: SC_j, SAC_j, N_j by loops, and the score as a log-sum over all 2^F subsets of the
    observed features (each feature used, weight 1/C = H^-(N_j+1), or ignored)."""

    def __init__(self, X, y, K, n_values, w=None):
        n, F = X.shape
        w = np.ones(n) if w is None else np.asarray(w, dtype=float)
        counts = np.array([w[y == k].sum() for k in range(K)])
        self.log_prior = np.log((counts + 1) / (counts.sum() + K))
        self.cond, self.uncond = [], []
        for j in range(F):
            col = X[:, j]
            if n_values[j]:
                def laplace(rows, J=n_values[j], col=col):
                    table = np.zeros(J)
                    for i in rows:
                        if not math.isnan(col[i]):
                            table[int(col[i])] += w[i]
                    return lambda x: math.log((table[int(x)] + 1) / (table.sum() + J))
                self.cond.append([laplace(np.flatnonzero(y == k)) for k in range(K)])
                self.uncond.append(laplace(range(n)))
            else:
                p = _precision(col)
                self.cond.append([_normal(col[y == k], w[y == k], p) for k in range(K)])
                self.uncond.append(_normal(col, w, p))
        self.SC, self.SAC, self.N = np.zeros(F), np.zeros(F), np.zeros(F)
        for j in range(F):
            for i in range(n):
                if not math.isnan(X[i, j]):
                    self.SC[j] += w[i] * self.cond[j][y[i]](X[i, j])
                    self.SAC[j] += w[i] * self.uncond[j](X[i, j])
                    self.N[j] += w[i]
        self.K, self.F = K, F

    def used_and_ignored(self, x, j, k, H):
        used = self.SC[j] + self.cond[j][k](x[j]) - (self.N[j] + 1) * math.log(H)
        return used, self.SAC[j] + self.uncond[j](x[j])

    def scores(self, x, H):
        observed = [j for j in range(self.F) if not math.isnan(x[j])]
        out = np.zeros(self.K)
        for k in range(self.K):
            terms = []
            for subset in itertools.product((True, False), repeat=len(observed)):
                terms.append(sum(self.used_and_ignored(x, j, k, H)[0 if on else 1] for on, j in zip(subset, observed)))
            out[k] = self.log_prior[k] + logsumexp(terms)
        return out


def _mixed(seed, n=30):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, 3, n), rng.normal(size=n).round(1), rng.integers(0, 2, n)]).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 2, n)
    schema = Schema((Attribute("a", "nominal", ("p", "q", "r")), Attribute("b", "numeric"),
                     Attribute("c", "nominal", ("s", "t"))), ("k0", "k1"))
    return X, y, schema, [3, 0, 2]


def test_reference_agrees_with_the_thesis_toy_vector():
    """The reference itself against algorithms.md 7.3 (so the comparisons below test the classifier)."""
    rows, labels = [], []
    for cls, (a, b, c) in ((0, (6, 6, 7)), (1, (6, 4, 3))):
        for i in range(10):
            rows.append([float(i < a), float(i < b), float(i < c)])
            labels.append(cls)
    ref = Reference(np.array(rows), np.array(labels), 2, [2, 2, 2])
    np.testing.assert_allclose(ref.SC, [-13.471708, -13.471708, -12.268185], atol=1e-6)
    np.testing.assert_allclose(ref.scores(np.array([1.0, 1.0, 1.0]), 1.1), [-42.825862, -43.149447], atol=1e-6)


# ----------------------------------------------------------------------------------------------- H parameter

@pytest.mark.parametrize("H", [np.int64(1), np.float32(0.5), np.float64(1.25), np.int32(2)])
def test_numpy_scalar_H_is_accepted_and_gives_the_formula(H):
    """H from a numpy grid (GridSearchCV over np.array([1, 2]), np.float32 values) was refused as
    "H must be a number > 0, not np.int64(1)", a number > 0; the other NB parameters accept numpy scalars."""
    X, y, schema, n_values = _mixed(1)
    clf = BMANaiveBayes(H=H).fit(X, y, schema=schema)
    ref = Reference(X, y, 2, n_values)
    expected = np.array([ref.scores(x, float(H)) for x in X[:6]])
    got = clf.predict_log_proba(X[:6])
    np.testing.assert_allclose(got, expected - logsumexp(expected, axis=1, keepdims=True), rtol=0, atol=1e-9)


@pytest.mark.parametrize("H", [-1.0, 0, float("nan"), "1", True, np.bool_(True)])
def test_a_refused_H_leaves_no_half_fitted_model(H):
    """fit ran the whole pass over the data before checking H, and left the model fitted with it (predict then
    failed with "the log-likelihood ... is undefined ... rescale the data")."""
    X, y, schema, _ = _mixed(2)
    clf = BMANaiveBayes(H=H)
    with pytest.raises(ParameterError, match="H must be a number > 0"):
        clf.fit(X, y, schema=schema)
    assert not hasattr(clf, "classes_") and not hasattr(clf, "sc_")


@pytest.mark.parametrize("H", [5e-324, 1e-300, 1e300, float("inf")])
def test_extreme_H_matches_the_sum_over_subsets(H):
    """H^(N+1) far beyond float range: log C = (N_j + 1) log H is finite (or +inf for H = inf: no feature used),
    and the posteriors are finite and equal the reference's."""
    X, y, schema, n_values = _mixed(3)
    clf = BMANaiveBayes(H=H).fit(X, y, schema=schema)
    ref = Reference(X, y, 2, n_values)
    expected = np.array([ref.scores(x, H) for x in X[:5]])
    np.testing.assert_allclose(clf.decision_function(X[:5]), expected, rtol=1e-12, atol=1e-8)
    proba = clf.predict_proba(X[:5])
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------------------------- attributes

def test_relational_attribute_is_refused_by_name():
    """A relational attribute handed to the API (the pipeline refuses it, a direct fit did not) crashed with
    "IndexError: index 1 is out of bounds for axis 0 with size 1"; it is refused like a string attribute."""
    bag = Attribute("bag", "relational", relation=(Attribute("v", "numeric"),))
    schema = Schema((bag, Attribute("x", "numeric")), ("p", "q"))
    X = np.column_stack([np.arange(6) % 3, np.arange(6.0)])
    y = np.arange(6) % 2
    with pytest.raises(CapabilityError, match="relational .*'bag'"):
        BMANaiveBayes().fit(X, y, schema=schema)
    with pytest.raises(CapabilityError, match="relational .*'bag'"):
        BMANaiveBayes().shard_statistics(X, y, schema=schema)


# ----------------------------------------------------------------------------------------------- feature weights

def test_feature_weights_match_the_reference_and_refuse_a_bad_class_index():
    """pi_jk(x) = exp(B - LSE(A, B)) against the reference; k outside 0..K-1 raised a numpy IndexError (and a
    negative k silently gave another class); model_feature_weights on an unfitted model an AttributeError."""
    X, y, schema, n_values = _mixed(4)
    clf = BMANaiveBayes(H=0.9).fit(X, y, schema=schema)
    ref = Reference(X, y, 2, n_values)
    got = clf.feature_weights(X[:8])
    for i, x in enumerate(X[:8]):
        for j in range(3):
            for k in range(2):
                if math.isnan(x[j]):
                    assert math.isnan(got[i, j, k])
                    continue
                used, ignored = ref.used_and_ignored(x, j, k, 0.9)
                assert got[i, j, k] == pytest.approx(math.exp(used - np.logaddexp(used, ignored)), abs=1e-12)
    np.testing.assert_array_equal(clf.feature_weights(X[:8], k=np.int64(1)), got[:, :, 1])
    for k in (2, -1, 0.5, True):
        with pytest.raises(ParameterError, match="k must be a class index from 0 to 1"):
            clf.feature_weights(X[:8], k=k)
    with pytest.raises(ToolkitError, match="not fitted yet"):
        BMANaiveBayes().model_feature_weights()
