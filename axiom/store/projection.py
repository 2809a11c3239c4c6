"""Projections: derived tables folded from events, with a stored position.

A projector's rows and its offset are written in the same transaction, so a crash can never
leave rows applied without the offset (or the reverse). Rebuild = clear the projector's
tables and recorded errors, forget its offset, replay from the beginning.

A poison event (one a projector cannot apply) must not jam the projector, nor the others
that share its transaction. When `apply` raises, the failure is recorded in
`projection_errors` (projector, event id, type, time, error), logged, and the projector
moves on to the next event:

* an error raised in Python (a bad payload: KeyError, TypeError, pyarrow errors …) leaves
  the transaction usable, so it is recorded on the spot. Projectors should check an event
  fully before they change rows (the session projector does), so such an event changes
  nothing;
* an error raised by DuckDB aborts the whole transaction. `run_projector` then raises
  `ProjectionAborted`; `write_projecting` (used by `project_all`, `rebuild_all` and the
  importer) rolls back, remembers the (projector, event), and runs its unit of work again,
  this time recording that event as failed without applying it. Other callers of
  `run_projector` fail as before until one of those records the event.

A failure of the storage itself (a full disk, an I/O error, DuckDB out of memory) says
nothing about the event: it is raised as it is (`Database.write` turns a full disk into
`OutOfSpace`), the transaction rolls back, and the event is applied when the same work runs
again. Recording it as poison would skip it for good.

Both cases are decided by the event and the state before it, so a rebuild records the
same errors and produces the same tables as incremental projection.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

import duckdb

from axiom.store.db import NO_SPACE, Database
from axiom.store.events import EventStore, StoredEvent, is_redacted

log = logging.getLogger("axiom.projection")
T = TypeVar("T")

# Events one unit of work may find aborting (each costs a rerun) before it gives up.
MAX_ABORTED_EVENTS = 100

# (projector name, event id) -> error, for events a previous attempt of the current
# `write_projecting` unit found to abort the transaction: recorded, not applied.
_ABORTING: contextvars.ContextVar[dict[tuple[str, str], str] | None] = contextvars.ContextVar(
    "axiom_aborting_events", default=None
)


class ProjectionAborted(RuntimeError):
    """A projector's failure aborted the DuckDB transaction; see `write_projecting`."""

    def __init__(self, projector: str, event: StoredEvent, error: str) -> None:
        super().__init__(f"projector {projector} failed on {event.event_id}: {error}")
        self.key = (projector, event.event_id)
        self.error = error

    @classmethod
    def too_many(cls, last: ProjectionAborted, count: int) -> RuntimeError:
        return RuntimeError(f"gave up after {count} events aborted one unit of work; last: {last}")


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


def record_error(
    conn: duckdb.DuckDBPyConnection, projector: str, event: StoredEvent, error: str
) -> None:
    log.error(
        "projector %s skipped event %s (%s): %s", projector, event.event_id, event.event_type, error
    )
    conn.execute(
        "INSERT INTO projection_errors (projector_name, event_id, event_type, event_ts, error)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (projector_name, event_id)"
        " DO UPDATE SET error = excluded.error",
        [projector, event.event_id, event.event_type, event.ts, error],
    )


def projection_error_of(conn: duckdb.DuckDBPyConnection, event_id: str) -> str | None:
    """The error a projector recorded for the event, if any (the first one)."""
    row = conn.execute(
        "SELECT error FROM projection_errors WHERE event_id = ?", [event_id]
    ).fetchone()
    return row[0] if row else None


def count_projection_errors(conn: duckdb.DuckDBPyConnection) -> int:
    return conn.execute("SELECT count(*) FROM projection_errors").fetchone()[0]


def _transaction_usable(conn: duckdb.DuckDBPyConnection) -> bool:
    try:
        conn.execute("SELECT 1").fetchone()
    except duckdb.Error:
        return False
    return True


def is_storage_failure(exc: BaseException) -> bool:
    """True when DuckDB failed for want of disk, I/O or memory rather than over the event."""
    storage = (duckdb.IOException, duckdb.OutOfMemoryException)
    return isinstance(exc, storage) or (isinstance(exc, duckdb.Error) and NO_SPACE in str(exc))


def _apply(conn: duckdb.DuckDBPyConnection, projector: Projector, event: StoredEvent) -> None:
    known = (_ABORTING.get() or {}).get((projector.name, event.event_id))
    if known is not None:
        record_error(conn, projector.name, event, known)
        return
    if is_redacted(event.payload):
        return  # forgotten (axiom.forgetting): nothing left to derive from it
    try:
        projector.apply(conn, event)
    except Exception as exc:
        if is_storage_failure(exc):
            raise  # not the event's fault: the unit of work fails and runs again later
        error = f"{type(exc).__name__}: {exc}"[:2000]
        if not _transaction_usable(conn):
            raise ProjectionAborted(projector.name, event, error) from exc
        record_error(conn, projector.name, event, error)


def run_projector(conn: duckdb.DuckDBPyConnection, projector: Projector, batch: int = 500) -> int:
    """Apply every event after the projector's offset; return how many were read (events
    that failed are recorded in `projection_errors` and passed, see the module docstring)."""
    store = EventStore(conn)
    applied = 0
    while True:
        last_ts, last_id = get_offset(conn, projector.name)
        events = store.fetch_since(last_ts, last_id, projector.event_types, limit=batch)
        if not events:
            return applied
        for event in events:
            _apply(conn, projector, event)
        set_offset(conn, projector.name, events[-1])
        applied += len(events)


def rebuild(
    conn: duckdb.DuckDBPyConnection,
    projectors: Sequence[Projector],
    on_projector: Callable[[str], None] | None = None,
) -> dict[str, int]:
    """Drop every row the projectors derived and replay all events through them;
    `on_projector(name)` after each projector has replayed (progress for `rebuild`)."""
    for projector in projectors:
        for table in projector.tables:
            conn.execute(f"DELETE FROM {table}")
        conn.execute("DELETE FROM projection_offsets WHERE projector_name = ?", [projector.name])
        conn.execute("DELETE FROM projection_errors WHERE projector_name = ?", [projector.name])
    counts = {}
    for projector in projectors:
        counts[projector.name] = run_projector(conn, projector)
        if on_projector:
            on_projector(projector.name)
    return counts


def write_projecting(db: Database, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    """`work` in one write transaction, run again (from scratch, in a new transaction) each
    time a projector's failure aborts it; the failing event is then recorded, not applied.

    An event the unit appends itself is known by its id, which is the same on every
    attempt because each attempt opens a new connection and DuckDB does not persist a
    sequence value of a rolled-back transaction. Should that ever change, the attempts are
    bounded (`MAX_ABORTED_EVENTS`) instead of looping."""
    aborting: dict[tuple[str, str], str] = {}
    while True:
        token = _ABORTING.set(dict(aborting))
        try:
            with db.write() as conn:
                return work(conn)
        except ProjectionAborted as exc:
            if exc.key in aborting:  # recording it did not help: give up
                raise
            if len(aborting) >= MAX_ABORTED_EVENTS:
                raise ProjectionAborted.too_many(exc, len(aborting)) from exc
            log.warning("%s; running the unit of work again without it", exc)
            aborting[exc.key] = exc.error
        finally:
            _ABORTING.reset(token)
