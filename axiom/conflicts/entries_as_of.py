"""Memory entries as they stood at a time: those said by then, with the status their
conflicts gave them then — and filtered by that status, not today's (an entry contested
then but kept since is found by ``status=contested``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import duckdb

from axiom.conflicts.queries import statuses_as_of
from axiom.entries.queries import EntryRow, list_entries

__all__ = ["list_entries_as_of", "with_statuses_as_of"]


def with_statuses_as_of(
    conn: duckdb.DuckDBPyConnection, rows: list[EntryRow], when: datetime | None
) -> list[EntryRow]:
    """The rows with the status each had at `when` (conflicts and resolutions known then);
    the rows as they are without a `when`."""
    if when is None or not rows:
        return rows
    statuses = statuses_as_of(conn, {r.entry_id: r.status for r in rows}, when)
    return [replace(r, status=statuses.get(r.entry_id, r.status)) for r in rows]


def list_entries_as_of(
    conn: duckdb.DuckDBPyConnection,
    when: datetime,
    stage: str | None = None,
    entry_type: str | None = None,
    status: str | None = None,
    session_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[EntryRow]:
    """`list_entries` as of `when`: the page (`limit`, `offset`) is cut after the status
    filter, since a status then is known only once computed."""
    page = (limit, offset) if status is None else (None, 0)
    rows = with_statuses_as_of(
        conn, list_entries(conn, stage, entry_type, None, session_id, *page, as_of=when), when
    )
    if status is None:
        return rows
    rows = [r for r in rows if r.status == status]
    return rows[offset : None if limit is None else offset + limit]
