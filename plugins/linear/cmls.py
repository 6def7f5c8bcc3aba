"""CMLS: L2-regularised modified least squares, a wide-margin linear classifier (algorithms.md 2.8).

For labels ``y_i`` in {-1, +1} and scores ``f(x) = w . (x, beta)`` it minimises

    F(w) = 1/2 ||w||^2 + C sum_i s_i h(y_i f(x_i))

with ``h(z) = (1 - z)^2`` for ``z < 1`` and 0 otherwise (Zhang & Oles 2001), or the modified Huber
loss (``-4z`` below ``z = -1``). ``s_i`` are instance weights (1 by default). The loss is convex
and once differentiable, so Newton's method on the generalised Hessian, with preconditioned
conjugate-gradient inner steps and a backtracking line search (the primal solver of LIBLINEAR
2.4x, ``-s 2``), converges in a few dozen iterations. Every step costs a few sparse products,
O(nnz); the Hessian products use only the rows inside the margin, and the line search reuses
``X s`` so each trial costs O(n). A diagonal preconditioner copes with raw word counts.
The objective equals LIBLINEAR's ``-s 2`` (L2-loss SVC), which the tests use as an independent
reference.

Inputs are the preprocessed features (missing values, nominal encoding, scaling as for LIBLINEAR,
:mod:`toolkit.plugins.linear.features`), then optionally per document: ``weighting="binary"``
(word presence, the features BIM uses) or ``"l2"`` (unit Euclidean length).

Several classes: one problem per class present in training, that class against the rest. Two
classes: one problem, positive class = class code 1. Scores are the real ``f(x)`` (for ranking
and average precision); there are no probabilities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import CLASSIFIER_STATE, ClassifierBase, Schema
from toolkit.errors import ParameterError

from toolkit.plugins.linear.features import (PREPROCESSING_STATE, Preprocessing, check_options,
                                             check_scaling_input, is_integer, is_number, refuse_overflowing)

__all__ = ["CMLS", "newton", "LOSSES", "TRANSFORMS"]

LOSSES = ("mls", "modified_huber")
TRANSFORMS = ("none", "binary", "l2")


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Inner product without BLAS: OpenBLAS's threaded ``ddot`` is ~100x slower than this loop when
    the cores are busy (e.g. the harness running one process per core), and CG calls it often."""
    return float(np.einsum("i,i->", a, b))


