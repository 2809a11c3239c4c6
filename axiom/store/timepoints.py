"""Points in time typed by people: `2026-04-15` or `2026-04-15T09:30[:00][Z|+02:00]`.

A bare date means the end of that day (UTC) for "as of" (everything written that day
counts) and its start for "before". Results are naive UTC, like every stored timestamp.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, time

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ZULU = re.compile(r"[Zz]$")  # RFC 3339 allows either case


class TimepointError(ValueError):
    """Text that is not an ISO 8601 date or datetime."""


def parse_timepoint(text: str, end_of_day: bool, clamp: bool = True) -> datetime:
    """`text` as naive UTC; a bare date is its last microsecond (`end_of_day`) or its
    first. A time past the range of UTC datetimes (9999-12-31T23:59-05:00) is the last (or
    first) one, as of which a person may well ask; unless `clamp` is off: an error."""
    raw = (text or "").strip()
    try:
        if _DATE.match(raw):
            day = datetime.fromisoformat(raw)
            return datetime.combine(day.date(), time.max) if end_of_day else day
        value = datetime.fromisoformat(_ZULU.sub("+00:00", raw))
    except ValueError:
        raise TimepointError(
            f"{text!r} is not an ISO 8601 date (2026-04-15) or datetime (2026-04-15T09:30Z)"
        ) from None
    if value.tzinfo is not None:
        try:
            value = value.astimezone(UTC).replace(tzinfo=None)
        except OverflowError:
            if not clamp:
                raise TimepointError(f"{text!r} is out of the range of dates in UTC") from None
            return datetime.max if value.year == datetime.max.year else datetime.min
    return value


def source_time(text: object) -> datetime | None:
    """A stored transcript timestamp as naive UTC, None when absent or unreadable."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return parse_timepoint(text, end_of_day=False, clamp=False)
    except TimepointError:
        return None
