"""Tabular data -> a numeric design matrix for the linear classifiers (algorithms.md 2.9).

The steps of WEKA's LIBLINEAR wrapper, in its order, all learned on the training part only:

1. **ReplaceMissingValues**: a missing numeric value becomes the (weighted) mean of the
   non-missing training values (0 when there is none); a missing nominal value becomes the
   training mode (ties to the first declared value; value 0 when every value is missing). For
   sparse input the implicit zeros count as values, as in WEKA.
2. **Nominal encoding**: ``"onehot"`` is WEKA's NominalToBinary: an attribute with more than two
   values becomes one 0/1 indicator per declared value, in place; an attribute with at most two
   values stays one column holding its value index (0/1). ``"index"`` keeps every nominal
   attribute as its 0-based value index, which is what the thesis's wrapper fed LIBLINEAR.
3. **Scaling** (optional): ``"minmax"`` is WEKA's Normalize, ``(x - min) / (max - min)`` with
   constant columns set to 0; ``"standard"`` centres and divides by the standard deviation (both
   weighted like the means of step 1; rows of weight 0 take no part in any scaling);
   ``"maxabs"`` divides by the largest absolute value and is the only one that keeps sparse
   input sparse. Test values are not clipped.

The result is always a ``csr_matrix`` without explicit zeros (LIBLINEAR's sparse format). The
learned state is a handful of arrays, so it goes into model files as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import Schema, refuse_infinite
from toolkit.errors import CapabilityError, ParameterError

__all__ = ["ENCODINGS", "MAX_MAGNITUDE", "SCALINGS", "Preprocessing", "check_options", "is_integer", "is_number",
           "refuse_overflowing"]

ENCODINGS = ("onehot", "index")
SCALINGS = ("none", "minmax", "standard", "maxabs")


def is_number(value: Any) -> bool:
    """A real number as the core's parameter check reads ``float``: Python or numpy ints and floats, not
    bools (``C=True`` is not a cost; ``np.float32(0.5)`` is)."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def is_integer(value: Any) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_options(nominal_encoding: str, scale: str | None) -> str:
    """Validate the two options; returns the scaling name (None -> "none")."""
    if nominal_encoding not in ENCODINGS:
        raise ParameterError(f"nominal_encoding must be one of {', '.join(ENCODINGS)}, not '{nominal_encoding}'")
    scale = "none" if scale in (None, False) else scale
    if scale not in SCALINGS:
        raise ParameterError(f"scale must be one of {', '.join(SCALINGS)}, not '{scale}'")
    return scale


def check_scaling_input(X: Any, scale: str) -> None:
    """'standard' and 'minmax' shift every column, so sparse input would become dense: refused (also before
    any repetition, through the classifiers' ``check_data``)."""
    if sp.issparse(X) and scale not in ("none", "maxabs"):
        raise ParameterError(f"scale='{scale}' would make sparse data dense; use scale='maxabs' "
                             f"(or 'none') for sparse input, or load the dataset dense (--dense)")


#: the largest magnitude an unscaled value may have: its square, and sums of many, stay finite in the
#: solvers (past it LIBLINEAR and CMLS returned a zero or NaN model without a word)
MAX_MAGNITUDE = 1e150


def refuse_overflowing(X: Any, schema: Schema | None, scale: str, kind: str) -> None:
    """Refuse unscaled values whose squares overflow, naming the attribute (scaling brings them in range)."""
    if scale != "none":
        return
    data = X.data if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if not data.size:
        return
    with np.errstate(invalid="ignore"):   # NaN (missing) is not big; inf has its own refusal (refuse_infinite)
        big = (np.abs(data) > MAX_MAGNITUDE) & np.isfinite(data)
    if not big.any():
        return
    first = int(np.flatnonzero(big.ravel())[0])
    col = int(X.indices[first]) if sp.issparse(X) else first % data.shape[1]
    name = schema.features.name(col) if schema is not None and col < len(schema.features) else f"column {col}"
    raise CapabilityError(f"{kind}: attribute '{name}' holds values past {MAX_MAGNITUDE:.0e} in magnitude, whose "
                          f"squares overflow in the solver (it would return a zero or NaN model); rescale it, "
                          f"e.g. scale=standard")


