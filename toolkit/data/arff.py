"""Read and write ARFF files (plain or ``.arff.gz``, dense or sparse).

``read`` runs the toolkit's header pre-scan (:mod:`toolkit.data.arff_header`) and then one of two
data engines: ``"fast"`` (default; our vectorised chunked reader, :mod:`toolkit.data.arff_data`)
or ``"liac-arff"``, which hands the pre-scanned, normalised file to liac-arff 2.5.0. The liac-arff
engine is the reference the tests compare against; it cannot read instance weights and is slower.

``write`` produces files that WEKA 3.6 reads back (quoting and escapes as WEKA's ``Utils.quote``).
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Literal

import numpy as np
import scipy.sparse as sp

from toolkit.data.arff_data import Chunk, FastBuilder, StrictBuilder, StrictRows
from toolkit.data.arff_dates import DEFAULT_DATE_FORMAT, DateCodec
from toolkit.data.arff_header import Header, read_header
from toolkit.data.arff_source import (BLOCK, ByteSource, LineTooLong, count_line_ends, line_ends,
                                      open_binary, open_text_output, too_long)
from toolkit.data.arff_syntax import WHITESPACE, clip, parse_number, quote
from toolkit.data.attributes import KIND_CODES, AttributeList
from toolkit.data.dataset import Attribute, Dataset
from toolkit.errors import ArffFormatError, DatasetError

__all__ = ["read", "read_text", "iter_chunks", "read_range", "split_ranges", "write", "to_text",
           "resolve_class_index", "format_number", "format_numbers"]

ClassChoice = str | int | None


def resolve_class_index(attributes: AttributeList, class_attribute: ClassChoice, where: str) -> int | None:
    """Position of the class attribute: a name (a str, also "1": a CSV header may be a number), a 0-based
    index (an int; negative counts from the end), or None."""
    attributes = attributes if isinstance(attributes, AttributeList) else AttributeList(attributes)
    n = len(attributes)
    if class_attribute is None:
        return None
    if isinstance(class_attribute, bool) or not isinstance(class_attribute, (str, int, np.integer)):
        # 1.5 and True were taken as index 1
        raise DatasetError(f"{where}: the class attribute is a name (str) or a 0-based index (int), "
                           f"not {class_attribute!r}")
    if isinstance(class_attribute, str):
        try:
            index = attributes.index_of(class_attribute)
        except KeyError:
            names = ", ".join(attributes.name(i) for i in range(min(n, 10))) + (", ..." if n > 10 else "")
            # "1" was read as the 0-based index 1, where the command line's --class 1 is WEKA's first attribute
            hint = (f" (a position is an int here, 0-based: {int(class_attribute) - 1} for WEKA's -c "
                    f"{class_attribute})" if class_attribute.isdigit() and int(class_attribute) >= 1 else "")
            raise DatasetError(f"{where}: no attribute named '{class_attribute}' for the class{hint}; "
                               f"the attributes are {names}") from None
        kind = attributes[index].kind
        if kind in ("string", "date", "relational"):   # as by position: only the default may fall back
            raise DatasetError(f"{where}: attribute '{class_attribute}' is {kind} and cannot be the class")
        return index
    index = int(class_attribute)
    if index < 0:
        index += n
    if not 0 <= index < n:
        position = f" (position {index + 1} counting from 1)" if index >= 0 else ""
        raise DatasetError(f"{where}: class index {class_attribute}{position} is out of range "
                           f"(the file has {n} attributes)")
    kind = attributes[index].kind
    if kind in ("string", "date", "relational") and class_attribute != -1:
        raise DatasetError(f"{where}: attribute '{attributes.name(index)}' is {kind} and cannot be the class")
    if kind in ("string", "date", "relational"):
        return None  # the default (last) is not usable as a class: no class, as WEKA without -c
    return index


def _dataset(header: Header, class_index: int | None, chunk: Chunk, path: str | None, sha256: str | None,
             sparse: bool | Literal["auto"]) -> Dataset:
    X = chunk.X
    y = None
    if class_index is not None:
        attr = header.attributes[class_index]
        y_raw = chunk.y
        if attr.kind == "nominal":
            y = np.where(np.isnan(y_raw), -1, y_raw).astype(np.int64)
        else:
            y = np.asarray(y_raw, dtype=np.float64)
    if sparse is True and not sp.issparse(X):
        X = sp.csr_matrix(X)
    elif sparse is False and sp.issparse(X):
        X = np.asarray(X.toarray(), dtype=np.float64)
    return Dataset(relation=header.relation, attributes=header.attributes, X=X, y=y,
                   class_index=class_index, weights=chunk.weights, strings=chunk.strings, bags=chunk.bags,
                   path=path, sha256=sha256)


def _file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_ENGINES = ("fast", "strict", "liac-arff")


def _start(src: ByteSource, class_attribute: ClassChoice) -> tuple[Header, int | None, StrictRows]:
    header = read_header(src)
    class_index = resolve_class_index(header.attributes, class_attribute, src.display)
    return header, class_index, StrictRows(src.display, header.attributes, class_index, header.date_codecs)


def _fast_chunks(src: ByteSource, builder: FastBuilder, first_line: int, rows: int = 0,
                 first: _FirstValues | None = None) -> Iterator[Chunk]:
    """Chunks of ``rows`` rows (all rows in one chunk when 0) read by the fast engine; with ``first``,
    each chunk's tables start with the file's first values (see :class:`_FirstValues`)."""
    line_no = first_line
    blocks = src.data_blocks()
    while True:
        try:
            data, end, final = next(blocks)
        except StopIteration:
            break
        except LineTooLong:     # the line after the last one read
            raise too_long(src.display, line_no) from None
        undecodable = None
        if not src.utf8 or not data.isascii():
            data, end, undecodable = src.to_utf8(data, line_no, end)
        for line_no, _pos, n in builder.feed(data, end, line_no, rows, final):
            if n >= 0:
                chunk = builder.take()
                if first is not None:
                    first.settle(chunk)
                builder.reset_tables(first.known if first is not None else None)
                yield chunk
        if undecodable is not None:  # after the lines before it, which may hold an earlier error
            raise undecodable
    chunk = builder.take()
    if first is not None:
        first.settle(chunk)
    yield chunk


def _strict_chunk(src: ByteSource, rows: StrictRows) -> Chunk:
    builder = StrictBuilder(rows)
    lines = src.lines()
    for line_no, text in lines:
        try:
            builder.add_line(line_no, text)
        except ArffFormatError as exc:
            try:
                last = next(lines, None) is None
            except ArffFormatError:  # the next line does not decode: this line's error comes first
                last = False
            if last and not src.ended_with_newline:
                hint = (exc.hint + "; " if exc.hint else "") + "the last line has no line end: the file may be truncated"
                raise ArffFormatError(exc.path, exc.line, exc.problem, exc.text, hint) from None
            raise exc from None
    return builder.finish()


def _read_source(src: ByteSource, class_attribute: ClassChoice, sparse: bool | Literal["auto"],
                 engine: str) -> Dataset:
    if engine not in _ENGINES:
        raise DatasetError(f"unknown ARFF engine '{engine}'; expected one of {', '.join(_ENGINES)}")
    try:
        header, class_index, rows = _start(src, class_attribute)
        if engine == "liac-arff":
            ds = _read_with_liac(src, header, class_index, sparse)
            return replace(ds, sha256=src.hexdigest())
        if engine == "strict":
            chunk = _strict_chunk(src, rows)
        else:
            chunk = next(_fast_chunks(src, FastBuilder(rows), header.data_line + 1))
        return _dataset(header, class_index, chunk, src.path, src.hexdigest(), sparse)
    finally:
        src.close()


def read(path: str | os.PathLike[str], *, class_attribute: ClassChoice = -1,
         sparse: bool | Literal["auto"] = "auto", encoding: str = "utf-8", engine: str = "fast") -> Dataset:
    """Load an ARFF file (``.arff`` or ``.arff.gz``).

    :param class_attribute: name or index of the class attribute; -1 (default) is the last
        attribute, as in WEKA; None loads without a class.
    :param sparse: "auto" keeps the file's form, True forces CSR, False forces a dense array.
    :param engine: "fast" (default, the C scanner), "strict" (the tokenizer alone: the reference) or
        "liac-arff" (liac-arff 2.5.0 on the pre-scanned header; no weights, dates or bags).
    """
    path = str(path)
    if os.path.isdir(path):
        raise DatasetError(f"{path}: is a directory, not an ARFF file")
    if not os.path.exists(path):
        raise DatasetError(f"{path}: no such file")
    try:
        return _read_source(ByteSource(path, encoding=encoding), class_attribute, sparse, engine)
    except ArffFormatError as exc:
        if path.lower().endswith(".gz") and not _starts_as_gzip(path):
            # a .gz name on plain bytes is read as plain text (by content); when that text is not ARFF
            # either, the name may be the mistake: say so
            note = "the file is named .gz but is not gzip-compressed"
            raise ArffFormatError(exc.path, exc.line, exc.problem, exc.text,
                                  hint=f"{exc.hint}; {note}" if exc.hint else note) from None
        raise


def _starts_as_gzip(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return True


def read_text(text: str, *, class_attribute: ClassChoice = -1, sparse: bool | Literal["auto"] = "auto",
              name: str = "<string>", engine: str = "fast") -> Dataset:
    """Parse ARFF from a string."""
    return _read_source(ByteSource(text=text, display_name=name), class_attribute, sparse, engine)


def iter_chunks(path: str | os.PathLike[str], *, rows: int = 100_000, class_attribute: ClassChoice = -1,
                sparse: bool | Literal["auto"] = "auto", encoding: str = "utf-8") -> Iterator[Dataset]:
    """The file's instances as datasets of ``rows`` instances each (the last may have fewer).

    All chunks share one schema (the same ``attributes`` object) and form (dense or sparse, as the
    first row decides); string tables and bags are per chunk, so memory is bounded by a chunk.
    Each table starts with the attribute's first value in the file, so that every code means what
    it means in the whole file (see :class:`_FirstValues`). Errors name the file's own line numbers.
    """
    if rows < 1:
        raise DatasetError(f"rows must be at least 1, not {rows}")
    path = str(path)
    src = ByteSource(path, encoding=encoding)
    try:
        header, class_index, strict = _start(src, class_attribute)
        builder = FastBuilder(strict)
        first = _FirstValues.of(path, src, header, class_index)
        pending: Chunk | None = None
        given = 0
        for chunk in _fast_chunks(src, builder, header.data_line + 1, rows, first):
            if pending is not None:
                given += 1
                yield _dataset(header, class_index, pending, src.path, None, sparse)
            pending = chunk
        if pending is not None and (pending.n_rows or not given):
            yield _dataset(header, class_index, pending, src.path, None, sparse)
    finally:
        src.close()


def _line_start_at_or_after(fh, pos: int) -> int:  # type: ignore[no-untyped-def]
    """The first line start at or after ``pos`` (``fh`` is positioned at ``pos - 1``). A line starts
    after ``\n``, or after a ``\r`` not followed by ``\n``."""
    prev = fh.read(1)
    if prev == b"\n":
        return pos
    if prev == b"\r":
        return pos + 1 if fh.read(1) == b"\n" else pos
    at = pos
    while True:
        block = fh.read(BLOCK)
        if not block:
            return at
        nl, cr = block.find(b"\n"), block.find(b"\r")
        ends = [i for i in (nl, cr) if i >= 0]
        if ends:
            i = min(ends)
            j = i + 1
            if block[i] == 13:
                if j == len(block):
                    block += fh.read(1)
                if j < len(block) and block[j] == 10:
                    j += 1
            return at + j
        at += len(block)


def _count_line_ends(fh, start: int, stop: int) -> int:  # type: ignore[no-untyped-def]
    """Line ends in bytes [start, stop) of ``fh`` (positioned at ``start``)."""
    return count_line_ends(fh, stop - start)


def read_range(path: str | os.PathLike[str], start: int, stop: int, *, class_attribute: ClassChoice = -1,
               sparse: bool | Literal["auto"] = "auto", encoding: str = "utf-8") -> Dataset:
    """The data rows whose lines start at a byte offset in ``[start, stop)`` of the file.

    Ranges that tile the file (e.g. :func:`split_ranges`) give every row exactly once: concatenated
    in order they equal the whole file. Errors carry the file's own line numbers. Offsets count the
    bytes of the file (of the decompressed text for ``.gz``, which is then read from its start).
    String tables and bags are the range's own, each starting with the attribute's first value in
    the file, so that every code means what it means in the whole file (see :class:`_FirstValues`).
    """
    path = str(path)
    src = ByteSource(path, encoding=encoding)
    try:
        header = _range_header(path, src)
        class_index = resolve_class_index(header.attributes, class_attribute, src.display)
        strict = StrictRows(src.display, header.attributes, class_index, header.date_codecs)
    finally:
        src.close()
    begin = max(int(start), header.data_offset)
    builder = FastBuilder(strict)
    first = _FirstValues.of(path, src, header, class_index)
    with open_binary(path) as fh:
        if begin > header.data_offset:
            fh.seek(begin - 1)
            begin = _line_start_at_or_after(fh, begin)
        if first is not None:
            first.scan(stop=begin)  # the first values given before the range
            builder.seed(first.known)
        # Line numbers (for errors) count from the data section's start. Counting the lines before the
        # range costs a read of everything before it, so that every range of a file would read half the
        # file on average (quadratic in the file's size); without string attributes (whose first values
        # are searched from the start anyway) they are counted only when a line of the range is wrong.
        base = 0
        if first is not None:
            fh.seek(header.data_offset)
            base = _count_line_ends(fh, header.data_offset, begin)
        line_no = header.data_line + 1 + base
        fh.seek(begin)
        lines = _Lines(fh, begin, stop)
        try:
            for buf, end, final in lines:
                line_no = _feed(builder, src, buf, end, line_no, final)
        except ArffFormatError as exc:
            if first is not None or exc.line is None or begin == header.data_offset:
                raise
            fh.seek(header.data_offset)
            before = _count_line_ends(fh, header.data_offset, begin)
            raise ArffFormatError(exc.path, exc.line + before, exc.problem, exc.text, exc.hint) from None
    chunk = builder.take()
    if first is not None:
        first.settle(chunk, lines=(begin, lines.end, line_no))
    return _dataset(header, class_index, chunk, path, None, sparse)


#: headers of the files read by range lately, by (path, size, mtime, encoding): a worker reading many
#: ranges of one file parses its header once (with 200,000 attributes it was 0.6 s of a 1.5 s range)
_RANGE_HEADERS: OrderedDict[tuple[str, int, int, str], Header] = OrderedDict()
_RANGE_HEADERS_KEPT = 2
_RANGE_HEADERS_LOCK = threading.Lock()


def _range_header(path: str, src: ByteSource) -> Header:
    """The file's parsed header, from the cache when the file has not changed since (size and mtime)."""
    try:
        st = os.stat(path)
        key: tuple[str, int, int, str] | None = (os.path.realpath(path), st.st_size, st.st_mtime_ns, src.encoding)
    except OSError:
        key = None
    if key is not None:
        with _RANGE_HEADERS_LOCK:
            header = _RANGE_HEADERS.get(key)
            if header is not None:
                _RANGE_HEADERS.move_to_end(key)
                return header
    header = read_header(src)
    if key is not None:
        with _RANGE_HEADERS_LOCK:
            _RANGE_HEADERS[key] = header
            while len(_RANGE_HEADERS) > _RANGE_HEADERS_KEPT:
                _RANGE_HEADERS.popitem(last=False)
    return header


