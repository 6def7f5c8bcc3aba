"""CSV with a header row, read as WEKA's CSVLoader reads it, and written back.

* The first row names the attributes. A column whose values (other than missing ones) are all
  numbers (the ARFF number grammar: ASCII decimal or scientific) is numeric; any other column is
  nominal, its values in order of first appearance (WEKA's CSVLoader); ``?`` and empty cells are
  missing. ``nominal=``, ``string=``, ``numeric=`` and ``date=`` force a column's type (names or
  1-based positions); dates are parsed with ``date_format`` (Java SimpleDateFormat, default
  ``yyyy-MM-dd'T'HH:mm:ss``).
* Cells follow RFC 4180 (``"`` quotes, ``""`` inside quotes, quoted line breaks); leading and
  trailing ASCII whitespace (0x00-0x20, as in ARFF) is stripped from every cell but a string's.
* The class is the last column unless ``class_attribute`` names another (or None).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.data import MAX_LINE_BYTES, Attribute, DateCodec, Dataset, format_number, format_numbers, \
    open_binary, open_text_output, parse_numbers, resolve_class_index, text_encoding, undecodable_line, \
    warn_dropped_weights
from toolkit.errors import DatasetError

__all__ = ["read_csv", "write_csv"]

_WS = "".join(chr(i) for i in range(33))
_MISSING = ("?", "")


def _columns(spec: Iterable[str | int] | None, names: list[str], display: str, what: str) -> set[int]:
    out: set[int] = set()
    for item in spec or ():
        # ASCII digits only: '²' passed isdigit() and int() raised, '٢' (Arabic-Indic 2) chose column 2
        if isinstance(item, int) or (isinstance(item, str) and item.isascii() and item.isdigit()):
            k = int(item)
            if not 1 <= k <= len(names):
                raise DatasetError(f"{display}: {what} column {k} is out of range (1..{len(names)})")
            out.add(k - 1)
        elif item in names:
            out.add(names.index(item))
        else:
            raise DatasetError(f"{display}: no column named '{item}' for {what}; the columns are "
                               + ", ".join(names[:10]) + (", ..." if len(names) > 10 else ""))
    return out


_ROWS_PER_CHUNK = 1 << 15   # rows held as Python strings at a time; the rest are arrays
#: cells held as Python strings at a time (about 60 bytes each): a chunk of 32,768 rows of a wide file held
#: 600 MB for 300 columns, and ten times that for 3,000
_CELLS_PER_CHUNK = 1 << 20
_LONG_LINE = 1 << 16   # characters: a line this long is counted before it is split


class _Lines:
    """The file's physical lines for the csv module, each at most MAX_LINE_BYTES characters (a longer one is
    refused, not held and split into cells), none with a NUL byte (binary data or UTF-16, refused as the
    ARFF reader refuses it). The lines before a NUL byte's line are read first (one of them may hold an
    earlier error); ``pending`` is then its error. Once ``width`` (the header's cells) is known, a long line
    without quotes is checked to hold as many cells before the csv module splits it (a file that lost its line
    ends: one line of millions of cells)."""

    def __init__(self, text: io.TextIOWrapper, display: str, delimiter: str):
        self.text = text
        self.display = display
        self.delimiter = delimiter
        self.number = 0
        self.width: int | None = None
        self.pending: DatasetError | None = None
        self.last = ""   # the latest line handed out (the csv module does not say whether a cell was quoted)

    def __iter__(self) -> Iterator[str]:
        readline = self.text.readline
        while True:
            line = readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            self.number += 1
            if len(line) > MAX_LINE_BYTES:
                raise DatasetError(f"{self.display}:{self.number}: the line is longer than {MAX_LINE_BYTES >> 20} "
                                   f"MiB; no CSV row needs that much (is the file damaged, a line end missing?)")
            if "\0" in line:
                self.pending = DatasetError(f"{self.display}:{self.number}: binary data (a NUL byte); not a CSV "
                                            f"text file (UTF-16? re-encode it as UTF-8)")
                return
            if self.width is not None and len(line) > _LONG_LINE and '"' not in line \
                    and line.count(self.delimiter) + 1 != self.width:
                raise DatasetError(f"{self.display}:{self.number}: the row has {line.count(self.delimiter) + 1} "
                                   f"cells, the header {self.width}")
            self.last = line
            yield line


def _chunks(path: str | os.PathLike[str], display: str, codec_name: str, encoding: str,
            delimiter: str) -> Iterator[tuple[list[list[str]], list[int]]]:
    """The file's rows in chunks (rows, the line each starts on): a blank line is skipped; a row of empty
    cells (",,", or '""' in a file of one column) is a row of missing values, as in WEKA's CSVLoader."""
    rows: list[list[str]] = []
    lines: list[int] = []
    cells = 0
    if csv.field_size_limit() < MAX_LINE_BYTES:
        # a cell may be as long as an ARFF line may be (the csv module's default refused 128 KiB)
        csv.field_size_limit(MAX_LINE_BYTES)
    with open_binary(path) as raw:
        text = io.TextIOWrapper(raw, encoding=codec_name, newline="")  # type: ignore[arg-type]
        source = _Lines(text, display, delimiter)
        reader = csv.reader(source, delimiter=delimiter, quotechar='"', strict=True)
        start = 1
        try:
            for r in reader:
                # a line of blanks is skipped; so is a line '""' in a file of several columns (as before), but
                # in a file of one column it is a row, the missing value
                if r and not (len(r) == 1 and not r[0].strip(_WS) and ('"' not in source.last or source.width != 1)):
                    if source.width is None:
                        source.width = len(r)
                    rows.append(r)
                    lines.append(start)
                    cells += len(r)
                    if len(rows) == _ROWS_PER_CHUNK or cells >= _CELLS_PER_CHUNK:
                        yield rows, lines
                        rows, lines, cells = [], [], 0
                start = reader.line_num + 1
        except csv.Error as exc:
            if source.pending is not None:   # a quoted cell cut short by the NUL byte's line
                raise source.pending from None
            raise DatasetError(f"{display}:{start}: not a valid CSV file from this line on ({exc})") from None
        except UnicodeDecodeError as exc:
            found = undecodable_line(path, codec_name)  # the line: the file read again, in blocks
            line, byte = found if found is not None else (None, exc.object[exc.start:exc.start + 1].hex())
            raise DatasetError(f"{display}{'' if line is None else f':{line}'}: byte 0x{byte} is not valid "
                               f"{encoding}; pass the file's encoding") from None
    if rows:
        yield rows, lines
    if source.pending is not None:
        raise source.pending


def read_csv(path: str | os.PathLike[str], *, class_attribute: str | int | None = -1,
             sparse: bool | str = "auto", encoding: str = "utf-8", delimiter: str = ",",
             nominal: Sequence[str | int] = (), string: Sequence[str | int] = (),
             numeric: Sequence[str | int] = (), date: Sequence[str | int] = (),
             date_format: str | None = None, relation: str | None = None) -> Dataset:
    """Load a CSV file (``.gz`` too) into a dataset; see the module docstring.

    A chunk of rows at a time is held as Python strings (holding every row cost 12 times the file's size:
    1.3 GB for 109 MB). The first pass reads the numbers of every column that has held only numbers so
    far; a second pass, only when some column is not numeric, reads those columns' values."""
    display = str(path)
    codec_name = text_encoding(encoding)   # a BOM is not part of the first value
    names: list[str] = []
    forced: dict[str, set[int]] = {}
    candidate = np.zeros(0, dtype=bool)   # per column: all its values so far are numbers (or missing)
    blocks: list[np.ndarray] = []   # per chunk: its rows' numbers (NaN where missing or not a number column)
    n = 0
    for rows, lines in _chunks(path, display, codec_name, encoding, delimiter):
        if not names:
            names = [c.strip(_WS) for c in rows[0]]
            if len(set(names)) != len(names) or "" in names:
                bad = next(nm for nm in names if names.count(nm) > 1 or nm == "")
                raise DatasetError(f"{display}: the header row names '{bad}' twice or not at all; names must be "
                                   f"unique")
            forced = {"nominal": _columns(nominal, names, display, "nominal"),
                      "string": _columns(string, names, display, "string"),
                      "numeric": _columns(numeric, names, display, "numeric"),
                      "date": _columns(date, names, display, "date")}
            other = forced["nominal"] | forced["string"] | forced["date"]
            candidate = np.array([j not in other for j in range(len(names))], dtype=bool)
            rows, lines = rows[1:], lines[1:]
        width = len(names)
        for r, line in zip(rows, lines):
            if len(r) != width:
                raise DatasetError(f"{display}:{line}: the row has {len(r)} cells, the header {width}")
        m = len(rows)
        block = np.full((m, width), np.nan)
        columns = np.flatnonzero(candidate)
        if m and len(columns):
            # every candidate column of the chunk parsed in one call (a call per column and chunk took a
            # wide file's reading to 123 s for 400 rows of 100,000 columns): column-major, then reshaped
            cells = [r[j].strip(_WS) for j in columns.tolist() for r in rows]
            missing = np.fromiter((c in _MISSING for c in cells), dtype=bool, count=len(cells)).reshape(-1, m)
            values, ok = parse_numbers(cells)
            values, ok = values.reshape(-1, m), ok.reshape(-1, m)
            good = (ok | missing).all(axis=1)
            for k in np.flatnonzero(~good).tolist():
                j = int(columns[k])
                if j in forced["numeric"]:
                    bad = int(np.flatnonzero(~(ok[k] | missing[k]))[0])
                    raise DatasetError(f"{display}:{lines[bad]}: column '{names[j]}': '{cells[k * m + bad][:80]}' "
                                       f"is not a number")
            candidate[columns[~good]] = False   # a value that is no number: the column is nominal
            block[:, columns[good]] = np.where(missing[good], np.nan, values[good]).T
        blocks.append(block)
        n += m
    if not names:
        raise DatasetError(f"{display}: the file is empty; a CSV file needs a header row of attribute names")
    kinds = [next((k for k, cols in forced.items() if j in cols), None) or
             ("numeric" if candidate[j] else "nominal") for j in range(len(names))]
    try:
        codec = DateCodec(date_format) if date_format else DateCodec()
    except ValueError as exc:   # an unsupported pattern was a 146-line traceback
        raise DatasetError(f"{display}: --date-format: {exc}") from None
    full = np.concatenate(blocks) if blocks else np.full((0, len(names)), np.nan)
    del blocks
    full[:, ~candidate] = np.nan   # numbers an other-kind column held in early chunks: its values come below
    index: list[dict[str, int]] = [{} for _ in names]
    others = [j for j, kind in enumerate(kinds) if kind != "numeric"]
    at, first = 0, True
    for rows, lines in (_chunks(path, display, codec_name, encoding, delimiter) if others else ()):
        if first:
            rows, lines, first = rows[1:], lines[1:], False
        m = len(rows)
        for j in others:
            name, kind = names[j], kinds[j]
            cells = [r[j].strip(_WS) for r in rows]
            missing = np.fromiter((c in _MISSING for c in cells), dtype=bool, count=m)
            col = full[at:at + m, j]
            if kind == "date":
                for i, c in enumerate(cells):
                    if not missing[i]:
                        try:
                            col[i] = codec.parse(c)
                        except ValueError:
                            raise DatasetError(f"{display}:{lines[i]}: column '{name}': '{c[:80]}' does not match "
                                               f"the date format '{codec.pattern}'") from None
            else:   # nominal: the stripped value; string: the cell as written (a text may end in a line break)
                table = index[j]
                texts = cells if kind == "nominal" else [r[j] for r in rows]
                for i, c in enumerate(texts):
                    if not missing[i]:
                        col[i] = table.setdefault(c, len(table))
        at += m
    attributes: list[Attribute] = []
    strings: dict[int, list[str]] = {}
    for j, (name, kind) in enumerate(zip(names, kinds)):
        if kind == "numeric":
            attributes.append(Attribute(name, "numeric"))
        elif kind == "date":
            attributes.append(Attribute(name, "date", date_format=codec.pattern))
        elif kind == "string":
            attributes.append(Attribute(name, "string"))
            strings[j] = list(index[j])
        else:
            attributes.append(Attribute(name, "nominal", tuple(index[j])))
    class_index = resolve_class_index(attributes, class_attribute, display)
    y = None
    X = full
    if class_index is not None:
        y_raw = full[:, class_index]
        X = np.delete(full, class_index, axis=1)
        y = np.where(np.isnan(y_raw), -1, y_raw).astype(np.int64) if attributes[class_index].kind == "nominal" \
            else y_raw
        strings = {(c if c < class_index else c - 1): t for c, t in strings.items()}
    if sparse is True:
        X = sp.csr_matrix(X)
    stem = os.path.basename(display)
    for suffix in (".csv.gz", ".csv"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    # the kinds, and the nominal values in order of first appearance, come from the rows (inferred_header)
    return Dataset(relation=relation or stem, attributes=attributes, X=X, y=y, class_index=class_index,
                   weights=np.ones(n), strings=strings, path=display, inferred_header=True)


def _cell(ds: Dataset, attr: Attribute, column: int | None, value: float, codec: Any) -> str:
    if value != value:
        return "?"
    if attr.kind == "numeric":
        return format_number(value)
    if attr.kind == "nominal":
        return attr.values[int(value)]
    if attr.kind == "string":
        return ds.string_value(column, value) or ""  # type: ignore[arg-type]
    if attr.kind == "date":
        return codec.format(value)
    raise DatasetError(f"attribute '{attr.name}' is {attr.kind}: CSV has no form for it")


def _check_representable(ds: Dataset, feature_of: dict[int, int], path: str | os.PathLike[str]) -> None:
    """Refuse a value that would read back as something else: the reader (like WEKA's CSVLoader) takes
    ``?`` and an empty cell for missing, quoted or not, and strips a nominal value's surrounding spaces.
    The header row too: the reader strips every name and refuses an empty or repeated one."""
    seen: set[str] = set()
    for attr in ds.attributes:
        name = attr.name.strip(_WS)
        why = ("the reader takes no empty name" if not name
               else "its surrounding spaces are dropped when read" if name != attr.name
               else "")
        if not why and name in seen:
            why = "the reader refuses a name given twice"
        if why:
            raise DatasetError(f"{path}: the attribute name {attr.name!r} cannot be a CSV column name ({why}); "
                               f"rename it or write ARFF")
        seen.add(name)
    for i, attr in enumerate(ds.attributes):
        if attr.kind not in ("nominal", "string"):
            continue
        if i == ds.class_index:
            codes = np.asarray(ds.y, dtype=np.float64)
        else:
            col = ds.X[:, feature_of[i]]
            codes = np.asarray(col.toarray() if sp.issparse(col) else col, dtype=np.float64).ravel()
        used = np.unique(codes[~np.isnan(codes) & (codes >= 0)]).astype(np.int64)
        if attr.kind == "nominal":
            values = [attr.values[k] for k in used if k < len(attr.values)]
        else:
            table = ds.strings.get(feature_of.get(i, -1), [])
            values = [table[k] if k < len(table) else "" for k in used]
        for value in values:
            # the reader decides "missing" on the stripped cell for every kind, strings too (" ?", "   ", "\n")
            why = ("it reads back as a missing value" if value.strip(_WS) in _MISSING
                   else "its surrounding spaces are dropped when read" if attr.kind == "nominal" and value != value.strip(_WS)
                   else "")
            if why:
                raise DatasetError(f"{path}: attribute '{attr.name}' has the value {value!r}, which CSV cannot keep "
                                   f"({why}); write ARFF, which quotes it")


class _RowWriter:
    """csv.writer with "\n" line ends that also quotes a cell holding a lone carriage return: the csv module
    quotes only the characters of its line terminator, so "a\rb" went out bare and read back as two rows.
    Such a row (rare) goes through a writer ending lines in "\r\n", which quotes it, and ends in "\n"."""

    def __init__(self, fh: Any) -> None:
        self.fh = fh
        self.plain = csv.writer(fh, lineterminator="\n")
        self.buffer = io.StringIO()
        self.careful = csv.writer(self.buffer, lineterminator="\r\n")

    def writerow(self, row: Sequence[str]) -> None:
        if not any("\r" in cell for cell in row):
            self.plain.writerow(row)
            return
        self.buffer.seek(0)
        self.buffer.truncate()
        self.careful.writerow(row)
        self.fh.write(self.buffer.getvalue()[:-2] + "\n")


def write_csv(ds: Dataset, path: str | os.PathLike[str]) -> None:
    """Write ``ds`` as CSV with a header row (gzip when the name ends in ``.gz``, in any case); ``?`` marks missing."""
    warn_dropped_weights(ds, path, "CSV")
    n = ds.n_instances
    position = [i for i in range(len(ds.attributes))]
    feature_of = {}
    col = 0
    for i in position:
        if i != ds.class_index:
            feature_of[i] = col
            col += 1
    # a date attribute built without a format: WEKA's default (DateCodec's), as the readers give it
    codecs = {i: DateCodec(a.date_format) if a.date_format else DateCodec() for i, a in enumerate(ds.attributes)
              if a.kind == "date"}
    for i, a in enumerate(ds.attributes):
        if a.kind == "relational":
            raise DatasetError(f"attribute '{a.name}' is relational: CSV has no form for bags; write ARFF")
    _check_representable(ds, feature_of, path)
    # AttributeList.kind_codes: 0 numeric; the other kinds are formatted through their attribute
    special = {i: ds.attributes[i] for i in np.flatnonzero(ds.attributes.kind_codes != 0).tolist()}
    y = None if ds.y is None else np.asarray(ds.y, dtype=np.float64)
    if y is not None and ds.class_attribute is not None and ds.class_attribute.is_nominal:
        y = np.where(y < 0, np.nan, y)
    # rows per block: at most _CELLS_PER_CHUNK cells (a block of 4,096 rows of 100,000 columns was 3.3 GB dense)
    block = max(1, min(4096, _CELLS_PER_CHUNK // max(1, len(ds.attributes))))
    with open_text_output(path, newline="") as fh:
        out = _RowWriter(fh)
        out.writerow(ds.attributes.names())
        # numeric feature columns a block at a time; the other kinds (and the class) through their attribute
        plain = [i for i in range(len(ds.attributes)) if i not in special and i != ds.class_index]
        plain_cols = np.array([feature_of[i] for i in plain], dtype=np.int64)
        others = [i for i in range(len(ds.attributes)) if i in special or i == ds.class_index]
        for start in range(0, n, block):
            X = ds.X[start:start + block]
            X = X.toarray() if sp.issparse(X) else np.asarray(X)
            text = np.empty((X.shape[0], len(ds.attributes)), dtype=object)
            if plain:
                text[:, plain] = format_numbers(X[:, plain_cols])
            for i in others:
                values = y[start:start + block] if i == ds.class_index else X[:, feature_of[i]]
                attr = special.get(i)
                if attr is None:   # a numeric class
                    text[:, i] = format_numbers(values)
                else:
                    column = None if i == ds.class_index else feature_of[i]
                    text[:, i] = [_cell(ds, attr, column, v, codecs.get(i)) for v in values.tolist()]
            for row in text.tolist():
                out.writerow(row)
