"""The ARFF data section: the strict row grammar (the reference), and the two engines that use it.

**Grammar** (WEKA 3.6's ``ArffReader`` on ``java.io.StreamTokenizer``, with the stricter points noted):

* whitespace is every code point up to the space (0x00-0x20) and nothing else: a no-break space is
  part of a value, as in WEKA; ``%`` outside quotes starts a comment; quotes ``'`` and ``"`` take
  Java escapes (:func:`toolkit.data.arff_syntax.unescape`);
* values are separated by a comma or by whitespace (tabs and spaces separate values as in WEKA).
  Unlike WEKA, an empty value (two commas, a leading or trailing comma) is an error, not skipped:
  WEKA silently shifts the following values one column left;
* a dense row has exactly one value per attribute; a sparse row is ``{index value, ...}`` with
  indices in any order, each once, written as ASCII digits (an optional ``+``) and checked against
  the number of attributes before any conversion; a row may end with an instance weight ``{w}``;
* an unquoted ``?`` is a missing value; numbers are ASCII decimal or scientific (``NaN``, which WEKA
  reads as missing, and ``Infinity`` spelled as Java spells them); no ``_``, no other digits; at most
  ``MAX_NUMBER_CHARS`` (4,096) characters, unlike WEKA (see :mod:`toolkit.data.arff_syntax`).

**Engines.** ``StrictBuilder`` reads row by row with the tokenizer and collects the rows with numpy
alone: the reference the tests compare against. ``FastBuilder`` runs the C scanner
(``toolkit/data/_arffscan.c``) over whole blocks of bytes; on any irregularity the scanner stops at
the line and hands it to :class:`StrictRows`, so errors name the same line and text on both engines.
Memory of the fast engine is the output arrays (grown in place) plus one block of input and the
longest line; it never builds a table as wide as the longest value.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from toolkit.data.arff_dates import DateCodec, ZoneNameError
from toolkit.data.arff_syntax import (MAX_NUMBER_CHARS, WHITESPACE, Token, UnterminatedQuote, clip, is_index,
                                      iter_tokens, parse_number)
from toolkit.data.attributes import KIND_CODES, AttributeList
from toolkit.errors import ArffFormatError

__all__ = ["StrictRows", "StrictBuilder", "FastBuilder", "Chunk", "EMPTY", "DENSE", "SPARSE"]

_NUMERIC, _NOMINAL, _STRING, _DATE, _RELATIONAL = 0, 1, 2, 3, 4
assert [KIND_CODES[k] for k in ("numeric", "nominal", "string", "date", "relational")] == [0, 1, 2, 3, 4]
EMPTY, DENSE, SPARSE = 0, 1, 2
_VALUE = ("word", "quoted")
#: characters of a line shown in an error message
_SHOWN = 200


class Chunk:
    """Rows read from a data section: X without the class column, the class column, weights, tables."""

    __slots__ = ("X", "y", "weights", "strings", "bags", "sparse", "n_rows")

    def __init__(self, X: Any, y: np.ndarray | None, weights: np.ndarray, strings: dict[int, list[str]],
                 bags: dict[int, list[Any]], sparse: bool):
        self.X = X
        self.y = y
        self.weights = weights
        self.strings = strings
        self.bags = bags
        self.sparse = sparse
        self.n_rows = int(X.shape[0])


# ---------------------------------------------------------------------------- the strict grammar

class StrictRows:
    """Parses one data line at a time by the grammar above; every error an :class:`ArffFormatError`.

    String tables (``tables``/``table_index``) and relational bags (``bags``) are shared with the
    fast engine, so that a line handed over continues the same tables.
    """

    def __init__(self, display: str, attributes: AttributeList, class_index: int | None,
                 date_codecs: dict[int, DateCodec], *, context: str = ""):
        self.display = display
        self.attributes = attributes
        self.n_attr = len(attributes)
        self.class_index = class_index
        self.kind = np.asarray(attributes.kind_codes, dtype=np.int8)
        self.lookup: dict[int, dict[str, float]] = {
            int(i): {v: float(code) for code, v in enumerate(attributes[int(i)].values)}
            for i in np.flatnonzero(self.kind == _NOMINAL)}
        self.tables: dict[int, list[str]] = {int(i): [] for i in np.flatnonzero(self.kind == _STRING)}
        self.table_index: dict[int, dict[str, int]] = {i: {} for i in self.tables}
        self.bags: dict[int, list[Any]] = {int(i): [] for i in np.flatnonzero(self.kind == _RELATIONAL)}
        self.codecs = dict(date_codecs)
        for i in np.flatnonzero(self.kind == _DATE):
            if int(i) not in self.codecs:
                self.codecs[int(i)] = DateCodec(attributes[int(i)].date_format)
        self.dates: dict[int, Callable[[str], float]] = {i: _memo(c.parse) for i, c in self.codecs.items()}
        self.context = context

    # ------------------------------------------------------------------ errors
    def error(self, line_no: int | None, problem: str, line: str | None, hint: str | None = None) -> ArffFormatError:
        shown = None if line is None else (line if len(line) <= _SHOWN else line[:_SHOWN] + "...")
        return ArffFormatError(self.display, line_no, self.context + problem, shown, hint)

    def _value_error(self, line_no: int, line: str, attr_index: int, text: str,
                     reason: str | None = None) -> ArffFormatError:
        attr = self.attributes[attr_index]
        shown_text = clip(text)
        if attr.kind == "nominal":
            shown = ", ".join(clip(v, 30) for v in attr.values[:8]) + (", ..." if len(attr.values) > 8 else "")
            return self.error(line_no, f"value '{shown_text}' is not declared for nominal attribute "
                                       f"'{clip(attr.name)}'", line, f"expected one of {{{shown}}} or ?")
        if attr.kind == "date":
            return self.error(line_no, f"value '{shown_text}' of date attribute '{clip(attr.name)}' does not "
                                       f"match the format '{clip(attr.date_format or '')}'", line, reason)
        return self.error(line_no, f"value '{shown_text}' of numeric attribute '{clip(attr.name)}' is not a number",
                          line, "expected a number (ASCII digits, e.g. 1.5e-3) or ? for a missing value")

    def _too_long(self, line_no: int, line: str, text: str, attr_index: int | None = None) -> ArffFormatError | None:
        """The error for a number (``text`` was read as one) longer than MAX_NUMBER_CHARS (see
        arff_syntax), or None: a value of numeric attribute ``attr_index``, or the instance weight
        when None. A long token that is not a number gets the "not a number" error instead."""
        if len(text) <= MAX_NUMBER_CHARS:
            return None
        number = text.strip(WHITESPACE)
        if len(number) <= MAX_NUMBER_CHARS:
            return None
        what = "instance weight" if attr_index is None else "value"
        where = "" if attr_index is None else f" of numeric attribute '{clip(self.attributes[attr_index].name)}'"
        return self.error(line_no, f"{what} '{clip(number)}'{where} has {len(number):,} characters, more than the "
                                   f"limit of {MAX_NUMBER_CHARS:,} for a number", line,
                          "any double is written exactly in at most 1,077 characters (WEKA writes at most 24)")

    # ------------------------------------------------------------------ single values
    def string_code(self, attr_index: int, text: str) -> float:
        index = self.table_index[attr_index]
        code = index.get(text)
        if code is None:
            code = index[text] = len(self.tables[attr_index])
            self.tables[attr_index].append(text)
        return float(code)

    def convert(self, attr_index: int, tok: Token, line_no: int, line: str) -> float:
        text = tok.text
        if tok.kind == "word" and text == "?":
            return np.nan
        kind = self.kind[attr_index]
        if kind == _NUMERIC:
            try:
                value = parse_number(text)
            except ValueError:
                raise self._value_error(line_no, line, attr_index, text) from None
            long = self._too_long(line_no, line, text, attr_index)
            if long is not None:
                raise long
            return value
        if kind == _NOMINAL:
            code = self.lookup[attr_index].get(text)
            if code is None:
                raise self._value_error(line_no, line, attr_index, text)
            return code
        if kind == _STRING:
            return self.string_code(attr_index, text)
        if kind == _DATE:
            try:
                return self.dates[attr_index](text)
            except ZoneNameError as exc:
                raise self._value_error(line_no, line, attr_index, text, str(exc)) from None
            except ValueError:
                raise self._value_error(line_no, line, attr_index, text) from None
        return self._bag(attr_index, text, line_no, line)

    def _bag(self, attr_index: int, text: str, line_no: int, line: str) -> float:
        """A relational value: the bag's instances, one per line of the (unescaped) value."""
        attr = self.attributes[attr_index]
        inner = StrictBuilder(StrictRows(self.display, attr.relation, None, {},
                                         context=f"{self.context}relational attribute '{clip(attr.name)}': "))
        try:
            for k, bag_line in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n")):
                inner.add_line(line_no, bag_line, where=f" (instance {k + 1} of the bag)")
        except ArffFormatError as exc:
            raise ArffFormatError(self.display, line_no, exc.problem,
                                  line if len(line) <= _SHOWN else line[:_SHOWN] + "...", exc.hint) from None
        from toolkit.data.dataset import Dataset

        chunk = inner.finish()
        bag = Dataset(relation=attr.name, attributes=attr.relation, X=chunk.X, y=None, class_index=None,
                      weights=chunk.weights, strings=chunk.strings, bags=chunk.bags)
        bags = self.bags[attr_index]
        bags.append(bag)
        return float(len(bags) - 1)

    # ------------------------------------------------------------------ rows
    def _tokens(self, line_no: int, line: str) -> Iterator[Token]:
        try:
            yield from iter_tokens(line)
        except UnterminatedQuote as exc:
            raise self.error(line_no, f"unterminated quote at column {exc.column + 1}", line,
                             "close the quote, or escape a quote inside a value with a backslash") from None

    def parse_row(self, line_no: int, line: str) -> tuple[int, list[Any], float]:
        """``(EMPTY|DENSE|SPARSE, values or (index, value) pairs, weight)`` for one line."""
        tokens = self._tokens(line_no, line)
        first = next(tokens, None)
        if first is None:
            return EMPTY, [], 1.0  # blank or comment-only
        if first.kind == "{":
            pairs, weight = self._sparse(tokens, line_no, line)
            return SPARSE, pairs, weight
        values: list[float] = []
        n = self.n_attr
        tok = first
        while True:
            if tok.kind not in _VALUE:
                if tok.kind == "{" and len(values) == n:
                    return DENSE, values, self._weight(tokens, line_no, line)
                raise self.error(line_no, f"expected a value, found '{clip(tok.text)}'", line,
                                 "empty values are not allowed; write ? for a missing value")
            if len(values) == n:
                raise self.error(line_no, f"expected {n} values, found more", line,
                                 "there is an extra value or a comma inside an unquoted value")
            values.append(self.convert(len(values), tok, line_no, line))
            nxt = next(tokens, None)
            if nxt is None:
                break
            if nxt.kind == ",":
                after = next(tokens, None)
                if after is None:
                    raise self.error(line_no, "the row ends after a comma", line, "a value is missing")
                tok = after
                continue
            if nxt.kind == "{" and len(values) == n:
                return DENSE, values, self._weight(tokens, line_no, line)
            if nxt.kind in _VALUE and nxt.column > tok.end:
                tok = nxt  # whitespace separates values, as in WEKA
                continue
            raise self.error(line_no, f"expected ',' after value '{clip(tok.text)}', found '{clip(nxt.text)}'",
                             line, "quote values that contain spaces")
        if len(values) != n:
            raise self.error(line_no, f"expected {n} values, found {len(values)}", line,
                             "a value or a comma is missing")
        return DENSE, values, 1.0

    def _index(self, tok: Token, line_no: int, line: str) -> int:
        if tok.kind != "word":
            raise self.error(line_no, f"expected an attribute index, found '{clip(tok.text)}'", line,
                             "sparse rows look like {index value, index value}")
        text = tok.text
        if not is_index(text):
            raise self.error(line_no, f"sparse index '{clip(text)}' is not an integer", line,
                             "sparse rows look like {index value, index value}; indices are ASCII digits")
        digits = text.lstrip("+").lstrip("0") or "0"
        if len(digits) > len(str(self.n_attr)) or int(digits) >= self.n_attr:
            raise self.error(line_no, f"sparse index {clip(digits)} is out of range", line,
                             f"the header declares {self.n_attr} attributes (indices 0..{self.n_attr - 1})")
        return int(digits)

    def _sparse(self, tokens: Iterator[Token], line_no: int, line: str) -> tuple[list[tuple[int, float]], float]:
        pairs: list[tuple[int, float]] = []
        seen: set[int] = set()
        not_closed = "sparse row is not closed with '}'"
        tok = next(tokens, None)
        if tok is None:
            raise self.error(line_no, not_closed, line)
        if tok.kind != "}":
            while True:
                index = self._index(tok, line_no, line)
                if index in seen:
                    raise self.error(line_no, f"sparse index {index} appears twice", line)
                seen.add(index)
                val = next(tokens, None)
                if val is not None and val.kind == ",":
                    val = next(tokens, None)
                elif val is not None and val.column == tok.end:
                    raise self.error(line_no, f"sparse index {index} and its value are not separated", line,
                                     "put a space between an index and its value")
                if val is None or val.kind not in _VALUE:
                    raise self.error(line_no, f"sparse index {index} has no value", line,
                                     "sparse rows look like {index value, index value}")
                pairs.append((index, self.convert(index, val, line_no, line)))
                nxt = next(tokens, None)
                if nxt is None:
                    raise self.error(line_no, not_closed, line)
                if nxt.kind == "}":
                    break
                if nxt.kind == ",":
                    nxt = next(tokens, None)
                    if nxt is None:
                        raise self.error(line_no, not_closed, line)
                    if nxt.kind == "}":
                        raise self.error(line_no, "a comma before '}' in a sparse row", line)
                    tok = nxt
                    continue
                if nxt.kind == "word" and nxt.column > val.end:
                    tok = nxt
                    continue
                raise self.error(line_no, f"expected ',' or '}}', found '{clip(nxt.text)}'", line)
        rest = next(tokens, None)
        if rest is None:
            return pairs, 1.0
        if rest.kind == ",":
            rest = next(tokens, None)
        if rest is None or rest.kind != "{":
            shown = "end of line" if rest is None else clip(rest.text)
            raise self.error(line_no, f"unexpected '{shown}' after the sparse row", line,
                             "a sparse row may only be followed by a weight {w}")
        return pairs, self._weight(tokens, line_no, line)

    def _weight(self, tokens: Iterator[Token], line_no: int, line: str) -> float:
        """``{w}`` after the values (the '{' was read), the instance weight that closes a row."""
        value = next(tokens, None)
        close = next(tokens, None) if value is not None else None
        extra = next(tokens, None) if close is not None else None
        if value is None or value.kind not in _VALUE or close is None or close.kind != "}" or extra is not None:
            shown = "{" if value is None or value.kind not in _VALUE else clip((extra or close or value).text)
            raise self.error(line_no, f"unexpected '{shown}' after the last value", line,
                             f"expected {self.n_attr} values, optionally followed by a weight {{w}}")
        try:
            weight = parse_number(value.text)
        except ValueError:
            raise self.error(line_no, f"instance weight '{clip(value.text)}' is not a number", line) from None
        long = self._too_long(line_no, line, value.text)
        if long is not None:
            raise long
        if not np.isfinite(weight) or weight < 0:
            raise self.error(line_no, f"instance weight '{clip(value.text)}' is not a finite number >= 0", line)
        return weight


