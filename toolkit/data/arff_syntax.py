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

__all__ = ["Token", "tokenize", "unescape", "quote", "WHITESPACE", "UnterminatedQuote"]

#: Characters WEKA's tokenizer treats as whitespace: every code point up to the space.
WHITESPACE = "".join(chr(i) for i in range(33))

# One token per match. The alternatives start with disjoint characters, and inside a quoted
# string the two alternatives ([^'\\] and \\.) are disjoint too: matching is linear.
_TOKEN = re.compile(
    r"""
    [\x00-\x20]*
    (?:
        '(?P<sq>(?:[^'\\]|\\.)*)'
      | "(?P<dq>(?:[^"\\]|\\.)*)"
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
    """One lexical token: ``kind`` is 'word', 'quoted', '{', '}' or ','."""

    __slots__ = ("kind", "text", "column")

    def __init__(self, kind: str, text: str, column: int):
        self.kind = kind
        self.text = text
        self.column = column

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


def tokenize(line: str) -> list[Token]:
    """Split one line into tokens, dropping whitespace and a trailing ``%`` comment.

    Raises :class:`UnterminatedQuote` when a quote is never closed on the line.
    """
    tokens: list[Token] = []
    pos = 0
    end = len(line)
    match = _TOKEN.match
    while pos < end:
        m = match(line, pos)
        if m is None:  # only trailing whitespace is left
            break
        if m.end() == pos:
            break
        kind = m.lastgroup
        start = m.start(kind) if kind else pos
        if kind == "sq":
            tokens.append(Token("quoted", unescape(m.group("sq")), start - 1))
        elif kind == "dq":
            tokens.append(Token("quoted", unescape(m.group("dq")), start - 1))
        elif kind == "punct":
            tokens.append(Token(m.group("punct"), m.group("punct"), start))
        elif kind == "word":
            tokens.append(Token("word", m.group("word"), start))
        elif kind == "comment":
            break
        elif kind == "quote":
            raise UnterminatedQuote(start)
        pos = m.end()
    return tokens


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
