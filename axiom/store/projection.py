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

Batches. A projector with `apply_many` (a `BatchProjector`) gets the events of a fetch at
once and writes them in a few multi-row statements per table instead of one or more per
event: it folds them in order in Python first (so a later event sees an earlier one's row),
and hands any event whose fold raises to `reject`, which records it as above. A batch whose
writes fail (DuckDB aborted the transaction, or an error it cannot pin on one event) raises
`BatchAborted`; `write_projecting` then runs the unit again with that projector applying
one event at a time, which pins the failure on its event as above. Either way the tables
are what applying the events one by one gives (tests/store/test_projection_batches.py).
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from datetime import datetime
from typing import Protocol, TypeVar

import duckdb

from axiom.store.columns import insert_columns
from axiom.store.db import NO_SPACE, Database, is_interrupt
from axiom.store.events import (
    EventStore,
    FreshKeyStored,
    StoredEvent,
    is_redacted,
    reading_every_key,
)

log = logging.getLogger("axiom.projection")
T = TypeVar("T")

# Events one unit of work may find aborting (each costs a rerun) before it gives up.
MAX_ABORTED_EVENTS = 100

# (projector name, event id) -> error, for events a previous attempt of the current
# `write_projecting` unit found to abort the transaction: recorded, not applied.
_ABORTING: contextvars.ContextVar[dict[tuple[str, str], str] | None] = contextvars.ContextVar(
    "axiom_aborting_events", default=None
)
# Names of the projectors whose batch aborted a previous attempt of the current
# `write_projecting` unit: they apply one event at a time.
_ONE_BY_ONE: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "axiom_one_by_one_projectors", default=frozenset()
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


class BatchAborted(ProjectionAborted):
    """A projector's batch failed as a whole; see the module docstring."""

    def __init__(self, projector: str, error: str) -> None:
        RuntimeError.__init__(self, f"projector {projector} failed on a batch: {error}")
        self.key = (projector, "")
        self.error = error
        self.projector = projector


class Projector(Protocol):
    name: str
    event_types: tuple[str, ...]
    tables: tuple[str, ...]  # tables this projector owns; cleared on rebuild

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None: ...


Reject = Callable[[StoredEvent, Exception], None]
Position = tuple[datetime | None, str]  # a projector's offset: (ts, event id), "" for none


class BatchProjector(Projector, Protocol):
    def apply_many(
        self, conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent], reject: Reject
    ) -> None:
        """What `apply` over `events` in order gives, in a few statements; an event whose
        fold raises goes to `reject` and changes nothing."""


@contextmanager
def one_event_at_a_time(*names: str) -> Iterator[None]:
    """The projectors `names` apply one event at a time inside: what `write_projecting`
    does after their batch aborted (and what tests compare batches with)."""
    token = _ONE_BY_ONE.set(_ONE_BY_ONE.get() | frozenset(names))
    try:
        yield
    finally:
        _ONE_BY_ONE.reset(token)


def insert_new(
    conn: duckdb.DuckDBPyConnection, table: str, columns: str, rows: Sequence[Sequence[object]]
) -> None:
    """One multi-row insert of `rows` into the caller's `table` (`columns` comma-separated,
    the first its key), a row whose key is stored (or repeats an earlier row's) left out:
    a batch's inserts. The stored keys are read first rather than left to `ON CONFLICT DO
    NOTHING`, which cost DuckDB 1.4 about 2-15 ms a statement against 0.3 ms for a plain
    insert and a keyed read (README, "The memory pipeline")."""
    if not rows:
        return
    stored = stored_keys(conn, table, columns.split(",")[0].strip(), [row[0] for row in rows])
    fresh: dict[object, Sequence[object]] = {}
    for row in rows:
        if row[0] not in stored:
            fresh.setdefault(row[0], row)
    insert_rows(conn, table, columns, list(fresh.values()))


def stored_keys(
    conn: duckdb.DuckDBPyConnection, table: str, key: str, keys: Sequence[object]
) -> set[object]:
    """Which of `keys` the caller's `table` holds in its `key` column (one keyed read; none
    for no keys)."""
    if not keys:
        return set()
    rows = conn.execute(
        f"SELECT {key} FROM {table} WHERE {key} IN (SELECT unnest(?))",
        [list(dict.fromkeys(keys))],
    ).fetchall()
    return {r[0] for r in rows}


def insert_rows(
    conn: duckdb.DuckDBPyConnection, table: str, columns: str, rows: Sequence[Sequence[object]]
) -> None:
    """One multi-row insert of `rows`, which the caller knows are not stored (a fold that
    read the stored keys itself): `insert_new` without its read (one list per column,
    `axiom.store.columns`)."""
    insert_columns(conn, table, columns, rows)


def raise_error(event: StoredEvent, exc: Exception) -> None:
    """The `reject` of `apply` (one event): the error goes to the runner as it is."""
    raise exc


