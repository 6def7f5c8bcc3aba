"""Perplexity of a test part under the model of each document's own class (algorithms.md 5.2.6).

``PP = exp(-sum_d log p(x_d) / sum_d n_d)`` with ``log p`` excluding the multinomial coefficient; for a
model with a training vocabulary (nb-multinomial's ``vocabulary_``), ``n_d`` counts the tokens of its words
only, as ``log p`` does.
The model must offer ``document_log_likelihood(X, y)``; for any other model (or a heuristic
variant that is not a normalised distribution) the value is NaN, not an error, so that a run
comparing many classifiers still reports the others.
"""

from __future__ import annotations

import numpy as np

from toolkit.api import Predictions
from toolkit.errors import ToolkitError

__all__ = ["perplexity", "perplexity_from_loglik"]


def perplexity_from_loglik(log_likelihood: np.ndarray, lengths: np.ndarray) -> float:
    """exp(-sum log p / sum n); NaN without tokens."""
    total = float(np.sum(lengths))
    if total <= 0:
        return float("nan")
    return float(np.exp(-float(np.sum(log_likelihood)) / total))


def _scored_vocabulary(model: object) -> np.ndarray | None:
    """The columns whose tokens the model's ``log p`` scores (None: all). A model that can score words outside
    its training vocabulary says so through ``_vocabulary()`` (dcm with ``vocabulary="all"`` returns None there
    while it still keeps ``vocabulary_``); otherwise ``vocabulary_`` (nb-multinomial) is what it drops."""
    getter = getattr(model, "_vocabulary", None)
    if callable(getter):
        return getter()
    return getattr(model, "vocabulary_", None)


def perplexity(p: Predictions) -> float:
    model = p.model
    method = getattr(model, "document_log_likelihood", None)
    if method is None or p.X is None:
        return float("nan")
    known = np.flatnonzero(np.asarray(p.y_true) >= 0)
    if not len(known):
        return float("nan")
    X = p.X[known]
    y = np.asarray(p.y_true)[known]
    try:
        ll = np.asarray(method(X, y), dtype=np.float64)
    except ToolkitError:
        return float("nan")
    vocabulary = _scored_vocabulary(model)
    if vocabulary is None:
        lengths = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    else:   # words outside the training vocabulary are dropped from the likelihood: from the lengths too
        lengths = np.asarray(X @ np.asarray(vocabulary, dtype=np.float64), dtype=np.float64).ravel()
    return perplexity_from_loglik(ll, lengths)
