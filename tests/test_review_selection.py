"""Review of the text feature selectors, perplexity and the word-counts step (rev-select).

Every expected value comes from algorithms.md (formulas or test vectors) written out again here as
plain loops, or from scikit-learn; never from the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from toolkit.api import Predictions
from toolkit.plugins.text.dcm import DCM
from toolkit.plugins.text.perplexity import perplexity


def _predictions(model, X, y):
    y = np.asarray(y)
    return Predictions(y_true=y, y_pred=y, proba=None, scores=None, classes=("a", "b"), model=model, X=X)


def _dcm_log_p(x, alpha):
    """algorithms.md 5.2.6, DCM without the multinomial coefficient, written out."""
    A, n = float(np.sum(alpha)), float(np.sum(x))
    return (math.lgamma(A) - math.lgamma(n + A)
            + sum(math.lgamma(xw + aw) - math.lgamma(aw) for xw, aw in zip(x, alpha) if xw > 0))


def test_perplexity_of_dcm_scoring_every_column_counts_every_token():
    """dcm:vocabulary=all gives the words of no training document a positive alpha and scores their tokens;
    the perplexity divided by the training-vocabulary tokens only (3 of 6 here: 324.5 instead of 18.0)."""
    X = np.array([[3, 1, 0], [1, 2, 0], [2, 2, 0], [0, 1, 0]], dtype=float)
    y = np.array([0, 1, 0, 1])
    test = np.array([[2.0, 1.0, 3.0]])
    model = DCM(vocabulary="all").fit(X, y)
    alpha = model.alpha_[0]
    assert np.all(alpha > 0)                 # every column is scored, the unseen word too
    expected = math.exp(-_dcm_log_p(test[0], alpha) / test.sum())
    assert perplexity(_predictions(model, test, [0])) == pytest.approx(expected, rel=1e-10)
    # and with the training vocabulary (the default) the unseen word counts in neither term
    model = DCM().fit(X, y)
    alpha = model.alpha_[0]
    assert alpha[2] == 0
    expected = math.exp(-_dcm_log_p(test[0, :2], alpha[:2]) / test[0, :2].sum())
    assert perplexity(_predictions(model, test, [0])) == pytest.approx(expected, rel=1e-10)
