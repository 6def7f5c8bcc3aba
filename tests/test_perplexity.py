"""Perplexity (algorithms.md 5.2.6) with the 7.9 test vectors, and the evaluator's NaN fallback."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import toolkit
from toolkit.api import Predictions
from toolkit.plugins.text.dcm import DCM, ComplementDCM, dcm_log_likelihood
from toolkit.plugins.text.multinomial import MultinomialNB, multinomial_log_likelihood
from toolkit.plugins.text.perplexity import perplexity, perplexity_from_loglik

DOCS = sp.csr_matrix(np.array([[2, 1, 0], [0, 1, 3]], dtype=float))


def test_multinomial_vector():
    ll = multinomial_log_likelihood(DOCS, np.log([[0.5, 0.3, 0.2]]), np.array([0, 0]))
    assert ll.sum() == pytest.approx(-8.622554, abs=1e-6)
    assert perplexity_from_loglik(ll, np.array([3, 4])) == pytest.approx(3.427371, abs=1e-6)


def test_dcm_vector():
    ll = dcm_log_likelihood(DOCS, np.array([[1.0, 0.6, 0.4]]))[:, 0]
    np.testing.assert_allclose(ll, (-2.995732, -5.002667), atol=1e-6)
    assert perplexity_from_loglik(ll, np.array([3, 4])) == pytest.approx(3.134998, abs=1e-6)


def _predictions(model, X, y):
    return Predictions(y_true=np.asarray(y), y_pred=np.asarray(y), proba=None, scores=None, classes=("a", "b"),
                       model=model, X=X)


def test_evaluator_uses_each_documents_class_model():
    train = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 2], [1, 0, 4]], dtype=float)
    y = np.array([0, 0, 1, 1])
    model = DCM().fit(train, y)
    model.alpha_ = np.array([[1.0, 0.6, 0.4], [5.0, 5.0, 5.0]])     # fixed parameters: the 7.9 vector for class 0
    value = perplexity(_predictions(model, DOCS, [0, 0]))
    assert value == pytest.approx(3.134998, abs=1e-6)
    # a test document without a known class is left out
    value = perplexity(_predictions(model, sp.vstack([DOCS, DOCS[:1]]).tocsr(), [0, 0, -1]))
    assert value == pytest.approx(3.134998, abs=1e-6)
    mnb = MultinomialNB(epsilon=1).fit(train, y)
    mnb.feature_log_prob_ = np.log([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    assert perplexity(_predictions(mnb, DOCS, [0, 0])) == pytest.approx(3.427371, abs=1e-6)


def test_evaluator_gives_nan_for_models_without_a_likelihood():
    train = np.array([[3, 0, 1], [2, 1, 0], [0, 2, 2], [1, 0, 4]], dtype=float)
    y = np.array([0, 0, 1, 1])
    for model in (MultinomialNB(variant="C-TW-L-M").fit(train, y), ComplementDCM().fit(train, y),
                  toolkit.get_classifier("nb-gaussian").fit(train, y)):
        assert math.isnan(perplexity(_predictions(model, DOCS, [0, 1])))
    assert math.isnan(perplexity(_predictions(None, DOCS, [0, 1])))


def test_registered_as_lower_is_better():
    spec = toolkit.get_registry().get("evaluator", "perplexity")
    assert spec.greater_is_better is False and spec.needs_proba is False


def test_words_outside_the_training_vocabulary_count_in_neither_term():
    """nb-multinomial drops words no training document holds (log p 0): their tokens must not count in
    n_d either, or adding unseen words would lower the perplexity (ten of them gave 1.16 instead of 1.91)."""
    X = np.array([[3, 1, 0], [1, 2, 0], [2, 2, 0]], dtype=float)
    y = np.array([0, 1, 0])
    clf = MultinomialNB(epsilon=0.5).fit(X, y)
    seen = _predictions(clf, np.array([[2.0, 1.0, 0.0]]), np.array([0]))
    with_unseen = _predictions(clf, np.array([[2.0, 1.0, 10.0]]), np.array([0]))
    assert perplexity(with_unseen) == pytest.approx(perplexity(seen), rel=1e-12)
    assert math.isnan(perplexity(_predictions(clf, np.array([[0.0, 0.0, 10.0]]), np.array([0]))))
