"""ARFF DATE attributes: Java SimpleDateFormat patterns, parsed to and from epoch milliseconds.

WEKA stores a date as milliseconds since 1970-01-01 in the JVM's time zone; the toolkit uses UTC
so that a file means the same everywhere (a value with a zone is converted to UTC). The common
pattern letters are supported (y M d H h m s S a E z Z X and quoted literals); others are refused
with the attribute named. Zones, as Java's SimpleDateFormat reads them: UTC, GMT and UT (with an
optional offset, GMT+04:30), numeric offsets (+0430, +04:30, Z), and the zone names Java knows in
English ("PST", "CEST", "Pacific Standard Time"; any case), at the offset Java gives them
(java_zone_names.json, made by scripts/weka/make_zone_names.py). A name whose offset Java takes
from the date's own rules (WET, MSK, ...) is refused with that reason rather than guessed.
S is a number of milliseconds, as in Java (".5" is 5 ms, SSSS's "0123" 123 ms, 1000 or more refused), also
without a separator ("yyyyMMddHHmmssSSS": a number followed directly by another takes as many digits as
it has letters); it is written with as many digits as the pattern has S. A one-letter X reads an offset
of hours alone ("-08"). The calendar is Java's default GregorianCalendar: Julian before 15 October 1582
(29 February 1500 exists; 5 to 14 October 1582 do not and are refused, as by WEKA's strict format),
Gregorian from then on, for reading and writing. Years are written zero-padded to the number of y
(yyyy: 0999) and read with any number of digits, as Java does.

Text fields as Java's strict calendar reads them: month and weekday names in their long or short form
whatever the number of letters, any case; a weekday must be the date's when the pattern has a day of
month, and without one it picks the month's first such day; AM/PM must agree with a 24-hour H, and alone
(no h or H) PM is 12:00. Quoted literals are matched as written. Not reproduced: Java ignores text after
the pattern ("10:30 AMX", a trailing "PM"), which is refused here, and the letters G, k, K, w, D.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from importlib import resources
from typing import Any

__all__ = ["DEFAULT_DATE_FORMAT", "DateCodec", "UnsupportedDateFormat", "ZoneNameError"]

#: WEKA's default, ISO-8601 without a zone.
DEFAULT_DATE_FORMAT = "yyyy-MM-dd'T'HH:mm:ss"


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


def _elements(pattern: str) -> list[tuple[str, Any]]:
    """Java pattern -> its fields and literals: (letter, count) or ("'", literal text)."""
    out: list[tuple[str, Any]] = []

    def literal(text: str) -> None:
        if out and out[-1][0] == "'":
            out[-1] = ("'", out[-1][1] + text)
        else:
            out.append(("'", text))

    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "'":
            if pattern.startswith("''", i):       # '' outside quotes: one quote
                literal("'")
                i += 2
                continue
            text, j = [], i + 1
            while True:                            # a quoted literal; '' inside it is one quote (Java)
                if j >= n:
                    raise UnsupportedDateFormat(f"unterminated quote in date format {pattern!r}")
                if pattern[j] == "'":
                    if pattern.startswith("''", j):
                        text.append("'")
                        j += 2
                        continue
                    break
                text.append(pattern[j])
                j += 1
            literal("".join(text))
            i = j + 1
            continue
        if not ch.isalpha():
            literal(ch)
            i += 1
            continue
        j = i
        while j < n and pattern[j] == ch:
            j += 1
        if ch not in _LETTERS:
            raise UnsupportedDateFormat(f"date pattern letter '{ch}' in {pattern!r} is not supported")
        out.append((ch, j - i))
        i = j
    return out


#: UTC as Java's SimpleDateFormat writes it for the offset letters (X: ISO 8601, which WEKA's reader wants
#: as "Z" for XXX, refusing "+0000")
_UTC_TEXT = {"Z": "+0000", "X": "Z"}

#: the pattern letters read and written, and their strptime directives (by the number of letters)
_LETTERS = "yMdHhmsSaEzZX"


def _directive(letter: str, count: int) -> str:
    if letter == "y":
        return "%y" if count == 2 else "%Y"
    if letter == "M":
        return "%m" if count <= 2 else ("%b" if count == 3 else "%B")
    if letter == "E":
        return "%a" if count <= 3 else "%A"
    if letter in "zZX":
        return "%z"
    return {"d": "%d", "H": "%H", "h": "%I", "m": "%M", "s": "%S", "S": "%f", "a": "%p"}[letter]


def _strptime_format(elements: list[tuple[str, Any]]) -> str:
    return "".join(arg.replace("%", "%%") if letter == "'" else _directive(letter, arg) for letter, arg in elements)


def _parse_format(elements: list[tuple[str, Any]]) -> str:
    """strptime's format for reading: month and weekday names by their short forms (the locator finds
    the names in a value and :meth:`DateCodec._strptime_input` shortens them), and every field but S
    (found by the locator)."""
    return _strptime_format([(letter, 3) if letter == "E" or (letter == "M" and arg >= 3) else (letter, arg)
                             for letter, arg in elements if letter != "S"])


def _translate(pattern: str) -> tuple[str, bool]:
    """Java pattern -> (strftime pattern, has milliseconds)."""
    elements = _elements(pattern)
    return _strptime_format(elements), any(letter == "S" for letter, _ in elements)


def _is_number(element: tuple[str, Any]) -> bool:
    letter, arg = element
    return letter in "ydHhmsS" or (letter == "M" and arg <= 2)


def _locator(elements: list[tuple[str, Any]]) -> re.Pattern[str]:
    """A regex over a whole value (after the zone names are made offsets) that finds the fields strptime
    cannot read as Java does: S (group S), a one-letter X (group X), the year (y) and the day of month (d).

    As SimpleDateFormat, a number directly followed by another number field ("yyyyMMddHHmmssSSS") is
    read with at most as many digits as it has letters, any other number up to the next non-digit.
    """
    parts = []
    for k, (letter, arg) in enumerate(elements):
        if letter == "'":
            parts.append("".join(r"\s+" if chunk.isspace() else re.escape(chunk)
                                 for chunk in re.findall(r"\s+|\S+", arg)))
        elif _is_number((letter, arg)):
            follows = k + 1 < len(elements) and _is_number(elements[k + 1])
            digits = rf"\d{{1,{arg}}}+" if follows else r"\d++"  # possessive: Java does not backtrack
            parts.append(f"(?P<{letter}>{digits})" if letter in "Sdy" else digits)
        elif letter in "zZX":
            zone = r"Z|[+-]\d\d(?::?\d\d(?::?\d\d(?:\.\d+)?)?)?"
            # X alone is Java's ISO offset of hours ("-08"), which strptime reads with minutes only
            parts.append(f"(?P<X>{zone})" if letter == "X" and arg == 1 else f"(?:{zone})")
        elif letter in "Ea":   # the weekday and AM/PM, which strptime reads but does not check
            parts.append(rf"(?P<{letter}>\D+?)")
        else:  # month names (N: M is a number's letter)
            parts.append(r"(?P<N>\D+?)")
    return re.compile("".join(parts), re.IGNORECASE)


#: 1582-10-15, the first day of the Gregorian calendar in Java's default GregorianCalendar (days since 1970)
_GREGORIAN_START = -141_427
_EPOCH_ORDINAL = 719_163  # date(1970, 1, 1).toordinal()
_EPOCH_JDN = 2_440_588    # its Julian day number
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_LONG_NAME = re.compile(r"(?<![A-Za-z])(?:" + "|".join(n for n in _MONTHS + _WEEKDAYS if len(n) > 3) + r")(?![A-Za-z])",
                        re.IGNORECASE)
_WEEKDAY_OF = {name[:3].lower(): k for k, name in enumerate(_WEEKDAYS)}


def _short_names(value: str) -> str:
    """Month and weekday names in their three-letter forms: Java reads either form whatever the number of
    letters (MMM reads "February", EEEE reads "Sat")."""
    return _LONG_NAME.sub(lambda m: m.group(0)[:3], value)


def _weekday(days: int) -> int:
    """Monday 0 of a day since 1970-01-01 (a Thursday)."""
    return (days + 3) % 7


def _days_from_fields(year: int, month: int, day: int, extra: int = 0) -> int | None:
    """Days since 1970-01-01 of a date as Java's GregorianCalendar reads it: Julian before 15 October
    1582, Gregorian from then on; None for the ten days the change skipped (5 to 14 October 1582)."""
    if (year, month, day) >= (1582, 10, 15):
        return date(year, month, day).toordinal() - _EPOCH_ORDINAL + extra
    if (year, month, day) >= (1582, 10, 5):
        return None
    a = (14 - month) // 12
    y = year + 4800 - a
    m = month + 12 * a - 3
    return day + extra + (153 * m + 2) // 5 + 365 * y + y // 4 - 32083 - _EPOCH_JDN


def _fields_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day since 1970-01-01 in Java's GregorianCalendar (the inverse of the above)."""
    if days >= _GREGORIAN_START:
        try:
            moment = date.fromordinal(days + _EPOCH_ORDINAL)
        except (ValueError, OverflowError):
            return 10_000, 1, 1
        return moment.year, moment.month, moment.day
    c = days + _EPOCH_JDN + 32082
    d = (4 * c + 3) // 1461
    e = c - 1461 * d // 4
    m = (5 * e + 2) // 153
    return d - 4800 + m // 10, m + 3 - 12 * (m // 10), e - (153 * m + 2) // 5 + 1


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
        self.elements = _elements(pattern)
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
        # strptime reads every field but S (found by the locator and added as milliseconds)
        self._parse_format = _parse_format(self.elements)
        self._locator = _locator(self.elements)
        letters = {letter for letter, _ in self.elements}
        self.names = "E" in letters or any(letter == "M" and arg >= 3 for letter, arg in self.elements)
        # strptime takes a weekday without checking it, and AM/PM only with h: Java checks both against the
        # date and a 24-hour H (its strict calendar), and without a day of month a weekday picks the day
        self.weekday = "E" in letters
        self.day_of_month = "d" in letters
        self.am_pm_with_24_hours = "a" in letters and "H" in letters
        self.am_pm_alone = "a" in letters and not letters & {"h", "H"}   # PM is hour 12 (Java: 12 x AM_PM + 0)
        # the fields strptime cannot read as Java does are found by the locator first
        self._locate = (self.millis or self.iso_zone or self.names or self.am_pm_with_24_hours
                        or self.am_pm_alone)

    def _strptime_input(self, value: str, found: re.Match[str], *, day: str | None = None,
                        pad_year: bool = False) -> str:
        """``value`` for ``_parse_format``: without the milliseconds, an X offset of hours with its
        minutes ("-08" -> "-0800"), the day of month replaced by ``day`` when given, and the year
        in four digits when ``pad_year`` (strptime's %Y reads four: "999", "02001")."""
        edits = []
        for name, text in found.groupdict().items():
            if text is None:
                continue
            start, end = found.span(name)
            if name == "S":
                edits.append((start, end, ""))
            elif name == "X" and re.fullmatch(r"[+-]\d{2}", text):
                edits.append((start, end, text + "00"))
            elif name == "d" and day is not None:
                edits.append((start, end, day))
            elif name == "y" and pad_year and int(text) <= 9999:
                edits.append((start, end, f"{int(text):04d}"))
            elif name in "EN":   # a month's or weekday's long name where the format reads the short one
                edits.append((start, end, _short_names(text)))
        for start, end, new in sorted(edits, reverse=True):
            value = value[:start] + new + value[end:]
        return value

    def parse(self, text: str) -> float:
        """Milliseconds since the epoch (UTC) for ``text``; ValueError when it does not match.

        The fields are read as Java's default GregorianCalendar reads them: dates before 15 October
        1582 in the Julian calendar (29 February 1500 exists), the ten days before it refused (as
        WEKA's strict SimpleDateFormat does)."""
        value = text
        if self.zoned:
            # Java's z, Z and X read UTC, GMT, UT (optionally with an offset, GMT+4:30) as well as
            # +0430, +04:30 and Z; strptime's %z reads the numeric forms only
            value = _ZONE_NAME.sub(_zone_offset, value)
            if not self.iso_zone and re.search(r"[A-Za-z]{2}", value):
                value = _java_zone_names()[0].sub(_named_zone_offset, value)
        millis = 0
        found = None
        if self._locate:
            # Java's S is a number of milliseconds ("5" is 5 ms, "0123" 123 ms; 1000 or more is refused,
            # as WEKA's strict SimpleDateFormat does), read up to the next non-digit, or as many digits
            # as there are S when another number follows without a separator ("ssSSSHH"); X reads an
            # offset of hours alone too ("-08", also right after the minutes: "03:04-08")
            found = self._locator.fullmatch(value)
            if found is None:
                raise ValueError(text)
            if found.groupdict().get("S") is not None:
                millis = int(found.group("S"))
                if millis > 999:
                    raise ValueError(text)
        extra_day = 0
        try:
            moment = datetime.strptime(value if found is None else self._strptime_input(value, found),
                                       self._parse_format)
        except ValueError:
            retried = self._retry(value, found)
            if retried is None:
                raise
            moment, extra_day = retried
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
        days = _days_from_fields(moment.year, moment.month, moment.day, extra_day)
        if days is None:  # 5-14 October 1582: Java's calendar skips them
            raise ValueError(text)
        if self.weekday:
            weekday = _WEEKDAY_OF.get(found.group("E").strip().lower()[:3])
            if weekday is None:
                raise ValueError(text)
            if self.day_of_month:
                if _weekday(days) != weekday:
                    raise ValueError(text)
            else:   # the month's first such day (Java: day of week in month 1); none in 5-14 October 1582
                first = _days_from_fields(moment.year, moment.month, 1, extra_day)
                found_day = None if first is None else _days_from_fields(
                    moment.year, moment.month, 1 + (weekday - _weekday(first)) % 7, extra_day)
                if found_day is None:
                    raise ValueError(text)
                days = found_day
        if self.am_pm_with_24_hours or self.am_pm_alone:
            am_pm = found.group("a").strip().lower()
            if am_pm not in ("am", "pm") or (self.am_pm_with_24_hours and (am_pm == "pm") != (moment.hour >= 12)):
                raise ValueError(text)
            if self.am_pm_alone and am_pm == "pm":
                moment = moment.replace(hour=12)
        seconds = moment.hour * 3600 + moment.minute * 60 + moment.second
        offset = moment.utcoffset() or timedelta(0)
        return float(days * 86_400_000 + seconds * 1000 + millis + moment.microsecond // 1000
                     - offset // timedelta(milliseconds=1))

    def _retry(self, value: str, found: re.Match[str] | None) -> tuple[datetime, int] | None:
        """What strptime refused but Java reads: a year not of four digits ("999-05-05", yyyyy's "02001"),
        and 29 February of a year before 1582 that is a leap year in the Julian calendar only (1500):
        (the moment, read on the 28th, and the day to add), or None."""
        if not self.has_year or self.century_start is not None:
            return None
        found = found or self._locator.fullmatch(value)
        if found is None:
            return None
        year = found.groupdict().get("y")
        pad_year = year is not None and len(year) != 4
        day = found.groupdict().get("d")
        leap_day = day is not None and day.isdigit() and int(day) == 29
        if not (pad_year or leap_day):
            return None
        for day_text in ((None, "28") if leap_day else (None,)):
            try:
                moment = datetime.strptime(self._strptime_input(value, found, day=day_text, pad_year=pad_year),
                                           self._parse_format)
            except ValueError:
                continue
            if day_text is None:
                return moment, 0
            if moment.month == 2 and moment.year < 1582 and moment.year % 4 == 0:
                return moment, 1
            return None
        return None

    def format(self, millis: float) -> str:
        """``millis`` as text of the pattern: the fields of Java's default GregorianCalendar in UTC
        (the Julian calendar before 15 October 1582), numbers as wide as the pattern's letters."""
        ms = int(millis)  # Java's (long): towards zero
        days, ms_of_day = divmod(ms, 86_400_000)
        year, month, day = _fields_from_days(days)
        if not 1 <= year <= 9999:
            raise ValueError(f"date {millis} ms is outside the years 1 to 9999")
        hour, rest = divmod(ms_of_day, 3_600_000)
        minute, rest = divmod(rest, 60_000)
        second, milli = divmod(rest, 1000)
        weekday = _weekday(days)
        numbers = {"d": day, "H": hour, "h": (hour + 11) % 12 + 1, "m": minute, "s": second, "S": milli}
        out = []
        for letter, arg in self.elements:
            if letter == "'":
                out.append(arg)
            elif letter == "y":  # Java: yy is the last two digits, otherwise zero-padded to the letters
                out.append(f"{year % 100:02d}" if arg == 2 else f"{year:0{arg}d}")
            elif letter == "M":
                out.append(f"{month:0{arg}d}" if arg <= 2 else (_MONTHS[month - 1][:3] if arg == 3 else _MONTHS[month - 1]))
            elif letter in numbers:   # Java: as many digits as letters at least ("d" writes 1, "dd" 01); "ddd"
                # writes 01, not Java's 001, which WEKA reads either way and this reader only so
                out.append(f"{numbers[letter]:0{arg if letter == 'S' else min(arg, 2)}d}")
            elif letter == "a":
                out.append("AM" if hour < 12 else "PM")
            elif letter == "E":
                out.append(_WEEKDAYS[weekday][:3] if arg <= 3 else _WEEKDAYS[weekday])
            else:  # the values are UTC, written as Java writes that zone: z its name, Z an offset, X "Z"
                out.append(_UTC_TEXT[letter] if letter != "z" else ("UTC" if arg < 4 else "Coordinated Universal Time"))
        return "".join(out)
