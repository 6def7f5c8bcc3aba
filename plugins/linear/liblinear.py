"""LIBLINEAR logistic regression and linear SVM on liblinear-official (algorithms.md 2.9).

Training calls the C library through liblinear-official with integer class codes and a
``csr_matrix`` built by :mod:`toolkit.plugins.linear.features` (WEKA's missing-value
replacement, nominal encoding and optional scaling). The model keeps only numpy arrays: the
weight matrix read straight from the C model (one row per LIBLINEAR weight vector), the bias
terms and LIBLINEAR's label order. Prediction is a sparse matrix product in numpy, which gives
LIBLINEAR's own decision values and labels (tests compare the two) without a per-row Python loop.

Traps of liblinear-official 2.50 handled here (conventions.md 8): labels are ordered by first
appearance, so the label order is stored with the weights; ``-q`` always, because the C code
writes to file descriptor 1; ``-B`` is always given (the library's default is no bias); a fresh
``problem`` per fit (changing the bias of a reused one raises); the dual solvers draw from C's
global ``rand()``, so ``srand(seed)`` is called, under a lock, right before every ``train``.

C LIBLINEAR 2.x re-solves with the primal ``-s 2`` when the dual ``-s 1`` reaches its iteration cap
(300); the Java port 1.92 behind the thesis's WEKA wrapper returned the unconverged dual iterate after
1,000 iterations (algorithms.md 2.9, revision 2). ``liblinear-svm:dual_fallback=false`` reproduces the
Java behaviour with scikit-learn's ``LinearSVC(dual=True, max_iter=1000)``, whose bundled LIBLINEAR
dual solver has no fallback (the ``sklearn`` extra); see :func:`train_dual_without_fallback`.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import CLASSIFIER_STATE, ClassifierBase, Schema
from toolkit.errors import CapabilityError, ParameterError

from toolkit.plugins.linear.features import (PREPROCESSING_STATE, Preprocessing, check_options,
                                             check_scaling_input, is_number, refuse_overflowing)

__all__ = ["LiblinearClassifier", "LiblinearLR", "LiblinearSVM", "THESIS_GRID", "GRID_PROFILES",
           "liblinear_options", "train_liblinear", "train_dual_without_fallback", "JAVA_DUAL_MAX_ITER"]

#: The iteration cap of the dual coordinate descent in the Java port (1.92) of LIBLINEAR.
JAVA_DUAL_MAX_ITER = 1000
#: The tolerance of the thesis's WEKA wrapper (``-E`` absent), used when ``tol`` is not given.
JAVA_WRAPPER_TOL = 0.001

#: The thesis's 6 x 6 grid (algorithms.md 2.9); C outermost, both ascending.
THESIS_GRID: dict[str, list[float]] = {"C": [0.01, 0.1, 1.0, 10.0, 20.0, 100.0],
                                       "B": [0.01, 0.1, 1.0, 10.0, 20.0, 100.0]}
#: Named grids: the thesis's, and the 14 x 1 grid of the author's later code (``aaai15_code``).
GRID_PROFILES: dict[str, dict[str, list[float]]] = {
    "thesis": THESIS_GRID,
    "aaai15_code": {"C": [1e-4, 1e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 50.0, 100.0, 500.0, 1000.0, 1e4],
                    "B": [1.0]},
}

_SRAND_LOCK = threading.Lock()
_LIBC: Any = None


def _srand(seed: int) -> None:
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None)
    _LIBC.srand(ctypes.c_uint(int(seed) & 0xFFFFFFFF))


def keeping_interrupts(call: Callable[[], Any]) -> Any:
    """``call()``, with a Ctrl-C that arrives during it raised when it returns. LIBLINEAR's quiet mode prints
    through a Python callback (ctypes); a KeyboardInterrupt raised inside a ctypes callback is printed as
    'Exception ignored' and lost, and the run went on to its end. So while training, SIGINT only records
    that it came (main thread only: elsewhere, and where SIGINT is ignored, ``call`` runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        return call()
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):
        return call()
    came: list[int] = []
    signal.signal(signal.SIGINT, lambda signum, frame: came.append(signum))
    try:
        result = call()
    finally:
        signal.signal(signal.SIGINT, previous)
    if came:
        raise KeyboardInterrupt
    return result


