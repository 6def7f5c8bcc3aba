"""ARFF DATE attributes: Java SimpleDateFormat patterns, parsed to and from epoch milliseconds.

WEKA stores a date as milliseconds since 1970-01-01 in the JVM's time zone; the toolkit uses UTC
so that a file means the same everywhere (a value with a zone is converted to UTC). The common
pattern letters are supported (y M d H h m s S a E z Z X and quoted literals); others are refused
with the attribute named. Zones, as Java's SimpleDateFormat reads them: UTC, GMT and UT (with an
optional offset, GMT+04:30), numeric offsets (+0430, +04:30, Z), and the zone names Java knows in
English ("PST", "CEST", "Pacific Standard Time"; any case), at the offset Java gives them
(java_zone_names.json, made by scripts/weka/make_zone_names.py). A name whose offset Java takes
from the date's own rules (WET, MSK, ...) is refused with that reason rather than guessed.
S is a number of milliseconds, as in Java (".5" is 5 ms).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from functools import lru_cache
from importlib import resources

__all__ = ["DEFAULT_DATE_FORMAT", "DateCodec", "UnsupportedDateFormat", "ZoneNameError"]

#: WEKA's default, ISO-8601 without a zone.
DEFAULT_DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _with_year(moment: datetime, year: int) -> datetime:
    """``moment`` in ``year`` (29 February becomes 1 March in a common year, as Java's lenient calendar)."""
    try:
        return moment.replace(year=year)
    except ValueError:
        return moment.replace(year=year, month=3, day=1)


class UnsupportedDateFormat(ValueError):
    """The pattern uses a letter this reader cannot translate."""


class ZoneNameError(ValueError):
    """A zone name whose offset Java would take from the date's own zone rules (not reproduced here)."""


def _translate(pattern: str) -> tuple[str, bool]:
    """Java pattern -> (strftime pattern, has milliseconds)."""
    out: list[str] = []
    millis = False
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            if pattern.startswith("''", i):       # '' outside quotes: one quote
                out.append("'")
                i += 2
                continue
            literal, j = [], i + 1
            while True:                            # a quoted literal; '' inside it is one quote (Java)
                if j >= n:
                    raise UnsupportedDateFormat(f"unterminated quote in date format {pattern!r}")
                if pattern[j] == "'":
                    if pattern.startswith("''", j):
                        literal.append("'")
                        j += 2
                        continue
                    break
                literal.append(pattern[j])
                j += 1
            out.append("".join(literal).replace("%", "%%"))
            i = j + 1
            continue
        if not ch.isalpha():
            out.append("%%" if ch == "%" else ch)
            i += 1
            continue
        j = i
        while j < n and pattern[j] == ch:
            j += 1
        count = j - i
        if ch == "y":
            out.append("%y" if count == 2 else "%Y")
        elif ch == "M":
            out.append("%m" if count <= 2 else ("%b" if count == 3 else "%B"))
        elif ch == "d":
            out.append("%d")
        elif ch == "H":
            out.append("%H")
        elif ch == "h":
            out.append("%I")
        elif ch == "m":
            out.append("%M")
        elif ch == "s":
            out.append("%S")
        elif ch == "S":
            out.append("%f")
            millis = True
        elif ch == "a":
            out.append("%p")
        elif ch == "E":
            out.append("%a" if count <= 3 else "%A")
        elif ch in "zZX":
            out.append("%z")
        else:
            raise UnsupportedDateFormat(f"date pattern letter '{ch}' in {pattern!r} is not supported")
        i = j
    return "".join(out), millis


_ZONE_NAME = re.compile(r"(?<![A-Za-z])(?:UTC|GMT|UT)(?:([+-])(\d{1,2})(?::?(\d{2}))?)?(?![A-Za-z])")


@lru_cache(maxsize=1)
def _java_zone_names() -> tuple[re.Pattern[str], dict[str, int], frozenset[str]]:
    """(a pattern matching any name Java knows, fixed offsets in minutes, date-dependent names), lower case."""
    table = json.loads(resources.files("toolkit.data").joinpath("java_zone_names.json").read_text(encoding="utf-8"))
    fixed = {name.lower(): int(minutes) for name, minutes in table["fixed_minutes"].items()}
    dependent = frozenset(name.lower() for name in table["date_dependent"])
    names = sorted(set(table["fixed_minutes"]) | set(table["date_dependent"]), key=len, reverse=True)
    pattern = re.compile(r"(?<![A-Za-z])(?:" + "|".join(re.escape(n) for n in names) + r")(?![A-Za-z])", re.IGNORECASE)
    return pattern, fixed, dependent


def _named_zone_offset(m: re.Match[str]) -> str:
    _, fixed, dependent = _java_zone_names()
    name = m.group(0).lower()
    if name in dependent:
        raise ZoneNameError(f"zone name '{m.group(0)}' takes its offset from the date's own rules in Java; "
                            f"write a numeric offset (e.g. +0100) instead")
    minutes = fixed[name]
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def _zone_offset(m: re.Match[str]) -> str:
    sign, hours, minutes = m.group(1), m.group(2), m.group(3)
    if sign is None:
        return "+0000"
    return f"{sign}{int(hours):02d}{int(minutes or 0):02d}"


class DateCodec:
    """Parses and formats the values of one DATE attribute."""

    def __init__(self, pattern: str = DEFAULT_DATE_FORMAT):
        self.pattern = pattern
        self.strftime, self.millis = _translate(pattern)
        self.zoned = "%z" in self.strftime
        unquoted = re.sub(r"'[^']*'", "", pattern)
        # Java's fields default to 1970-01-01 00:00:00 where strptime's year defaults to 1900
        self.has_year = "y" in unquoted
        # yy: Java puts a two-digit year within 80 years before and 20 after the moment the format is made
        # (SimpleDateFormat's default century); strptime's %y pivots at 69
        now = datetime.now(timezone.utc).replace(microsecond=0)
        self.century_start = _with_year(now, now.year - 80) if re.search(r"(?<!y)yy(?!y)", unquoted) else None
        # X is ISO 8601 only in Java: offsets and Z, no names
        self.iso_zone = "X" in re.sub(r"'[^']*'", "", pattern) and not re.search(r"[zZ]", re.sub(r"'[^']*'", "", pattern))
        try:  # a pattern that repeats a field cannot be parsed: refuse it here, not on the first value
            probe = datetime(2001, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
            datetime.strptime(probe.strftime(self.strftime), self.strftime)
        except (ValueError, re.error) as exc:
            raise UnsupportedDateFormat(f"date format {pattern!r} cannot be used ({exc})") from None

    def parse(self, text: str) -> float:
        """Milliseconds since the epoch (UTC) for ``text``; ValueError when it does not match."""
        value = text
        fmt = self.strftime
        if self.zoned:
            # Java's z, Z and X read UTC, GMT, UT (optionally with an offset, GMT+4:30) as well as
            # +0430, +04:30 and Z; strptime's %z reads the numeric forms only
            value = _ZONE_NAME.sub(_zone_offset, value)
            if self.iso_zone:  # X reads an offset of hours alone too ("-08")
                value = re.sub(r"(?<=\s)([+-]\d{2})$", r"\g<1>00", value)
            elif re.search(r"[A-Za-z]{2}", value):
                value = _java_zone_names()[0].sub(_named_zone_offset, value)
        if self.millis:
            # Java's S is a number of milliseconds ("5" is 5 ms, "1234" is out of range);
            # %f reads a fraction: give it the milliseconds as three digits
            found = list(re.finditer(r"(?<=[.,])(\d+)(?!\d)", value))
            if not found:
                raise ValueError(text)
            last = found[-1]  # the milliseconds follow the seconds, the last of the numeric fields
            if len(last.group(1)) > 3:
                raise ValueError(text)
            value = value[:last.start()] + last.group(1).rjust(3, "0") + value[last.end():]
        moment = datetime.strptime(value, fmt)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        if not self.has_year:
            moment = moment.replace(year=1970)
        elif self.century_start is not None:
            start = self.century_start
            year = start.year // 100 * 100 + moment.year % 100
            if _with_year(moment, year) < start:
                year += 100
            moment = _with_year(moment, year)
        return (moment - _EPOCH).total_seconds() * 1000.0

    def format(self, millis: float) -> str:
        moment = datetime.fromtimestamp(millis / 1000.0, tz=timezone.utc)
        text = moment.strftime(self.strftime)
        if self.millis:
            # strftime gives 6 digits for %f; Java's SSS is 3
            micro = f"{moment.microsecond:06d}"
            text = text.replace(micro, micro[:3], 1)
        return text