class _Lines:
    """Blocks of whole lines of ``fh`` (positioned at ``begin``, a line start): the lines that start
    before ``stop`` (None: all to the end). Iterating gives ``(buf, end, final)``, the lines being
    ``buf[:end]`` (use them before the next block); afterwards ``end`` is the offset after the last
    line given and ``eof`` whether the file ended. Blocks are read ``block`` bytes first, doubling
    up to ``BLOCK`` (a reader that may stop after a row reads little)."""

    def __init__(self, fh, begin: int, stop: int | None, block: int = BLOCK):  # type: ignore[no-untyped-def]
        self.fh, self.begin, self.stop, self.block = fh, begin, stop, block
        self.end, self.eof = begin, False

    def __iter__(self) -> Iterator[tuple[bytearray, int, bool]]:
        fh, stop, size = self.fh, self.stop, self.block
        pos, buf = self.begin, bytearray()
        while stop is None or stop > self.begin:
            block = fh.read(size)
            size = min(2 * size, BLOCK)
            final = not block
            buf += block
            del block
            end, done = 0, final
            if stop is not None and pos + len(buf) >= stop:  # the range ends at the first line start at or after stop
                rel = max(stop - 1 - pos, 0)
                nl, cr = buf.find(b"\n", rel), buf.find(b"\r", rel)
                i = min(j for j in (nl, cr, len(buf)) if j >= 0)
                if i < len(buf) and not (buf[i] == 13 and i + 1 == len(buf) and not final):
                    end, done = i + (2 if buf[i] == 13 and i + 1 < len(buf) and buf[i + 1] == 10 else 1), True
            if final and not end:
                end = len(buf)
            if not done:
                end = max(buf.rfind(b"\n"), buf.rfind(b"\r", 0, len(buf) - 1)) + 1
            if end:
                yield buf, end, final
                pos += end
                self.end = pos
                del buf[:end]
            if done:
                self.eof = final
                return


