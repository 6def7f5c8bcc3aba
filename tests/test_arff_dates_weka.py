"""DATE values at the edges of Java's SimpleDateFormat and GregorianCalendar, read and written as WEKA
3.6.14 does. ``tests/golden/weka_date_edges.json`` comes from ``scripts/weka/make_date_edge_refs.py``
(WEKA's ``Attribute.parseDate`` / ``formatDate`` in UTC, Java 17); this test needs no Java.

* S is a number of milliseconds (Java): after a separator or abutting the seconds ("yyyyMMddHHmmssSSS"),
  "0123" with SSSS is 123 ms, 1000 or more is refused; written with as many digits as the pattern has S.
* a one-letter X reads an offset of hours alone, also right after a field ("03:04-08").
* before 15 October 1582 Java's calendar is Julian (1500-02-29 exists, 5-14 October 1582 do not);
  years below 1000 are written zero-padded to the pattern's width and read back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.data import arff
from toolkit.data.arff_dates import DateCodec
from toolkit.errors import ArffFormatError

GOLDEN = json.loads((Path(__file__).parent / "golden" / "weka_date_edges.json").read_text(encoding="utf-8"))
WEKA_MS = {(pattern, value): ms for pattern, value, ms in GOLDEN["parse"]}


def _arff(pattern: str, values: list[str]) -> str:
    quoted = pattern.replace("\\", "\\\\").replace("'", "\\'")
    rows = "".join("'" + v.replace("'", "\\'") + "'\n" for v in values)
    return f"@relation r\n@attribute d date '{quoted}'\n@data\n{rows}"


@pytest.mark.parametrize("pattern,value,weka_ms", GOLDEN["parse"], ids=[f"{p}|{v}" for p, v, _ in GOLDEN["parse"]])
def test_a_value_is_read_as_weka_reads_it(pattern, value, weka_ms):
    codec = DateCodec(pattern)
    if weka_ms is None:
        with pytest.raises(ValueError):
            codec.parse(value)
    else:
        assert codec.parse(value) == weka_ms


@pytest.mark.parametrize("pattern,millis,weka_text", GOLDEN["format"],
                         ids=[f"{p}|{ms}" for p, ms, _ in GOLDEN["format"]])
def test_a_value_is_written_as_weka_writes_it(pattern, millis, weka_text):
    codec = DateCodec(pattern)
    assert codec.format(float(millis)) == weka_text
    if "yy-" not in pattern or "yyy" in pattern:  # a two-digit year is read back in the default century
        assert codec.parse(weka_text) == float(millis) - float(millis) % _precision(pattern)


def _precision(pattern: str) -> int:
    """The milliseconds a pattern keeps (patterns of the golden file: ms, seconds, minutes or days)."""
    if "S" in pattern:
        return 1
    if "s" in pattern:
        return 1000
    if "m" in pattern:
        return 60_000
    return 86_400_000


@pytest.mark.parametrize("engine", ["fast", "strict"])
def test_the_reviewers_files_read_as_in_weka(engine):
    """The files of the review (ms_nosep, ms_4S, xzone, julian, y999): every value WEKA reads, read alike by
    both engines."""
    by_pattern: dict[str, list[tuple[str, int]]] = {}
    for (pattern, value), ms in WEKA_MS.items():
        if ms is not None:
            by_pattern.setdefault(pattern, []).append((value, ms))
    for pattern, pairs in by_pattern.items():
        ds = arff.read_text(_arff(pattern, [v for v, _ in pairs]), engine=engine, class_attribute=None)
        assert ds.X[:, 0].tolist() == [float(ms) for _, ms in pairs], pattern


@pytest.mark.parametrize("engine", ["fast", "strict"])
@pytest.mark.parametrize("pattern,value", [(p, v) for (p, v), ms in WEKA_MS.items() if ms is None])
def test_values_weka_refuses_are_refused_with_the_attribute_named(engine, pattern, value):
    with pytest.raises(ArffFormatError, match="of date attribute 'd' does not match the format"):
        arff.read_text(_arff(pattern, [value]), engine=engine, class_attribute=None)


def test_milliseconds_are_written_in_their_field_and_read_back():
    """`convert ms_write.arff`: 20010101000000.000 was written 20010101000.000000 (the first '000000' of
    the text shortened, not the fraction)."""
    text = ("@relation r\n@attribute d date 'yyyyMMddHHmmss.SSS'\n@attribute c {a,b}\n@data\n"
            "20010101000000.000,a\n20010101120000.007,b\n")
    ds = arff.read_text(text)
    written = arff.to_text(ds)
    assert written.splitlines()[-2:] == ["20010101000000.000,a", "20010101120000.007,b"]
    assert arff.read_text(written).X[:, 0].tolist() == [978307200000.0, 978350400007.0]  # WEKA's, see GOLDEN


def test_years_below_1000_are_written_with_four_digits_and_read_back():
    ds = arff.read_text("@relation r\n@attribute d date 'yyyy-MM-dd'\n@attribute c {a,b}\n@data\n0999-05-05,a\n")
    assert ds.X[0, 0] == WEKA_MS[("yyyy-MM-dd", "0999-05-05")]
    written = arff.to_text(ds)
    assert "0999-05-05,a" in written.splitlines()
    assert arff.read_text(written).X[0, 0] == ds.X[0, 0]


def _julian_days_back_from_the_cutover():
    """Every day from 1582-10-04 (Julian; Java's day before 1582-10-15, which is -141,427 days from 1970)
    back to 0001-01-01, by walking the Julian calendar's months (a leap year every 4th): (y, m, d, days)."""
    lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    y, m, d, days = 1582, 10, 4, -141_428
    while y >= 1:
        yield y, m, d, days
        days -= 1
        d -= 1
        if d == 0:
            m -= 1
            if m == 0:
                y, m = y - 1, 12
            d = lengths[m - 1] + (1 if m == 2 and y % 4 == 0 else 0)


def test_dates_before_1582_follow_the_julian_calendar_day_by_day():
    """A brute-force reference, independent of the reader's arithmetic: every 29 February and every
    97th day of the Julian calendar, read and written."""
    codec = DateCodec("yyyy-MM-dd")
    checked = 0
    for k, (y, m, d, days) in enumerate(_julian_days_back_from_the_cutover()):
        if k % 97 and not (m == 2 and d == 29) and y != 1582:
            continue
        text = f"{y:04d}-{m:02d}-{d:02d}"
        assert codec.parse(text) == days * 86_400_000.0, text
        assert codec.format(days * 86_400_000.0) == text
        checked += 1
    assert checked > 6000
    for skipped in range(5, 15):  # the ten days Java's calendar leaves out
        with pytest.raises(ValueError):
            codec.parse(f"1582-10-{skipped:02d}")
    assert codec.parse("1582-10-15") == -141_427 * 86_400_000.0


def test_dates_are_written_as_weka_writes_them():
    """scripts/weka/make_date_format_refs.py: WEKA 3.6.14's Attribute.formatDate for 26 patterns at 12
    moments. The writer padded one-letter numbers ("d" gave 01, "y-M-d H:m:s" 1970-01-01 00:00:00) and
    wrote every zone as +0000, which WEKA refuses under XXX (it writes "Z"); z is the zone's name."""
    golden = json.loads((Path(__file__).parent / "golden" / "weka_date_formats.json").read_text(encoding="utf-8"))
    wrong = [(pattern, ms, text, DateCodec(pattern).format(ms)) for pattern, ms, text in golden["cases"]
             if DateCodec(pattern).format(ms) != text]
    assert not wrong, wrong[:5]
    # and this reader reads WEKA's text back to the moment, to the pattern's precision
    for pattern, ms, text in golden["cases"]:
        codec = DateCodec(pattern)
        if any(letter in pattern for letter in "dMy") and "S" in pattern and "E" not in pattern:
            assert codec.parse(text) == ms, (pattern, text)
