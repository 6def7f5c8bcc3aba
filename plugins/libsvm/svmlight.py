"""LIBSVM / svmlight files: ``label index:value ...`` per line, read into a sparse dataset and written back.

* Indices are 1-based ASCII integers, each at most once per line, in any order; values are numbers
  of the ARFF grammar. ``qid:n`` tokens (svmlight's query ids) are skipped; ``#`` starts a comment.
* Labels become the nominal class, its values the distinct labels in numeric order (written as the
  shortest text of the number: ``1``, ``-1``, ``2.5``). Several labels on one line (multi-label)
  are refused. Features are named ``a1``, ``a2``, ... (WEKA's LibSVMLoader names them ``att_1``...).
* Writing: the class label's text when every label is a finite number, else its code (0, 1, ...);
  nominal features as their codes. LIBSVM has no missing values, strings or bags: such datasets are
  refused.
"""

from __future__ import annotations

import io
import itertools
import os

import numpy as np
import scipy.sparse as sp

from toolkit.data import (
    Attribute, AttributeList, Dataset, format_number, is_gzip_name, open_binary, parse_numbers, text_encoding,
    undecodable_line, warn_dropped_weights,
)
from toolkit.errors import DatasetError, warn

__all__ = ["read_libsvm", "write_libsvm"]

#: a file may have up to this many columns, or this many per value it holds, without n_features: an index
#: far beyond its values (a damaged or hostile line, ``1 16000000:1``) is refused instead of making one
#: attribute per column (16 million columns of 4 rows took 1.3 GB to describe and 2.4 GB and 31 s for
#: nb-weka; 1 million take 0.2-0.4 GB and 1-7 s). Real wide files (news20's 1.35 million words) hold far
#: more values than that.
_MIN_COLUMN_BOUND = 1 << 20
_COLUMNS_PER_VALUE = 16
_MAX_COLUMNS = (1 << 31) - 1   # the sparse matrix's int32 indices


_LINES_PER_CHUNK = 1 << 16   # lines parsed at a time: Python objects for those only, arrays for the rest


def _parse_chunk(lines: list[str], first: int, display: str) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                       np.ndarray, np.ndarray]:
    """(label values, line numbers, entries per row, indices, values) of the non-blank lines of one chunk
    (``first``: the number of its first line)."""
    labels: list[str] = []
    pairs: list[str] = []
    counts: list[int] = []
    numbers: list[int] = []
    for no, line in enumerate(lines, start=first):
        body = line.split("#", 1)[0].split()
        if not body:
            continue
        label = body[0]
        if "," in label:
            raise DatasetError(f"{display}:{no}: several labels ('{label[:80]}'): multi-label files are not supported")
        if ":" in label:
            raise DatasetError(f"{display}:{no}: the line starts with '{label[:80]}', not a label")
        items = [t for t in body[1:] if not t.startswith("qid:")]
        labels.append(label)
        pairs.extend(items)
        counts.append(len(items))
        numbers.append(no)

    def line_of(entry: int) -> int:
        return numbers[int(np.searchsorted(np.cumsum(counts), entry, side="right"))]

    split = [p.partition(":") for p in pairs]
    bad = next((k for k, (i, c, v) in enumerate(split)
                if not c or not i.isascii() or not i.isdigit() or len(i) > 18), None)
    if bad is not None:
        what = "an index too large" if split[bad][1] and split[bad][0].isdigit() else "not index:value (a 1-based index)"
        raise DatasetError(f"{display}:{line_of(bad)}: '{pairs[bad][:80]}' is {what}")
    index = np.array([int(i) for i, _, _ in split], dtype=np.int64)
    values, ok = parse_numbers([v for _, _, v in split])
    if not ok.all():
        k = int(np.argmin(ok))
        raise DatasetError(f"{display}:{line_of(k)}: value '{split[k][2][:80]}' is not a number")
    if np.isnan(values).any():                 # LIBSVM has no missing values
        k = int(np.flatnonzero(np.isnan(values))[0])
        raise DatasetError(f"{display}:{line_of(k)}: value '{split[k][2][:80]}' is not a number "
                           f"(LIBSVM has no missing values)")
    if len(index) and index.min() < 1:
        k = int(np.argmin(index))
        raise DatasetError(f"{display}:{line_of(k)}: index 0 in '{pairs[k][:80]}'; LIBSVM indices start at 1")
    label_values, label_ok = parse_numbers(labels) if labels else (np.zeros(0), np.zeros(0, bool))
    finite = label_ok & np.isfinite(label_values)      # NaN would become a class named '?'
    if not finite.all():
        k = int(np.argmin(finite))
        what = "a finite number" if label_ok[k] else "a number"
        raise DatasetError(f"{display}:{numbers[k]}: label '{labels[k][:80]}' is not {what}")
    return (label_values, np.asarray(numbers, dtype=np.int64), np.asarray(counts, dtype=np.int64), index,
            values)


def _undecodable(path: str | os.PathLike[str], display: str, encoding: str, codec_name: str,
                 first: int) -> DatasetError:
    """The error for a byte that does not decode: its line, found by reading the file again."""
    found = undecodable_line(path, codec_name)
    if found is None:  # not found again (the file changed?): the chunk it was in
        return DatasetError(f"{display}: not a {encoding} text file (from about line {first} on)")
    line, byte = found
    return DatasetError(f"{display}:{line}: byte 0x{byte} is not valid {encoding}; not a {encoding} text file "
                        f"(pass the file's encoding)")


