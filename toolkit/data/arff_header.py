"""The ARFF header: ``@relation``, ``@attribute`` lines and ``@data``.

This is the toolkit's pre-scan. It accepts everything WEKA 3.6 accepts that liac-arff 2.5.0
refuses (``INTEGER [lo,hi]`` ranges, ``%`` comments after a type, DATE attributes, tabs, a BOM),
refuses what liac-arff lets through (duplicate nominal values), and cannot be driven into
exponential time (the nominal-spec regex blow-up of liac-arff 2.5.0), because every line goes
through the linear tokenizer of :mod:`toolkit.data.arff_syntax`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from array import array

import numpy as np

from toolkit.data.arff_dates import DEFAULT_DATE_FORMAT, DateCodec, UnsupportedDateFormat
from toolkit.data.arff_source import ByteSource
from toolkit.data.arff_syntax import WHITESPACE, Token, UnterminatedQuote, clip, iter_tokens, tokenize
from toolkit.data.attributes import AttributeList, AttributeListBuilder
from toolkit.data.dataset import Attribute
from toolkit.errors import ArffFormatError

__all__ = ["Header", "read_header"]

_FAST_ATTRIBUTE = re.compile(
    r"^@attribute[ \t]+([^\x00-\x20{},'\"%]+)[ \t]+(numeric|real|integer|string)[ \t]*$", re.IGNORECASE)
# the same lines in bytes, each with its line end (a lone \r is left to the line reader)
#: relational attributes nest at most this deep (a deeper header was read, then broke pickling, the cache
#: and convert with a RecursionError)
MAX_RELATION_DEPTH = 32
_KEYWORD = re.compile(r"@[^\x00-\x20'\"{},%]*")
_FAST_LINE = rb"[ \t]*@attribute[ \t]+([^\x00-\x20{},'\"%]+)[ \t]+(numeric|real|integer|string)[ \t]*(?:\r\n|\n)"
_FAST_RUN = re.compile(_FAST_LINE, re.IGNORECASE)
# up to 1,024 such lines (the regex engine keeps state for each repetition: unbounded, 20 MB a 1 MB block)
_FAST_RUNS = re.compile(rb"(?:" + _FAST_LINE.replace(b"(", b"(?:").replace(b"(?:?:", b"(?:") + rb"){1,1024}",
                        re.IGNORECASE)
_RANGE = re.compile(r"^[\[(][^,\[\]()]*,[^,\[\]()]*[\])]$")
_NUMERIC_TYPES = ("numeric", "real", "integer")
# nominal lists read without a Token per value (a declaration of 2,000,000 values took 12 s and ~1 GB):
# whitespace (dropped), what separates two quoted values, whitespace inside an unquoted value, and one
# value (unquoted, or quoted without escapes) with the ',' or '}' after it
_DROP_WHITESPACE = dict.fromkeys(range(0x21))
_NOMINAL_SEPARATOR = re.compile(r"[\x00-\x20]*,[\x00-\x20]*")
_NOMINAL_INNER_WS = re.compile(r"[^\x00-\x20,][\x00-\x20]+[^\x00-\x20,]")
_NOMINAL_ITEM = re.compile(
    r"[\x00-\x20]*+(?:'([^'\\]*+)'|\"([^\"\\]*+)\"|([^\x00-\x20{},'\"%]++))[\x00-\x20]*+([,}])")
_EXPECTED_TYPES = "numeric, integer, real, string, date or {value, ...}"


@dataclass
class Header:
    """What precedes the data: relation name, attributes, and where ``@data`` stands.

    While the header is read, ``building`` collects the attributes compactly; ``attributes`` is
    the finished :class:`AttributeList`.
    """

    relation: str
    building: AttributeListBuilder = field(default_factory=AttributeListBuilder)
    attribute_lines: array = field(default_factory=lambda: array("q"))
    attributes: AttributeList = field(default_factory=AttributeList)
    data_line: int = 0
    date_codecs: dict[int, DateCodec] = field(default_factory=dict)
    open_relations: list[_Relation] = field(default_factory=list)
    data_offset: int = 0


@dataclass
class _Relation:
    """A relational attribute whose nested attributes are being read (until ``@end name``)."""

    name: str
    line: int
    parent: AttributeListBuilder
    parent_lines: array


def _close_relation(src: ByteSource, header: Header, line_no: int, line: str) -> None:
    """``@end NAME``: the nested attributes become one relational attribute of the enclosing level."""
    tokens = _tokens(src, line_no, line)
    if not header.open_relations:
        raise _error(src, line_no, "@end outside a relational attribute", line,
                     "@end NAME closes '@attribute NAME relational'")
    rel = header.open_relations[-1]
    name = tokens[1].text if len(tokens) > 1 and tokens[1].kind in ("word", "quoted") else None
    if name != rel.name:
        raise _error(src, line_no, f"@end {clip(name or '')} does not close relational attribute '{rel.name}' "
                                   f"(line {rel.line})", line, f"expected '@end {rel.name}'")
    if len(tokens) > 2:
        raise _error(src, line_no, f"unexpected '{clip(tokens[2].text)}' after @end {rel.name}", line)
    if not len(header.building):
        raise _error(src, line_no, f"relational attribute '{rel.name}' declares no attributes", line)
    inner = header.building.build()
    _check_duplicates(src, inner, header.attribute_lines)
    header.building, header.attribute_lines = rel.parent, rel.parent_lines
    header.open_relations.pop()
    header.building.add_attribute(Attribute(rel.name, "relational", relation=inner))
    header.attribute_lines.append(rel.line)


def _error(src: ByteSource, line: int, problem: str, text: str | None = None,
           hint: str | None = None) -> ArffFormatError:
    return ArffFormatError(src.display, line, problem, text, hint)


def _tokens(src: ByteSource, line_no: int, line: str) -> list[Token]:
    try:
        return tokenize(line)
    except UnterminatedQuote as exc:
        return_error = _error(src, line_no, f"unterminated quote at column {exc.column + 1}", line,
                              "close the quote or escape it with a backslash")
        raise return_error from None


def _parse_nominal(src: ByteSource, line_no: int, line: str, name: str,
                   tokens: list[Token]) -> tuple[tuple[str, ...], int]:
    """Values of a ``{a, b, ...}`` spec starting at tokens[0]; returns (values, tokens used).

    As WEKA's ArffLoader reads a list: commas and white space both separate values and an empty item is
    no value, so ``{a b, c}`` is a, b, c and ``{x,,y,}`` is x, y (a value with a space is quoted)."""
    values: list[str] = []
    seen: dict[str, int] = {}
    i = 1
    while True:
        if i >= len(tokens):
            raise _error(src, line_no, f"nominal values of attribute '{clip(name)}' are not closed with '}}'",
                         line, "a value may contain an unescaped quote or comma")
        tok = tokens[i]
        if tok.kind == "}":
            return tuple(values), i + 1
        if tok.kind != ",":
            if tok.kind not in ("word", "quoted"):
                raise _error(src, line_no, f"expected a nominal value of attribute '{clip(name)}', found '{clip(tok.text)}'",
                             line)
            if tok.text in seen:
                raise _error(src, line_no, f"attribute '{clip(name)}' declares the nominal value '{clip(tok.text)}' twice",
                             line, "nominal values must be unique")
            seen[tok.text] = len(values)
            values.append(tok.text)
        i += 1


def _plain_nominal(line: str) -> tuple[str, list[str]] | None:
    """(name, values) of ``@attribute NAME {v1, v2, ...}`` read without a Token per value, when the list
    is plain: unquoted values, or quoted ones without escapes, each non-empty unless quoted, followed by
    nothing but a comment. Any other line gives None and is read by the tokenizer, so that the same lines
    are accepted with the same values and every error is the tokenizer's (duplicates are the caller's)."""
    try:
        tokens = iter_tokens(line)
        keyword, name, brace = next(tokens, None), next(tokens, None), next(tokens, None)
    except UnterminatedQuote:
        return None
    if keyword is None or name is None or brace is None or brace.kind != "{" or name.kind not in ("word", "quoted"):
        return None
    start = brace.end
    end = line.find("}", start)
    body = line[start:end] if end >= 0 else ""
    if end >= 0 and not any(ch in body for ch in "'\"%{"):
        # no quote, comment or brace before the first '}': the values are the text between the commas
        if any(ch in body for ch in WHITESPACE):
            if _NOMINAL_INNER_WS.search(body) is not None:  # "{a b}": the tokenizer's error
                return None
            body = body.translate(_DROP_WHITESPACE)
        values = body.split(",")
        if "" in values:  # {}, {a,,b}, {a,}: the tokenizer's reading and errors
            return None
        end += 1
    else:
        del body
        found = _single_quoted(line, start) or _quoted_items(line, start)
        if found is None:
            return None
        values, end = found
    tail = line[end:].lstrip(WHITESPACE)
    if tail and tail[0] != "%":
        return None
    return name.text, values


def _single_quoted(line: str, start: int) -> tuple[list[str], int] | None:
    """Values that are all quoted with ' (no backslash anywhere after ``start``): the pieces between the
    quotes, when each piece between two values is a comma (with whitespace) and '}' follows the last."""
    if "\\" in line[start:]:
        return None
    pieces = line[start:].split("'")
    if len(pieces) < 3 or len(pieces) % 2 == 0 or pieces[0].strip(WHITESPACE):
        return None
    separators = pieces[2:-1:2]
    if separators.count(",") != len(separators) and \
            any(_NOMINAL_SEPARATOR.fullmatch(sep) is None for sep in separators):
        return None
    last = pieces[-1].lstrip(WHITESPACE)
    if not last.startswith("}"):
        return None
    return pieces[1::2], len(line) - len(last) + 1


def _quoted_items(line: str, start: int) -> tuple[list[str], int] | None:
    """Values quoted or not (no escapes), one match each (a quote, '}' or ',' inside quotes is text)."""
    values = []
    match = _NOMINAL_ITEM.match
    pos = start
    while True:
        m = match(line, pos)
        if m is None:
            return None
        single, double, word, sep = m.groups()
        values.append(word if word is not None else single if single is not None else double)
        pos = m.end()
        if sep == "}":
            return values, pos


def _first_repeat(values: list[str]) -> str | None:
    """The first value (in order) equal to an earlier one, or None; by 64-bit hashes, so that a list
    of distinct values costs 8 bytes a value rather than a set of them."""
    hashes = np.fromiter(map(hash, values), dtype=np.int64, count=len(values))
    hashes.sort()
    if not len(values) or not (hashes[1:] == hashes[:-1]).any():
        return None
    seen: set[str] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


def _parse_attribute(src: ByteSource, header: Header, line_no: int, line: str) -> None:
    fast = _FAST_ATTRIBUTE.match(line)
    if fast:
        name, type_name = fast.group(1), fast.group(2).lower()
        header.building.add(name, "string" if type_name == "string" else "numeric")
        header.attribute_lines.append(line_no)
        return
    plain = _plain_nominal(line) if "{" in line else None
    if plain is not None:
        name, values = plain
        repeated = _first_repeat(values)
        if repeated is not None:
            raise _error(src, line_no, f"attribute '{clip(name)}' declares the nominal value '{clip(repeated)}' twice",
                         line, "nominal values must be unique")
        _add_attribute(header, line_no, Attribute(name, "nominal", tuple(values)), None)
        return
    tokens = _tokens(src, line_no, line)
    if len(tokens) < 2 or tokens[1].kind not in ("word", "quoted"):
        raise _error(src, line_no, "expected an attribute name after @attribute", line)
    name = tokens[1].text
    if len(tokens) < 3:
        raise _error(src, line_no, f"attribute '{clip(name)}' has no type", line, f"expected {_EXPECTED_TYPES}")
    tok = tokens[2]
    rest = tokens[3:]
    codec = None
    if tok.kind == "{":
        values, used = _parse_nominal(src, line_no, line, name, tokens[2:])
        rest = tokens[2 + used:]
        attr = Attribute(name, "nominal", values)
    elif tok.kind == "word" and tok.text.lower() in _NUMERIC_TYPES:
        attr = Attribute(name, "numeric")
        if rest:
            # WEKA's optional range, e.g. INTEGER [1,10]; it constrains nothing here
            text = line[rest[0].column:]
            text = text.split("%", 1)[0].strip()
            if not _RANGE.match(text.replace(" ", "").replace("\t", "")):
                raise _error(src, line_no, f"unexpected text after the type of attribute '{clip(name)}'", line,
                             "a numeric type may only be followed by a range such as [0,10]")
            rest = []
    elif tok.kind == "word" and tok.text.lower() == "string":
        attr = Attribute(name, "string")
    elif tok.kind == "word" and tok.text.lower() == "date":
        pattern = DEFAULT_DATE_FORMAT
        if rest and rest[0].kind in ("word", "quoted"):
            pattern = rest[0].text
            rest = rest[1:]
        try:
            codec = DateCodec(pattern)
        except UnsupportedDateFormat as exc:
            raise _error(src, line_no, f"attribute '{clip(name)}': {exc}", line) from None
        attr = Attribute(name, "date", date_format=pattern)
    elif tok.kind == "word" and tok.text.lower() == "relational":
        if rest:
            raise _error(src, line_no, f"unexpected '{clip(rest[0].text)}' after the type of attribute '{clip(name)}'",
                         line)
        if len(header.open_relations) >= MAX_RELATION_DEPTH:
            raise _error(src, line_no, f"relational attribute '{clip(name)}' is nested {MAX_RELATION_DEPTH + 1} "
                         f"deep; at most {MAX_RELATION_DEPTH} levels are read", line,
                         "multi-instance data nests one level (a bag of instances), rarely two")
        header.open_relations.append(_Relation(name, line_no, header.building, header.attribute_lines))
        header.building = AttributeListBuilder()
        header.attribute_lines = array("q")
        return
    else:
        raise _error(src, line_no, f"unknown type '{clip(tok.text)}' for attribute '{clip(name)}'", line,
                     f"expected {_EXPECTED_TYPES}")
    if rest:
        raise _error(src, line_no, f"unexpected '{clip(rest[0].text)}' after the type of attribute '{clip(name)}'", line)
    _add_attribute(header, line_no, attr, codec)


def _add_attribute(header: Header, line_no: int, attr: Attribute, codec: DateCodec | None) -> None:
    if codec is not None and not header.open_relations:
        header.date_codecs[len(header.building)] = codec
    header.building.add_attribute(attr)
    header.attribute_lines.append(line_no)


def _check_duplicates(src: ByteSource, attributes: AttributeList, attribute_lines: array) -> None:
    """Refuse repeated attribute names, without a dictionary of every name (wide files).

    Names are compared through 64-bit hashes first; only equal hashes are compared as text.
    """
    n = len(attributes)
    hashes = np.fromiter((hash(attributes.name(i)) for i in range(n)), dtype=np.int64, count=n)
    order = np.argsort(hashes, kind="stable")
    same = np.flatnonzero(hashes[order][1:] == hashes[order][:-1])
    for k in same:
        group = [int(order[k]), int(order[k + 1])]
        first, second = min(group), max(group)
        if attributes.name(first) == attributes.name(second):
            clashes = [int(i) for i in order[np.flatnonzero(hashes[order] == hashes[order][k])]]
            name = attributes.name(first)
            same_name = sorted(i for i in clashes if attributes.name(i) == name)
            raise _error(src, attribute_lines[same_name[1]],
                         f"duplicate attribute name '{clip(name)}' (first declared on line "
                         f"{attribute_lines[same_name[0]]})", None, "attribute names must be unique")


def _take_attribute_run(src: ByteSource, header: Header) -> None:
    """The plain attribute lines that follow, in bulk (a word-count header has 100,000 of them)."""
    for run in src.take_run(_FAST_RUN, _FAST_RUNS):
        first = src.line_no + 1
        try:
            names = b"\x00".join(m.group(1) for m in run).decode(src.encoding).split("\x00")
        except UnicodeDecodeError:
            names = None
        if names is None or len(names) != len(run):
            # undecodable (or, in another encoding, a NUL): leave these lines to the line reader
            return
        header.building.add_many(names, [m.group(2).lower() == b"string" for m in run])
        header.attribute_lines.extend(range(first, first + len(run)))


def read_header(src: ByteSource) -> Header:
    """Read lines up to and including ``@data``; the data lines that follow stay unread in ``src``."""
    header: Header | None = None
    seen_any = False
    for line_no, raw in src.lines():
        line = raw.strip(WHITESPACE)
        if not line or line[0] == "%":
            continue
        seen_any = True
        fast = _FAST_ATTRIBUTE.match(line) if header is not None else None
        if fast:  # the common case, e.g. "@attribute w17 integer", without the general tokenizer
            kind = "string" if fast.group(2).lower() == "string" else "numeric"
            header.building.add(fast.group(1), kind)  # type: ignore[union-attr]
            header.attribute_lines.append(line_no)  # type: ignore[union-attr]
            _take_attribute_run(src, header)  # type: ignore[arg-type]
            continue
        # the keyword ends where WEKA's tokenizer ends a word (a space, a quote, a brace, a comma or %):
        # "@relation'name'" is @relation, "@relationship" is no keyword (WEKA refuses it too)
        keyword = _KEYWORD.match(line).group(0).lower() if line[0] == "@" else ""  # type: ignore[union-attr]
        if keyword == "@attribute":
            if header is None:
                raise _error(src, line_no, "@attribute before @relation", line,
                             "an ARFF file starts with '@relation NAME'")
            _parse_attribute(src, header, line_no, line)
        elif keyword == "@relation":
            if header is not None:
                raise _error(src, line_no, "a second @relation", line)
            tokens = _tokens(src, line_no, line)
            if len(tokens) < 2 or tokens[1].kind not in ("word", "quoted"):
                raise _error(src, line_no, "expected a relation name after @relation", line)
            if len(tokens) > 2:
                raise _error(src, line_no, f"unexpected '{clip(tokens[2].text)}' after the relation name", line,
                             "quote a relation name that contains spaces")
            header = Header(relation=tokens[1].text)
        elif keyword == "@end":
            if header is None:
                raise _error(src, line_no, "@end before @relation", line)
            _close_relation(src, header, line_no, line)
        elif keyword == "@data":
            if header is None:
                raise _error(src, line_no, "@data before @relation", line)
            if header.open_relations:
                rel = header.open_relations[-1]
                raise _error(src, line_no, f"relational attribute '{rel.name}' (line {rel.line}) is not closed",
                             line, f"end its attributes with '@end {rel.name}' before @data")
            if not len(header.building):
                raise _error(src, line_no, "@data before any @attribute", line,
                             "declare at least one attribute")
            header.attributes = header.building.build()
            header.building = AttributeListBuilder()
            tail = line[5:].strip(WHITESPACE)
            if tail and not tail.startswith("%"):
                raise _error(src, line_no, "unexpected text after @data", line,
                             "start the data on the next line")
            _check_duplicates(src, header.attributes, header.attribute_lines)
            header.data_line = line_no
            header.data_offset = src.offset
            return header
        else:
            what = "@relation" if header is None else "@attribute or @data"
            raise _error(src, line_no, f"expected {what}", line,
                         "this does not look like an ARFF header" if header is None else None)
    if not seen_any:
        raise _error(src, src.line_no or 1, "the file is empty", None,
                     "an ARFF file needs @relation, @attribute lines and @data")
    if header is None:
        raise _error(src, src.line_no, "no @relation line", None, "this does not look like an ARFF file")
    raise _error(src, src.line_no, "no @data line after the attributes", None,
                 "the file may be truncated; add '@data' followed by the instances")
