"""The ARFF data section, read in chunks into a dense array or a CSR matrix.

Chunks of plain lines (no quotes, braces, comments or escapes) take a vectorised path: one
``str.split`` per line and one numpy conversion per column. Everything else goes through the
linear tokenizer row by row. Sparse rows are appended to compact ``array.array`` buffers, so a
sparse file becomes CSR without ever being densified and without a list of Python objects per
non-zero value: peak memory stays within a small factor of the CSR's own size.
"""

from __future__ import annotations

import re
from array import array

import numpy as np
import scipy.sparse as sp

from toolkit.data.arff_dates import DateCodec
from toolkit.data.arff_source import LineSource
from toolkit.data.arff_syntax import Token, UnterminatedQuote, tokenize
from toolkit.data.attributes import KIND_CODES, AttributeList
from toolkit.errors import ArffFormatError

__all__ = ["DataBuilder"]

_NUMERIC, _NOMINAL, _STRING, _DATE = 0, 1, 2, 3
assert (KIND_CODES["numeric"], KIND_CODES["nominal"], KIND_CODES["string"], KIND_CODES["date"]) == (0, 1, 2, 3)
_SPECIAL = ("'", '"', "{", "}", "%", "\\")
# a dense row of bare values and single-quoted values without escapes or inner quotes
_SIMPLE_VALUE = r"(?:'[^'\\\n]*'|[^'\"{},%\\\x00-\x20]+)"
_SIMPLE_QUOTED_ROW = re.compile(r"^" + _SIMPLE_VALUE + r"(?:[\x00-\x20]*,[\x00-\x20]*" + _SIMPLE_VALUE + r")*$")
_SIMPLE_QUOTED_VALUE = re.compile(r"'([^']*)'|([^'\"{},%\\\x00-\x20]+)")


def _is_plain(line: str) -> bool:
    return not any(ch in line for ch in _SPECIAL)


def _is_plain_sparse(line: str) -> bool:
    return (line[0] == "{" and line[-1] == "}" and line.count("{") == 1 and line.count("}") == 1
            and "'" not in line and '"' not in line and "%" not in line and "\\" not in line)


