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
import os
import re

import numpy as np
import scipy.sparse as sp

from toolkit.data import (
    MAX_NUMBER_CHARS, Attribute, AttributeList, Dataset, format_number, open_binary, open_text_output,
    parse_numbers, text_encoding, undecodable_line, warn_dropped_weights,
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


#: characters of text parsed at a time (whole lines, or a long line cut at a space): Python objects for
#: those only, arrays for the rest. By lines, a chunk's objects were unbounded: about 270 bytes an entry,
#: 1.8 GB for an 83 MB file of 80 entries a line, and a MemoryError for one long line.
_BLOCK_CHARS = 1 << 20
#: a query id: a whole number, signed as scikit-learn's load_svmlight_file reads it
_QID = re.compile(r"[+-]?[0-9]+")

#: the longest token (index:value, label, qid): an index of at most 18 digits, a number of the ARFF grammar
_MAX_TOKEN_CHARS = 32 + MAX_NUMBER_CHARS


class _Entries:
    """The parsed file so far: per row its label text's value and line, per entry its row, index and value."""

    def __init__(self, display: str):
        self.display = display
        #: per block: label values, label lines, entry rows, indices, values (one list each, concatenated one
        #: at a time at the end)
        self.parts: list[list[np.ndarray]] = [[], [], [], [], []]
        self.rows = 0

    def add(self, labels: list[str], label_lines: list[int], pairs: list[str], seg_rows: list[int],
            seg_counts: list[int], row_lines: dict[int, int]) -> None:
        """Parse one block's labels and ``index:value`` pairs (``seg_rows``/``seg_counts``: how many of the
        pairs, in order, belong to which row; ``row_lines``: the line of each row they belong to)."""
        display = self.display
        entry_rows = np.repeat(np.asarray(seg_rows, dtype=np.int64), np.asarray(seg_counts, dtype=np.int64))

        def line_of(entry: int) -> int:
            return row_lines[int(entry_rows[entry])]

        split = [p.partition(":") for p in pairs]
        bad = next((k for k, (i, c, v) in enumerate(split)
                    if not c or not i.isascii() or not i.isdigit() or len(i) > 18), None)
        if bad is not None:
            what = ("an index too large" if split[bad][1] and split[bad][0].isascii() and split[bad][0].isdigit()
                    else "not index:value (a 1-based index)")
            raise DatasetError(f"{display}:{line_of(bad)}: '{pairs[bad][:80]}' is {what}")
        index = np.array([int(i) for i, _, _ in split], dtype=np.int64)
        values, ok = parse_numbers([v for _, _, v in split]) if split else (np.zeros(0), np.zeros(0, bool))
        if not ok.all():
            k = int(np.argmin(ok))
            raise DatasetError(f"{display}:{line_of(k)}: value '{split[k][2][:80]}' is not a number")
        if np.isnan(values).any():                 # LIBSVM has no missing values
            k = int(np.flatnonzero(np.isnan(values))[0])
            raise DatasetError(f"{display}:{line_of(k)}: value '{split[k][2][:80]}' is not a number "
                               f"(LIBSVM has no missing values)")
        if np.isinf(values).any():                 # '1e400' overflows where 'inf' is refused above
            k = int(np.flatnonzero(np.isinf(values))[0])
            raise DatasetError(f"{display}:{line_of(k)}: value '{split[k][2][:80]}' is not a finite number")
        if len(index) and index.min() < 1:
            k = int(np.argmin(index))
            raise DatasetError(f"{display}:{line_of(k)}: index 0 in '{pairs[k][:80]}'; LIBSVM indices start at 1")
        label_values, label_ok = parse_numbers(labels) if labels else (np.zeros(0), np.zeros(0, bool))
        finite = label_ok & np.isfinite(label_values)      # NaN would become a class named '?'
        if not finite.all():
            k = int(np.argmin(finite))
            what = "a finite number" if label_ok[k] else "a number"
            raise DatasetError(f"{display}:{label_lines[k]}: label '{labels[k][:80]}' is not {what}")
        for j, array in enumerate((label_values, np.asarray(label_lines, dtype=np.int64), entry_rows, index, values)):
            self.parts[j].append(array)


def _parse(text: io.TextIOBase, display: str) -> _Entries:
    """Read the text a block at a time (whole lines, a long line cut after a space or tab), keeping across
    blocks the line number, whether the current line has given its label and whether the rest of it is a
    comment."""
    entries = _Entries(display)
    carry, line, labelled, comment = "", 1, False, False
    while True:
        block = text.read(_BLOCK_CHARS)
        piece, carry = carry + block, ""
        if block:
            cut = piece.rfind("\n") + 1
            if not cut:   # within one long line: all of it after a '#' (a token ends there), else up to a space
                if comment or "#" in piece:
                    cut = len(piece)
                else:
                    cut = max(piece.rfind(" "), piece.rfind("\t")) + 1
                    if not cut and len(piece) > _MAX_TOKEN_CHARS:
                        raise DatasetError(f"{display}:{line}: a token of more than {_MAX_TOKEN_CHARS:,} characters "
                                           f"('{piece[:40]}...'); no label or index:value is that long (a damaged "
                                           f"file, or a line end missing?)")
            piece, carry = piece[:cut], piece[cut:]
        nul = piece.find("\0")
        pending = None
        if nul >= 0:   # the lines before its line first: one of them may hold an earlier error
            pending = DatasetError(f"{display}:{line + piece.count(chr(10), 0, nul)}: binary data (a NUL byte); "
                                   f"not a LIBSVM text file (UTF-16? re-encode it as UTF-8)")
            piece, block = piece[:piece.rfind("\n", 0, nul) + 1], ""
        labels: list[str] = []
        label_lines: list[int] = []
        pairs: list[str] = []
        seg_rows: list[int] = []
        seg_counts: list[int] = []
        row_lines: dict[int, int] = {}
        for k, part in enumerate(piece.split("\n")):
            if k:
                line, labelled, comment = line + 1, False, False
            if comment or not part:
                continue
            hash_at = part.find("#")
            if hash_at >= 0:
                part, comment = part[:hash_at], True
            body = part.split()
            if not body:
                continue
            if not labelled:
                label = body[0]
                if "," in label:
                    raise DatasetError(f"{display}:{line}: several labels ('{label[:80]}'): multi-label files "
                                       f"are not supported")
                if ":" in label:
                    raise DatasetError(f"{display}:{line}: the line starts with '{label[:80]}', not a label")
                labels.append(label)
                label_lines.append(line)
                row_lines[entries.rows] = line
                entries.rows += 1
                labelled = True
                body = body[1:]
            items = [t for t in body if not t.startswith("qid:")]
            if len(items) != len(body):
                bad_qid = next((t for t in body if t.startswith("qid:") and not _QID.fullmatch(t[4:])), None)
                if bad_qid is not None:
                    raise DatasetError(f"{display}:{line}: '{bad_qid[:80]}' is not qid:n (a whole number)")
            if items:
                pairs.extend(items)
                seg_rows.append(entries.rows - 1)
                seg_counts.append(len(items))
                row_lines[entries.rows - 1] = line
        entries.add(labels, label_lines, pairs, seg_rows, seg_counts, row_lines)
        del piece, labels, pairs
        if pending is not None:
            raise pending
        if not block:
            return entries


def _undecodable(path: str | os.PathLike[str], display: str, encoding: str, codec_name: str) -> DatasetError:
    """The error for a byte that does not decode: its line, found by reading the file again."""
    found = undecodable_line(path, codec_name)
    if found is None:  # not found again (the file changed?)
        return DatasetError(f"{display}: not a {encoding} text file")
    line, byte = found
    return DatasetError(f"{display}:{line}: byte 0x{byte} is not valid {encoding}; not a {encoding} text file "
                        f"(pass the file's encoding)")


def read_libsvm(path: str | os.PathLike[str], *, n_features: int | None = None, sparse: bool | str = "auto",
                encoding: str = "utf-8", class_attribute: str | int | None = -1) -> Dataset:
    """Load a LIBSVM/svmlight file (``.gz`` too); see the module docstring. ``class_attribute``: the
    label is the class, whatever it is called (``class``, ``last`` or -1); anything else is refused.
    Read a block of text at a time: memory is the arrays' (24 bytes an entry) and one block's Python objects."""
    display = str(path)
    if n_features is not None and not 0 <= n_features <= _MAX_COLUMNS:
        # checked before reading: 99,999,999,999 was blamed on the file's first line as "a damaged line?"
        raise DatasetError(f"{display}: n_features={n_features:,} is out of range: a sparse matrix indexes "
                           f"at most {_MAX_COLUMNS:,} columns")
    codec_name = text_encoding(encoding)   # a BOM is not part of the first value
    with open_binary(path) as raw:
        # universal newlines: lines end at \n, \r\n or \r only (a form feed or U+2028 is not a line break)
        text = io.TextIOWrapper(raw, encoding=codec_name)  # type: ignore[arg-type]
        try:
            entries = _parse(text, display)
        except UnicodeDecodeError:
            raise _undecodable(path, display, encoding, codec_name) from None
    parts = entries.parts
    for j in range(5):   # one at a time: the blocks' arrays of one kind freed before the next is joined
        parts[j] = np.concatenate(parts[j])  # type: ignore[call-overload]
    label_values, numbers, rows, index, values = parts
    del parts, entries
    n = len(label_values)
    width = int(index.max()) if len(index) else 0
    if n_features is not None:
        if width > n_features:
            k = int(np.argmax(index))
            raise DatasetError(f"{display}:{numbers[int(rows[k])]}: index {width} is beyond n_features={n_features} "
                               f"(the width given: --n-features, or the features of the model or training set "
                               f"it is read for)")
        width = n_features
    bound = _MAX_COLUMNS if n_features is not None else min(_MAX_COLUMNS, max(_MIN_COLUMN_BOUND,
                                                                               _COLUMNS_PER_VALUE * len(index)))
    if width > bound:
        k = int(np.argmax(index))
        raise DatasetError(f"{display}:{numbers[int(rows[k])]}: index {width:,} would make {width:,} columns for "
                           f"{len(index):,} values (more than {bound:,}); a damaged line? (a file that is this "
                           f"wide: toolkit convert FILE OUT.arff --n-features N, or read_libsvm's n_features=)")
    if not (class_attribute in (-1, "-1", "class", "last", None) or class_attribute == width):
        raise DatasetError(f"{display}: a LIBSVM file's class is its label (the attribute 'class', the last "
                           f"of its {width + 1}); choose it by that name, by 'last' or leave --class out")
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
    # the class values are the labels present and the width the highest index present (inferred_header)
    return Dataset(relation=stem.split(".")[0], attributes=attributes, X=X, y=y.astype(np.int64),
                   class_index=width, weights=np.ones(n), path=display, inferred_header=True)


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
    if np.isinf(X.data).any():   # the reader refuses them: a written file must read back
        col = int(X.indices[np.isinf(X.data)][0])
        raise DatasetError(f"{path}: attribute '{ds.features.name(col)}' has infinite values, which LIBSVM files "
                           f"cannot hold (this reader and LIBSVM refuse them); replace them first")
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
    # a label is one token: one read as a number around white space ('1\n') is written as that number
    text = ([format_number(float(v)) if any(ch.isspace() for ch in label) else label
             for label, v in zip(labels, label_values)] if numeric else [str(k) for k in range(len(labels))])
    X.sort_indices()
    with open_text_output(path) as fh:
        for r in range(X.shape[0]):
            lo, hi = X.indptr[r], X.indptr[r + 1]
            items = " ".join(f"{c + 1}:{format_number(v)}" for c, v in zip(X.indices[lo:hi].tolist(),
                                                                         X.data[lo:hi].tolist()) if v != 0)
            fh.write(text[int(ds.y[r])] + (" " + items if items else "") + "\n")

