"""Sparse end to end: a document-term matrix far too large to densify (50,000 x 300,000, i.e.
120 GB as float64) goes through every text component; densifying anywhere would fail at once."""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from toolkit.api import Predictions
from toolkit.plugins.text.dcm import DCM, ComplementDCM
from toolkit.plugins.text.selection import DKLSelector, KLSelector, MISelector
from toolkit.plugins.text.multinomial import MultinomialNB
from toolkit.plugins.text.perplexity import perplexity


def huge_sparse(seed=0, n=50_000, V=300_000, nnz=150_000):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, n, size=nnz)
    cols = rng.integers(0, V, size=nnz)
    X = sp.csr_matrix((rng.integers(1, 4, size=nnz).astype(float), (rows, cols)), shape=(n, V))
    X.sum_duplicates()
    y = rng.integers(0, 2, size=n)
    return X, y


def test_no_component_densifies_the_document_term_matrix():
    X, y = huge_sparse()
    T = X[:500]
    for variant in ("M", "TW-L-M", "C-L-M"):
        clf = MultinomialNB(variant=variant, epsilon=0.01).fit(X, y)
        assert clf.predict_proba(T).shape == (500, 2)
    for cls in (DCM, ComplementDCM):
        clf = cls(max_iter=3).fit(X, y)
        assert np.isfinite(clf.decision_function(T)).all()
    for sel in (KLSelector(k=1000), DKLSelector(k=1000), MISelector(k=1000)):
        assert sp.issparse(sel.fit(X, y).transform(T)) and len(sel.support_) == 1000
    model = MultinomialNB(epsilon=1).fit(X, y)
    pred = Predictions(y_true=y[:500], y_pred=y[:500], proba=None, scores=None, classes=("a", "b"), model=model, X=T)
    assert math.isfinite(perplexity(pred))