def _memo(parse: Callable[[str], float]) -> Callable[[str], float]:
    """``parse`` remembering its results (dates repeat); failures are not remembered."""
    cache: dict[str, float] = {}

    def convert(text: str) -> float:
        value = cache.get(text)
        if value is None:
            value = parse(text)
            if len(cache) < 100_000:
                cache[text] = value
        return value

    return convert


# ---------------------------------------------------------------------------- the reference engine

class StrictBuilder:
    """Rows parsed by :class:`StrictRows`, collected with numpy alone (no C): the reference."""

    def __init__(self, rows: StrictRows):
        self.rows = rows
        self.n_attr = rows.n_attr
        self.class_index = rows.class_index
        self.sparse: bool | None = None
        self._dense: list[list[float]] = []
        self._r = array("q")
        self._c = array("q")
        self._v = array("d")
        self._weights = array("d")
        self.n_rows = 0

    def add_line(self, line_no: int, line: str, where: str = "") -> None:
        try:
            kind, values, weight = self.rows.parse_row(line_no, line)
        except ArffFormatError as exc:
            if not where:
                raise
            raise ArffFormatError(exc.path, exc.line, exc.problem + where, exc.text, exc.hint) from None
        if kind == EMPTY:
            return
        if self.sparse is None:
            self.sparse = kind == SPARSE
        if self.sparse:
            items = values if kind == SPARSE else \
                [(j, v) for j, v in enumerate(values) if v != 0.0 or j == self.class_index]
            for j, v in items:
                if v != 0.0 or j == self.class_index:
                    self._r.append(self.n_rows)
                    self._c.append(j)
                    self._v.append(v)
        else:
            if kind == SPARSE:
                row = [0.0] * self.n_attr
                for j, v in values:
                    row[j] = v
                values = row
            self._dense.append(values)
        self._weights.append(weight)
        self.n_rows += 1

    def finish(self) -> Chunk:
        n, d, ci = self.n_rows, self.n_attr, self.class_index
        weights = np.frombuffer(self._weights, dtype=np.float64).copy() if n else np.ones(0)
        strings = {col: list(t) for col, t in _by_feature(self.rows.tables, ci).items()}
        bags = {col: list(b) for col, b in _by_feature(self.rows.bags, ci).items()}
        if self.sparse:
            r = np.frombuffer(self._r, dtype=np.int64) if len(self._r) else np.zeros(0, np.int64)
            c = np.frombuffer(self._c, dtype=np.int64) if len(self._c) else np.zeros(0, np.int64)
            v = np.frombuffer(self._v, dtype=np.float64) if len(self._v) else np.zeros(0)
            y = None
            if ci is not None:
                y = np.zeros(n)
                is_class = c == ci
                y[r[is_class]] = v[is_class]
                keep = ~is_class
                r, c, v = r[keep], c[keep], v[keep]
                c = np.where(c > ci, c - 1, c)
            full = sp.csr_matrix((v, (r, c)), shape=(n, d - (ci is not None)))
            full.sort_indices()
            return Chunk(full, y, weights, strings, bags, True)
        full = np.array(self._dense, dtype=np.float64).reshape(n, d)
        if ci is None:
            return Chunk(full, None, weights, strings, bags, False)
        return Chunk(np.delete(full, ci, axis=1), full[:, ci].copy(), weights, strings, bags, False)


