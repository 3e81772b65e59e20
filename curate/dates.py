"""Dates and times as answers: read them from text and compare a response's with a reference's.

A date is read only where its writing says which number is the day, the month and the year:
"July 20, 1969", "20 July 1969", "14th of July", "1969-07-20", "Dec. 25", "May 2020", "44 BC",
decades ("1990s"), centuries ("19th century", "the 1800s") and clock times ("10:30 am"). A
numeric date whose day and month could trade places ("03/04/2020") has both readings, and
is decided only when both give the same verdict. A bare year is a number (see
:mod:`curate.quantities`), not a date.

Comparison is field by field: every field the reference states must be in the response and
equal (the response may say more: "July 14, 1789" for 1789); a field both state differently
is incorrect; a field the reference states and the response leaves out is unsure. Times that
differ are left unsure, since a time's reference may be on another clock.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, fields

from .model import Correctness

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            "january jan",
            "february feb",
            "march mar",
            "april apr",
            "may",
            "june jun",
            "july jul",
            "august aug",
            "september sep sept",
            "october oct",
            "november nov",
            "december dec",
        ),
        start=1,
    )
    for name in names.split()
}


_ALSO_WORDS = {"may", "march", "mar"}  # months only with their capital


@dataclass(frozen=True)
class When:
    """The fields a date or time states; None where it is silent."""

    year: int | None = None
    month: int | None = None
    day: int | None = None
    era: str | None = None  # "bc" or "ad"
    decade: int | None = None  # 1990 for "the 1990s"
    century: int | None = None  # 19 for "19th century" and for "the 1800s"
    hour: int | None = None  # 0-23 when am/pm or a 24-hour time says so, else 1-12 as written
    minute: int | None = None
    half_day: str | None = None  # "am"/"pm" when written


@dataclass(frozen=True)
class DateMention:
    readings: tuple[When, ...]  # two for "03/04/2020"
    start: int
    end: int


_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_ERA = r"(?P<era>BCE|BC|B\.C\.|AD|A\.D\.|CE|C\.E\.)"
_PATTERNS = [
    re.compile(p, re.I)
    for p in (
        r"\b(?P<year>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b",  # ISO
        r"(?<![\d/.\-])(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4})\b",
        rf"\b{_MONTH}\s+{_DAY}(?:,\s*|\s+){_YEAR}\b",
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b",
        rf"\b{_MONTH},?\s+{_YEAR}\b",
        rf"\b{_MONTH}\s+{_DAY}\b(?!\s*[:/.]\d)",
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}(?!\w)",
        rf"\b(?P<year>\d{{1,4}})\s*{_ERA}(?!\w)",
        rf"(?<!\w){_ERA}\s*(?P<year>\d{{1,4}})\b",
        r"\b(?:the\s+)?(?P<decade>\d{3}0)s\b",
        r"\b(?P<ordinal>\d{1,2})(?:st|nd|rd|th)\s+century\b",
        r"(?<![\d:])(?P<hour>\d{1,2}):(?P<minute>\d{2})(?!:?\d)(?:\s*(?P<half>[ap])\.?\s?m\b\.?)?",
    )
]
_WHOLE = re.compile(r"^\W*(?:(?:on|in|at|the)\s+)?(.*?)[\s.!]*$", re.I | re.S)


def dates_in(text: str) -> list[DateMention]:
    """Every date or time in the text, longest first where they overlap, in order."""
    found: list[DateMention] = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(text):
            readings = _readings(m)
            if readings:
                found.append(DateMention(readings, m.start(), m.end()))
    found.sort(key=lambda d: (d.start, d.start - d.end))  # at each start, the longest first
    out: list[DateMention] = []
    for d in found:
        if not out or d.start >= out[-1].end:
            out.append(d)
    return out


def reference_date(reference: str) -> When | None:
    """The reference as one date, decade, century, era year or time, and nothing else (a bare
    year is a number, and an ambiguous "03/04/2020" no reference)."""
    m = _WHOLE.match(reference.strip())
    text = m.group(1) if m else reference
    mentions = dates_in(text)
    if len(mentions) != 1 or len(mentions[0].readings) != 1:
        return None
    d = mentions[0]
    if text[: d.start].strip() or text[d.end :].strip(" .,"):
        return None
    return d.readings[0]


def year_of(mentions: list[DateMention]) -> int | None:
    """The one year the dates state, if they state exactly one and no era."""
    years = {w.year for d in mentions for w in d.readings}
    eras = {w.era for d in mentions for w in d.readings}
    return years.pop() if len(years) == 1 and None not in years and eras <= {None, "ad"} else None


def compare_dates(got: DateMention, want: When) -> tuple[Correctness, str]:
    """Whether a response's date answers the reference's; every reading must agree."""
    verdicts = {_compare(w, want) for w in got.readings}
    if len(verdicts) == 1:
        return verdicts.pop()
    return "unsure", "the day and month could trade places"


def _compare(got: When, want: When) -> tuple[Correctness, str]:
    if want.hour is not None or got.hour is not None:
        return _compare_times(got, want)
    got = _widen(got, want)
    missing = []
    for f in fields(When):
        w, g = getattr(want, f.name), getattr(got, f.name)
        if w is None or f.name == "era":
            continue
        if g is None:
            missing.append(f.name)
        elif g != w:
            return "incorrect", f"another {f.name}"
    if want.era != got.era and "bc" in (want.era, got.era):
        return ("incorrect", "another era") if want.era and got.era else ("unsure", "era left out")
    if missing:
        return "unsure", f"leaves out the {', '.join(missing)}"
    return "correct", "same date"


def _widen(got: When, want: When) -> When:
    """A year read as its decade or century when the reference asks for that."""
    if got.year is None:
        return got
    decade = got.year // 10 * 10 if want.decade is not None and got.decade is None else got.decade
    century = got.year // 100 + 1 if want.century is not None and got.century is None else got.century
    return When(got.year, got.month, got.day, got.era, decade, century)


def _compare_times(got: When, want: When) -> tuple[Correctness, str]:
    if got.hour is None or want.hour is None:
        return "unsure", "a time against a date"
    same_minute = got.minute == want.minute
    g, w = _clock(got), _clock(want)
    if same_minute and (g == w or (want.half_day is None and got.half_day == "am" and g == w % 12)):
        return "correct", "same time"
    return "unsure", "another time, or the same on another clock"


def _clock(w: When) -> int:
    hour = w.hour or 0
    if w.half_day == "pm" and hour < 12:
        return hour + 12
    if w.half_day == "am" and hour == 12:
        return 0
    return hour


def _readings(m: re.Match) -> tuple[When, ...]:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if "hour" in g:
        hour, minute = int(g["hour"]), int(g["minute"])
        half = g["half"].lower() + "m" if "half" in g else None
        if minute > 59 or hour > (12 if half else 23) or (half and hour == 0):
            return ()
        return (When(hour=hour, minute=minute, half_day=half),)
    if "decade" in g:
        decade = int(g["decade"])
        if decade % 100 == 0:  # "the 1800s": the century, as usually meant
            return (When(century=decade // 100 + 1),)
        return (When(decade=decade),)
    if "ordinal" in g:
        return (When(century=int(g["ordinal"])),)
    year = int(g["year"]) if "year" in g else None
    era = None
    if "era" in g:
        era = "bc" if g["era"].upper().replace(".", "").startswith("B") else "ad"
    if "a" in g:  # 03/04/2020: day first or month first
        a, b = int(g["a"]), int(g["b"])
        pairs = {(a, b), (b, a)}
        return tuple(When(year, month, day) for day, month in sorted(pairs) if _valid(year, month, day))
    month: int | None
    day: int | None
    if "m" in g:
        month, day = int(g["m"]), int(g["d"])
    elif g.get("month", "").lower() in _ALSO_WORDS and not g["month"][0].isupper():
        return ()  # "it may 5": a verb, not the month
    else:
        month = _MONTHS[g["month"].lower()] if "month" in g else None
        day = int(g["day"]) if "day" in g else None
    if month is None and day is None and era is None:
        return ()  # a bare number
    if month is not None and not _valid(year, month, day):
        return ()
    return (When(year, month, day, era),)


def _valid(year: int | None, month: int, day: int | None) -> bool:
    if not 1 <= month <= 12:
        return False
    if day is None:
        return True
    last = calendar.monthrange(year if year is not None else 2000, month)[1]  # 2000: leap, allows 29 Feb
    return 1 <= day <= last


__all__ = ["DateMention", "When", "compare_dates", "dates_in", "reference_date", "year_of"]