class DataBuilder:
    """Accumulates the rows of one data section."""

    def __init__(self, src: LineSource, attributes: AttributeList, class_index: int | None,
                 date_codecs: dict[int, DateCodec]):
        self.src = src
        self.attributes = attributes
        self.n_attr = len(attributes)
        self.class_index = class_index
        self.kind = np.asarray(attributes.kind_codes, dtype=np.int8)  # same codes as _KIND_CODES
        self.lookup: dict[int, dict[str, float]] = {
            int(i): {v: float(code) for code, v in enumerate(attributes[int(i)].values)}
            for i in np.flatnonzero(self.kind == _NOMINAL)}
        self.tables: dict[int, list[str]] = {int(i): [] for i in np.flatnonzero(self.kind == _STRING)}
        self._table_index: dict[int, dict[str, int]] = {i: {} for i in self.tables}
        self.codecs = date_codecs
        self.sparse: bool | None = None      # decided by the first data row
        # dense buffers
        self._dense_chunks: list[np.ndarray] = []
        # sparse buffers (class column kept apart)
        self._data = array("d")
        self._cols = array("i")
        self._indptr = array("q", [0])
        self._class_values = array("d")
        self._weights = array("d")
        self.n_rows = 0
        self.any_weight = False

    # ------------------------------------------------------------------ errors
    def _error(self, line_no: int, problem: str, line: str | None, hint: str | None = None) -> ArffFormatError:
        return ArffFormatError(self.src.display, line_no, problem, line, hint)

    def _value_error(self, line_no: int, line: str, attr_index: int, text: str) -> ArffFormatError:
        attr = self.attributes[attr_index]
        if attr.kind == "nominal":
            shown = ", ".join(attr.values[:8]) + (", ..." if len(attr.values) > 8 else "")
            return self._error(line_no, f"value '{text}' is not declared for nominal attribute '{attr.name}'",
                               line, f"expected one of {{{shown}}} or ?")
        if attr.kind == "date":
            return self._error(line_no, f"value '{text}' of date attribute '{attr.name}' does not match "
                                        f"the format '{attr.date_format}'", line)
        return self._error(line_no, f"value '{text}' of numeric attribute '{attr.name}' is not a number",
                           line, "expected a number or ? for a missing value")

    # ------------------------------------------------------------------ single values
    def _string_code(self, attr_index: int, text: str) -> float:
        index = self._table_index[attr_index]
        code = index.get(text)
        if code is None:
            code = index[text] = len(self.tables[attr_index])
            self.tables[attr_index].append(text)
        return float(code)

    def _convert(self, attr_index: int, tok: Token, line_no: int, line: str) -> float:
        text = tok.text
        if tok.kind == "word" and text == "?":
            return np.nan
        kind = self.kind[attr_index]
        if kind == _NUMERIC:
            try:
                return float(text)
            except ValueError:
                raise self._value_error(line_no, line, attr_index, text) from None
        if kind == _NOMINAL:
            code = self.lookup[attr_index].get(text)
            if code is None:
                raise self._value_error(line_no, line, attr_index, text)
            return code
        if kind == _STRING:
            return self._string_code(attr_index, text)
        try:
            return self.codecs[attr_index].parse(text)
        except ValueError:
            raise self._value_error(line_no, line, attr_index, text) from None

    def _weight(self, tokens: list[Token], pos: int, line_no: int, line: str) -> float:
        """Parse ``[,] {w}`` at tokens[pos:], the instance weight that closes a row."""
        if pos < len(tokens) and tokens[pos].kind == ",":
            pos += 1
        if (pos + 3 != len(tokens) or tokens[pos].kind != "{" or tokens[pos + 2].kind != "}"
                or tokens[pos + 1].kind not in ("word", "quoted")):
            extra = tokens[pos].text if pos < len(tokens) else "end of line"
            raise self._error(line_no, f"unexpected '{extra}' after the last value", line,
                              f"expected {self._n_expected()} values, optionally followed by a weight {{w}}")
        try:
            weight = float(tokens[pos + 1].text)
        except ValueError:
            raise self._error(line_no, f"instance weight '{tokens[pos + 1].text}' is not a number", line) from None
        if not np.isfinite(weight) or weight < 0:
            raise self._error(line_no, f"instance weight '{tokens[pos + 1].text}' is not a finite number >= 0",
                              line)
        self.any_weight = True
        return weight

    def _n_expected(self) -> int:
        return self.n_attr

    # ------------------------------------------------------------------ one row, general path
    def _parse_row(self, line_no: int, line: str) -> tuple[bool, list, float]:
        """Return (is_sparse_row, values or (index, value) pairs, weight)."""
        try:
            tokens = tokenize(line)
        except UnterminatedQuote as exc:
            raise self._error(line_no, f"unterminated quote at column {exc.column + 1}", line,
                              "close the quote, or escape a quote inside a value with a backslash") from None
        if not tokens:
            return False, [], -1.0  # comment-only line
        if tokens[0].kind == "{":
            return True, *self._parse_sparse_tokens(tokens, line_no, line)
        values: list[float] = []
        pos = 0
        n = len(tokens)
        while True:
            if pos >= n:
                raise self._error(line_no, "the row ends after a comma", line, "a value is missing")
            tok = tokens[pos]
            if tok.kind not in ("word", "quoted"):
                if tok.kind == "{" and len(values) == self.n_attr:
                    return False, values, self._weight(tokens, pos, line_no, line)
                raise self._error(line_no, f"expected a value, found '{tok.text}'", line,
                                  "empty values are not allowed; write ? for a missing value")
            if len(values) == self.n_attr:
                raise self._error(line_no, f"expected {self.n_attr} values, found more", line,
                                  "there is an extra value or a comma inside an unquoted value")
            values.append(self._convert(len(values), tok, line_no, line))
            pos += 1
            if pos == n:
                break
            if tokens[pos].kind != ",":
                if tokens[pos].kind == "{" and len(values) == self.n_attr:
                    return False, values, self._weight(tokens, pos, line_no, line)
                raise self._error(line_no, f"expected ',' after value '{tok.text}', found '{tokens[pos].text}'",
                                  line, "quote values that contain spaces")
            pos += 1
        if len(values) != self.n_attr:
            raise self._error(line_no, f"expected {self.n_attr} values, found {len(values)}", line,
                              "a value or a comma is missing")
        return False, values, 1.0

    def _parse_sparse_tokens(self, tokens: list[Token], line_no: int, line: str) -> tuple[list, float]:
        pairs: list[tuple[int, float]] = []
        pos = 1
        n = len(tokens)
        seen: set[int] = set()
        while True:
            if pos >= n:
                raise self._error(line_no, "sparse row is not closed with '}'", line)
            tok = tokens[pos]
            if tok.kind == "}":
                if pairs and tokens[pos - 1].kind == ",":
                    raise self._error(line_no, "a comma before '}' in a sparse row", line)
                pos += 1
                break
            if tok.kind != "word":
                raise self._error(line_no, f"expected an attribute index, found '{tok.text}'", line,
                                  "sparse rows look like {index value, index value}")
            try:
                index = int(tok.text)
            except ValueError:
                raise self._error(line_no, f"sparse index '{tok.text}' is not an integer", line,
                                  "sparse rows look like {index value, index value}") from None
            if not 0 <= index < self.n_attr:
                raise self._error(line_no, f"sparse index {index} is out of range", line,
                                  f"the header declares {self.n_attr} attributes (indices 0..{self.n_attr - 1})")
            if index in seen:
                raise self._error(line_no, f"sparse index {index} appears twice", line)
            seen.add(index)
            if pos + 1 >= n or tokens[pos + 1].kind not in ("word", "quoted"):
                raise self._error(line_no, f"sparse index {index} has no value", line,
                                  "sparse rows look like {index value, index value}")
            pairs.append((index, self._convert(index, tokens[pos + 1], line_no, line)))
            pos += 2
            if pos < n and tokens[pos].kind == ",":
                pos += 1
            elif pos < n and tokens[pos].kind != "}":
                raise self._error(line_no, f"expected ',' or '}}', found '{tokens[pos].text}'", line)
        weight = 1.0 if pos == n else self._weight(tokens, pos, line_no, line)
        return pairs, weight

    # ------------------------------------------------------------------ chunks
    def add_chunk(self, first: int, lines: list[str]) -> None:
        numbers: list[int] = []
        kept: list[str] = []
        for offset, raw in enumerate(lines):
            line = raw.strip()
            if line and line[0] != "%":
                kept.append(line)
                numbers.append(first + offset)
        if not kept:
            return
        if self.sparse is None:
            self.sparse = kept[0][0] == "{"
        if self.sparse:
            if all(_is_plain_sparse(ln) for ln in kept) and self._plain_sparse(numbers, kept):
                return
            self._general_sparse(numbers, kept)
        else:
            if all(_is_plain(ln) for ln in kept) and self._plain_dense(numbers, kept):
                return
            if self._simple_quoted_dense(kept):
                return
            self._general_dense(numbers, kept)

    # dense ------------------------------------------------------------
    def _plain_dense(self, numbers: list[int], lines: list[str]) -> bool:
        rows = [ln.split(",") for ln in lines]
        d = self.n_attr
        if any(len(r) != d for r in rows):
            return False  # the general path reports the exact problem
        table = np.char.strip(np.array(rows, dtype=str).reshape(len(rows), d))
        return self._convert_table(table, table == "?")

    def _simple_quoted_dense(self, lines: list[str]) -> bool:
        """Rows of bare or single-quoted values without escapes (e.g. 'x','s',?): one C regex per row."""
        if not all(_SIMPLE_QUOTED_ROW.match(ln) for ln in lines):
            return False
        d = self.n_attr
        rows = [_SIMPLE_QUOTED_VALUE.findall(ln) for ln in lines]
        if any(len(r) != d for r in rows):
            return False
        pairs = np.array(rows, dtype=str).reshape(len(rows), d, 2)
        quoted, bare = pairs[:, :, 0], pairs[:, :, 1]
        is_quoted = np.char.str_len(bare) == 0
        table = np.where(is_quoted, quoted, bare)
        return self._convert_table(table, ~is_quoted & (bare == "?"))

    def _convert_table(self, table: np.ndarray, missing: np.ndarray) -> bool:
        """Convert a (rows, attributes) table of value strings; False sends the chunk to the exact path."""
        n, d = table.shape
        out = np.empty((n, d), dtype=np.float64)
        for j in range(d):
            col = table[:, j]
            miss = missing[:, j]
            kind = self.kind[j]
            if kind == _NUMERIC:
                if miss.any():
                    col = np.where(miss, "nan", col)
                try:
                    out[:, j] = col.astype(np.float64)
                except ValueError:
                    return False
            elif kind == _NOMINAL:
                uniq, inverse = np.unique(col, return_inverse=True)
                lookup = self.lookup[j]
                mapped = np.empty(len(uniq))
                for u, value in enumerate(uniq):
                    code = lookup.get(str(value))  # type: ignore[union-attr]
                    mapped[u] = np.nan if code is None else code
                values = mapped[inverse.reshape(-1)]
                if np.isnan(values[~miss]).any():
                    return False  # an undeclared value: the exact path names it
                values[miss] = np.nan
                out[:, j] = values
            else:
                return False  # strings and dates keep the exact path
        self._dense_chunks.append(out)
        self._weights.extend([1.0] * n)
        self.n_rows += n
        return True

    def _general_dense(self, numbers: list[int], lines: list[str]) -> None:
        out = np.empty((len(lines), self.n_attr), dtype=np.float64)
        weights = []
        count = 0
        for line_no, line in zip(numbers, lines):
            is_sparse, values, weight = self._parse_row(line_no, line)
            if weight < 0:
                continue
            if is_sparse:
                row = np.zeros(self.n_attr)
                for index, value in values:
                    row[index] = value
                out[count] = row
            else:
                out[count] = values
            weights.append(weight)
            count += 1
        self._dense_chunks.append(out[:count])
        self._weights.extend(weights)
        self.n_rows += count

    # sparse -----------------------------------------------------------
    def _plain_sparse(self, numbers: list[int], lines: list[str]) -> bool:
        inners = [ln[1:-1] for ln in lines]
        counts = np.fromiter((s.count(",") + 1 if s.strip() else 0 for s in inners), dtype=np.int64,
                             count=len(inners))
        parts = " ".join(inners).replace(",", " ").split()
        total = int(counts.sum())
        if len(parts) != 2 * total:
            return False
        if total == 0:
            self._append_sparse(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), len(lines),
                                np.ones(len(lines)), np.zeros(len(lines)))
            return True
        try:
            idx = np.array(parts[0::2]).astype(np.int64)
        except ValueError:
            return False
        if idx.min() < 0 or idx.max() >= self.n_attr:
            return False
        vals_text = np.array(parts[1::2])
        del parts
        rows = np.repeat(np.arange(len(lines), dtype=np.int64), counts)
        vals = np.empty(total, dtype=np.float64)
        kinds = self.kind[idx]
        numeric = kinds == _NUMERIC
        if numeric.any():
            sub = vals_text[numeric]
            missing = sub == "?"
            if missing.any():
                sub = sub.copy()
                sub[missing] = "nan"
            try:
                vals[numeric] = sub.astype(np.float64)
            except ValueError:
                return False
        other = ~numeric
        if other.any():
            for attr_index in np.unique(idx[other]):
                where = np.flatnonzero(idx == attr_index)
                kind = self.kind[attr_index]
                for w in where:
                    text = str(vals_text[w])
                    if text == "?":
                        vals[w] = np.nan
                    elif kind == _NOMINAL:
                        code = self.lookup[attr_index].get(text)
                        if code is None:
                            return False
                        vals[w] = code
                    elif kind == _STRING:
                        vals[w] = self._string_code(int(attr_index), text)
                    else:
                        try:
                            vals[w] = self.codecs[int(attr_index)].parse(text)
                        except ValueError:
                            return False
        # duplicate indices within a row are an error: let the exact path name the line
        order = np.lexsort((idx, rows))
        r_sorted, i_sorted = rows[order], idx[order]
        if np.any((r_sorted[1:] == r_sorted[:-1]) & (i_sorted[1:] == i_sorted[:-1])):
            return False
        self._append_sparse(rows, idx, vals, len(lines), np.ones(len(lines)), None)
        return True

    def _general_sparse(self, numbers: list[int], lines: list[str]) -> None:
        rows: list[int] = []
        idx: list[int] = []
        vals: list[float] = []
        weights: list[float] = []
        count = 0
        for line_no, line in zip(numbers, lines):
            is_sparse, values, weight = self._parse_row(line_no, line)
            if weight < 0:
                continue
            if is_sparse:
                for index, value in values:
                    rows.append(count)
                    idx.append(index)
                    vals.append(value)
            else:
                for index, value in enumerate(values):
                    if value != 0.0:
                        rows.append(count)
                        idx.append(index)
                        vals.append(value)
            weights.append(weight)
            count += 1
        self._append_sparse(np.asarray(rows, dtype=np.int64), np.asarray(idx, dtype=np.int64),
                            np.asarray(vals, dtype=np.float64), count, np.asarray(weights), None)

    def _append_sparse(self, rows: np.ndarray, idx: np.ndarray, vals: np.ndarray, n_rows: int,
                       weights: np.ndarray, _unused: object) -> None:
        class_values = np.zeros(n_rows)
        ci = self.class_index
        if ci is not None:
            is_class = idx == ci
            class_values[rows[is_class]] = vals[is_class]
            keep = ~is_class & (vals != 0.0)
            rows, idx, vals = rows[keep], idx[keep], vals[keep]
            idx = np.where(idx > ci, idx - 1, idx)
        else:
            keep = vals != 0.0
            rows, idx, vals = rows[keep], idx[keep], vals[keep]
        order = np.lexsort((idx, rows))
        rows, idx, vals = rows[order], idx[order], vals[order]
        per_row = np.bincount(rows, minlength=n_rows)
        self._data.frombytes(vals.tobytes())
        self._cols.frombytes(idx.astype(np.int32).tobytes())
        ends = self._indptr[-1] + np.cumsum(per_row)
        self._indptr.frombytes(ends.astype(np.int64).tobytes())
        self._class_values.frombytes(class_values.tobytes())
        self._weights.frombytes(np.asarray(weights, dtype=np.float64).tobytes())
        self.n_rows += n_rows

    # ------------------------------------------------------------------ result
    def finish(self) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray | None, np.ndarray]:
        """Return (X without the class column, class column or None, weights)."""
        n_features = self.n_attr - (0 if self.class_index is None else 1)
        weights = np.frombuffer(self._weights, dtype=np.float64).copy() if self.n_rows else np.ones(0)
        if self.sparse:
            data = np.frombuffer(self._data, dtype=np.float64) if len(self._data) else np.zeros(0)
            cols = np.frombuffer(self._cols, dtype=np.int32) if len(self._cols) else np.zeros(0, np.int32)
            indptr = np.frombuffer(self._indptr, dtype=np.int64)
            if indptr[-1] <= np.iinfo(np.int32).max:
                indptr = indptr.astype(np.int32)
            X = sp.csr_matrix((data, cols, indptr), shape=(self.n_rows, n_features), copy=False)
            y = np.frombuffer(self._class_values, dtype=np.float64) if self.n_rows else np.zeros(0)
            return X, (y if self.class_index is not None else None), weights
        if self._dense_chunks:
            full = np.concatenate(self._dense_chunks, axis=0) if len(self._dense_chunks) > 1 \
                else self._dense_chunks[0]
        else:
            full = np.zeros((0, self.n_attr))
        self._dense_chunks = []
        if self.class_index is None:
            return full, None, weights
        y = full[:, self.class_index].copy()
        X = np.delete(full, self.class_index, axis=1)
        return X, y, weights