def liblinear_options(solver: int, C: float, B: float, tol: float | None) -> str:
    """The option string given to LIBLINEAR (``-q`` always; floats written so they round-trip)."""
    opts = f"-s {int(solver)} -c {float(C)!r} -B {float(B)!r}"
    if tol is not None:
        opts += f" -e {float(tol)!r}"
    return opts + " -q"


def train_liblinear(Z: sp.csr_matrix, codes: np.ndarray, options: str, seed: int,
                    bias: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train once; returns (labels in LIBLINEAR's order, weights (nr_w, D), bias terms (nr_w,))."""
    from liblinear.liblinear import problem
    from liblinear.liblinearutil import parameter, train

    Z = sp.csr_matrix(Z, dtype=np.float64)
    prob = problem(np.asarray(codes, dtype=np.float64), Z, bias)
    param = parameter(options)
    with _SRAND_LOCK:
        _srand(seed)
        model = keeping_interrupts(lambda: train(prob, param))
    labels = np.array(model.get_labels(), dtype=np.int64)
    nr_class = len(labels)
    nr_w = 1 if nr_class == 2 else nr_class
    n = int(model.nr_feature)
    rows = n + (1 if model.bias >= 0 else 0)
    w = np.ctypeslib.as_array(model.w, shape=(rows * nr_w,)).reshape(rows, nr_w).copy()
    coef = np.ascontiguousarray(w[:n].T)
    intercept = (float(model.bias) * w[n]) if model.bias >= 0 else np.zeros(nr_w)
    if n < Z.shape[1]:  # cannot happen with csr input, kept for safety
        coef = np.hstack([coef, np.zeros((nr_w, Z.shape[1] - n))])
    return labels, coef, np.asarray(intercept, dtype=np.float64)


def train_dual_without_fallback(Z: sp.csr_matrix, codes: np.ndarray, C: float, B: float, tol: float, seed: int,
                                loss: str = "squared_hinge",
                                max_iter: int = JAVA_DUAL_MAX_ITER) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The dual coordinate descent of ``-s 1`` (``loss="hinge"``: ``-s 3``), one-vs-rest, stopped after
    ``max_iter`` iterations with its last iterate and no primal fallback, as the Java port did.

    Runs scikit-learn's ``LinearSVC(dual=True)`` (its bundled LIBLINEAR solver; the bias is LIBLINEAR's
    ``-B``, a constant feature of value B regularised like the others, = ``intercept_scaling``). Returns
    what :func:`train_liblinear` returns, in LIBLINEAR's conventions: for two classes the first label is
    the one a positive decision value predicts. The dual's random order comes from scikit-learn's
    generator (seeded with ``seed``), not C's ``rand()``: models differ from C LIBLINEAR's in the digits
    an unconverged solve leaves open.
    """
    try:
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC
    except ImportError:
        raise CapabilityError("liblinear-svm: dual_fallback=false needs scikit-learn (its LIBLINEAR dual solver "
                              "has no primal fallback): pip install 'arff-toolkit[sklearn]'") from None
    import warnings

    codes = np.asarray(codes, dtype=np.int64)
    present = np.unique(codes)
    if len(present) < 2:  # LIBLINEAR: a model that always predicts the one label
        return present[:1], np.zeros((1, Z.shape[1])), np.zeros(1)
    model = LinearSVC(C=float(C), loss=loss, dual=True, tol=float(tol), max_iter=int(max_iter),
                      fit_intercept=B >= 0, intercept_scaling=float(B) if B >= 0 else 1.0,
                      random_state=int(seed) & 0x7FFFFFFF)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # not converging is the point here
        model.fit(sp.csr_matrix(Z, dtype=np.float64), codes)
    coef = np.ascontiguousarray(model.coef_, dtype=np.float64)
    intercept = np.asarray(model.intercept_, dtype=np.float64).reshape(-1) if B >= 0 else np.zeros(len(coef))
    labels = np.asarray(model.classes_, dtype=np.int64)
    if len(labels) == 2:  # scikit-learn's positive side is classes_[1]; LIBLINEAR's first label
        labels = labels[::-1].copy()
    return labels, coef, intercept


class LiblinearClassifier(ClassifierBase):
    """Common part of the LIBLINEAR classifiers; subclasses fix the allowed solvers."""

    checks_infinite_values = True   # Preprocessing.transform refuses them, at fit and at predict

    _state_schema = {**CLASSIFIER_STATE, **PREPROCESSING_STATE, "solver_": "int", "labels_": "array:i1",
                     "coef_": "array:f2", "intercept_": "array:f1"}
    _solvers: tuple[int, ...] = ()
    _kind = ""
    _auto = False

    def _resolve_solver(self, n_samples: int, n_features: int) -> int:
        return int(self.solver)

    def __init__(self, *, C: float = 1.0, B: float = 1.0, solver: int = 0, tol: float | None = None,
                 nominal_encoding: str = "onehot", scale: str = "none", random_state: int | None = None):
        self.C = C
        self.B = B
        self.solver = solver
        self.tol = tol
        self.nominal_encoding = nominal_encoding
        self.scale = scale
        self.random_state = random_state

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> str:
        allowed = self._solvers + (("auto",) if self._auto else ())
        if isinstance(self.solver, (bool, np.bool_)) or self.solver not in allowed:
            raise ParameterError(f"{self._kind}: solver must be one of {', '.join(map(str, allowed))} "
                                 f"(LIBLINEAR -s), not {self.solver!r}")
        if not (is_number(self.C) and np.isfinite(self.C) and self.C > 0):
            raise ParameterError(f"{self._kind}: C must be a positive number, not {self.C!r}")
        if not (is_number(self.B) and np.isfinite(self.B)):
            raise ParameterError(f"{self._kind}: B must be a number (B < 0: no bias term), not {self.B!r}")
        if self.tol is not None and not (is_number(self.tol) and self.tol > 0):
            raise ParameterError(f"{self._kind}: tol must be a positive number or None, not {self.tol!r}")
        return check_options(self.nominal_encoding, self.scale)

    def check_data(self, X: Any, schema: Schema | None = None) -> None:
        """What fit would refuse in this data whatever the split (the pipeline asks before any repetition)."""
        scale = self._check_params()
        check_scaling_input(X, scale)
        refuse_overflowing(X, schema, scale, self._kind)

    def fit(self, X: Any, y: Any, sample_weight: Any = None, schema: Schema | None = None) -> LiblinearClassifier:
        scale = self._check_params()
        X, codes, w = self._validate_fit(X, y, sample_weight, schema)
        if sample_weight is not None and np.any(w != 1.0):
            raise CapabilityError(f"{self._kind} does not accept instance weights (LIBLINEAR has none); "
                                  f"use an example selector that returns indices only")
        refuse_overflowing(X, self.schema_, scale, self._kind)
        prep = Preprocessing.fit(X, self.schema_, w, self.nominal_encoding, scale)
        for key, value in prep.state("prep_").items():
            setattr(self, key, value)
        Z = prep.transform(X)
        bias = float(self.B) if self.B >= 0 else -1.0
        seed = 0 if self.random_state is None else int(self.random_state)
        self.solver_ = self._resolve_solver(Z.shape[0], Z.shape[1])
        self.labels_, self.coef_, self.intercept_ = self._train(Z, codes, seed, bias)
        return self

    #: The harness scores the C values of one B together (ClassifierBase.grid_decision_function), so the
    #: steps before the classifier are fitted once per B; each C is a cold fit. Warm starts along C (as
    #: LIBLINEAR's -C search) were measured and left out: the previous C's solution often meets the
    #: stopping rule |grad f(w)| <= eps |grad f(0)| at once (unscaled features make |grad f(0)| huge), and
    #: one split's validation errors then differ from cold fits' (31 of 36 solver x B cases on 9 UCI
    #: sets; 10 of 27 with tol = 1e-4 or standardised features).
    grid_params = ("C",)

    def _train(self, Z: sp.csr_matrix, codes: np.ndarray, seed: int, bias: float) -> tuple[np.ndarray, ...]:
        """(labels in LIBLINEAR's order, weights, bias terms) for the resolved solver."""
        return train_liblinear(Z, codes, liblinear_options(self.solver_, self.C, bias, self.tol), seed, bias)

    # ------------------------------------------------------------------ predict
    def _transform(self, X: Any) -> sp.csr_matrix:
        X = self._validate_predict(X)
        return Preprocessing.from_state(self, "prep_").transform(X)

    def _decision_values(self, X: Any) -> np.ndarray:
        """LIBLINEAR's decision values (n, nr_w), columns in its label order."""
        Z = self._transform(X)
        return np.asarray(Z @ self.coef_.T) + self.intercept_[None, :]

    def decision_function(self, X: Any) -> np.ndarray:
        """Scores (n, K) in class-code order: ``w_k . x`` per class; for two classes ``+f`` for
        LIBLINEAR's first label and ``-f`` for the other; classes absent from training get -inf."""
        dec = self._decision_values(X)
        labels = np.asarray(self.labels_)
        out = np.full((dec.shape[0], len(self.classes_)), -np.inf)
        if len(labels) == 1:
            out[:, labels[0]] = 0.0
        elif len(labels) == 2:
            f = dec[:, 0]
            # LIBLINEAR predicts label[1] when f == 0 exactly; the argmax (lowest index on ties) must too
            out[:, labels[0]] = np.where(f == 0.0, -np.finfo(np.float64).tiny, f)
            out[:, labels[1]] = -f
        else:
            out[:, labels] = dec
            # LIBLINEAR takes the first maximum in its label order; where that is not the lowest class code
            # among the tied ones, the others are lowered by the least step so that the argmax agrees
            top = dec.max(axis=1)
            at_top = dec == top[:, None]
            tied = np.flatnonzero(at_top.sum(axis=1) > 1)
            if len(tied):
                lower = at_top[tied]
                lower[np.arange(len(tied)), np.argmax(lower, axis=1)] = False   # LIBLINEAR's choice stays
                r, j = np.nonzero(lower)
                out[tied[r], labels[j]] = np.nextafter(top[tied[r]], -np.inf)
        return out

    def predict(self, X: Any) -> np.ndarray:
        """LIBLINEAR's rule: ``f > 0`` for two classes, else the first maximum in its label order."""
        dec = self._decision_values(X)
        labels = np.asarray(self.labels_)
        if len(labels) == 1:
            idx = np.zeros(dec.shape[0], dtype=np.int64)
        elif len(labels) == 2:
            idx = np.where(dec[:, 0] > 0, 0, 1)
        else:
            idx = np.argmax(dec, axis=1)
        return self.classes_[labels[idx]]


class LiblinearLR(LiblinearClassifier):
    """L2-regularised logistic regression: ``-s 0`` (primal, default) or ``-s 7`` (dual)."""

    _solvers = (0, 7)
    _kind = "liblinear-lr"

    def __init__(self, *, C: float = 1.0, B: float = 1.0, solver: int = 0, tol: float | None = None,
                 nominal_encoding: str = "onehot", scale: str = "none", random_state: int | None = None):
        super().__init__(C=C, B=B, solver=solver, tol=tol, nominal_encoding=nominal_encoding, scale=scale,
                         random_state=random_state)

    def predict_proba(self, X: Any) -> np.ndarray:
        """LIBLINEAR's estimates: sigmoid of each one-vs-rest value, normalised over classes (for a row whose
        sigmoids all underflow to 0, where LIBLINEAR gives NaN, the same normalisation in log space)."""
        dec = self._decision_values(X)
        labels = np.asarray(self.labels_)
        out = np.zeros((dec.shape[0], len(self.classes_)))
        if len(labels) == 1:
            out[:, labels[0]] = 1.0
            return out
        with np.errstate(over="ignore"):
            p = 1.0 / (1.0 + np.exp(-dec))         # LIBLINEAR's formula (exp overflow gives 0)
        if len(labels) == 2:
            out[:, labels[0]] = p[:, 0]
            out[:, labels[1]] = 1.0 - p[:, 0]
        else:
            total = p.sum(axis=1, keepdims=True)
            under = np.flatnonzero(total[:, 0] == 0.0)
            if len(under):
                # every sigmoid underflowed (all values below about -745): LIBLINEAR divides 0 by 0 and gives
                # NaN; the same normalisation in log space, log sigma(d) = -log(1 + exp(-d)), is finite there
                logp = -np.logaddexp(0.0, -dec[under])
                q = np.exp(logp - logp.max(axis=1, keepdims=True))
                p[under] = q
                total[under] = q.sum(axis=1, keepdims=True)
            out[:, labels] = p / total
        return out


class LiblinearSVM(LiblinearClassifier):
    """L2-regularised linear SVM: L2 loss ``-s 1`` (dual) or ``-s 2`` (primal), L1 loss ``-s 3``.

    ``solver="auto"`` (default) picks the L2-loss solver that LIBLINEAR's authors recommend for the
    data's shape: the primal ``-s 2`` when there are more instances than features (on letter the
    36-point grid takes 14 s instead of 113 s with ``-s 1``), else the dual ``-s 1`` (documents).
    Both minimise the same objective. ``solver_`` records the choice; ``solver=1`` is what the
    thesis's WEKA wrapper ran.

    ``dual_fallback=False`` (thesis compatibility, algorithms.md 2.9): the dual solve (``-s 1``, or
    ``-s 3``) stops after 1,000 iterations and keeps its last iterate, as the Java port of LIBLINEAR did,
    instead of C LIBLINEAR's switch to the primal; ``tol`` defaults to the wrapper's 0.001 there, and
    ``solver="auto"`` means ``1``. Needs scikit-learn (see :func:`train_dual_without_fallback`).
    """

    _solvers = (1, 2, 3)
    _kind = "liblinear-svm"
    _auto = True

    def _resolve_solver(self, n_samples: int, n_features: int) -> int:
        if self.solver == "auto":
            return 2 if n_samples > n_features and self.dual_fallback else 1
        return int(self.solver)

    def __init__(self, *, C: float = 1.0, B: float = 1.0, solver: int | str = "auto", tol: float | None = None,
                 nominal_encoding: str = "onehot", scale: str = "none", random_state: int | None = None,
                 dual_fallback: bool = True):
        super().__init__(C=C, B=B, solver=solver, tol=tol, nominal_encoding=nominal_encoding, scale=scale,
                         random_state=random_state)
        self.dual_fallback = dual_fallback

    def _check_params(self) -> str:
        if not isinstance(self.dual_fallback, (bool, np.bool_)):
            raise ParameterError(f"liblinear-svm: dual_fallback must be true or false, not {self.dual_fallback!r}")
        if not self.dual_fallback and self.solver == 2:
            raise ParameterError("liblinear-svm: dual_fallback=false is about the dual solvers (solver 1 or 3); "
                                 "solver 2 is the primal")
        return super()._check_params()

    def _train(self, Z: sp.csr_matrix, codes: np.ndarray, seed: int, bias: float) -> tuple[np.ndarray, ...]:
        if self.dual_fallback:
            return super()._train(Z, codes, seed, bias)
        return train_dual_without_fallback(Z, codes, self.C, bias, JAVA_WRAPPER_TOL if self.tol is None else self.tol,
                                           seed, "squared_hinge" if self.solver_ == 1 else "hinge")