def fold_each(
    events: Iterable[StoredEvent], step: Callable[[StoredEvent], None], reject: Reject
) -> None:
    """`step` over each event in order; an event whose step raises goes to `reject` (a step
    checks its event fully before it changes the fold's state, as `apply` does rows)."""
    for event in events:
        try:
            step(event)
        except Exception as exc:
            reject(event, exc)


def get_offset(conn: duckdb.DuckDBPyConnection, name: str) -> tuple[datetime | None, str | None]:
    row = conn.execute(
        "SELECT last_ts, last_event_id FROM projection_offsets WHERE projector_name = ?", [name]
    ).fetchone()
    return (row[0], row[1]) if row else (None, None)


def get_offsets(
    conn: duckdb.DuckDBPyConnection, names: Sequence[str]
) -> dict[str, tuple[datetime | None, str | None]]:
    """`get_offset` of each name, in one read."""
    rows = conn.execute(
        "SELECT projector_name, last_ts, last_event_id FROM projection_offsets"
        " WHERE projector_name IN (SELECT unnest(?))",
        [list(names)],
    ).fetchall()
    found = {r[0]: (r[1], r[2]) for r in rows}
    return {n: found.get(n, (None, None)) for n in names}


def set_offset(conn: duckdb.DuckDBPyConnection, name: str, event: StoredEvent) -> None:
    """One projector's offset at `event`: one statement when it has an offset row (a
    resolver sets its projector's after every session with tasks)."""
    updated = conn.execute(
        "UPDATE projection_offsets SET last_ts = ?, last_event_id = ? WHERE projector_name = ?",
        [event.ts, event.event_id, name],
    ).fetchone()
    if not updated or not updated[0]:
        set_offsets(conn, {name: event}, stored=set())


def set_offsets(
    conn: duckdb.DuckDBPyConnection,
    last: dict[str, StoredEvent],
    stored: set[str] | None = None,
) -> None:
    """Each projector's offset at its event: one update of the stored offsets and one
    insert of the missing ones (cheaper than `ON CONFLICT DO UPDATE`, see `insert_new`);
    `stored`: the names that have an offset row, when the caller has just read them."""
    if not last:
        return
    if stored is None:
        stored = stored_keys(conn, "projection_offsets", "projector_name", list(last))
    moved = [name for name in last if name in stored]
    if moved:
        conn.execute(
            "UPDATE projection_offsets SET last_ts = v.ts, last_event_id = v.id FROM"
            " (SELECT unnest(?) AS name, unnest(?::TIMESTAMP[]) AS ts, unnest(?) AS id) v"
            " WHERE projector_name = v.name",
            [moved, [last[n].ts for n in moved], [last[n].event_id for n in moved]],
        )
    new = [name for name in last if name not in stored]
    if new:
        rows = [(name, last[name].ts, last[name].event_id) for name in new]
        insert_columns(conn, "projection_offsets", "projector_name, last_ts, last_event_id", rows)


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


def _not_the_events_fault(exc: BaseException) -> bool:
    """A storage failure or Ctrl-C: the unit of work fails (and runs again later), the
    event is neither recorded as failed nor retried on its own."""
    return is_storage_failure(exc) or is_interrupt(exc)


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:2000]


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
        if _not_the_events_fault(exc):
            raise  # not the event's fault: the unit of work fails and runs again later
        error = _error_text(exc)
        if not _transaction_usable(conn):
            raise ProjectionAborted(projector.name, event, error) from exc
        record_error(conn, projector.name, event, error)


def _apply_events(
    conn: duckdb.DuckDBPyConnection, projector: Projector, events: Sequence[StoredEvent]
) -> None:
    """`events` in order: as one batch when the projector has `apply_many` (and no batch of
    it aborted this unit of work), else one at a time."""
    apply_many = getattr(projector, "apply_many", None)
    if apply_many is None or projector.name in _ONE_BY_ONE.get():
        for event in events:
            _apply(conn, projector, event)
        return
    aborting = _ABORTING.get() or {}
    todo = []
    for event in events:
        known = aborting.get((projector.name, event.event_id))
        if known is not None:
            record_error(conn, projector.name, event, known)
        elif not is_redacted(event.payload):
            todo.append(event)
    if not todo:
        return

    def reject(event: StoredEvent, exc: Exception) -> None:
        record_error(conn, projector.name, event, _error_text(exc))

    try:
        apply_many(conn, todo, reject)
    except Exception as exc:
        if _not_the_events_fault(exc):
            raise
        raise BatchAborted(projector.name, _error_text(exc)) from exc


