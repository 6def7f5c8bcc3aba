"""A dataset whose header was inferred from its rows (CSV, LIBSVM) read onto a declared header.

A CSV file's nominal values are numbered in order of first appearance, and a LIBSVM file's class
values are the labels it holds: the same data in another row order, or a test part that lacks a
class, has other codes than its training set. :func:`conform` renumbers such a dataset's nominal
values by name onto the header a model was trained with (or a training set's), so that codes mean
the same on both sides. A declared header (ARFF) is left as it is: there a different value list is a
different attribute, refused as WEKA refuses it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from toolkit.data.attributes import KIND_CODES, AttributeList
from toolkit.data.dataset import Dataset
from toolkit.errors import DatasetError

__all__ = ["conform", "conform_to", "libsvm_width"]


def libsvm_width(attributes: AttributeList) -> int | None:
    """The feature count of a LIBSVM-shaped header (numeric ``a1..aN`` then a nominal ``class``), which a
    LIBSVM file read onto it must be given (a file lacking the highest index would be narrower); else None."""
    n = len(attributes)
    if n < 1 or attributes.name(n - 1) != "class" or not attributes[n - 1].is_nominal:
        return None
    width = n - 1
    if (np.any(attributes.kind_codes[:width] != KIND_CODES["numeric"])
            or attributes.names()[:width] != [f"a{i}" for i in range(1, width + 1)]):
        return None
    return width


def conform(ds: Dataset, header: AttributeList) -> Dataset:
    """``ds`` (all attributes as columns: no class) with its nominal codes renumbered onto ``header``'s
    values by name, when its header was inferred and names the same attributes in the same order; a
    column of only missing values takes the header's kind. Anything else is returned unchanged, for the
    header check that follows to name the difference. Raises naming the attribute and the row when a
    value is not among the header's."""
    if not ds.inferred_header or ds.class_index is not None or len(ds.attributes) != len(header):
        return ds
    have = ds.attributes
    if have.names() != header.names():
        return ds
    X = ds.X
    changes: dict[int, np.ndarray] = {}   # column -> its values in the header's terms (NaN: missing)
    strings = dict(ds.strings)
    for j in range(len(header)):
        want, got = header[j], have[j]
        if want == got:
            continue
        column = _column(X, j)
        known = ~np.isnan(column)
        if want.kind == "string" and (got.is_nominal or not known.any()):
            # a CSV reads a text column as nominal: its values are the texts, and its codes index them
            strings[j] = list(got.values)
            continue
        if want.kind == "date" and got.is_nominal:
            # dates read as text: parsed with the header's format
            changes[j] = _translated(column, _dates(ds, want, got, column))
            continue
        if not want.is_nominal or (got.kind != "numeric" and not got.is_nominal):
            # another kind (a column of numbers holding one text cell, ...): refused by the header check,
            # never read as the header's kind (nominal codes taken for numbers)
            return ds
        if got.is_nominal:
            lookup = {v: k for k, v in enumerate(want.values)}
            new = _translated(column, np.array([lookup.get(v, -1) for v in got.values], dtype=np.float64))
        else:
            new = _numbers_as_values(column, want.values)
        unknown = np.flatnonzero(known & (new < 0))
        if len(unknown):
            row = int(unknown[0])
            value = got.values[int(column[row])] if got.is_nominal else repr(float(column[row])).removesuffix(".0")
            shown = ", ".join(want.values[:10]) + (", ..." if len(want.values) > 10 else "")
            raise DatasetError(f"{ds.path or ds.name}: data row {row + 1} gives attribute '{want.name}' the value "
                               f"'{value}', which the training header does not have (its values: {shown})")
        changes[j] = new
    if not changes and strings == ds.strings:
        return ds
    return replace(ds, attributes=header, X=_with_columns(X, changes) if changes else X, strings=strings,
                   inferred_header=False)


def _translated(column: np.ndarray, by_code: np.ndarray) -> np.ndarray:
    """A nominal column's codes replaced by ``by_code[code]`` (missing stays NaN)."""
    known = ~np.isnan(column)
    out = np.full(len(column), np.nan)
    out[known] = by_code[column[known].astype(np.int64)]
    return out


def _dates(ds: Dataset, want, got, column: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """A nominal column's values parsed as dates of ``want``'s format: the code -> instant map."""
    from toolkit.data.arff_dates import DEFAULT_DATE_FORMAT, DateCodec

    codec = DateCodec(want.date_format or DEFAULT_DATE_FORMAT)
    instants = np.empty(len(got.values))
    for k, text in enumerate(got.values):
        try:
            instants[k] = codec.parse(text)
        except (DatasetError, ValueError):
            used = column == k
            if used.any():
                raise DatasetError(f"{ds.path or ds.name}: data row {int(np.flatnonzero(used)[0]) + 1} gives the date "
                                   f"attribute '{want.name}' the value '{text}', which is not a date of the form "
                                   f"'{codec.pattern}'") from None
            instants[k] = np.nan
    return instants


def _column(X: np.ndarray | sp.csr_matrix, j: int) -> np.ndarray:
    col = X[:, j]
    return np.asarray(col.toarray() if sp.issparse(col) else col, dtype=np.float64).ravel()


def _numbers_as_values(column: np.ndarray, values: tuple[str, ...]) -> np.ndarray:
    """A column read as numbers (CSV: digits, or only missing values) for a nominal attribute whose
    values are numbers' texts: each number replaced by the code of the value equal to it (-1: none)."""
    by_number: dict[float, int] = {}
    for k, text in enumerate(values):
        try:
            number = float(text)
        except ValueError:
            continue
        by_number.setdefault(number, k)   # "1" and "1.0" alike: the first declared
    known = ~np.isnan(column)
    present, at = np.unique(column[known], return_inverse=True)
    out = np.full(len(column), np.nan)
    out[known] = np.array([by_number.get(v, -1) for v in present.tolist()], dtype=np.float64)[at]
    return out


def _with_columns(X: np.ndarray | sp.csr_matrix, changes: dict[int, np.ndarray]) -> np.ndarray | sp.csr_matrix:
    """``X`` with the columns of ``changes`` replaced (a copy)."""
    if not sp.issparse(X):
        X = np.array(X, dtype=np.float64)
        for j, values in changes.items():
            X[:, j] = values
        return X
    coo = sp.coo_matrix(X)
    keep = ~np.isin(coo.col, list(changes))
    rows, cols, data = [coo.row[keep]], [coo.col[keep]], [coo.data[keep].astype(np.float64)]
    for j, values in changes.items():   # a sparse row leaves code 0 out: every row of the column is written
        nonzero = np.flatnonzero(values != 0)
        rows.append(nonzero)
        cols.append(np.full(len(nonzero), j))
        data.append(values[nonzero])
    return sp.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))), shape=X.shape)


def conform_to(ds: Dataset, training: Dataset) -> Dataset:
    """``ds`` (a test set) renumbered onto ``training``'s header and given its class attribute, when its
    header was inferred and differs; else ``ds`` itself (a difference is for the header check to name)."""
    if not ds.inferred_header or (ds.attributes == training.attributes and ds.class_index == training.class_index):
        return ds
    whole = ds.with_class(None)
    renumbered = conform(whole, training.attributes)
    if renumbered is whole:
        return ds
    return renumbered.with_class(training.class_index)