def _by_feature(tables: dict[int, Any], class_index: int | None) -> dict[int, Any]:
    """Tables keyed by attribute position, re-keyed by feature column (the class is not a feature)."""
    return {(a if class_index is None or a < class_index else a - 1): t for a, t in tables.items()}


# ---------------------------------------------------------------------------- the fast engine

def _scanner():  # type: ignore[no-untyped-def]
    from toolkit.data import _arffscan

    return _arffscan


class FastBuilder:
    """The C scanner over blocks of bytes; lines it does not take go to :class:`StrictRows`."""

    def __init__(self, rows: StrictRows):
        scan = _scanner()
        self.rows = rows
        attrs = rows.attributes
        n = rows.n_attr
        kinds = rows.kind
        nominal: list[Any] = [None] * n
        for i in np.flatnonzero(kinds == _NOMINAL).tolist():
            nominal[i] = [v.encode("utf-8", "surrogatepass") for v in attrs[i].values]
        strings: list[Any] = [None] * n
        for i, table in rows.tables.items():
            strings[i] = (rows.table_index[i], table)
        converters: list[Any] = [None] * n
        for i, convert in rows.dates.items():
            converters[i] = convert
        ci = -1 if rows.class_index is None else rows.class_index
        self.n_features = n - (rows.class_index is not None)
        self.seeded: list[int] = []  # attributes whose tables were seeded (see seed)
        self.parser = scan.Parser(kinds.astype(np.uint8).tobytes(), nominal, strings, converters, ci, -1)

    @property
    def n_rows(self) -> int:
        return self.parser.n_rows

    @property
    def declined(self) -> int:
        return self.parser.declined

    def feed(self, data: bytes, end: int, line_no: int, max_rows: int = 0,
             last_block: bool = False, start: int = 0) -> Iterator[tuple[int, int, int]]:
        """Read the whole lines of ``data[start:end]`` starting at line ``line_no``.

        Yields ``(line_no, pos, rows)`` each time ``max_rows`` rows are ready (then call :meth:`take`),
        and finally the line number after the last line with ``rows`` = -1.
        """
        pos = start
        parser = self.parser
        while True:
            want = max_rows - parser.n_rows if max_rows else 0
            if max_rows and want <= 0:
                yield line_no, pos, parser.n_rows
                continue
            status, pos, line_no, line_end, after = parser.feed(data, pos, end, line_no, want, True)
            if status == 0:
                yield line_no, pos, -1
                return
            if status == 1:
                yield line_no, pos, parser.n_rows
                continue
            line = data[pos:line_end].decode("utf-8", "surrogateescape")
            try:
                kind, values, weight = self.rows.parse_row(line_no, line)
            except ArffFormatError as exc:
                if last_block and after == end and data[end - 1:end] not in (b"\n", b"\r"):
                    hint = (exc.hint + "; " if exc.hint else "") + \
                        "the last line has no line end: the file may be truncated"
                    raise ArffFormatError(exc.path, exc.line, exc.problem, exc.text, hint) from None
                raise
            if kind == SPARSE:
                parser.add_sparse(values, weight)
            elif kind == DENSE:
                parser.add_dense(values, weight)
            pos = after
            line_no += 1

    def take(self) -> Chunk:
        """The rows read since the last call, as arrays (no copy of the values), and string tables."""
        d = self.parser.take()
        n = d["n_rows"]
        ci = self.rows.class_index
        y = np.frombuffer(d["y"], dtype=np.float64) if n else np.zeros(0)
        weights = np.frombuffer(d["w"], dtype=np.float64) if n else np.ones(0)
        sparse = d["sparse"] == 1
        if sparse:
            data = np.frombuffer(d["data"], dtype=np.float64)
            indices = np.frombuffer(d["indices"], dtype=np.int32)
            indptr = np.frombuffer(d["indptr"], dtype=np.int64)
            if not len(indptr):
                indptr = np.zeros(1, dtype=np.int64)
            if indptr[-1] <= np.iinfo(np.int32).max:
                indptr = indptr.astype(np.int32)
            else:
                indices = indices.astype(np.int64)
            X = sp.csr_matrix((data, indices, indptr), shape=(n, self.n_features), copy=False)
        else:
            X = np.frombuffer(d["X"], dtype=np.float64).reshape(n, self.n_features) if n and self.n_features \
                else np.zeros((n, self.n_features))
        strings = {col: list(t) for col, t in _by_feature(self.rows.tables, ci).items()}
        bags = {col: list(b) for col, b in _by_feature(self.rows.bags, ci).items()}
        if not sparse and self.seeded:
            for a in self.seeded:
                col = a if ci is None or a < ci else a - 1
                tables = strings if a in self.rows.tables else bags
                tables[col] = _first_appearance(X, col, tables[col])
        return Chunk(X, y if ci is not None else None, weights, strings, bags, sparse)

    def discard(self) -> None:
        """Drop the rows read since the last :meth:`take` (the tables stay)."""
        self.parser.take()

    def seed(self, first: dict[int, Any]) -> None:
        """Start the tables of the string and relational attributes in ``first`` (attribute position ->
        the attribute's first value in the file) with that value, so that code 0, which a sparse row
        gives an attribute it leaves out, means what it means in the whole file. Call before rows."""
        for a, value in first.items():
            if a in self.rows.tables:
                table, index = self.rows.tables[a], self.rows.table_index[a]
                table.clear()  # in place: the scanner holds these objects
                index.clear()
                table.append(value)
                index[value] = 0
            else:
                self.rows.bags[a] = [value]
        self.seeded = sorted(first)

    def reset_tables(self, first: dict[int, Any] | None = None) -> None:
        """Start new string tables and bag lists (each chunk of a stream has its own), seeded with
        ``first`` (see :meth:`seed`)."""
        for i in self.rows.tables:
            self.rows.tables[i].clear()
            self.rows.table_index[i].clear()
        for i in self.rows.bags:
            self.rows.bags[i] = []
        self.seeded = []
        if first:
            self.seed(first)


def _first_appearance(X: np.ndarray, col: int, table: list[Any]) -> list[Any]:
    """A dense chunk's table in the order in which its rows use the values, unused values dropped,
    and the codes of column ``col`` of ``X`` renumbered to match (in place).

    Every value of a dense chunk is written in X, code 0 included, so its table needs no seed to keep
    the whole file's meaning: this gives the table it has without one (the seed where a row uses it)."""
    codes = X[:, col]
    ok = ~np.isnan(codes)
    if table and not np.any(codes == 0):  # the seed is not used (the rule in a dense file): drop it
        codes[ok] -= 1
        return table[1:]
    used = codes[ok].astype(np.int64)
    values, first = np.unique(used, return_index=True)
    order = values[np.argsort(first, kind="stable")]
    renumber = np.zeros(max(len(table), 1))
    renumber[order] = np.arange(len(order), dtype=np.float64)
    codes[ok] = renumber[used]
    return [table[int(k)] for k in order]