def _decoded(src: ByteSource, buf: bytearray, end: int,
             line_no: int) -> tuple[bytes | bytearray, int, ArffFormatError | None]:
    """``buf[:end]`` (file bytes) as UTF-8 for the scanner, as ``src`` decodes (see ``ByteSource.to_utf8``).
    A NUL byte is refused as ``ByteSource`` refuses it: ``end`` stops before its line, whose error is
    returned (after an undecodable byte before it)."""
    nul = buf.find(0, 0, end)
    error = None
    if nul >= 0:
        error = ArffFormatError(src.display, line_no + line_ends(buf, 0, nul), "binary data (a NUL byte)",
                                hint="this is not an ARFF text file")
        end = max(buf.rfind(b"\n", 0, nul), buf.rfind(b"\r", 0, nul)) + 1
    data, end, undecodable = (buf, end, None) if src.utf8 and buf.isascii() else src.to_utf8(buf, line_no, end)
    return data, end, undecodable or error


def _feed(builder: FastBuilder, src: ByteSource, buf: bytearray, end: int, line_no: int, final: bool) -> int:
    """Read the lines ``buf[:end]`` (file bytes, decoded as ``src`` decodes) whose first line is
    ``line_no``; the number of the line after them."""
    data, data_end, undecodable = _decoded(src, buf, end, line_no)
    for line_no, _pos, _n in builder.feed(data, data_end, line_no, 0, final):
        pass
    if undecodable is not None:  # after the lines before it, which may hold an earlier error
        raise undecodable
    return line_no


