"""Lenient timestamp parsing: transcripts carry ISO strings of varying shape, or none.

`parse_timestamp` never raises (projections call it on whatever an event holds);
`check_timestamp` is what parsers use to decide, and report, what they keep.
"""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(value: object) -> datetime | None:
    """ISO-8601 text (with `Z` or an offset) → naive UTC datetime; anything else, or a
    time that leaves the representable range once moved to UTC, → None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    except (ValueError, OverflowError):
        return None
    return parsed


def check_timestamp(value: object) -> tuple[str | None, str | None]:
    """(timestamp to keep, reason it was dropped). ISO text is kept as written; text that
    does not parse, or parses outside year 1–9999 in UTC, is dropped with a reason."""
    if value is None:
        return None, None
    if isinstance(value, str):
        if not value.strip():
            return None, None
        if parse_timestamp(value) is not None:
            return value, None
        try:
            datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None, f"timestamp {value[:40]!r} is not ISO-8601; dropped"
        return None, f"timestamp {value[:40]!r} is out of range in UTC; dropped"
    return None, f"timestamp {str(value)[:40]!r} is not a string; dropped"
