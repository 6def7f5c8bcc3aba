"""ARFF lexical rules shared by the reader and the writer: tokens, quoting and escapes.

The rules follow WEKA 3.6's ``ArffReader``, which reads with ``java.io.StreamTokenizer``: every
character up to and including the space is whitespace, ``%`` outside quotes starts a comment,
values may be quoted with ``'`` or ``"``, and a backslash inside quotes escapes the next character
(``\\n``, ``\\t``, ``\\r``, ``\\a``, ``\\b``, ``\\f``, ``\\v``, octal ``\\ooo``; any other character stands
for itself). The tokenizer is one linear-time regular expression whose alternatives never overlap,
so no input can make it backtrack exponentially (liac-arff 2.5.0 can, see conventions.md section 6).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

__all__ = ["Token", "tokenize", "iter_tokens", "unescape", "quote", "WHITESPACE", "UnterminatedQuote",
           "parse_number", "parse_numbers", "is_index", "strip_ws", "clip", "MAX_NUMBER_CHARS"]

#: Characters WEKA's tokenizer treats as whitespace: every code point up to the space, and no other
#: (a no-break space is part of a value, as in WEKA). Every path strips exactly these.
WHITESPACE = "".join(chr(i) for i in range(33))

# Numbers as WEKA reads them with Java's Double.valueOf, restricted to ASCII decimal and scientific
# notation: no '_' separators, no non-ASCII digits (Python's float() takes both), no hexadecimal or
# 'd'/'f' suffixes; NaN and Infinity spelled as Java spells them. Surrounding whitespace is trimmed
# (Double.valueOf trims), which matters only inside quotes.
_NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|NaN|Infinity)", re.ASCII)
_INDEX = re.compile(r"\+?[0-9]+", re.ASCII)

#: The longest number the data section takes (a value of a numeric attribute, or a weight), in
#: characters after trimming. Any double is written exactly in at most 1,077 characters (the smallest
#: subnormal in positional notation has 1,074 decimals; scientific notation needs at most 767
#: significant digits), and WEKA writes at most 24 (Utils.doubleToString, or Double.toString for large
#: values); a longer token is not data that any writer produced. Refusing it keeps a hostile line from
#: costing its length (a 1 MB number held and parsed in a 30,000-row file was 6-7x the arrays read).
#: WEKA itself reads such a token (Double.valueOf: a million digits become Infinity); this reader
#: refuses it, on both engines alike, naming the file, the line, the attribute and this limit.
MAX_NUMBER_CHARS = 4096


def strip_ws(text: str) -> str:
    """``text`` without leading and trailing ARFF whitespace (code points up to the space)."""
    return text.strip(WHITESPACE)


def parse_number(text: str) -> float:
    """The value of an ARFF number; ValueError when ``text`` is not one (see ``_NUMBER``)."""
    text = text.strip(WHITESPACE)
    if _NUMBER.fullmatch(text) is None:
        raise ValueError(text)
    return float(text)


def parse_numbers(texts: list[str]) -> tuple[Any, Any]:
    """``(values, ok)``: float64 and bool arrays for a list of strings, in the ARFF number grammar
    (the C scanner's; NaN where ``ok`` is False). For other readers' type detection (CSV)."""
    import numpy as np

    from toolkit.data import _arffscan

    values, ok = _arffscan.parse_numbers(list(texts))
    return np.frombuffer(values, dtype=np.float64).copy(), np.frombuffer(ok, dtype=np.bool_).copy()


def is_index(text: str) -> bool:
    """An attribute index of a sparse row: ASCII digits with an optional '+'."""
    return _INDEX.fullmatch(text) is not None


def clip(text: str, width: int = 80) -> str:
    """``text`` cut to ``width`` characters with an ellipsis, for messages (never the whole of a huge value)."""
    if len(text) <= width:
        return text
    return text[: width - 3] + "..."

# One token per match. The alternatives start with disjoint characters, and inside a quoted
# string the runs of plain characters and the escapes are disjoint too: matching is linear. The
# quoted bodies are written as "unrolled loops" ([^'\\]* (\\. [^'\\]*)*) with possessive quantifiers
# (*+): a run of plain characters and an escape never give characters back (nothing after them could
# match inside), so the regex engine keeps no state per character or per escape, and a value of millions
# of characters costs its own size (without *+, re kept ~70 bytes per escape: a 100 MB line of \' took 7 GB).
_TOKEN = re.compile(
    r"""
    [\x00-\x20]*
    (?:
        '(?P<sq>[^'\\]*+(?:\\.[^'\\]*+)*+)'
      | "(?P<dq>[^"\\]*+(?:\\.[^"\\]*+)*+)"
      | (?P<punct>[{},])
      | (?P<comment>%.*)
      | (?P<word>[^\x00-\x20{},'"%]+)
      | (?P<quote>['"])
    )
    """,
    re.VERBOSE | re.DOTALL,
)

_ESCAPE = re.compile(r"\\(?:([0-3][0-7]{0,2}|[4-7][0-7]?)|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


class UnterminatedQuote(ValueError):
    """A quote opened on a line and never closed; ``column`` is its 0-based position."""

    def __init__(self, column: int):
        super().__init__(column)
        self.column = column


class Token:
    """One lexical token: ``kind`` is 'word', 'quoted', '{', '}' or ','; ``column`` and ``end`` delimit it
    in the line (0-based, end exclusive)."""

    __slots__ = ("kind", "text", "column", "end")

    def __init__(self, kind: str, text: str, column: int, end: int = -1):
        self.kind = kind
        self.text = text
        self.column = column
        self.end = end

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Token({self.kind!r}, {self.text!r})"


def _unescape_one(match: re.Match[str]) -> str:
    octal, other = match.groups()
    if octal is not None:
        return chr(int(octal, 8))
    return _SIMPLE_ESCAPES.get(other, other)


def unescape(body: str) -> str:
    """Resolve backslash escapes inside a quoted value, as Java's StreamTokenizer does."""
    if "\\" not in body:
        return body
    return _ESCAPE.sub(_unescape_one, body)


def iter_tokens(line: str) -> Iterator[Token]:
    """The tokens of one line, one at a time, dropping whitespace and a trailing ``%`` comment.

    Lazy, so that a reader can stop at the first error of a line with millions of values.
    Raises :class:`UnterminatedQuote` when a quote is never closed on the line.
    """
    pos = 0
    end = len(line)
    match = _TOKEN.match
    while pos < end:
        m = match(line, pos)
        if m is None:  # only trailing whitespace is left
            return
        if m.end() == pos:
            return
        kind = m.lastgroup
        start = m.start(kind) if kind else pos
        if kind == "sq":
            yield Token("quoted", unescape(m.group("sq")), start - 1, m.end())
        elif kind == "dq":
            yield Token("quoted", unescape(m.group("dq")), start - 1, m.end())
        elif kind == "punct":
            yield Token(m.group("punct"), m.group("punct"), start, start + 1)
        elif kind == "word":
            yield Token("word", m.group("word"), start, m.end())
        elif kind == "comment":
            return
        elif kind == "quote":
            raise UnterminatedQuote(start)
        pos = m.end()


def tokenize(line: str) -> list[Token]:
    """All tokens of one line (see :func:`iter_tokens`)."""
    return list(iter_tokens(line))


_NEEDS_QUOTES = re.compile(r"""[\x00-\x20'"\\%,{}\x7f]""")
_ESCAPES_OUT = {"\\": "\\\\", "'": "\\'", '"': '\\"', "%": "\\%", "\n": "\\n", "\r": "\\r",
                "\t": "\\t"}
_TO_ESCAPE = re.compile(r"""[\\'"%\x00-\x1f\x7f]""")


def _escape_one(match: re.Match[str]) -> str:
    ch = match.group()
    simple = _ESCAPES_OUT.get(ch)
    if simple is not None:
        return simple
    return "\\%03o" % ord(ch)


def quote(value: str) -> str:
    """Return ``value`` as an ARFF token that both WEKA 3.6 and this reader read back unchanged.

    Quotes with ``'`` when the value is empty, is ``?``, contains whitespace (any Unicode
    whitespace, so that no reader can trim it), a quote, a backslash, ``%``, ``,``, ``{`` or ``}``.
    """
    if value == "" or value == "?" or _NEEDS_QUOTES.search(value) or value != value.strip() \
            or any(ch.isspace() for ch in value):
        return "'" + _TO_ESCAPE.sub(_escape_one, value) + "'"
    return value