class _FirstValues:
    """Code 0 of every string and relational attribute: its first value in the file.

    A sparse row that leaves an attribute out gives it value 0; for a string or relational
    attribute that is index 0 of its table of values, which in the whole file is the first value
    the attribute received (WEKA's meaning). A chunk or a byte range has tables of its own, so each
    of them starts with the file's first value (:meth:`FastBuilder.seed`), and code 0 means in every
    chunk and range what it means in the whole file; concatenated, they equal the whole file.

    The first values are found once per read, by reading the data section from its start only as
    far as needed: a range first reads up to its own start, stopping as soon as every attribute has
    had a value; an attribute that has none before the range takes the range's own first value,
    which is then the file's. Only when a chunk or range leaves out an attribute that has had no
    value up to its end is the rest of the file read on, until that value (:meth:`settle`); one
    that never has a value means nothing, as in the whole file ("" and an empty bag). The lines
    read this way are read as ``read`` reads them: an error in them is raised, naming its line."""

    def __init__(self, path: str, src: ByteSource, header: Header, class_index: int | None):
        self.path, self.src, self.header, self.class_index = path, src, header, class_index
        kinds = header.attributes.kind_codes
        self.attrs = [int(a) for a in np.flatnonzero((kinds == KIND_CODES["string"]) |
                                                     (kinds == KIND_CODES["relational"]))]
        self.known: dict[int, object] = {}
        self.offset, self.line_no = header.data_offset, header.data_line + 1  # where the scan goes on
        self.ended = False
        self._builder: FastBuilder | None = None

    @classmethod
    def of(cls, path: str, src: ByteSource, header: Header, class_index: int | None) -> _FirstValues | None:
        """The finder for a file, or None when it has no string or relational attribute."""
        found = cls(path, src, header, class_index)
        return found if found.attrs else None

    def _column(self, a: int) -> int:
        return a if self.class_index is None or a < self.class_index else a - 1

    def scan(self, need: Iterable[int] | None = None, stop: int | None = None) -> None:
        """Read on from where the last scan stopped until every attribute of ``need`` (default: all)
        has its first value, the next line starts at or after ``stop``, or the file ends."""
        wanted = {a for a in (self.attrs if need is None else need) if a not in self.known}
        if not wanted or self.ended or (stop is not None and self.offset >= stop):
            return
        if self._builder is None:
            self._builder = FastBuilder(StrictRows(self.src.display, self.header.attributes, self.class_index,
                                                   self.header.date_codecs))
        builder = self._builder
        with open_binary(self.path) as fh:
            fh.seek(self.offset)
            lines = _Lines(fh, self.offset, stop, block=1 << 14)
            for buf, end, final in lines:
                data, data_end, undecodable = _decoded(self.src, buf, end, self.line_no)
                pos, line_no, step = 0, self.line_no, 1
                while True:  # 1, 2, 4, ... rows at a time: stop at the row that gives the last value
                    for line_no, pos, n in builder.feed(data, data_end, line_no, step, final, start=pos):
                        break
                    builder.discard()
                    self._learn()
                    if wanted <= self.known.keys():
                        return  # within this block: a later scan reads it again from its start
                    if n < 0:
                        break
                    step = min(2 * step, 1 << 16)
                if undecodable is not None:
                    raise undecodable
                self.offset += end
                self.line_no = line_no
            self.ended = lines.eof

    def _learn(self) -> None:
        """Take the first values the scan's tables hold; keep one value a table (memory stays a block's)."""
        rows = self._builder.rows  # type: ignore[union-attr]
        for a in self.attrs:
            values = rows.tables[a] if a in rows.tables else rows.bags[a]
            if values and a not in self.known:
                self.known[a] = values[0]
            if len(values) > 1:
                del values[1:]
                if a in rows.table_index:
                    rows.table_index[a].clear()
                    rows.table_index[a][values[0]] = 0

    def settle(self, chunk: Chunk, lines: tuple[int, int, int] | None = None) -> None:
        """After a chunk (the next one of the file, or the range ``lines`` = (begin, end, line after)
        whose lines before were scanned): learn the first values it holds, and give the attributes
        it leaves out without a value up to its end the value a later line gives them."""
        pending = []
        for a in self.attrs:
            if a in self.known:
                continue
            col = self._column(a)
            table = chunk.strings[col] if col in chunk.strings else chunk.bags[col]
            if table:  # no value before this chunk: its first value is the file's
                self.known[a] = table[0]
            elif _uses_code_zero(chunk.X, col):
                pending.append(a)
        if not pending:
            return
        if lines is not None and self.offset == lines[0]:
            self.offset, self.line_no = lines[1], lines[2]  # no value in the range: go on after it
        self.scan(pending)
        for a in pending:
            if a in self.known:
                col = self._column(a)
                (chunk.strings if col in chunk.strings else chunk.bags)[col] = [self.known[a]]


