"""Lenient timestamp parsing: transcripts carry ISO strings of varying shape, or none."""

from __future__ import annotations

from datetime import UTC, datetime


def parse_timestamp(value: object) -> datetime | None:
    """ISO-8601 text (with `Z` or an offset) → naive UTC datetime; anything else → None."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC).replace(tzinfo=None)
    return parsed