def run_projector(conn: duckdb.DuckDBPyConnection, projector: Projector, batch: int = 500) -> int:
    """Apply every event after the projector's offset; return how many were read (events
    that failed are recorded in `projection_errors` and passed, see the module docstring)."""
    store = EventStore(conn)
    applied = 0
    last_ts, last_id = get_offset(conn, projector.name)
    while True:
        events = store.fetch_since(last_ts, last_id, projector.event_types, limit=batch)
        if not events:
            return applied
        _apply_events(conn, projector, events)
        set_offset(conn, projector.name, events[-1])
        applied += len(events)
        if len(events) < batch:
            return applied
        last_ts, last_id = events[-1].ts, events[-1].event_id


def run_projectors(
    conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector], batch: int = 500
) -> dict[str, int]:
    """`run_projector` of each in order, with one offset read, one event read and one
    offset write for all of them when fewer than `batch` events are pending (after each
    build: the common case); else each runs on its own.

    Every projector's offset then moves to the last event read, its own type or not: it
    has seen every event of its types up to there, and a projector whose events are rare
    (decisions, tasks) would otherwise hold the shared read back to its last one."""
    positions, types, events = _pending(conn, projectors, batch)
    if len(events) >= batch:
        counts = {p.name: run_projector(conn, p, batch) for p in projectors}
        _catch_up_offsets(conn, projectors, types)
        return counts
    return _apply_pending(conn, projectors, positions, events)


class Follower:
    """Keeps `projectors` current over the events a write transaction appends, without
    reading them back: what `run_projectors` after each build of one transaction gives
    (`axiom.pipeline.batch.write_builds`) for a fraction of the statements. `start` is
    `run_projectors` (a backlog may precede the transaction); `advance` then applies, to
    the projectors named (all by default, in `projectors` order), the events appended since
    each last advanced (`log`, from `axiom.store.events.appended`: the same events in the
    same order as a read after the offsets would return, the write lock keeping other
    writers out); `settle` advances them all and writes every offset at the last event,
    as `run_projectors` moves them. A projector named in `self_kept` is advanced by
    someone else inside the transaction too (the task resolver runs its projector after
    each mention): it reads what is pending from its stored offset instead, as
    `run_projector` does, so no event is applied twice."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        projectors: Sequence[Projector],
        log: list[StoredEvent],
        self_kept: Iterable[str] = (),
    ) -> None:
        self.conn, self.projectors, self.log = conn, projectors, log
        self.self_kept = frozenset(self_kept)
        self.types = frozenset(t for p in projectors for t in p.event_types)
        self.seen = dict.fromkeys((p.name for p in projectors), 0)  # log entries applied

    def start(self) -> None:
        """Bring the projectors up to the newest stored event (read from the table)."""
        run_projectors(self.conn, self.projectors)
        self.seen = dict.fromkeys(self.seen, len(self.log))

    def advance(self, names: Iterable[str] | None = None, upto: int | None = None) -> None:
        """Bring the projectors `names` (all by default) up to the newest event appended,
        or to the first `upto` events of the log (not for those in `self_kept`)."""
        wanted = set(self.seen) if names is None else set(names)
        end = len(self.log) if upto is None else upto
        for projector in self.projectors:
            if projector.name not in wanted:
                continue
            if projector.name in self.self_kept:
                run_projector(self.conn, projector)
                continue
            fresh = self.log[self.seen[projector.name] : end]
            mine = [e for e in fresh if e.event_type in projector.event_types]
            if mine:
                _apply_events(self.conn, projector, mine)
            self.seen[projector.name] = max(self.seen[projector.name], end)

    def settle(self) -> None:
        """Advance every projector, then write the offsets (each at the last event of any
        of their types, as `run_projectors` moves them)."""
        self.advance()
        last = next((e for e in reversed(self.log) if e.event_type in self.types), None)
        if last is not None:
            set_offsets(self.conn, dict.fromkeys(self.seen, last))


def run_projectors_step(
    conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector], limit: int
) -> bool:
    """The next at most `limit` events pending for any of `projectors`, applied as
    `run_projectors` applies fewer than `batch`; True when more may be pending. A long
    catch-up (`axiom process` after an import) goes in such steps, one short write
    transaction each, instead of one transaction as long as the whole backlog."""
    positions, _, events = _pending(conn, projectors, limit)
    _apply_pending(conn, projectors, positions, events)
    return len(events) >= limit


def has_backlog(
    conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector], limit: int
) -> bool:
    """True when at least `limit` events are pending for some of `projectors` (a read of
    their count, not of the events)."""
    _, readers = _readers(conn, projectors)
    return EventStore(conn).count_pending(readers, limit) >= limit


def _pending(
    conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector], limit: int
) -> tuple[list[Position], tuple[str, ...], list[StoredEvent]]:
    """Each projector's offset, their event types, and the first `limit` events some
    projector has not applied (one of its types, after its offset)."""
    positions, readers = _readers(conn, projectors)
    types = tuple(dict.fromkeys(t for p in projectors for t in p.event_types))
    return positions, types, EventStore(conn).fetch_pending(readers, limit)


def _readers(
    conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector]
) -> tuple[list[Position], list[tuple[tuple[datetime, str] | None, Sequence[str]]]]:
    """Each projector's offset, and each as a reader of `EventStore.fetch_pending`."""
    offsets = get_offsets(conn, [p.name for p in projectors])
    positions = [(ts, event_id or "") for ts, event_id in offsets.values()]
    readers = [
        (None if ts is None else (ts, event_id), p.event_types)
        for p, (ts, event_id) in zip(projectors, positions, strict=True)
    ]
    return positions, readers


