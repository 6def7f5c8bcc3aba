"""The example's implementations, on the toolkit's base classes."""

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from toolkit.api import ClassifierBase, FeatureSelectorBase


class NearestCentroid(ClassifierBase):
    """Predicts the class whose (weighted) mean is closest; ties go to the lowest class."""

    def __init__(self, *, temperature: float = 1.0):
        self.temperature = temperature

    def fit(self, X, y, sample_weight=None, schema=None):
        X, y, w = self._validate_fit(X, y, sample_weight, schema)
        # distances on columns scaled to [-1, 1], so huge values cannot overflow
        self.scale_ = np.maximum(np.abs(X).max(axis=0), 1e-300)
        X = X / self.scale_
        K = len(self.classes_)
        totals = np.bincount(y, weights=w, minlength=K)
        sums = np.zeros((K, X.shape[1]))
        np.add.at(sums, y, X * w[:, None])
        overall = (X * w[:, None]).sum(axis=0) / w.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            self.centroids_ = np.where(totals[:, None] > 0, sums / totals[:, None], overall)
        return self

    def decision_function(self, X):
        X = self._validate_predict(X) / self.scale_
        d = ((X[:, None, :] - self.centroids_[None, :, :]) ** 2).sum(axis=2)
        return -np.sqrt(d) / self.temperature

    def predict_proba(self, X):
        scores = self.decision_function(X)
        return np.exp(scores - logsumexp(scores, axis=1, keepdims=True))


class TopVariance(FeatureSelectorBase):
    """Scores each column by its variance on the training part and keeps the top k."""

    def __init__(self, *, k: int = 10):
        self.k = k

    def fit(self, X, y, schema=None):
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            mean = np.asarray(X.mean(axis=0)).ravel()
            self.scores_ = np.asarray(X.multiply(X).mean(axis=0)).ravel() - mean ** 2
        else:
            self.scores_ = np.nanvar(np.asarray(X, dtype=float), axis=0)
        self.support_ = self.top_k(self.scores_, self.k)
        return self
