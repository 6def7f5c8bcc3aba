"""The binary independence model (BIM) of the OTS paper: presence, counts and weights (algorithms.md 2.5).

A document is the set of features present in it (value > 0). With ``n_t^+`` / ``n_t^-`` documents of
each class containing feature t, ``N^+`` / ``N^-`` documents per class and Laplace smoothing alpha,

    p_t = (n_t^+ + a) / (N^+ + 2a),   q_t = (n_t^- + a) / (N^- + 2a),
    w_t = logit(p_t) - logit(q_t) = log(n^+ + a) - log(N^+ - n^+ + a) - log(n^- + a) + log(N^- - n^- + a),

and the paper's score (eq. A.5) of a document d is ``sum of w_t over the t in d with |w_t| > tau``.

Feature set (algorithms.md 2.5, revision 2): by default (``features="positive"``) only the features
present in at least one training C1 document carry a weight; the others have weight 0. With the
Laplace estimate a feature seen in k negatives and no positive would otherwise get the weight
log(a (N^- - k + a) / ((N^+ + a)(k + a))), which is positive and large when N^-/N^+ is large: rare
words of the negatives would count as evidence for C1. ``features="all"`` weights every feature
(revision 1's reading). The set is fixed from the whole training part, also inside leave-one-out.
Everything here works on CSR matrices; there is no loop over documents or features.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.api import as_matrix
from toolkit.errors import CapabilityError, ParameterError

__all__ = ["presence", "BIMCounts", "bim_counts", "bim_weights", "thresholded", "check_alpha",
           "resolve_threshold", "binary_codes", "FEATURE_SETS", "check_features", "feature_mask", "restricted",
           "document_counts", "unit_bim_counts", "neutral"]

#: The BIM feature sets (algorithms.md 2.5): the features of the training positives, or all of them.
FEATURE_SETS = ("positive", "all")


def refuse_missing(values: np.ndarray, who: str | None) -> None:
    """For ``who`` (a model without the missing-value capability): a CapabilityError when ``values``
    hold NaN, which presence would read as an absent feature without a word."""
    if who is not None:
        found = int(np.count_nonzero(np.isnan(values)))
        if found:
            raise CapabilityError(f"{who} does not handle missing values: {found} missing (NaN) entries; "
                                  f"give 0 for an absent feature")


def presence(X: Any, who: str | None = None) -> sp.csr_matrix:
    """Binary presence matrix (CSR, float64 ones, sorted indices, no duplicates): value > 0 is present.

    Missing values (NaN), zeros and negative values are absent; with ``who`` NaN is refused instead
    (:func:`refuse_missing`), looked for only among the entries that are not > 0, in the pass this makes
    anyway. When ``X`` is already a canonical binary CSR matrix it is returned as is (never modified);
    otherwise the index arrays are shared where possible and only a ones array is allocated.
    """
    X = as_matrix(X)
    if not sp.issparse(X):
        with np.errstate(invalid="ignore"):
            keep = X > 0
        if who is not None and not keep.all():
            refuse_missing(np.asarray(X)[~keep], who)
        return sp.csr_matrix(keep, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    data = X.data
    with np.errstate(invalid="ignore"):
        keep = data > 0
    if who is not None and not keep.all():
        refuse_missing(data[~keep], who)
    if keep.all():
        if np.all(data == 1.0):
            return X
        return sp.csr_matrix((np.ones(len(data)), X.indices, X.indptr), shape=X.shape)
    kept_before = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    indptr = kept_before[X.indptr]  # entries kept before each row start
    return sp.csr_matrix((np.ones(int(indptr[-1])), X.indices[keep], indptr), shape=X.shape)


class BIMCounts:
    """Document counts per feature and class: ``n_pos``/``n_neg`` (per feature), ``N_pos``/``N_neg``."""

    __slots__ = ("n_pos", "n_neg", "N_pos", "N_neg")

    def __init__(self, n_pos: np.ndarray, n_neg: np.ndarray, N_pos: float, N_neg: float):
        self.n_pos, self.n_neg, self.N_pos, self.N_neg = n_pos, n_neg, float(N_pos), float(N_neg)


def bim_counts(B: sp.csr_matrix, positive: np.ndarray, negative: np.ndarray,
               weights: np.ndarray | None = None) -> BIMCounts:
    """Counts from a presence matrix and boolean class masks (rows in neither are left out);
    with ``weights``, each document counts its weight (integer weights = duplicated rows)."""
    wp = positive.astype(np.float64)
    wn = negative.astype(np.float64)
    if weights is not None:
        wp = wp * weights
        wn = wn * weights
    BT = B.T  # CSC view, no copy: B.T @ v is O(nnz)
    return BIMCounts(np.asarray(BT @ wp).ravel(), np.asarray(BT @ wn).ravel(), wp.sum(), wn.sum())


def _dense_document_counts(X: sp.csr_matrix, who: str | None = None) -> np.ndarray:
    """(F,) number of rows of a canonical CSR matrix in which each column is present (value > 0).

    One pass checks the values: when every stored value is 1 (binary data) the counts are one product
    ``X.T @ 1``, else a product of the 0/1 presence pattern; only stored values <= 0 or NaN need a mask.
    Sums of ones are exact (below 2^53).
    """
    data = X.data
    ones = np.ones(X.shape[0])
    if np.all(data == 1.0):
        return np.asarray(X.T @ ones).ravel()
    with np.errstate(invalid="ignore"):
        if data.size and not data.min() > 0:      # zeros, negative values or NaN are absent
            if who is not None and np.isnan(data.min()):   # NaN propagates through min: refused for ``who``
                refuse_missing(data, who)
            return np.bincount(X.indices[data > 0], minlength=X.shape[1]).astype(np.float64)
    pattern = sp.csr_matrix((np.ones(len(data)), X.indices, X.indptr), shape=X.shape)
    return np.asarray(pattern.T @ ones).ravel()


def _canonical(X: Any) -> sp.csr_matrix | np.ndarray:
    X = as_matrix(X)
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def document_counts(X: Any, rows: np.ndarray | None = None, sparse: bool = False, who: str | None = None
                    ) -> np.ndarray | sp.csr_matrix:
    """In how many documents (rows, or only ``rows``) each feature is present (value > 0): exact
    integers, without building the presence matrix. ``sparse``: a (1, F) CSR row holding the non-zero
    counts only (a shard's features), else a dense (F,) array. ``who``: NaN is refused
    (:func:`refuse_missing`) rather than absent."""
    X = _canonical(X)
    F = X.shape[1]
    if not sp.issparse(X):
        block = X if rows is None else X[rows]
        with np.errstate(invalid="ignore"):
            present = block > 0
        if who is not None and not present.all():
            refuse_missing(np.asarray(block)[~present], who)
        dense = present.sum(axis=0).astype(np.float64)
        return sp.csr_matrix(dense.reshape(1, F)) if sparse else dense
    part = X if rows is None else X[rows]
    if who is not None and sparse and F > 4 * part.nnz:
        refuse_missing(part.data, who)
    if not sparse or F <= 4 * part.nnz:
        dense = _dense_document_counts(part, who)
        if not sparse:
            return dense
        nz = np.flatnonzero(dense)
        return sp.csr_matrix((dense[nz], nz, np.array([0, len(nz)])), shape=(1, F))
    with np.errstate(invalid="ignore"):   # a shard much smaller than the vocabulary: sort its features
        cols = part.indices[part.data > 0]
    values, counts = np.unique(cols, return_counts=True)
    return sp.csr_matrix((counts.astype(np.float64), values, np.array([0, len(values)])), shape=(1, F))


def unit_bim_counts(X: Any, positive: np.ndarray, negative: np.ndarray, who: str | None = None) -> BIMCounts:
    """:func:`bim_counts` with unit weights, from ``X`` itself: the positives counted from their rows
    alone, the negatives as all documents less the positives (exact: the counts are whole numbers).
    Every row must be positive or negative (as after binary_codes); otherwise the general path runs.
    ``who``: NaN is refused (:func:`refuse_missing`)."""
    if not np.all(positive | negative):
        return bim_counts(presence(X, who), positive, negative)
    X = _canonical(X)
    n_all = document_counts(X, who=who)
    pos_rows = np.flatnonzero(positive)
    n_pos = document_counts(X, pos_rows) if len(pos_rows) else np.zeros(X.shape[1])
    return BIMCounts(n_pos, n_all - n_pos, float(len(pos_rows)), float(X.shape[0] - len(pos_rows)))


def check_alpha(alpha: Any) -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        value = float("nan")
    if not value > 0 or not np.isfinite(value):
        raise ParameterError(f"alpha must be a number > 0 (Laplace smoothing of the BIM), not {alpha!r}")
    return value


def check_features(features: Any, who: str) -> str:
    if not isinstance(features, str) or features.strip().lower() not in FEATURE_SETS:
        raise ParameterError(f"{who}: features must be 'positive' (the features of the training positives) "
                             f"or 'all', not {features!r}")
    return features.strip().lower()


def feature_mask(c: BIMCounts, features: str) -> np.ndarray:
    """The features that may carry a weight (algorithms.md 2.5): those in at least one positive document
    (``positive``) or in at least one training document (``all``); a feature never seen in training is
    ignored at scoring time."""
    return c.n_pos > 0 if features == "positive" else (c.n_pos + c.n_neg) > 0


def restricted(w: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """``w`` with 0 outside the feature set ``mask`` (None: every feature)."""
    return w if mask is None else np.where(mask, w, 0.0)


def smoothed_logit(n: np.ndarray, N: float, alpha: float) -> np.ndarray:
    """logit((n + a) / (N + 2a)) = log(n + a) - log(N - n + a), computed from the counts."""
    return np.log(n + alpha) - np.log(np.maximum(N - n, 0.0) + alpha)


def neutral(n_pos: np.ndarray, N_pos: float, n_neg: np.ndarray, N_neg: float, alpha: float,
            left_out_pos: float = 0.0, left_out_neg: float = 0.0) -> np.ndarray:
    """Where p_t = q_t exactly (equal odds (n + a) / (N - n + a), by cross products, exact for whole counts),
    so that w_t is 0 exactly: the difference of the two logits' logarithms leaves +-4e-16 there, which a
    threshold of 0 (|w| > 0, strict) would keep. ``left_out_*``: one document of that class left out."""
    odds_p = (np.maximum(n_pos - left_out_pos, 0.0) + alpha) * (np.maximum(N_neg - n_neg, 0.0) + alpha)
    odds_q = (np.maximum(n_neg - left_out_neg, 0.0) + alpha) * (np.maximum(N_pos - n_pos, 0.0) + alpha)
    return odds_p == odds_q


def bim_weights(c: BIMCounts, alpha: float, mask: np.ndarray | None = None) -> np.ndarray:
    """w_t = logit(p_t) - logit(q_t) (Robertson-Sparck Jones relevance weight), 0 outside ``mask`` and
    where p_t = q_t."""
    w = smoothed_logit(c.n_pos, c.N_pos, alpha) - smoothed_logit(c.n_neg, c.N_neg, alpha)
    w[neutral(c.n_pos, c.N_pos, c.n_neg, c.N_neg, alpha)] = 0.0
    return restricted(w, mask)


def thresholded(w: np.ndarray, tau: float) -> np.ndarray:
    """The scoring vector: w_t where |w_t| > tau (strict), else 0."""
    return np.where(np.abs(w) > tau, w, 0.0)


def resolve_threshold(threshold: Any, who: str) -> float | str:
    """A threshold >= 0, or the string 'loo' (chosen by leave-one-out AP)."""
    if isinstance(threshold, str):
        if threshold.strip().lower() in ("loo", "optcut"):
            return "loo"
        try:
            threshold = float(threshold)
        except ValueError:
            raise ParameterError(f"{who}: threshold must be a number >= 0 or 'loo', not '{threshold}'") from None
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        value = float("nan")
    if not (value >= 0 and np.isfinite(value)):
        raise ParameterError(f"{who}: threshold must be a number >= 0 or 'loo', not {threshold!r}")
    return value


def binary_codes(y: np.ndarray, n_classes: int, who: str, labels: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(positive mask, negative mask) from class codes: code 1 is positive, code 0 negative. One class
    is the negative one, unless ``labels`` (the labels of the codes, for data without a schema) say it
    is 1 or True: a training set of positives only, ``y = [1, 1, 1]``, took code 0 and read as negatives
    (every weight 0 or of the wrong sign)."""
    if n_classes > 2:
        raise CapabilityError(f"{who} handles two classes only, got {n_classes}; make a binary task "
                              f"(one class against the rest) with --positive CLASS")
    if n_classes < 2:
        lone = None if labels is None or len(labels) != 1 else labels[0]
        if lone is not None and not isinstance(lone, str) and lone == 1:
            return y == 0, np.zeros(len(y), dtype=bool)
        return np.zeros(len(y), dtype=bool), y == 0
    return y == 1, y == 0
