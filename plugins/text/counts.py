"""Helpers shared by the text classifiers and selectors: count checks and per-class sums on CSR."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.errors import CapabilityError

__all__ = ["as_counts", "class_indicator", "document_weights", "drop_columns", "row_of_entry", "row_sums",
           "sparse_class_sums", "sparse_column_counts"]

_INF_BITS = int(np.array(np.inf).view(np.uint64))


def as_counts(X: Any, who: str) -> sp.csr_matrix:
    """``X`` as a CSR matrix of non-negative finite values (dense input is converted, sparse stays), in
    canonical form (sorted indices, no duplicated entry; a non-canonical input is copied)."""
    X = X if sp.issparse(X) else sp.csr_matrix(np.asarray(X, dtype=np.float64))
    if not (type(X) is sp.csr_matrix and X.dtype == np.float64):
        X = sp.csr_matrix(X, dtype=np.float64)
    if not X.has_canonical_format:
        # a (row, word) stored twice is one count split in two: the document-frequency passes (x > 0 per
        # stored entry) would count the document twice, so the duplicates are summed, on a copy
        X = X.copy()
        X.sum_duplicates()
    # One pass: read as unsigned integers, every finite double >= +0.0 lies below the bits of +inf, and
    # NaN, infinities and negative numbers (sign bit set) lie at or above them. Only then the exact checks.
    if X.nnz and int(X.data.view(np.uint64).max()) >= _INF_BITS:
        data = X.data
        if not np.all(np.isfinite(data)):
            raise CapabilityError(f"{who} needs word counts without missing or infinite values; "
                                  f"found {int(np.sum(~np.isfinite(data)))} such entries")
        if data.min() < 0:
            raise CapabilityError(f"{who} needs non-negative word counts; found {float(data.min()):g}")
    return X


def class_indicator(y: np.ndarray, w: np.ndarray, K: int) -> sp.csr_matrix:
    """(n, K) sparse matrix with the weight of row i in column y_i: ``Y.T @ X`` sums each class."""
    n = len(y)
    return sp.csr_matrix((np.asarray(w, dtype=np.float64), (np.arange(n), y)), shape=(n, K))


def row_of_entry(X: sp.csr_matrix) -> np.ndarray:
    """Row index of every stored entry of a CSR matrix."""
    return np.repeat(np.arange(X.shape[0], dtype=np.int64), np.diff(X.indptr))


def row_sums(X: sp.csr_matrix) -> np.ndarray:
    return np.asarray(X.sum(axis=1), dtype=np.float64).ravel()


def sparse_class_sums(X: sp.csr_matrix, y: np.ndarray, w: np.ndarray, K: int) -> sp.csr_matrix:
    """(K, V) sparse sums of the rows of each class (``Y.T @ X``): a shard's class sums hold only the
    words that occur in it. Each class's rows are added in row order, as in the dense class sums."""
    out = sp.csr_matrix(class_indicator(y, w, K).T @ X)
    out.sort_indices()
    return out


def sparse_column_counts(columns: np.ndarray, n_columns: int) -> sp.csr_matrix:
    """(1, n_columns) sparse count of each column index in ``columns`` (exact integers)."""
    columns = np.asarray(columns, dtype=np.int64)
    if len(columns) == 0:
        return sp.csr_matrix((1, n_columns))
    values, counts = np.unique(columns, return_counts=True)
    return sp.csr_matrix((counts.astype(np.float64), values, np.array([0, len(values)])), shape=(1, n_columns))


def document_weights(X: sp.csr_matrix, w: np.ndarray | None = None) -> np.ndarray:
    """(V,) the weight of the documents that contain each word (``x > 0``): TW-L's document frequencies,
    and the training vocabulary (algorithms.md 1.2) where it is > 0. Unit weights (``None``) count."""
    present = X.data > 0
    if w is None or np.all(w == 1.0):
        return np.bincount(X.indices[present], minlength=X.shape[1]).astype(np.float64)
    rows = row_of_entry(X)[present]
    return np.bincount(X.indices[present], weights=np.asarray(w, dtype=np.float64)[rows], minlength=X.shape[1])


def drop_columns(X: sp.csr_matrix, keep: np.ndarray | None) -> sp.csr_matrix:
    """``X`` without its entries in the columns outside ``keep``: words outside the training vocabulary are
    dropped at prediction (algorithms.md 1.2). ``X`` itself when nothing is dropped."""
    if keep is None or X.nnz == 0:
        return X
    inside = keep[X.indices]
    if inside.all():
        return X
    kept_before = np.zeros(X.nnz + 1, dtype=np.int64)
    np.cumsum(inside, out=kept_before[1:])          # entries kept before each position
    indptr = kept_before[X.indptr]
    return sp.csr_matrix((X.data[inside], X.indices[inside], indptr), shape=X.shape)
