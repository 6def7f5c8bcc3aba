"""A huge nominal declaration costs its size (review point 8): one ``@attribute`` line of 2,000,000 values
took 17.5 s and 985 MB in ``toolkit info`` (one Token object per value and per comma, then a dict of the
values). Plain lists (unquoted values, or quoted ones without escapes) are now split without a Token per
value and checked for duplicates through 64-bit hashes; every other line still goes through the
tokenizer, and the fast reading accepts exactly what the tokenizer accepts, with the same values and
the same errors (compared here with the tokenizer's reading on random lines).
"""

from __future__ import annotations

import json
import random
import sys
import tracemalloc
from pathlib import Path

import pytest

from toolkit.data import arff, arff_header
from toolkit.data.arff_header import read_header
from toolkit.data.arff_source import ByteSource
from toolkit.errors import ArffFormatError


def _header(text: str):
    return read_header(ByteSource(text=text))


def _values(n: int) -> list[str]:
    """n distinct values of the kinds a plain list holds: words, numbers, non-ASCII, '?'-like text."""
    kinds = ["v{}", "{}", "x-{}.5", "\u00e9t\u00e9{}", "A_{}_b", "{}e3"]
    return [kinds[i % len(kinds)].format(i) for i in range(n)]


@pytest.mark.parametrize("form", ["plain", "spaced", "quoted", "mixed"])
def test_a_200000_value_declaration_is_read_right_in_bounded_memory(form):
    values = _values(200_000)
    if form == "plain":
        spec = ",".join(values)
    elif form == "spaced":
        spec = " ,\t".join(values)
    elif form == "quoted":
        values = [v + " " + v[::-1] for v in values]  # spaces: quoted
        spec = ",".join(f"'{v}'" for v in values)
    else:
        values = [v + ", " if i % 3 == 0 else v for i, v in enumerate(values)]  # a comma inside quotes
        spec = ",".join(f"'{v}'" if i % 3 == 0 else v for i, v in enumerate(values))
    line = "@attribute big {" + spec + "}  % a comment"
    src = ByteSource(text="@relation r\n" + line + "\n@attribute c numeric\n@data\n")
    tracemalloc.start()
    try:
        header = read_header(src)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    got = header.attributes[0].values
    assert got == tuple(values)
    assert [a.name for a in header.attributes] == ["big", "c"]
    # the values themselves (str objects and their tuple) are the result; the reading may cost a few times
    # the line on top of them (now ~5x; a Token per value and per comma cost ~50x)
    result = sum(sys.getsizeof(v) for v in got) + sys.getsizeof(got)
    assert peak < result + 10 * len(line), (peak, result, len(line))


def test_the_declared_values_are_read_in_the_data_too():
    values = _values(200_000)
    text = "@relation r\n@attribute a {" + ",".join(values) + "}\n@data\n" + values[-1] + "\n" + values[7] + "\n"
    for engine in ("fast", "strict"):
        ds = arff.read_text(text, engine=engine, class_attribute=None)
        assert ds.X[:, 0].tolist() == [len(values) - 1.0, 7.0]


def test_a_repeated_value_of_a_huge_list_is_named():
    values = _values(200_000)
    values[150_000] = values[123_456]
    with pytest.raises(ArffFormatError, match=rf":2: attribute 'a' declares the nominal value '{values[123_456]}' twice"):
        _header("@relation r\n@attribute a {" + ",".join(values) + "}\n@data\n")


#: every attribute line of tests/golden/weka_nominal_lists.json (fixed cases first, then random lists)
WEKA_LISTS = json.loads((Path(__file__).parent / "golden" / "weka_nominal_lists.json").read_text(encoding="utf-8"))
LINES = [line for line, _ in WEKA_LISTS["lines"]]


def _read(line: str) -> tuple | str:
    try:
        header = _header(f"@relation r\n{line}\n@data\n")
    except ArffFormatError as exc:
        return str(exc)
    return tuple((a.name, a.kind, a.values) for a in header.attributes)


def _random_line(rng: random.Random) -> str:
    """Half the lines are lists of values (some repeated, some malformed), half any characters."""
    if rng.random() < 0.5:
        items = ["x", "yz", "\u00e9", "1", "?", "'a b'", "''", "'c,d'", "'e}'", "\"f g\"", "'it\\'s'", "'%'",
                 "x y", "", "'x'"]
        seps = [",", ",", " , ", ",\t", ", "]
        chosen = [rng.choice(items) for _ in range(rng.randint(1, 8))]
        body = "".join(item + rng.choice(seps) for item in chosen[:-1]) + chosen[-1]
    else:
        pieces = ["x", "yz", "\u00e9", "1", "?", " ", "\t", ",", ",", ", ", "'", "'", "\"", "\\", "\\'", "{",
                  "}", "%", "'a b'", "'c,d'", "'e}'", "''", "\"f g\"", "\x00", "\u00a0"]
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
    close = rng.choice(["}", "}", "}", "", "} %x", "} y", " } ", "}%'"])
    return "@attribute n {" + body + close


def _compare(line: str, monkeypatch) -> None:
    fast = _read(line)
    with monkeypatch.context() as m:
        m.setattr(arff_header, "_plain_nominal", lambda _line: None)  # every line through the tokenizer
        reference = _read(line)
    assert fast == reference, line


def test_lists_read_as_the_tokenizer_reads_them(monkeypatch):
    for line in LINES:
        _compare(line, monkeypatch)


def test_random_lists_read_as_the_tokenizer_reads_them(monkeypatch):
    rng = random.Random(8)
    plain = 0
    for _ in range(4000):
        line = _random_line(rng)
        plain += arff_header._plain_nominal(line) is not None
        _compare(line, monkeypatch)
    assert plain > 500  # the fast reading was exercised, not only the fallback


def test_nominal_lists_read_as_weka_reads_them():
    """tests/golden/weka_nominal_lists.json (scripts/weka/make_nominal_list_refs.py): WEKA 3.6.14's values of
    1,300 attribute lines, or its refusal. WEKA separates values by commas or white space and skips empty
    items (``{a b, c}`` is a, b, c; ``{x,,y,}`` is x, y), which the toolkit refused."""
    wrong = []
    for line, weka_values in WEKA_LISTS["lines"]:
        got = _read(line)
        ours = None if isinstance(got, str) else list(got[0][2])
        if ours != weka_values:
            wrong.append((line, weka_values, ours if ours is not None else got))
    assert not wrong, f"{len(wrong)} of {len(WEKA_LISTS['lines'])} lines differ, e.g. {wrong[:3]}"
