"""Names as cells of a table: plain text (control characters escaped, widths in terminal columns) and
Markdown (markup characters escaped). Shared by the comparison tables, the per-class and confusion views,
and the commands' own tables (``toolkit.cli.plain_table``)."""

from __future__ import annotations

import unicodedata

from toolkit.control_characters import escape_controls

__all__ = ["plain_cell", "display_width", "aligned", "markdown_escape"]


def plain_cell(text: str) -> str:
    """A name as one cell of a plain-text table: a line break, a tab or another control character (and a
    bidirectional override) shown as its escape, \\n, which would else break the row or the terminal."""
    return escape_controls(text)


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: two for a wide character (CJK, most emoji), none for a
    combining mark or a zero-width one, else one; len() misplaced the columns of a table after such a name."""
    return sum(0 if unicodedata.combining(ch) or unicodedata.category(ch) == "Cf" else
               2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def aligned(text: str, width: int, left: bool = True) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (:func:`display_width`), on the right
    (``left``: a name) or on the left (a number)."""
    space = " " * (width - display_width(text))
    return text + space if left else space + text


#: characters of a name that Markdown (GitHub's) would read as markup: a table's cell separator, HTML
#: tags, emphasis (* and _), strikethrough, code, links and maths
_MARKDOWN_SPECIAL = {"\\": "\\\\", "|": "\\|", "*": "\\*", "_": "\\_", "~": "\\~", "`": "\\`", "[": "\\[",
                     "]": "\\]", "$": "\\$", "<": "&lt;", ">": "&gt;", "&": "&amp;"}


def markdown_escape(text: str) -> str:
    """A dataset, pipeline or class name as Markdown text (a table cell keeps its columns): a line break
    (any str.splitlines() splits at) or another control character becomes a space, which would else end
    the table's row."""
    return "".join(_MARKDOWN_SPECIAL.get(ch, " " if _breaks_line(ch) else ch) for ch in str(text))


def _breaks_line(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Zl", "Zp")   # \n \r \t ... and U+2028, U+2029
