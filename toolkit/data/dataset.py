"""The dataset model: a schema, a feature matrix, a class vector and instance weights.

Features are float64. Nominal values are integer codes into the attribute's declared values,
string values are codes into a per-column table, dates are milliseconds since the epoch (UTC),
and NaN marks a missing value everywhere. Sparse ARFF becomes a ``scipy.sparse.csr_matrix``;
its implicit zeros mean 0, which for a nominal attribute is its first declared value, as in WEKA.
The class attribute is held apart from the features, as ``y``: integer codes (-1 = missing) for a
nominal class, float64 (NaN = missing) for a numeric one.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import scipy.sparse as sp

from toolkit.data.attributes import Attribute, AttributeKind, AttributeList
from toolkit.errors import DatasetError

__all__ = ["Attribute", "Dataset", "AttributeKind"]

@dataclass(eq=False)
class Dataset:
    """A loaded dataset. ``X`` holds every attribute but the class, in file order.

    ``strings`` maps a feature column index to the table that its codes index (string
    attributes only); ``bags`` does the same for relational (multi-instance) attributes, whose
    codes index a list of datasets, one bag per instance. ``class_index`` is the class attribute's position among all attributes of
    the file, or None when the dataset has no class.
    """

    relation: str
    attributes: AttributeList
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray | None
    class_index: int | None
    weights: np.ndarray
    strings: dict[int, list[str]] = field(default_factory=dict)
    path: str | None = None
    sha256: str | None = None
    task: str | None = None  # the positive class of a one-vs-rest task made by one_vs_rest()
    bags: dict[int, list[Dataset]] = field(default_factory=dict)  # relational columns: code -> bag
    #: the kinds and the nominal values' order were inferred from the data (CSV, LIBSVM), not declared: the
    #: same data in another row order has other codes; :func:`toolkit.data.conform` maps it onto a header
    inferred_header: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.attributes, AttributeList):
            self.attributes = AttributeList(self.attributes)

    # ------------------------------------------------------------------ schema views
    @property
    def n_instances(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def features(self) -> AttributeList:
        """The non-class attributes, in the order of ``X``'s columns."""
        if self.class_index is None:
            return self.attributes
        keep = np.delete(np.arange(len(self.attributes)), self.class_index)
        return self.attributes.take(keep)

    @property
    def class_attribute(self) -> Attribute | None:
        return None if self.class_index is None else self.attributes[self.class_index]

    @property
    def classes(self) -> tuple[str, ...]:
        """Declared class labels (nominal class), in header order."""
        attr = self.class_attribute
        if attr is None or not attr.is_nominal:
            return ()
        return attr.values

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.X)

    @property
    def name(self) -> str:
        """File stem when loaded from a file (``vote`` for ``uci/vote.arff``), else the relation; a
        one-vs-rest task adds its positive class (``ohsumed:C04``)."""
        base = self.relation
        if self.path:
            base = os.path.basename(os.fspath(self.path))   # a backslash is a separator on Windows only
            for suffix in (".arff.gz", ".arff", ".gz"):
                if base.lower().endswith(suffix):
                    base = base[: -len(suffix)]
                    break
        return base if self.task is None else f"{base}:{self.task}"

    def require_nominal_class(self) -> tuple[str, ...]:
        """Return the class labels or raise a clear error when there is no nominal class."""
        attr = self.class_attribute
        if attr is None:
            raise DatasetError(f"{self.name}: no class attribute; choose one with --class NAME")
        if not attr.is_nominal:
            hint = "choose one with --class NAME"
            if attr.kind == "numeric" and self.path and str(self.path).lower().endswith((".csv", ".csv.gz")):
                # CSV has no types: a column of labels 0/1 reads as numbers
                hint += (f", or make this one nominal: toolkit convert {os.path.basename(str(self.path))} OUT.arff "
                         f"--nominal '{attr.name}'")
            raise DatasetError(
                f"{self.name}: class attribute '{attr.name}' is {attr.kind}; classification needs a "
                f"nominal class ({hint})")
        return attr.values

    # ------------------------------------------------------------------ binary tasks
    def class_counts(self) -> np.ndarray:
        """Instances (weights not applied) per declared class, in header order; a missing class is not counted."""
        labels = self.require_nominal_class()
        y = np.asarray(self.y, dtype=np.int64)
        return np.bincount(y[y >= 0], minlength=len(labels))[: len(labels)]

    def rare_classes(self, below: float) -> list[str]:
        """Classes present in the data whose share of the instances with a known class is below ``below``
        (the paper's imbalanced one-vs-rest tasks), in header order."""
        if not 0 < below <= 1:
            raise DatasetError(f"{self.name}: a class-share bound must lie in (0, 1], not {below}")
        counts = self.class_counts()
        total = counts.sum()
        labels = self.require_nominal_class()
        return [labels[k] for k in range(len(labels)) if 0 < counts[k] and counts[k] < below * total]

    def one_vs_rest(self, positive: str) -> Dataset:
        """The binary task ``positive`` against every other class: the class becomes {rest, positive},
        with code 1 for ``positive`` (the positive class of average precision), 0 for the rest, and a
        missing class stays missing."""
        labels = self.require_nominal_class()
        if positive not in labels:
            import difflib

            close = [v for v in labels if v.lower() == str(positive).lower()] or \
                difflib.get_close_matches(str(positive), list(labels), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            shown = ", ".join(labels[:10]) + (", ..." if len(labels) > 10 else "")
            raise DatasetError(f"{self.name}: class '{positive}' is not a value of '{self.class_attribute.name}'"
                               f"{hint} (its values: {shown})")
        k = labels.index(positive)
        rest = "rest" if positive != "rest" else "not-rest"
        y = np.asarray(self.y, dtype=np.int64)
        codes = np.where(y < 0, -1, (y == k).astype(np.int64))
        attr = replace(self.class_attribute, values=(rest, positive))
        ci = int(self.class_index)
        attributes = self.attributes[:ci] + [attr] + self.attributes[ci + 1:]
        sha = f"{self.sha256}|positive={positive}" if self.sha256 else None
        return replace(self, attributes=attributes, y=codes, sha256=sha, task=positive)

    # ------------------------------------------------------------------ subsetting
    def subset(self, rows: Sequence[int] | np.ndarray) -> Dataset:
        """The instances ``rows`` (indices, in the given order), with the same schema."""
        rows = np.asarray(rows, dtype=np.int64)
        return replace(
            self,
            X=self.X[rows],
            y=None if self.y is None else self.y[rows],
            weights=self.weights[rows],
            sha256=None,
        )

    def select_features(self, columns: Sequence[int] | np.ndarray) -> Dataset:
        """Keep the feature columns ``columns`` (indices into ``X``), and the class."""
        columns = np.asarray(columns, dtype=np.int64)
        if columns.size and (columns.min() < 0 or columns.max() >= self.n_features):
            raise DatasetError(f"{self.name}: feature column out of range (0..{self.n_features - 1})")
        # positions of the kept features among all attributes (the class keeps its relative place)
        positions = columns if self.class_index is None else np.where(columns >= self.class_index, columns + 1,
                                                                           columns)
        if self.class_index is None:
            attributes = self.attributes.take(positions)
            class_index = None
        else:
            before = int(np.sum(columns < self.class_index))
            order = np.concatenate([positions[:before], [self.class_index], positions[before:]])
            attributes = self.attributes.take(order)
            class_index = before
        X = self.X[:, columns]
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        strings = {new: self.strings[int(old)] for new, old in enumerate(columns) if int(old) in self.strings}
        bags = {new: self.bags[int(old)] for new, old in enumerate(columns) if int(old) in self.bags}
        return replace(self, attributes=attributes, X=X, class_index=class_index, strings=strings,
                       bags=bags, sha256=None)

    def check_same_header(self, other: Dataset) -> None:
        """``other`` (a test set) has this dataset's attributes, values in the same order and class: its
        codes mean the same. Raises naming the first attribute that differs."""
        if self.attributes != other.attributes or self.class_index != other.class_index:
            for a, b in zip(self.attributes, other.attributes):
                if a != b:
                    what = (f"{b.describe()} vs {a.describe()}" if b.describe() != a.describe()
                            else f"'{b.name}' vs '{a.name}'" if b.name != a.name
                            else f"values {', '.join(b.values[:6])} vs {', '.join(a.values[:6])}" if b.values != a.values
                            else f"{b.date_format} vs {a.date_format}")
                    raise DatasetError(f"{other.name}: its header differs from {self.name}'s at attribute "
                                       f"'{b.name}' ({what})")
            if len(self.attributes) == len(other.attributes):
                raise DatasetError(f"{other.name}: its class attribute differs from {self.name}'s")
            raise DatasetError(f"{other.name}: its header differs from {self.name}'s "
                               f"({len(other.attributes)} vs {len(self.attributes)} attributes)")

    def concat(self, other: Dataset) -> Dataset:
        """This dataset's instances followed by ``other``'s (same header; string tables merged).

        Every value keeps its meaning, code 0 of a sparse row included: a row of ``other`` that
        leaves a string or relational attribute out means ``other``'s first value, and gets that
        value's code in the merged table where it is not 0. (Chunks and ranges of one file start
        with the same first value, so joining them never needs that.)"""
        self.check_same_header(other)
        X_other = other.X
        strings = {col: list(table) for col, table in self.strings.items()}
        if other.strings:
            X_other = X_other.copy()
            for col, table in other.strings.items():
                merged = strings.setdefault(col, [])
                index = {v: i for i, v in enumerate(merged)}
                remap = np.zeros(max(len(table), 1))  # an empty table: code 0 is no value, kept at 0
                for code, value in enumerate(table):
                    if value not in index:
                        index[value] = len(merged)
                        merged.append(value)
                    remap[code] = index[value]
                X_other = _recode(X_other, col, remap, float(remap[0]))
        bags = {col: list(items) for col, items in self.bags.items()}
        if other.bags:
            X_other = X_other.copy() if X_other is other.X else X_other
            for col, items in other.bags.items():
                mine = bags.setdefault(col, [])
                offset = len(mine)
                if not items:
                    remap = np.zeros(1)  # no bag: code 0 is no value, kept at 0
                elif mine and (items[0] is mine[0] or items[0].difference(mine[0]) is None):
                    remap = np.arange(len(items), dtype=np.float64) + (offset - 1)  # the same first bag
                    remap[0] = 0.0
                    mine.extend(items[1:])
                else:
                    remap = np.arange(len(items), dtype=np.float64) + offset
                    mine.extend(items)
                X_other = _recode(X_other, col, remap, float(remap[0]))
        if self.is_sparse or sp.issparse(X_other):
            X = sp.vstack([sp.csr_matrix(self.X), sp.csr_matrix(X_other)], format="csr")
        else:
            X = np.vstack([self.X, X_other])
        y = None if self.y is None else np.concatenate([self.y, other.y])
        return replace(self, X=X, y=y, weights=np.concatenate([self.weights, other.weights]),
                       strings=strings, bags=bags, sha256=None)

    def with_class(self, index: int | None) -> Dataset:
        """The same data with the attribute at ``index`` (position among all attributes) as the class."""
        if index == self.class_index:
            return self
        if index is not None and not 0 <= index < len(self.attributes):
            raise DatasetError(f"{self.name}: class index {index} (position {index + 1} counting from 1) is out of range "
                               f"(the dataset has {len(self.attributes)} attributes)")
        if index is not None and self.attributes[index].kind in ("string", "date", "relational"):
            raise DatasetError(f"{self.name}: attribute '{self.attributes.name(index)}' is "
                               f"{self.attributes[index].kind} and cannot be the class")
        # all attributes as columns, in file order
        columns = [self.X]
        if self.class_index is not None:
            y = np.asarray(self.y, dtype=np.float64)
            if self.class_attribute.is_nominal:
                y = np.where(y < 0, np.nan, y)
            left = self.X[:, : self.class_index]
            right = self.X[:, self.class_index:]
            col = y[:, None]
            columns = [left, sp.csr_matrix(col) if self.is_sparse else col, right]
        full = sp.hstack(columns, format="csr") if self.is_sparse else np.hstack(columns)
        strings_full = {}
        for col, table in self.strings.items():
            pos = col if self.class_index is None or col < self.class_index else col + 1
            strings_full[pos] = table
        bags_full = {(col if self.class_index is None or col < self.class_index else col + 1): items
                     for col, items in self.bags.items()}
        if index is None:
            return replace(self, X=full, y=None, class_index=None, strings=strings_full, bags=bags_full,
                           sha256=self.sha256)
        target = full[:, index]
        target = np.asarray(target.toarray()).ravel() if sp.issparse(target) else np.asarray(target, dtype=np.float64)
        keep = np.delete(np.arange(full.shape[1]), index)
        X = full[:, keep]
        if sp.issparse(X):
            X = sp.csr_matrix(X)
        if self.attributes[index].is_nominal:
            y = np.where(np.isnan(target), -1, target).astype(np.int64)
        else:
            y = target
        strings = {(p if p < index else p - 1): t for p, t in strings_full.items()}
        bags = {(p if p < index else p - 1): t for p, t in bags_full.items()}
        return replace(self, X=X, y=y, class_index=index, strings=strings, bags=bags, sha256=self.sha256)

    def to_dense(self) -> Dataset:
        """The same data with a dense ``X``."""
        if not self.is_sparse:
            return self
        return replace(self, X=np.asarray(self.X.toarray(), dtype=np.float64))

    # ------------------------------------------------------------------ values
    def string_value(self, column: int, code: float) -> str | None:
        """The string that a string column's code stands for (None when missing)."""
        if np.isnan(code):
            return None
        table = self.strings.get(column, [])
        code = int(code)
        return table[code] if code < len(table) else ""

    def bag(self, column: int, code: float) -> Dataset | None:
        """The bag (a dataset) that a relational column's code stands for (None when missing)."""
        if np.isnan(code):
            return None
        bags = self.bags.get(column, [])
        if 0 <= int(code) < len(bags):
            return bags[int(code)]
        # the implicit 0 of a sparse row in a column without bags: an empty bag
        relation = self.features[column].relation
        return Dataset(relation=self.features.name(column), attributes=relation, X=np.zeros((0, len(relation))),
                       y=None, class_index=None, weights=np.ones(0))

    def missing_share(self) -> np.ndarray:
        """Share of missing values per feature column."""
        n = max(self.n_instances, 1)
        if self.is_sparse:
            X = self.X.tocsr()  # CSR indices are column numbers (CSC's, which were used here, are rows)
            counts = np.zeros(self.n_features)
            nan_cols = X.indices[np.isnan(X.data)]
            np.add.at(counts, nan_cols, 1)
            return counts / n
        return np.isnan(self.X).sum(axis=0) / n

    # ------------------------------------------------------------------ comparison
    def difference(self, other: Dataset) -> str | None:
        """Describe the first difference in content from ``other`` (None when equal).

        Compares relation, schema, class choice, values (string codes through their tables,
        NaN equal to NaN; sparse and dense forms compare by value) and weights.
        """
        if self.relation != other.relation:
            return f"relation {self.relation!r} != {other.relation!r}"
        if self.attributes != other.attributes:
            for i, (a, b) in enumerate(zip(self.attributes, other.attributes)):
                if a != b:
                    return f"attribute {i}: {a} != {b}"
            return f"{len(self.attributes)} attributes != {len(other.attributes)}"
        if self.class_index != other.class_index:
            return f"class index {self.class_index} != {other.class_index}"
        if self.X.shape != other.X.shape:
            return f"shape {self.X.shape} != {other.X.shape}"
        if (self.is_sparse or other.is_sparse) and not (self.strings or other.strings or self.bags or other.bags):
            problem = _sparse_difference(self.X, other.X)
            if problem:
                return problem
        else:
            a = self._comparable_matrix()
            b = other._comparable_matrix()
            same = (a == b) | (np.isnan(a) & np.isnan(b))
            if not same.all():
                r, c = np.argwhere(~same)[0]
                return f"value at row {r}, column {c}: {a[r, c]!r} != {b[r, c]!r}"
        for col in self.strings.keys() | other.strings.keys():
            for r in range(self.n_instances):
                va = self.string_value(col, self._dense_value(r, col))
                vb = other.string_value(col, other._dense_value(r, col))
                if va != vb:
                    return f"string at row {r}, column {col}: {va!r} != {vb!r}"
        for col in self.bags.keys() | other.bags.keys():
            for r in range(self.n_instances):
                ba, bb = self.bag(col, self._dense_value(r, col)), other.bag(col, other._dense_value(r, col))
                if (ba is None) != (bb is None):
                    return f"bag at row {r}, column {col}: one is missing"
                if ba is not None:
                    problem = ba.difference(bb)
                    if problem:
                        return f"bag at row {r}, column {col}: {problem}"
        if self.y is None or other.y is None:
            if (self.y is None) != (other.y is None):
                return "one dataset has a class vector, the other not"
        else:
            ya = np.asarray(self.y, dtype=np.float64)
            yb = np.asarray(other.y, dtype=np.float64)
            same = (ya == yb) | (np.isnan(ya) & np.isnan(yb))
            if not same.all():
                r = int(np.argmin(same))
                return f"class at row {r}: {self.y[r]!r} != {other.y[r]!r}"
        if not np.array_equal(self.weights, other.weights):
            r = int(np.argmax(self.weights != other.weights))
            return f"weight at row {r}: {self.weights[r]!r} != {other.weights[r]!r}"
        return None

    def _comparable_matrix(self) -> np.ndarray:
        X = self.X.toarray() if self.is_sparse else np.array(self.X, dtype=np.float64)
        for col in list(self.strings) + list(self.bags):
            X[:, col] = np.where(np.isnan(X[:, col]), np.nan, 0.0)  # compared through the tables instead
        return X

    def _dense_value(self, row: int, col: int) -> float:
        return float(self.X[row, col])

    def content_sha256(self) -> str:
        """A hash of the content, for result files when the dataset did not come from a file."""
        h = hashlib.sha256()
        h.update(repr((self.relation, self.attributes, self.class_index)).encode())
        if self.is_sparse:
            X = self.X
            for arr in (X.data, X.indices, X.indptr):
                h.update(np.ascontiguousarray(arr).tobytes())
        else:
            h.update(np.ascontiguousarray(self.X).tobytes())
        if self.y is not None:
            h.update(np.ascontiguousarray(self.y).tobytes())
        h.update(np.ascontiguousarray(self.weights).tobytes())
        return h.hexdigest()

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return (f"Dataset({self.name!r}, {self.n_instances} instances, {len(self.attributes)} attributes, "
                f"{kind}, class={self.class_attribute.name if self.class_attribute else None!r})")


def _canonical(X: np.ndarray | sp.spmatrix) -> sp.csr_matrix:
    m = sp.csr_matrix(X, dtype=np.float64, copy=True)
    m.sum_duplicates()
    m.eliminate_zeros()
    m.sort_indices()
    return m


def _sparse_difference(a: np.ndarray | sp.spmatrix, b: np.ndarray | sp.spmatrix) -> str | None:
    """Compare by value without densifying (explicit zeros do not count, NaN equals NaN)."""
    ca, cb = _canonical(a), _canonical(b)
    if np.array_equal(ca.indptr, cb.indptr) and np.array_equal(ca.indices, cb.indices):
        same = (ca.data == cb.data) | (np.isnan(ca.data) & np.isnan(cb.data))
        if same.all():
            return None
        k = int(np.argmin(same))
        r = int(np.searchsorted(ca.indptr, k, side="right") - 1)
        return f"value at row {r}, column {ca.indices[k]}: {ca.data[k]!r} != {cb.data[k]!r}"
    rows = np.flatnonzero((np.diff(ca.indptr) != np.diff(cb.indptr)) |
                          np.array([not np.array_equal(ca.indices[ca.indptr[i]:ca.indptr[i + 1]],
                                                       cb.indices[cb.indptr[i]:cb.indptr[i + 1]])
                                    for i in range(ca.shape[0])]))
    r = int(rows[0])
    return f"row {r}: non-zero columns differ ({ca[r].indices.tolist()[:5]} vs {cb[r].indices.tolist()[:5]})"


def _recode(X: np.ndarray | sp.spmatrix, col: int, remap: np.ndarray, absent: float) -> np.ndarray | sp.csr_matrix:
    """Column ``col`` of ``X`` (a copy, changed in place where it can be) with codes renumbered by
    ``remap`` (missing values stay missing); in CSR, the rows that leave the column out (code 0)
    get ``absent`` written when it is not 0."""
    if not sp.issparse(X):
        vals = X[:, col]
        ok = ~np.isnan(vals)
        vals[ok] = remap[vals[ok].astype(np.int64)]
        X[:, col] = vals
        return X
    X = sp.csr_matrix(X)
    sel = X.indices == col
    vals = X.data[sel]
    ok = ~np.isnan(vals)
    vals[ok] = remap[vals[ok].astype(np.int64)]
    X.data[sel] = vals
    if absent == 0.0:
        return X
    rows_with = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[sel]
    left_out = np.setdiff1d(np.arange(X.shape[0]), rows_with)
    if not len(left_out):
        return X
    coo = X.tocoo()
    out = sp.csr_matrix((np.concatenate([coo.data, np.full(len(left_out), absent)]),
                         (np.concatenate([coo.row, left_out]), np.concatenate([coo.col, np.full(len(left_out), col)]))),
                        shape=X.shape)
    out.sort_indices()
    return out


def warn_dropped_weights(ds: Dataset, path: str | os.PathLike[str], fmt: str) -> None:
    """A writer of a format without instance weights (CSV, LIBSVM) says so rather than drop them silently."""
    from toolkit.errors import warn

    weighted = int(np.count_nonzero(ds.weights != 1.0))
    if weighted:
        warn(f"{path}: {fmt} has no instance weights; the weights of {weighted} instance(s) are not written "
             f"(ARFF keeps them)", stacklevel=3)