#: The model-file state of a :class:`Preprocessing` stored under the prefix ``prep_``.
PREPROCESSING_STATE = {"prep_fill_": "array:f1", "prep_n_values_": "array:i1", "prep_expand_": "array:b1",
                       "prep_offset_": "array:i1", "prep_shift_": "array:f1", "prep_factor_": "array:f1"}


@dataclass
class Preprocessing:
    """The learned preprocessing state (arrays only; see :meth:`state` / :meth:`from_state`)."""

    fill: np.ndarray          # per input column: the value that replaces a missing one
    n_values: np.ndarray      # per input column: declared values if nominal, else 0
    expand: np.ndarray        # per input column: True when it becomes indicator columns
    offset: np.ndarray        # per input column: its first output column
    shift: np.ndarray         # per output column (scaling): subtracted ...
    factor: np.ndarray        # ... then multiplied
    n_out: int
    schema: Schema | None = None  # the input columns' names, for errors (not part of the state)

    # ------------------------------------------------------------------ fitting
    @classmethod
    def fit(cls, X: np.ndarray | sp.csr_matrix, schema: Schema, weights: np.ndarray,
            nominal_encoding: str = "onehot", scale: str = "none") -> Preprocessing:
        bad = schema.columns_of_kind("string")
        if len(bad):
            name = schema.features.name(int(bad[0]))
            raise CapabilityError(f"string attribute '{name}' must become word counts before a linear classifier")
        n_values = np.asarray(schema.n_values, dtype=np.int64)
        nominal = schema.nominal_mask
        fill = _fill_values(X, nominal, n_values, weights)
        expand = nominal & (n_values > 2) if nominal_encoding == "onehot" else np.zeros_like(nominal)
        width = np.where(expand, n_values, 1)
        offset = np.concatenate([[0], np.cumsum(width)[:-1]]).astype(np.int64)
        n_out = int(width.sum())
        prep = cls(fill, n_values, expand, offset, np.zeros(n_out), np.ones(n_out), n_out, schema)
        if scale != "none":
            Z = prep._encode(X)
            prep.shift, prep.factor = _scaling(Z, scale, weights)
        return prep

    # ------------------------------------------------------------------ applying
    def transform(self, X: np.ndarray | sp.csr_matrix) -> sp.csr_matrix:
        refuse_infinite(X, self.schema)
        Z = self._encode(X)
        if np.any(self.shift != 0.0):
            # a shift makes every entry nonzero: sparse rows (a sparse test file for a model fitted on dense
            # data) become dense here, as they would anyway in the result
            Z = _shift_and_scale(Z.toarray() if sp.issparse(Z) else np.asarray(Z), self.shift, self.factor)
        elif np.any(self.factor != 1.0):
            Z = Z.multiply(self.factor[None, :]).tocsr() if sp.issparse(Z) else Z * self.factor
        out = sp.csr_matrix(Z, dtype=np.float64)
        out.eliminate_zeros()
        out.sort_indices()
        return out

    def _encode(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
        """Imputed and encoded, before scaling (dense stays dense, sparse stays sparse)."""
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64, copy=True)
            miss = np.isnan(X.data)
            if miss.any():
                X.data[miss] = self.fill[X.indices[miss]]
        else:
            X = np.asarray(X, dtype=np.float64)
            miss = np.isnan(X)
            if miss.any():
                X = np.where(miss, self.fill[None, :], X)
        if not self.expand.any():
            return X
        return self._one_hot(X)

    def _one_hot(self, X: np.ndarray | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
        n = X.shape[0]
        keep = np.flatnonzero(~self.expand)
        nom = np.flatnonzero(self.expand)
        # indicator entries: row r, column offset[j] + code(r, j)
        codes = X[:, nom]
        codes = codes.toarray() if sp.issparse(codes) else np.asarray(codes)
        codes = np.rint(codes).astype(np.int64)
        valid = (codes >= 0) & (codes < self.n_values[nom][None, :])
        rows = np.broadcast_to(np.arange(n)[:, None], codes.shape)[valid]
        cols = (self.offset[nom][None, :] + codes)[valid]
        if sp.issparse(X):
            kept = sp.csr_matrix(X[:, keep])
            kept = sp.csr_matrix((kept.data, self.offset[keep][kept.indices], kept.indptr), shape=(n, self.n_out))
            hot = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, self.n_out))
            return sp.csr_matrix(kept + hot)
        out = np.zeros((n, self.n_out))
        out[:, self.offset[keep]] = X[:, keep]
        out[rows, cols] = 1.0
        return out

    # ------------------------------------------------------------------ model files
    def state(self, prefix: str) -> dict[str, np.ndarray]:
        return {f"{prefix}fill_": self.fill, f"{prefix}n_values_": self.n_values,
                f"{prefix}expand_": self.expand, f"{prefix}offset_": self.offset,
                f"{prefix}shift_": self.shift, f"{prefix}factor_": self.factor}

    @classmethod
    def from_state(cls, owner: Any, prefix: str) -> Preprocessing:
        shift = np.asarray(getattr(owner, f"{prefix}shift_"))
        return cls(np.asarray(getattr(owner, f"{prefix}fill_")), np.asarray(getattr(owner, f"{prefix}n_values_")),
                   np.asarray(getattr(owner, f"{prefix}expand_"), dtype=bool),
                   np.asarray(getattr(owner, f"{prefix}offset_")), shift,
                   np.asarray(getattr(owner, f"{prefix}factor_")), int(shift.shape[0]),
                   getattr(owner, "schema_", None))


