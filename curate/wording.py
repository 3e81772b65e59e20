"""How counts and measures read in what people see (the app, the dataset card, command
output): one plural rule, one percentage, one precision for seconds, one way to say when."""

from __future__ import annotations

import math
from datetime import UTC, datetime

EMPTY = "–"  # a cell or figure with no value: never "None", never 0


def plural(n: int, noun: str, many: str | None = None, *, verb: tuple[str, str] | None = None) -> str:
    """``1 pair``, ``0 pairs``, ``2 pairs``; ``many`` for a noun that does not take an s
    (``plural(n, "category", "categories")``); ``verb`` (singular, plural) agrees with the
    count: ``plural(n, "pair", verb=("has", "have"))`` -> ``1 pair has``, ``2 pairs have``."""
    text = f"{n} {noun if n == 1 else many or noun + 's'}"
    return f"{text} {verb[0] if n == 1 else verb[1]}" if verb else text


def percent(share: float | None, digits: int = 1) -> str:
    """A share in [0, 1] as a percentage: ``0.0625`` -> ``6.2%``; no share -> ``–``."""
    if share is None or not math.isfinite(share):
        return EMPTY
    return f"{100 * share:.{digits}f}%"


def seconds(value: float | None) -> str:
    """Seconds with at most one decimal: ``12.345`` -> ``12.3``, ``12.0`` -> ``12``."""
    if value is None or not math.isfinite(value):
        return EMPTY
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def utc_time(stamp: str | None) -> str:
    """A stored ISO 8601 time, said in UTC to the minute: ``2026-11-27T03:12:45.1+00:00`` ->
    ``2026-11-27 03:12 UTC``; a time with another offset is converted, one without an offset
    is taken as UTC (the store writes UTC); no time -> ``–``; an unreadable one as it is."""
    if not stamp:
        return EMPTY
    try:
        when = datetime.fromisoformat(stamp.strip())
    except ValueError:
        return stamp
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M UTC")


def snippet(text: str, n: int = 80) -> str:
    """A text (a prompt) on one line, cut at ``n`` characters with an ellipsis: what names a
    pair to a person where its id would (My labels, the adjudication picker)."""
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1].rstrip() + "…"