def read_libsvm(path: str | os.PathLike[str], *, n_features: int | None = None, sparse: bool | str = "auto",
                encoding: str = "utf-8", class_attribute: str | int | None = -1) -> Dataset:
    """Load a LIBSVM/svmlight file (``.gz`` too); see the module docstring. ``class_attribute``: the
    label is the class, whatever it is called (``class``, ``last`` or -1); anything else is refused.
    Read in chunks of lines: memory is the arrays' (16 bytes an entry) and one chunk's Python objects."""
    display = str(path)
    codec_name = text_encoding(encoding)   # a BOM is not part of the first value
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    with open_binary(path) as raw:
        # universal newlines: lines end at \n, \r\n or \r only (a form feed or U+2028 is not a line break)
        text = io.TextIOWrapper(raw, encoding=codec_name)  # type: ignore[arg-type]
        first = 1
        while True:
            try:
                lines = list(itertools.islice(text, _LINES_PER_CHUNK))
            except UnicodeDecodeError:
                raise _undecodable(path, display, encoding, codec_name, first) from None
            if not lines:
                break
            parts.append(_parse_chunk(lines, first, display))
            first += len(lines)
            del lines
    label_values, numbers, counts, index, values = (np.concatenate([p[j] for p in parts]) if parts else
                                                    np.zeros(0, dtype=np.int64 if j in (1, 2, 3) else np.float64)
                                                    for j in range(5))
    del parts
    n = len(label_values)
    width = int(index.max()) if len(index) else 0
    if n_features is not None:
        if width > n_features:
            raise DatasetError(f"{display}: index {width} is beyond n_features={n_features}")
        width = n_features
    bound = _MAX_COLUMNS if n_features is not None else min(_MAX_COLUMNS, max(_MIN_COLUMN_BOUND,
                                                                               _COLUMNS_PER_VALUE * len(index)))
    if width > bound:
        k = int(np.argmax(index))
        row = int(np.searchsorted(np.cumsum(counts), k, side="right"))
        raise DatasetError(f"{display}:{numbers[row]}: index {width:,} would make {width:,} columns for "
                           f"{len(index):,} values (more than {bound:,}); a damaged line? (a file that is this "
                           f"wide: toolkit convert FILE OUT.arff --n-features N, or read_libsvm's n_features=)")
    if not (class_attribute in (-1, "-1", "class", "last", None) or class_attribute == width):
        raise DatasetError(f"{display}: a LIBSVM file's class is its label (the attribute 'class', the last "
                           f"of its {width + 1}); choose it by that name, by 'last' or leave --class out")
    rows = np.repeat(np.arange(n), counts)
    X = sp.csr_matrix((values, (rows, index - 1)), shape=(n, width))
    if X.nnz != len(values):
        order = np.lexsort((index, rows))  # fewer entries than values: some (row, index) pair repeats
        k = int(order[np.flatnonzero((np.diff(rows[order]) == 0) & (np.diff(index[order]) == 0))[0]])
        raise DatasetError(f"{display}:{numbers[int(rows[k])]}: index {int(index[k])} appears twice on one line")
    X.sort_indices()
    X.eliminate_zeros()
    classes, y = np.unique(label_values, return_inverse=True)
    names = [format_number(float(c)) for c in classes]
    attributes = AttributeList.numbered("a", width, then=[Attribute("class", "nominal", tuple(names))])
    if sparse is False:
        X = X.toarray()
    stem = os.path.basename(display)
    return Dataset(relation=stem.split(".")[0], attributes=attributes, X=X, y=y.astype(np.int64),
                   class_index=width, weights=np.ones(n), path=display)


def write_libsvm(ds: Dataset, path: str | os.PathLike[str]) -> None:
    """Write ``ds`` as LIBSVM (gzip when the name ends in ``.gz``, in any case); see the module docstring."""
    warn_dropped_weights(ds, path, "LIBSVM")
    for a in ds.features:
        if a.kind not in ("numeric", "nominal"):
            raise DatasetError(f"{path}: attribute '{a.name}' is {a.kind}: LIBSVM holds numbers only")
    X = sp.csr_matrix(ds.X, dtype=np.float64)
    if np.isnan(X.data).any():
        col = int(X.indices[np.isnan(X.data)][0])
        raise DatasetError(f"{path}: attribute '{ds.features.name(col)}' has missing values: LIBSVM has none "
                           f"(replace them first)")
    if ds.y is None or ds.class_attribute is None or not ds.class_attribute.is_nominal:
        raise DatasetError(f"{path}: LIBSVM needs a nominal class attribute for its labels")
    if (np.asarray(ds.y) < 0).any():
        raise DatasetError(f"{path}: class '{ds.class_attribute.name}' has missing values: LIBSVM has none")
    labels = list(ds.class_attribute.values)
    label_values, label_ok = parse_numbers(labels) if labels else (np.zeros(0), np.zeros(0, bool))
    # labels read back as numbers: finite ones only (the reader refuses 'NaN', 'Infinity' and '1e999')
    numeric = bool(np.all(label_ok & np.isfinite(label_values)))
    if numeric and len(np.unique(label_values)) < len(labels):
        # '1' and '1.0' are one number: read back they would merge into one class
        warn(f"{path}: class labels {', '.join(labels[:5])} are not distinct as numbers; their codes 0, 1, ... "
             f"are written instead")
        numeric = False
    text = labels if numeric else [str(k) for k in range(len(labels))]
    X.sort_indices()
    import gzip

    opener = gzip.open if is_gzip_name(path) else open
    with opener(path, "wt", encoding="utf-8", newline="\n") as fh:  # type: ignore[operator]
        for r in range(X.shape[0]):
            lo, hi = X.indptr[r], X.indptr[r + 1]
            items = " ".join(f"{c + 1}:{format_number(v)}" for c, v in zip(X.indices[lo:hi].tolist(),
                                                                         X.data[lo:hi].tolist()) if v != 0)
            fh.write(text[int(ds.y[r])] + (" " + items if items else "") + "\n")

