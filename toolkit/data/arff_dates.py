"""ARFF DATE attributes: Java SimpleDateFormat patterns, parsed to and from epoch milliseconds.

WEKA stores a date as milliseconds since 1970-01-01 in the JVM's time zone; the toolkit uses UTC
so that a file means the same everywhere. The common pattern letters are supported (y M d H h m
s S a E z Z and quoted literals); others are refused with the attribute named.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

__all__ = ["DEFAULT_DATE_FORMAT", "DateCodec", "UnsupportedDateFormat"]

#: WEKA's default, ISO-8601 without a zone.
DEFAULT_DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class UnsupportedDateFormat(ValueError):
    """The pattern uses a letter this reader cannot translate."""


def _translate(pattern: str) -> tuple[str, bool]:
    """Java pattern -> (strftime pattern, has milliseconds)."""
    out: list[str] = []
    millis = False
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            j = pattern.find("'", i + 1)
            if j == -1:
                raise UnsupportedDateFormat(f"unterminated quote in date format {pattern!r}")
            literal = pattern[i + 1:j] if j > i + 1 else "'"
            out.append(literal.replace("%", "%%"))
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


class DateCodec:
    """Parses and formats the values of one DATE attribute."""

    def __init__(self, pattern: str = DEFAULT_DATE_FORMAT):
        self.pattern = pattern
        self.strftime, self.millis = _translate(pattern)
        try:  # a pattern that repeats a field cannot be parsed: refuse it here, not on the first value
            probe = datetime(2001, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
            datetime.strptime(probe.strftime(self.strftime), self.strftime)
        except (ValueError, re.error) as exc:
            raise UnsupportedDateFormat(f"date format {pattern!r} cannot be used ({exc})") from None

    def parse(self, text: str) -> float:
        """Milliseconds since the epoch (UTC) for ``text``; ValueError when it does not match."""
        value = text
        fmt = self.strftime
        if self.millis:
            # Java's S is milliseconds; %f wants microseconds: pad the digits after the seconds
            value = re.sub(r"(?<=[.,:])(\d{1,3})(?!\d)", lambda m: m.group(1).ljust(3, "0"), value, count=1)
        moment = datetime.strptime(value, fmt)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return (moment - _EPOCH).total_seconds() * 1000.0

    def format(self, millis: float) -> str:
        moment = datetime.fromtimestamp(millis / 1000.0, tz=timezone.utc)
        text = moment.strftime(self.strftime)
        if self.millis:
            # strftime gives 6 digits for %f; Java's SSS is 3
            micro = f"{moment.microsecond:06d}"
            text = text.replace(micro, micro[:3], 1)
        return text
