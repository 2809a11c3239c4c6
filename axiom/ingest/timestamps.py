"""Lenient timestamp parsing: transcripts carry ISO strings of varying shape, or none.

`parse_timestamp` never raises (projections call it on whatever an event holds);
`check_timestamp` is what parsers use to decide, and report, what they keep.
"""

from __future__ import annotations

from datetime import UTC, datetime

from axiom.ingest.privacy.excerpt import masked_excerpt


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


def epoch_to_iso(value: float) -> str:
    """Unix epoch seconds (milliseconds when above 1e11) → ISO text in UTC with `Z`;
    raises OverflowError/OSError/ValueError when out of range."""
    seconds = value / 1000 if abs(value) > 1e11 else value
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def check_timestamp(value: object) -> tuple[str | None, str | None]:
    """(timestamp to keep, reason it was dropped). ISO text is kept as written and a Unix
    epoch number (seconds, or milliseconds above 1e11) becomes ISO text; text that does not
    parse, a time outside year 1–9999 in UTC, or any other value is dropped with a reason."""
    if value is None:
        return None, None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return epoch_to_iso(value), None
        except (OverflowError, OSError, ValueError):
            return None, f"timestamp {value!r} is out of range as a Unix time; dropped"
    if isinstance(value, str):
        if not value.strip():
            return None, None
        if parse_timestamp(value) is not None:
            return value, None
        try:
            datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None, f"timestamp {masked_excerpt(value, 40)!r} is not ISO-8601; dropped"
        return None, f"timestamp {masked_excerpt(value, 40)!r} is out of range in UTC; dropped"
    return None, f"timestamp {masked_excerpt(str(value), 40)!r} is not a string; dropped"
