"""Projections: derived tables folded from events, with a stored position.

A projector's rows and its offset are written in the same transaction, so a crash can never
leave rows applied without the offset (or the reverse). Rebuild = clear the projector's
tables, forget its offset, replay from the beginning.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import duckdb

from axiom.store.events import EventStore, StoredEvent


class Projector(Protocol):
    name: str
    event_types: tuple[str, ...]
    tables: tuple[str, ...]  # tables this projector owns; cleared on rebuild

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None: ...


def get_offset(conn: duckdb.DuckDBPyConnection, name: str) -> tuple[datetime | None, str | None]:
    row = conn.execute(
        "SELECT last_ts, last_event_id FROM projection_offsets WHERE projector_name = ?", [name]
    ).fetchone()
    return (row[0], row[1]) if row else (None, None)


def set_offset(conn: duckdb.DuckDBPyConnection, name: str, event: StoredEvent) -> None:
    conn.execute(
        "INSERT INTO projection_offsets (projector_name, last_ts, last_event_id) VALUES (?, ?, ?)"
        " ON CONFLICT (projector_name) DO UPDATE SET"
        " last_ts = excluded.last_ts, last_event_id = excluded.last_event_id",
        [name, event.ts, event.event_id],
    )


def run_projector(conn: duckdb.DuckDBPyConnection, projector: Projector, batch: int = 500) -> int:
    """Apply every event after the projector's offset; return how many were applied."""
    store = EventStore(conn)
    applied = 0
    while True:
        last_ts, last_id = get_offset(conn, projector.name)
        events = store.fetch_since(last_ts, last_id, projector.event_types, limit=batch)
        if not events:
            return applied
        for event in events:
            projector.apply(conn, event)
        set_offset(conn, projector.name, events[-1])
        applied += len(events)


def rebuild(conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector]) -> dict[str, int]:
    """Drop every row the projectors derived and replay all events through them."""
    for projector in projectors:
        for table in projector.tables:
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM projection_offsets WHERE projector_name = ?", [projector.name])
    return {p.name: run_projector(conn, p) for p in projectors}
