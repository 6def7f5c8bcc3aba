"""WEKA 3.6.14 reads tab-separated values, relational attributes and time-zoned dates as the toolkit does,
and reads back what the toolkit writes for them (issue 16). ``tests/golden/weka_formats.json`` comes from
``scripts/weka/check_formats.py`` (Debian's weka, Java); this test needs no Java.

WEKA, run with ``-Duser.timezone=UTC``, prints each date in UTC with the attribute's pattern; the date and
time part of what it printed is read here with Python's datetime (independently of the toolkit's date
code) and compared with the instant the toolkit stored.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

DATA = json.loads((Path(__file__).parent / "golden" / "weka_formats.json").read_text(encoding="utf-8"))
CASES = DATA["cases"]


@pytest.mark.parametrize("name", sorted(CASES))
def test_weka_reads_the_input_and_the_written_file_alike(name):
    case = CASES[name]
    assert case["weka_reads_original"] == "ok" and case["weka_reads_written"] == "ok"
    assert case["same_data_in_weka"] is True
    assert case["toolkit_reads_written"] == "ok"
    assert case["weka_rows"] == case["toolkit_rows"] > 0


_FORMS = ["%Y-%m-%d %H:%M", "%y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M:%S"]


def test_the_dates_instants_equal_wekas():
    pairs = CASES["dates with zones"]["dates"]
    assert len(pairs) == 2
    for pair in pairs:
        for form, printed, ms in zip(_FORMS, pair["weka"], pair["toolkit_ms"]):
            stamp, zone = printed.rsplit(" ", 1)
            assert zone in ("UTC", "+0000", "Z", "GMT")
            moment = datetime.strptime(stamp, form).replace(tzinfo=timezone.utc)
            assert moment.timestamp() * 1000 == ms, (printed, ms)