def _fill_values(X: np.ndarray | sp.csr_matrix, nominal: np.ndarray, n_values: np.ndarray,
                 weights: np.ndarray) -> np.ndarray:
    """WEKA ReplaceMissingValues: weighted means of numeric columns, modes of nominal ones."""
    d = X.shape[1]
    w = np.asarray(weights, dtype=np.float64)
    total = w.sum()
    with np.errstate(over="ignore"):                # an overflowing sum is redone below
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            row = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
            miss = np.isnan(X.data)
            col, val, wt = X.indices, X.data, w[row]
            missing_weight = np.bincount(col[miss], weights=wt[miss], minlength=d)
            sums = np.bincount(col[~miss], weights=(wt * np.where(miss, 0.0, val))[~miss], minlength=d)
            present = total - missing_weight            # implicit zeros are present values
        else:
            miss = np.isnan(X)
            # sequential sums in row order, as WEKA accumulates them (bit-identical means)
            if X.shape[0]:
                sums = np.cumsum(np.where(miss, 0.0, X * w[:, None]), axis=0)[-1]
                present = np.cumsum(np.where(miss, 0.0, w[:, None]), axis=0)[-1]
            else:
                sums = present = np.zeros(d)
    with np.errstate(invalid="ignore", divide="ignore"):
        fill = np.where(present > 0, sums / np.where(present > 0, present, 1.0), 0.0)
    overflow = np.flatnonzero(~np.isfinite(fill))
    if len(overflow):
        # the sum of a column of huge values overflowed (an infinite fill would reach LIBLINEAR after the
        # finiteness check): its mean is taken of the column divided by its largest absolute value
        cols = X[:, overflow]
        cols = cols.toarray() if sp.issparse(cols) else np.asarray(cols, dtype=np.float64)
        big = np.nanmax(np.abs(cols), axis=0)
        unit = np.where(big > 0, big, 1.0)
        with np.errstate(invalid="ignore"):   # an infinite value (inf / inf): refused by the finiteness check
            scaled = np.where(np.isnan(cols), 0.0, cols / unit * w[:, None])
            fill[overflow] = np.cumsum(scaled, axis=0)[-1] / present[overflow] * unit
    if nominal.any():
        fill[nominal] = _modes(X, np.flatnonzero(nominal), n_values, w)
    return fill


