"""What parsing a JSON text may cost, checked before parsing it.

``json.loads`` turns every list or object into a Python object of 56 bytes or more and every number
into one of 24-32: a line of ``[],`` expands about 20 times (a 150 MB results line took 3.9 GB), a list
of short floats about 8 times. Results files and model files are read whole into such objects, so a
text whose estimated cost exceeds ``max(EXPANSION_FLOOR, EXPANSION * len(text))`` is refused instead.
"""

from __future__ import annotations

__all__ = ["parse_cost_problem", "MIN_CHECKED", "EXPANSION", "EXPANSION_FLOOR"]

#: shorter texts are not checked (they cannot cost much)
MIN_CHECKED = 1 << 20
#: a text may cost this many times its length ...
EXPANSION = 8
#: ... or this many bytes, whichever is more
EXPANSION_FLOOR = 1 << 30
#: bytes per list or object (an empty list is 56, a dict 64) and per element (a pointer, and a float object)
_CONTAINER_BYTES, _ELEMENT_BYTES = 64, 32


def parse_cost_problem(text: str | bytes) -> str:
    """Empty when ``text`` is cheap enough to parse; else what it would cost (for an error message). The
    estimate counts every bracket and comma, inside strings too, so it errs on the costly side."""
    n = len(text)
    if n < MIN_CHECKED:
        return ""
    opening_list, opening_object, comma = (b"[", b"{", b",") if isinstance(text, bytes) else ("[", "{", ",")
    containers, elements = text.count(opening_list) + text.count(opening_object), text.count(comma)
    cost = containers * _CONTAINER_BYTES + elements * _ELEMENT_BYTES
    if cost > max(EXPANSION_FLOOR, EXPANSION * n):
        return (f"{containers:,} lists and objects and {elements:,} elements in {n:,} characters would take "
                f"about {cost >> 20:,} MiB to read")
    return ""