def _apply_pending(
    conn: duckdb.DuckDBPyConnection,
    projectors: Sequence[Projector],
    positions: list[Position],
    events: list[StoredEvent],
) -> dict[str, int]:
    """Each projector's events of `events` past its offset, then the offsets of those
    behind moved to the last event (see `run_projectors`)."""
    names = [p.name for p in projectors]
    counts: dict[str, int] = {}
    for projector, (ts, event_id) in zip(projectors, positions, strict=True):
        mine = [
            e
            for e in events
            if e.event_type in projector.event_types
            and (ts is None or (e.ts, e.event_id) > (ts, event_id))
        ]
        if mine:
            _apply_events(conn, projector, mine)
        counts[projector.name] = len(mine)
    if events:
        end = (events[-1].ts, events[-1].event_id)
        behind = [
            n for n, (ts, i) in zip(names, positions, strict=True) if ts is None or (ts, i) < end
        ]
        # Never moves one back. An offset row always holds a time (events have one), so
        # the names read with a time are the stored rows.
        stored = {n for n, (ts, _) in zip(names, positions, strict=True) if ts is not None}
        set_offsets(conn, dict.fromkeys(behind, events[-1]), stored)
    return counts


def _catch_up_offsets(
    conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector], types: Sequence[str]
) -> None:
    """After each projector ran to the end on its own, move every offset to the newest
    event of all their types (each has seen every event of its own types up to there; the
    write lock keeps new ones out), so the next `run_projectors` reads from there instead
    of from a projector with no event of its own, such as one with no offset at all."""
    newest = EventStore(conn).latest(types) if types else None
    if newest is None:
        return
    names = [p.name for p in projectors]
    behind = [
        name
        for name, (ts, event_id) in get_offsets(conn, names).items()
        if ts is None or (ts, event_id or "") < (newest.ts, newest.event_id)
    ]
    set_offsets(conn, dict.fromkeys(behind, newest))


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
    _catch_up_offsets(conn, projectors, tuple(t for p in projectors for t in p.event_types))
    return counts


def write_projecting(db: Database, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    """`work` in one write transaction, run again (from scratch, in a new transaction) each
    time a projector's failure aborts it; the failing event is then recorded, not applied.

    An event the unit appends itself is known by its id, which is the same on every
    attempt because each attempt is a new transaction (on a new connection, or the kept
    write instance after the failed attempt's was closed) and DuckDB does not persist a
    sequence value of a rolled-back transaction. Should that ever change, the attempts are
    bounded (`MAX_ABORTED_EVENTS`) instead of looping. A unit that took a stored dedupe
    key for fresh (`axiom.store.events.FreshKeyStored`) runs again reading every key."""
    aborting: dict[tuple[str, str], str] = {}
    one_by_one: set[str] = set()
    trusting = True  # keys taken as fresh are not read (until one turns out stored)
    while True:
        token = _ABORTING.set(dict(aborting))
        batches = _ONE_BY_ONE.set(frozenset(one_by_one))
        try:
            with nullcontext() if trusting else reading_every_key(), db.write() as conn:
                return work(conn)
        except FreshKeyStored as exc:
            if not trusting:  # cannot happen: nothing is taken as fresh any more
                raise
            log.info("%s; running the unit of work again reading every key", exc)
            trusting = False
            # Events recorded as aborting were known by their ids, which the key taken for
            # fresh moved on by one: read every key, they get other ids. Find them again.
            aborting.clear()
            one_by_one.clear()
        except BatchAborted as exc:
            if exc.projector in one_by_one:  # cannot happen: one at a time never raises it
                raise
            log.warning("%s; running the unit of work again one event at a time", exc)
            one_by_one.add(exc.projector)
        except ProjectionAborted as exc:
            if exc.key in aborting:  # recording it did not help: give up
                raise
            if len(aborting) >= MAX_ABORTED_EVENTS:
                raise ProjectionAborted.too_many(exc, len(aborting)) from exc
            log.warning("%s; running the unit of work again without it", exc)
            aborting[exc.key] = exc.error
        finally:
            _ONE_BY_ONE.reset(batches)
            _ABORTING.reset(token)