class _Objective:
    """F, its gradient and generalised-Hessian products for one binary problem on X-bar = [X, beta]."""

    def __init__(self, X: Any, y: np.ndarray, s: np.ndarray, C: float, reg: np.ndarray, loss: str):
        self.X = X
        self.XT = X.T
        self.y = y
        self.cs = C * s               # C * instance weight
        self.reg = reg                # 1 for regularised coordinates, 0 for a free bias
        self.loss = loss
        self.XI: Any = None
        self.XIT: Any = None
        self.dI: np.ndarray | None = None

    def value(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        z = self.y * (self.X @ w)
        return self._value_at(w, z), z

    def _value_at(self, w: np.ndarray, z: np.ndarray) -> float:
        return 0.5 * _dot(self.reg * w, w) + self.loss_sum(z)

    def loss_sum(self, z: np.ndarray) -> float:
        """C sum_i s_i h(z_i)."""
        t = 1.0 - z
        loss = np.where(z < 1.0, t * t, 0.0)
        if self.loss == "modified_huber":
            loss = np.where(z < -1.0, -4.0 * z, loss)
        return _dot(self.cs, loss)

    def gradient(self, w: np.ndarray, z: np.ndarray) -> np.ndarray:
        """Gradient at ``w`` (``z`` = margins there); also prepares the Hessian's active rows."""
        dh = np.where(z < 1.0, -2.0 * (1.0 - z), 0.0)
        active = z < 1.0
        if self.loss == "modified_huber":
            dh = np.where(z < -1.0, -4.0, dh)
            active &= z >= -1.0
        g = self.reg * w + self.XT @ (self.cs * self.y * dh)
        rows = np.flatnonzero(active)
        self.XI = self.X[rows]
        self.XIT = self.XI.T
        self.dI = 2.0 * self.cs[rows]
        return np.asarray(g, dtype=np.float64)

    def hess_diag(self) -> np.ndarray:
        """Diagonal of the generalised Hessian (for the preconditioner)."""
        out = self.reg.astype(np.float64).copy()
        if self.dI is not None and self.dI.size:
            sq = self.XI.multiply(self.XI) if sp.issparse(self.XI) else self.XI * self.XI
            out += np.asarray(sq.T @ self.dI).ravel()
        return out

    def hess_vec(self, d: np.ndarray) -> np.ndarray:
        out = self.reg * d
        if self.dI is not None and self.dI.size:
            out = out + self.XIT @ (self.dI * (self.XI @ d))
        return out


def _pcg(obj: _Objective, g: np.ndarray, M: np.ndarray, eps_cg: float = 0.5) -> np.ndarray:
    """Preconditioned CG for ``H s = -g``, stopped by the decrease of the quadratic model
    (LIBLINEAR's rule: ``i * (Q_i - Q_{i-1}) >= tol * Q_i``)."""
    s = np.zeros_like(g)
    r = -g
    z = r / M
    d = z.copy()
    zTr = _dot(z, r)
    cgtol = min(eps_cg, np.sqrt(max(zTr, 0.0)))
    Q = 0.0
    for i in range(1, max(10, g.shape[0]) + 1):
        Hd = obj.hess_vec(d)
        dHd = _dot(d, Hd)
        if dHd <= 0.0:  # no curvature left along d
            break
        alpha = zTr / dHd
        s += alpha * d
        r -= alpha * Hd
        newQ = -0.5 * (_dot(s, r) - _dot(s, g))
        Qdiff = newQ - Q
        if newQ > 0 or Qdiff > 0 or i * Qdiff >= cgtol * newQ:
            break
        Q = newQ
        z = r / M
        zTr_new = _dot(z, r)
        d = z + (zTr_new / zTr) * d
        zTr = zTr_new
    return s


def newton(obj: _Objective, n: int, tol: float = 1e-3, max_iter: int = 1000) -> tuple[np.ndarray, int]:
    """Newton-CG with a diagonal preconditioner and a backtracking line search (the primal
    method of LIBLINEAR 2.4x); stops when ``||g|| <= tol * ||g_0||`` (g_0 at w = 0)."""
    eta, max_halvings, alpha_pcg = 0.01, 20, 0.01
    w = np.zeros(n)
    f, z = obj.value(w)
    g = obj.gradient(w, z)
    gnorm0 = np.sqrt(_dot(g, g))
    if not (np.isfinite(f) and np.isfinite(gnorm0)):   # the search would stop at once and return w = 0
        raise ParameterError("cmls: the objective overflows at w = 0 (C times the data's squared sizes passes "
                             "1e308); use a smaller C or rescale the data")
    if gnorm0 == 0.0:
        return w, 0
    it = 0
    while it < max_iter:
        M = (1.0 - alpha_pcg) + alpha_pcg * obj.hess_diag()
        s = _pcg(obj, g, M)
        gs = _dot(g, s)
        if not gs < 0:
            break
        ys = obj.y * np.asarray(obj.X @ s)
        wTw, wTs, sTs = (_dot(obj.reg, a * b) for a, b in ((w, w), (w, s), (s, s)))
        step, f_new = 1.0, None
        for _ in range(max_halvings):
            z_try = z + step * ys
            f_try = 0.5 * (wTw + 2 * step * wTs + step * step * sTs) + obj.loss_sum(z_try)
            if f_try - f <= eta * step * gs:
                f_new = f_try
                break
            step *= 0.5
        if f_new is None:
            break
        it += 1
        w = w + step * s
        z = z + step * ys
        f_old, f = f, f_new
        g = obj.gradient(w, z)
        if np.sqrt(_dot(g, g)) <= tol * gnorm0:
            break
        if abs(f_old - f) <= 1e-12 * abs(f):
            break
    return w, it


class CMLS(ClassifierBase):
    """L2-regularised modified-least-squares linear classifier, one-vs-rest over several classes."""

    checks_infinite_values = True   # Preprocessing.transform refuses them, at fit and at predict

    _state_schema = {**CLASSIFIER_STATE, **PREPROCESSING_STATE, "coef_": "array:f2", "intercept_": "array:f1",
                     "targets_": "array:i1", "n_iter_": "array:i1"}

    def __init__(self, *, C: float = 1.0, loss: str = "mls", bias: float = 1.0, regularize_bias: bool = True,
                 tol: float = 1e-3, max_iter: int = 1000, weighting: str = "none", nominal_encoding: str = "onehot",
                 scale: str = "none"):
        self.C = C
        self.weighting = weighting
        self.loss = loss
        self.bias = bias
        self.regularize_bias = regularize_bias
        self.tol = tol
        self.max_iter = max_iter
        self.nominal_encoding = nominal_encoding
        self.scale = scale

    def _check_params(self) -> str:
        if not (is_number(self.C) and np.isfinite(self.C) and self.C > 0):
            raise ParameterError(f"cmls: C must be a positive number, not {self.C!r}")
        if self.loss not in LOSSES:
            raise ParameterError(f"cmls: loss must be one of {', '.join(LOSSES)}, not {self.loss!r}")
        if not (is_number(self.bias) and np.isfinite(self.bias)):
            raise ParameterError(f"cmls: bias must be a number (<= 0: no bias feature), not {self.bias!r}")
        if not (is_number(self.tol) and 0 < self.tol < 1):
            raise ParameterError(f"cmls: tol must lie in (0, 1), not {self.tol!r}")
        if not isinstance(self.regularize_bias, (bool, np.bool_)):
            raise ParameterError(f"cmls: regularize_bias must be true or false, not {self.regularize_bias!r}")
        if self.weighting not in TRANSFORMS:
            raise ParameterError(f"cmls: weighting must be one of {', '.join(TRANSFORMS)}, not {self.weighting!r}")
        if not (is_integer(self.max_iter) and self.max_iter >= 1):
            raise ParameterError(f"cmls: max_iter must be a positive integer, not {self.max_iter!r}")
        return check_options(self.nominal_encoding, self.scale)

    def check_data(self, X: Any, schema: Schema | None = None) -> None:
        """What fit would refuse in this data whatever the split (the pipeline asks before any repetition)."""
        scale = self._check_params()
        check_scaling_input(X, scale)
        refuse_overflowing(X, schema, scale, "cmls")

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> CMLS:
        scale = self._check_params()
        X, codes, w = self._validate_fit(X, y, sample_weight, schema)
        if np.any(w < 0) or not np.all(np.isfinite(w)):
            raise ParameterError("cmls: instance weights must be finite and non-negative")
        refuse_overflowing(X, self.schema_, scale, "cmls")
        prep = Preprocessing.fit(X, self.schema_, w, self.nominal_encoding, scale)
        for key, value in prep.state("prep_").items():
            setattr(self, key, value)
        Xb = self._with_bias(self._features(prep.transform(X)))
        K = len(self.classes_)
        present = np.unique(codes)
        targets = np.array([1]) if K == 2 else present
        reg = np.ones(Xb.shape[1])
        if self.bias > 0 and not self.regularize_bias:
            reg[-1] = 0.0
        coefs, iters = [], []
        for k in targets:
            yk = np.where(codes == k, 1.0, -1.0)
            obj = _Objective(Xb, yk, w, float(self.C), reg, self.loss)
            wk, it = newton(obj, Xb.shape[1], float(self.tol), int(self.max_iter))
            coefs.append(wk)
            iters.append(it)
        W = np.vstack(coefs)
        if self.bias > 0:
            self.coef_, self.intercept_ = W[:, :-1].copy(), W[:, -1] * float(self.bias)
        else:
            self.coef_, self.intercept_ = W, np.zeros(W.shape[0])
        self.targets_ = np.asarray(targets, dtype=np.int64)
        self.n_iter_ = np.asarray(iters, dtype=np.int64)
        return self

    def _features(self, Z: sp.csr_matrix) -> sp.csr_matrix:
        """Per-row input transform: presence (0/1) or unit Euclidean length; sparse stays sparse."""
        if self.weighting == "binary":
            Z = Z.copy()
            Z.data = (Z.data != 0).astype(np.float64)
        elif self.weighting == "l2":
            norms = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=1)).ravel())
            Z = sp.csr_matrix(Z.multiply(1.0 / np.where(norms > 0, norms, 1.0)[:, None]))
        return Z

    def _with_bias(self, Z: sp.csr_matrix) -> sp.csr_matrix:
        if self.bias <= 0:
            return Z
        col = sp.csr_matrix(np.full((Z.shape[0], 1), float(self.bias)))
        return sp.csr_matrix(sp.hstack([Z, col], format="csr"))

    def _scores(self, X: Any) -> np.ndarray:
        X = self._validate_predict(X)
        Z = self._features(Preprocessing.from_state(self, "prep_").transform(X))
        return np.asarray(Z @ self.coef_.T) + self.intercept_[None, :]

    def decision_function(self, X: Any) -> np.ndarray:
        """(n, K) scores: ``[-f, f]`` for two classes, else ``f_k`` per trained class (-inf for absent ones)."""
        f = self._scores(X)
        K = len(self.classes_)
        if K == 2:
            return np.column_stack([-f[:, 0], f[:, 0]])
        out = np.full((f.shape[0], K), -np.inf)
        out[:, self.targets_] = f
        return out

    def objective(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> np.ndarray:
        """The objective F of each trained problem at the fitted weights, on (X, y) (for checks). Labels are
        read as the fitted model reads them: class codes with a ``schema``, else the labels of ``classes_``
        (a label the model does not know is an error)."""
        probe = type(self)()
        Xv, codes, w = probe._validate_fit(X, y, sample_weight, schema)
        if schema is None:
            # _validate_fit coded the labels present in y (sorted); the problems are in the fitted codes
            known = {label: code for code, label in enumerate(self.classes_.tolist())}
            lost = [label for label in probe.classes_.tolist() if label not in known]
            if lost:
                raise ParameterError(f"cmls: label {lost[0]!r} is not one of the fitted classes")
            codes = np.array([known[label] for label in probe.classes_.tolist()], dtype=np.int64)[codes]
        Z = self._with_bias(self._features(Preprocessing.from_state(self, "prep_").transform(Xv)))
        reg = np.ones(Z.shape[1])
        if self.bias > 0 and not self.regularize_bias:
            reg[-1] = 0.0
        out = []
        for row, k in enumerate(self.targets_):
            wk = np.concatenate([self.coef_[row], [self.intercept_[row] / self.bias]]) if self.bias > 0 \
                else self.coef_[row]
            yk = np.where(codes == k, 1.0, -1.0)
            out.append(_Objective(Z, yk, w, float(self.C), reg, self.loss).value(wk)[0])
        return np.asarray(out)