def _uses_code_zero(X: np.ndarray | sp.csr_matrix, col: int) -> bool:
    """Whether a row has code 0 in column ``col`` (in CSR: leaves the column out)."""
    if sp.issparse(X):
        return int(np.count_nonzero(X.indices == col)) < X.shape[0]
    return bool(np.any(X[:, col] == 0))


def split_ranges(path: str | os.PathLike[str], parts: int) -> list[tuple[int, int]]:
    """``parts`` byte ranges of about equal size that tile the data section, for :func:`read_range`."""
    if parts < 1:
        raise DatasetError(f"parts must be at least 1, not {parts}")
    src = ByteSource(str(path))
    try:
        header = read_header(src)
    finally:
        src.close()
    with open_binary(path) as fh:
        size = fh.seek(0, os.SEEK_END)
    begin = header.data_offset
    cuts = [begin + (size - begin) * k // parts for k in range(parts + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


# ---------------------------------------------------------------------------- liac-arff engine

def _read_with_liac(src: ByteSource, header: Header, class_index: int | None,
                    sparse: bool | Literal["auto"]) -> Dataset:
    """Parse the data section with liac-arff, after our pre-scan normalised the header."""
    import arff  # liac-arff

    data_lines = [(no, ln.strip(WHITESPACE)) for no, ln in src.lines()]
    data_lines = [(no, ln) for no, ln in data_lines if ln and not ln.startswith("%")]
    is_sparse = bool(data_lines) and data_lines[0][1].startswith("{")
    decl = []
    for attr in header.attributes:
        name = quote(attr.name)
        if attr.kind == "nominal":
            decl.append(f"@attribute {name} {{{','.join(quote(v) for v in attr.values)}}}")
        elif attr.kind in ("string", "date"):
            decl.append(f"@attribute {name} string")
        else:
            decl.append(f"@attribute {name} numeric")
    text = "@relation r\n" + "\n".join(decl) + "\n@data\n" + "\n".join(ln for _, ln in data_lines) + "\n"
    offset = 2 + len(decl)  # liac-arff line number -> index into data_lines
    try:
        obj = arff.loads(text, encode_nominal=True, return_type=arff.COO if is_sparse else arff.DENSE)
    except arff.ArffException as exc:
        line = getattr(exc, "line", None)
        original = None
        if line is not None and 0 <= line - offset - 1 < len(data_lines):
            original = data_lines[line - offset - 1][0]
        raise ArffFormatError(src.display, original, f"liac-arff: {exc}") from None
    except (ValueError, TypeError) as exc:
        raise ArffFormatError(src.display, None, f"liac-arff failed: {exc}") from None
    n_attr = len(header.attributes)
    n_rows = len(data_lines)
    tables: dict[int, dict[str, int]] = {int(i): {} for i in np.flatnonzero(header.attributes.mask("string"))}

    def convert(r: int, j: int, value: object) -> float:
        if value is None:
            return np.nan
        kind = header.attributes[j].kind
        if kind == "string":
            return float(tables[j].setdefault(str(value), len(tables[j])))
        try:
            if kind == "date":
                return header.date_codecs[j].parse(str(value))
            if isinstance(value, float):  # liac-arff's number (NaN and Infinity too, as the other engines read them)
                return value
            return parse_number(str(value))
        except ValueError:
            expected = f"a date of the form '{header.date_codecs[j].pattern}'" if kind == "date" else "a number"
            raise ArffFormatError(src.display, data_lines[r][0] if r < len(data_lines) else None,
                                  f"attribute '{header.attributes[j].name}': '{clip(str(value))}' is not {expected}",
                                  hint="read by liac-arff") from None

    if is_sparse:
        values, rows, cols = obj["data"]
        full = sp.lil_matrix((n_rows, n_attr))
        for v, r, c in zip(values, rows, cols):
            full[r, c] = convert(r, c, v)
        full = full.tocsr()
        if class_index is not None:
            y_raw = full[:, class_index].toarray().ravel()
            keep = [j for j in range(n_attr) if j != class_index]
            X = sp.csr_matrix(full[:, keep])
        else:
            y_raw, X = None, full
        X.eliminate_zeros()
    else:
        full = np.array([[convert(r, j, v) for j, v in enumerate(row)] for r, row in enumerate(obj["data"])],
                        dtype=np.float64).reshape(n_rows, n_attr)
        if class_index is not None:
            y_raw = full[:, class_index]
            X = np.delete(full, class_index, axis=1)
        else:
            y_raw, X = None, full
    y = None
    if class_index is not None:
        if header.attributes[class_index].kind == "nominal":
            y = np.where(np.isnan(y_raw), -1, y_raw).astype(np.int64)
        else:
            y = np.asarray(y_raw, dtype=np.float64)
    strings = {}
    for j, table in tables.items():
        strings[j if class_index is None or j < class_index else j - 1] = list(table)
    if sparse is True and not sp.issparse(X):
        X = sp.csr_matrix(X)
    elif sparse is False and sp.issparse(X):
        X = X.toarray()
    return Dataset(relation=header.relation, attributes=header.attributes, X=X, y=y,
                   class_index=class_index, weights=np.ones(n_rows), strings=strings, path=src.path)


# ---------------------------------------------------------------------------- writing

def format_number(value: float) -> str:
    """A number as the writer writes it: ``?`` for NaN, Java's Infinity spellings, integers without ``.0``."""
    return _format_number(float(value))


def format_numbers(values: np.ndarray) -> np.ndarray:
    """:func:`format_number` of every value of an array (a column or a block), as an object array of its
    shape; the zeros (most of a sparse file written dense) at once."""
    text = np.full(values.shape, "0", dtype=object)
    other = values != 0   # NaN too
    if other.any():
        text[other] = [_format_number(v) for v in values[other].tolist()]
    return text


def _format_number(value: float) -> str:
    if value != value:
        return "?"
    if value == np.inf:
        return "Infinity"
    if value == -np.inf:
        return "-Infinity"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


class _ColumnFormatter:
    """Turns the codes of one attribute into ARFF tokens."""

    def __init__(self, attr: Attribute, table: list[str] | None, bags: list[Dataset] | None = None):
        self.attr = attr
        self.table = table
        self.bags = bags
        self.quoted_values = [quote(v) for v in attr.values] if attr.kind == "nominal" else None
        self.codec = DateCodec(attr.date_format or DEFAULT_DATE_FORMAT) if attr.kind == "date" else None

    def __call__(self, value: float) -> str:
        if value != value:
            return "?"
        kind = self.attr.kind
        if kind == "numeric":
            return _format_number(value)
        if kind == "nominal":
            code = int(value)
            if not 0 <= code < len(self.quoted_values):  # type: ignore[arg-type]
                raise DatasetError(f"attribute '{self.attr.name}': code {code} is not one of its "
                                   f"{len(self.attr.values)} values")
            return self.quoted_values[code]  # type: ignore[index]
        if kind == "string":
            code = int(value)
            table = self.table or []
            return quote(table[code] if code < len(table) else "")
        if kind == "relational":
            code = int(value)
            bags = self.bags or []
            if not 0 <= code < len(bags):  # the implicit 0 of a sparse row without bags: an empty bag
                return "''"
            bag = bags[code]
            rows = _sparse_rows(bag) if bag.is_sparse else _dense_rows(bag)
            return quote("\n".join(rows))
        return quote(self.codec.format(value))  # type: ignore[union-attr]

    def column(self, values: np.ndarray) -> list[str]:
        """Vectorised formatting of a whole column (numbers and nominal codes)."""
        kind = self.attr.kind
        if kind == "nominal":
            missing = np.isnan(values)
            codes = np.where(missing, 0, values).astype(np.int64)
            if len(codes) and (codes.min() < 0 or codes.max() >= len(self.attr.values)) and \
                    not (missing | ((codes >= 0) & (codes < len(self.attr.values)))).all():
                bad = codes[(codes < 0) | (codes >= len(self.attr.values))][0]
                raise DatasetError(f"attribute '{self.attr.name}': code {bad} is not one of its "
                                   f"{len(self.attr.values)} values")
            lookup = np.array(self.quoted_values + ["?"], dtype=object)
            codes[missing] = len(self.attr.values)
            return list(lookup[codes])
        if kind == "numeric":
            return [_format_number(v) for v in values.tolist()]
        return [self(v) for v in values.tolist()]


def _attribute_lines(attributes: Iterable[Attribute]) -> Iterator[str]:
    for attr in attributes:
        name = quote(attr.name)
        if attr.kind == "nominal":
            yield f"@attribute {name} {{{','.join(quote(v) for v in attr.values)}}}"
        elif attr.kind == "date":
            # a date attribute built without a format has WEKA's default, as the reader gives one
            yield f"@attribute {name} date {quote(attr.date_format or DEFAULT_DATE_FORMAT)}"
        elif attr.kind == "relational":
            yield f"@attribute {name} relational"
            yield from _attribute_lines(attr.relation)
            yield f"@end {name}"
        else:
            yield f"@attribute {name} {attr.kind}"


def _header_lines(ds: Dataset) -> list[str]:
    return [f"@relation {quote(ds.relation)}", "", *_attribute_lines(ds.attributes), "", "@data"]


class _Formatters:
    """Column formatters built on first use (a wide sparse file has mostly numeric columns)."""

    def __init__(self, ds: Dataset, feature_col: list[int | None]):
        self.ds = ds
        self.feature_col = feature_col
        self._cache: dict[int, _ColumnFormatter] = {}

    def __getitem__(self, p: int) -> _ColumnFormatter:
        fmt = self._cache.get(p)
        if fmt is None:
            col = self.feature_col[p]
            table = None if col is None else self.ds.strings.get(col)
            bags = None if col is None else self.ds.bags.get(col)
            fmt = self._cache[p] = _ColumnFormatter(self.ds.attributes[p], table, bags)
        return fmt

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self[p] for p in range(len(self.feature_col)))


