"""`?as_of=T` on list and detail pages: T an ISO 8601 date (end of that day, UTC) or
datetime. A value that does not parse is reported on the page and ignored."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

import duckdb
from django.http import HttpRequest

from axiom.conflicts.queries import statuses_as_of
from axiom.entries.queries import EntryRow
from axiom.store.timepoints import TimepointError, parse_timepoint


@dataclass(frozen=True)
class AsOf:
    when: datetime | None
    text: str = ""
    error: str = ""


def as_of(request: HttpRequest) -> AsOf:
    text = request.GET.get("as_of", "").strip()
    if not text:
        return AsOf(None)
    try:
        return AsOf(parse_timepoint(text, end_of_day=True), text)
    except TimepointError as exc:
        return AsOf(None, text, str(exc))


def entries_as_of(
    conn: duckdb.DuckDBPyConnection, rows: list[EntryRow], when: datetime | None
) -> list[EntryRow]:
    """The rows with the status each had at `when` (conflicts and resolutions known then)."""
    if when is None or not rows:
        return rows
    statuses = statuses_as_of(conn, {r.entry_id: r.status for r in rows}, when)
    return [replace(r, status=statuses.get(r.entry_id, r.status)) for r in rows]