def _modes(X: np.ndarray | sp.csr_matrix, cols: np.ndarray, n_values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted mode of each nominal column (first declared value on ties and when all are missing)."""
    codes = X[:, cols]
    codes = codes.toarray() if sp.issparse(codes) else np.asarray(codes)
    width = int(max(1, n_values[cols].max()))
    ok = ~np.isnan(codes)
    safe = np.where(ok, codes, 0).astype(np.int64)
    ok &= (safe >= 0) & (safe < n_values[cols][None, :])
    flat = (np.arange(len(cols))[None, :] * width + safe)[ok]
    counts = np.bincount(flat, weights=np.broadcast_to(w[:, None], codes.shape)[ok],
                         minlength=len(cols) * width).reshape(len(cols), width)
    return np.argmax(counts, axis=1).astype(np.float64)


def _shift_and_scale(Z: np.ndarray, shift: np.ndarray, factor: np.ndarray) -> np.ndarray:
    """``(Z - shift) * factor``; where ``Z - shift`` overflows (a column whose values span more than the
    largest double, e.g. -1e308 and 1e308), ``Z * factor - shift * factor`` instead, which is finite there."""
    with np.errstate(over="ignore", invalid="ignore"):
        D = Z - shift
        out = D * factor
        bad = ~np.isfinite(D)
        if bad.any():
            out[bad] = (Z * factor - shift * factor)[bad]
    return out


def _scaling(Z: np.ndarray | sp.csr_matrix, scale: str, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(shift, factor) per column so that scaled = (z - shift) * factor.

    Instance weights count as in the imputation: the mean and standard deviation are weighted, and a row of
    weight 0 takes no part in the minimum, maximum or largest absolute value (so an integer weight is the same
    as that many copies of the row, as CMLS promises).

    Huge and tiny values keep their column: the standard deviation is computed on the column divided by
    its largest absolute value (the squares of values beyond 1e154 overflow and those below 1e-154
    underflow, which gave a standard deviation of inf or 0 and so a factor of 0: the column was silently
    dropped), and a min-max span that overflows is computed the same way."""
    d = Z.shape[1]
    w = np.asarray(weights, dtype=np.float64)
    if not np.all(w > 0):
        keep = np.flatnonzero(w > 0)
        Z, w = Z[keep], w[keep]
    if sp.issparse(Z):
        check_scaling_input(Z, scale)
        if Z.shape[0] == 0:
            return np.zeros(d), np.ones(d)
        big = abs(Z).max(axis=0).toarray().ravel()
        return np.zeros(d), np.where(big > 0, 1.0 / np.where(big > 0, big, 1.0), 1.0)
    Z = np.asarray(Z)
    if Z.shape[0] == 0:
        return np.zeros(d), np.ones(d)
    big = np.abs(Z).max(axis=0)
    unit = np.where(big > 0, big, 1.0)          # divide by it: every value in [-1, 1], no over/underflow
    if scale == "maxabs":
        return np.zeros(d), np.where(big > 0, 1.0 / unit, 1.0)
    if scale == "minmax":
        lo, hi = Z.min(axis=0), Z.max(axis=0)
        with np.errstate(over="ignore"):
            span = hi - lo
        overflow = ~np.isfinite(span)
        safe_span = np.where((span > 0) & ~overflow, span, 1.0)
        factor = np.where(span > 0, 1.0 / safe_span, 0.0)    # WEKA Normalize: a constant column becomes 0
        if overflow.any():
            factor[overflow] = (1.0 / unit[overflow]) / (hi[overflow] / unit[overflow] - lo[overflow] / unit[overflow])
        return lo, factor
    U = Z / unit
    total = w.sum()
    m = np.sum(U * w[:, None], axis=0) / total
    sd = np.sqrt(np.sum(w[:, None] * ((U - m) * (U - m)), axis=0) / total)
    mean, sd = m * unit, sd * unit
    return mean, np.where(sd > 0, 1.0 / np.where(sd > 0, sd, 1.0), 0.0)