def _full_columns(ds: Dataset) -> tuple[_Formatters, list[int | None]]:
    """Formatters in file order, and for each attribute its feature column (None for the class)."""
    n = len(ds.attributes)
    feature_col: list[int | None] = []
    col = 0
    for i in range(n):
        if i == ds.class_index:
            feature_col.append(None)
        else:
            feature_col.append(col)
            col += 1
    return _Formatters(ds, feature_col), feature_col


def _class_column(ds: Dataset) -> np.ndarray:
    y = np.asarray(ds.y, dtype=np.float64)
    if ds.class_attribute is not None and ds.class_attribute.is_nominal:
        y = np.where(y < 0, np.nan, y)
    return y


def _weight_suffix(w: float) -> str:
    return "" if w == 1.0 else ",{" + _format_number(w) + "}"


#: cells formatted at a time by the dense writer (about 90 bytes each as text): 4,096 rows of 100,000
#: columns held 37 GB of strings, and 400 rows 2.85 GB
_CELLS_PER_BLOCK = 1 << 20


def _dense_rows(ds: Dataset) -> Iterable[str]:
    formatters, feature_col = _full_columns(ds)
    n = ds.n_instances
    block = max(1, min(4096, _CELLS_PER_BLOCK // max(1, len(feature_col))))
    y = _class_column(ds) if ds.class_index is not None else None
    # numeric feature columns are formatted a block at a time (a Python call per column and block made a
    # wide file's many small blocks slow); the other kinds and the class through their formatters
    kinds = ds.attributes.kind_codes
    plain = [p for p, c in enumerate(feature_col) if c is not None and kinds[p] == 0]
    plain_cols = np.array([feature_col[p] for p in plain], dtype=np.int64)
    is_plain = np.zeros(len(feature_col), dtype=bool)
    is_plain[plain] = True
    others = np.flatnonzero(~is_plain).tolist()
    for start in range(0, n, block):
        stop = min(n, start + block)
        X = ds.X[start:stop]
        X = X.toarray() if sp.issparse(X) else np.asarray(X)
        text = np.empty((stop - start, len(feature_col)), dtype=object)
        if plain:
            text[:, plain] = format_numbers(X[:, plain_cols])
        for p in others:
            col = feature_col[p]
            text[:, p] = formatters[p].column(y[start:stop] if col is None else X[:, col])
        weights = ds.weights[start:stop]
        for r, row in enumerate(text.tolist()):
            yield ",".join(row) + _weight_suffix(float(weights[r]))




def _sparse_rows(ds: Dataset) -> Iterable[str]:
    formatters, feature_col = _full_columns(ds)
    X = sp.csr_matrix(ds.X if sp.issparse(ds.X) else sp.csr_matrix(ds.X), dtype=np.float64, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()  # NaN is kept: it is not zero
    X.sort_indices()
    # file position of every feature column, and every stored value formatted once, vectorised
    position = np.array([i for i, c in enumerate(feature_col) if c is not None], dtype=np.int64)
    pos_of_entry = position[X.indices]
    text = np.empty(X.nnz, dtype=object)
    kinds = ds.attributes.kind_codes[position]
    entry_kind = kinds[X.indices] if X.nnz else np.zeros(0, dtype=np.int8)
    for code, kind in enumerate(("numeric", "nominal", "string", "date", "relational")):
        sel = np.flatnonzero(entry_kind == code)
        if not len(sel):
            continue
        if kind == "numeric":
            text[sel] = [_format_number(v) for v in X.data[sel].tolist()]
        else:
            for p in np.unique(pos_of_entry[sel]):
                sub = sel[pos_of_entry[sel] == p]
                text[sub] = formatters[p].column(X.data[sub])
    pairs = np.array([f"{p} " for p in range(len(ds.attributes))], dtype=object)[pos_of_entry] + text \
        if X.nnz else np.zeros(0, dtype=object)
    # string and bag codes are always written: code 0 is the first string or bag, not "empty"
    string_positions = [int(i) for i in np.flatnonzero(ds.attributes.mask("string") | ds.attributes.mask("relational"))
                        if i != ds.class_index]
    y = _class_column(ds) if ds.class_index is not None else None
    ci = ds.class_index
    for r in range(ds.n_instances):
        lo, hi = X.indptr[r], X.indptr[r + 1]
        row_pairs = list(pairs[lo:hi])
        extra = []
        for p in string_positions:  # string codes are always written: code 0 is not "empty"
            col = feature_col[p]
            if not np.any(X.indices[lo:hi] == col):
                extra.append((p, f"{p} {formatters[p](0.0)}"))
        if y is not None and (y[r] != 0.0 or np.isnan(y[r])):
            extra.append((ci, f"{ci} {formatters[ci](y[r])}"))
        if extra:
            merged = [(int(pos_of_entry[k]), row_pairs[k - lo]) for k in range(lo, hi)] + extra
            merged.sort(key=lambda item: item[0])
            row_pairs = [t for _, t in merged]
        w = float(ds.weights[r])
        yield "{" + ",".join(row_pairs) + "}" + ("" if w == 1.0 else ",{" + _format_number(w) + "}")


def _write_lines(ds: Dataset, out: io.TextIOBase, sparse: bool | None) -> None:
    use_sparse = ds.is_sparse if sparse is None else sparse
    for line in _header_lines(ds):
        out.write(line + "\n")
    rows = _sparse_rows(ds) if use_sparse else _dense_rows(ds)
    for line in rows:
        out.write(line + "\n")


def write(ds: Dataset, path: str | os.PathLike[str], *, sparse: bool | None = None) -> None:
    """Write ``ds`` as ARFF (gzip-compressed when ``path`` ends in ``.gz``, in any case).

    :param sparse: None keeps the dataset's form; True or False forces sparse or dense rows.
    """
    with open_text_output(path) as out:
        _write_lines(ds, out, sparse)


def to_text(ds: Dataset, *, sparse: bool | None = None) -> str:
    """The ARFF text of ``ds``."""
    out = io.StringIO()
    _write_lines(ds, out, sparse)
    return out.getvalue()
