"""Characters a name may hold that act instead of showing: C0 and C1 controls (a line break ends a table's
row; ESC starts sequences that clear a terminal or set its title), the line and paragraph separators, and
the bidirectional overrides and isolates (they reorder what follows). One table, shared by the terminal
output and the plain-text tables. Standard library only: the command line imports it at start."""

from __future__ import annotations

from functools import lru_cache

__all__ = ["escape_controls"]

_CODES = (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A))


@lru_cache(maxsize=4)
def _table(keep: str) -> dict[int, str]:
    return {c: chr(c).encode("unicode_escape").decode("ascii") for c in _CODES if chr(c) not in keep}


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with each such character but those of ``keep`` shown as its Python escape (``\\x1b``,
    ``\\n``, ``\\u202e``)."""
    return str(text).translate(_table(keep))
