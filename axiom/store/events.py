"""The append-only event store: the single source of truth.

There is deliberately no update or delete method, with one documented exception, used only
by `axiom.forgetting` when a person asks Axiom to forget: `redact` rewrites an event's
payload to a redacted form (`redacted_payload`) that carries no text, and
`replace_payload` rewrites a kept event that holds a copy of forgotten text (a candidate
task's title) without it. Every event may carry a `dedupe_key`;
appending an event whose key was seen before returns the stored event and writes nothing,
which is what makes re-imports, retries and redelivered Celery tasks harmless.

Ordering: `seq` comes from a DuckDB sequence and `ts` never goes backwards (it is the
later of the wall clock and the newest stored `ts`). Event ids are `ev_` + the zero-padded
`seq`, so `(ts, event_id)` sorts exactly like insertion order, which `fetch_since` relies on.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb

from axiom.store.columns import insert_columns


def canonical_json(payload: Any) -> str:
    """Key-sorted, compact JSON: the form checksums and dedupe hashes are taken over."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def checksum_of(payload: Any) -> str:
    return _checksum(canonical_json(payload))


def _checksum(text: str) -> str:
    """The checksum of a payload's canonical text (`canonical_json`)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


REDACTED_KEY = "_redacted"
# Payload fields a redacted event keeps: identifiers that say what it was about, no text.
KEPT_WHEN_REDACTED = ("entry_id", "session_id", "build_id", "conflict_id", "task_id")


def redacted_payload(payload: dict[str, Any], redaction_id: str) -> dict[str, Any]:
    """The form a forgotten event's payload is rewritten to: its ids and the redaction."""
    kept = {k: payload[k] for k in KEPT_WHEN_REDACTED if isinstance(payload.get(k), str)}
    return {REDACTED_KEY: redaction_id, **kept}


def is_redacted(payload: dict[str, Any]) -> bool:
    """True for a payload `EventStore.redact` rewrote: projectors skip such events."""
    return REDACTED_KEY in payload


@dataclass(frozen=True)
class EncodedPayload:
    """A payload in the form `append_many` stores it, worked out ahead of the write
    (`encode_payload`), on the second core when a forked child prepares it: its canonical
    text, the text's checksum, and the payload read back from the text (what a read of the
    event returns). `stored` becomes the payload of the event appended from it, and others
    read it too: nobody changes it."""

    text: str
    checksum: str
    stored: dict[str, Any]


def encode_payload(payload: dict[str, Any]) -> EncodedPayload:
    """What appending `payload` stores (`NewEvent.encoded`): work a caller can do before
    the write lock, where it costs the writer nothing."""
    text = canonical_json(payload)
    return EncodedPayload(text, _checksum(text), json.loads(text))


@dataclass(frozen=True)
class NewEvent:
    """An event about to be appended; `encoded`, when given, is `encode_payload(payload)`."""

    event_type: str
    payload: dict[str, Any]
    dedupe_key: str | None = None
    session_id: str | None = None
    actor: str = "system"
    build_id: str | None = None
    encoded: EncodedPayload | None = None


@dataclass(frozen=True)
class StoredEvent:
    """An event as recorded in the store."""

    event_id: str
    seq: int
    ts: datetime
    event_type: str
    actor: str
    session_id: str | None
    payload: dict[str, Any]
    checksum: str
    build_id: str | None = None
    dedupe_key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AppendResult:
    event: StoredEvent
    created: bool


_COLUMNS = (
    "event_id, seq, ts, event_type, actor, session_id, payload_json, checksum, build_id, dedupe_key"
)


def _row_to_event(row: Sequence[Any]) -> StoredEvent:
    return StoredEvent(
        event_id=row[0],
        seq=row[1],
        ts=row[2],
        event_type=row[3],
        actor=row[4],
        session_id=row[5],
        payload=json.loads(row[6]),
        checksum=row[7],
        build_id=row[8],
        dedupe_key=row[9],
    )


def _new_stored(event: NewEvent, seq: int, ts: datetime | None) -> tuple[StoredEvent, str]:
    """The event as it will be stored, and its payload's stored text."""
    encoded = event.encoded or encode_payload(event.payload)
    stored = StoredEvent(
        event_id=f"ev_{seq:012d}",
        seq=seq,
        ts=ts or datetime.now(UTC).replace(tzinfo=None),
        event_type=event.event_type,
        actor=event.actor,
        session_id=event.session_id,
        payload=encoded.stored,
        checksum=encoded.checksum,
        build_id=event.build_id,
        dedupe_key=event.dedupe_key,
    )
    return stored, encoded.text


# The events appended in the current context, when a caller collects them (`appended`).
_APPENDED: contextvars.ContextVar[list[StoredEvent] | None] = contextvars.ContextVar(
    "axiom_appended_events", default=None
)


@contextmanager
def appended() -> Iterator[list[StoredEvent]]:
    """A list that collects, in order, every event stored by `append_many` inside (the
    created ones: the rows a read of `events` would find added). A writer that keeps
    derived tables current between its own appends applies them from here instead of
    reading them back (`axiom.store.projection.Follower`)."""
    log: list[StoredEvent] = []
    token = _APPENDED.set(log)
    try:
        yield log
    finally:
        _APPENDED.reset(token)


@dataclass
class _Deferred:
    """The inserts `deferred` holds back on `conn`: rows not inserted yet, their dedupe
    keys, and the sequence and newest time as the table will have them once they are."""

    conn: duckdb.DuckDBPyConnection
    rows: list[tuple[StoredEvent, str]] = field(default_factory=list)
    keys: dict[str, StoredEvent] = field(default_factory=dict)
    next_seq: int | None = None  # the next sequence number; None until first read
    drawn: int = 0  # numbers handed out from memory that the sequence has not given yet
    newest: datetime | None = None
    unread: set[str] = field(default_factory=set)  # taken as not stored, unchecked yet


class FreshKeyStored(BaseException):  # noqa: N818 - a signal to run again, not an error
    """A key taken as fresh (`append_many` / `stored_keys` with `fresh`) was stored after
    all: the unit of work runs again reading every key (`reading_every_key`). Not an
    `Exception`, so that no handler inside the unit (a task mention's, a projector's)
    takes it for a failure of its own and records it."""

    def __init__(self, keys: Collection[str]) -> None:
        super().__init__(f"dedupe keys taken as fresh are stored: {sorted(keys)[:5]}")
        self.keys = set(keys)


# Whether `fresh` keys are taken at their word (False while a unit of work runs again).
_TRUST_FRESH: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "axiom_trust_fresh_keys", default=True
)


def trusting_fresh() -> bool:
    """Whether `fresh` keys are taken at their word here (not while `reading_every_key`):
    what else a caller concludes from its keys being fresh must hold only then."""
    return _TRUST_FRESH.get()


@contextmanager
def reading_every_key() -> Iterator[None]:
    """Inside, `fresh` keys are read like any other (after `FreshKeyStored`)."""
    token = _TRUST_FRESH.set(False)
    try:
        yield
    finally:
        _TRUST_FRESH.reset(token)


_DEFERRED: contextvars.ContextVar[_Deferred | None] = contextvars.ContextVar(
    "axiom_deferred_events", default=None
)


@contextmanager
def deferred(conn: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Inside, `append_many` on `conn` keeps its rows in memory and inserts them all when
    the block ends, or before anything else reads or writes the event tables on `conn`
    (every other `EventStore` method does so first): a write transaction of many small
    appends (the pipeline's builds) then costs one dedupe read per append instead of four
    statements. Sequence numbers and times are what one insert per append gives: the
    sequence is read once, handed out in memory, and advanced by as many when the rows go
    in (the caller holds the write lock, so nobody else draws from it). Inside an outer
    block on the same connection it is that block (whose end inserts the rows); the state
    lives in a context variable, so appends on `conn` from another thread are not held
    (and must not happen while rows are: no writer does that)."""
    outer = _DEFERRED.get()
    if outer is not None and outer.conn is conn:
        yield
        return
    token = _DEFERRED.set(_Deferred(conn))
    try:
        yield
        EventStore(conn).flush()
    finally:
        _DEFERRED.reset(token)


def _pending_where(
    readers: Sequence[tuple[tuple[datetime, str] | None, Sequence[str]]],
) -> tuple[str, list[Any]]:
    """The condition of the events some reader has not seen (`EventStore.fetch_pending`),
    and its parameters; "" when no reader reads any type."""
    clauses: list[str] = []
    params: list[Any] = []
    readers = [(position, types) for position, types in readers if types]
    for position, types in readers:
        clause = f"event_type IN ({', '.join('?' for _ in types)})"
        params += list(types)
        if position is not None:
            clause += " AND (ts > ? OR (ts = ? AND event_id > ?))"
            params += [position[0], position[0], position[1]]
        clauses.append(f"({clause})")
    if not clauses:
        return "", []
    where = f"({' OR '.join(clauses)})"
    if all(position is not None for position, _ in readers):  # skips older row groups
        where += " AND ts >= ?"
        params.append(min(position[0] for position, _ in readers if position is not None))
    return where, params


def _next_ts(newest: datetime | None) -> datetime:
    """The `ts` of events appended now: the wall clock, never before the newest stored."""
    now = datetime.now(UTC).replace(tzinfo=None)
    return max(now, newest) if newest is not None else now


class EventStore:
    """Appends and reads events on a connection owned by the caller's unit of work."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self._conn = conn

    @property
    def conn(self) -> duckdb.DuckDBPyConnection:
        """The connection, once the appends `deferred` holds back on it are inserted: what
        every method but `append_many` uses, so each sees every event appended."""
        self.flush()
        return self._conn

    def _deferring(self) -> _Deferred | None:
        state = _DEFERRED.get()
        return state if state is not None and state.conn is self._conn else None

    def flush(self) -> None:
        """Insert the rows `deferred` holds back on this connection (none outside it)."""
        state = self._deferring()
        if state is None:
            return
        self._check_unread(state)
        if not (state.rows or state.drawn):
            return
        rows, state.rows, state.keys = state.rows, [], {}
        self._insert(rows)
        if state.drawn:
            drawn, state.drawn = state.drawn, 0
            last = self._conn.execute(
                "SELECT max(nextval('events_seq')) FROM range(?)", [drawn]
            ).fetchone()[0]
            if last != state.next_seq - 1:  # another writer drew numbers: ids would clash
                raise RuntimeError(f"events_seq at {last}, expected {state.next_seq - 1}")

    def _check_unread(self, state: _Deferred) -> None:
        """One read of the keys taken as fresh since the last flush: `FreshKeyStored` when
        some are stored (before inserting them would break the table's key)."""
        if not state.unread:
            return
        unread, state.unread = list(state.unread), set()
        rows = self._conn.execute(
            "SELECT dedupe_key FROM event_dedup WHERE dedupe_key IN (SELECT unnest(?))", [unread]
        ).fetchall()
        if rows:
            raise FreshKeyStored({r[0] for r in rows})

    def append(self, event: NewEvent) -> AppendResult:
        return self.append_many([event])[0]

    def append_many(
        self, events: Sequence[NewEvent], spaced: bool = False, fresh: Collection[str] = ()
    ) -> list[AppendResult]:
        """Append `events` in order as `append` would one by one, in four statements
        whatever their number (one dedupe read, one sequence read, one insert per table):
        what a writer that records many events per transaction uses. An event whose key is
        stored, or repeats an earlier key of the batch, returns that event (`created`
        False). The events share one time, unless `spaced`: then each is 1 µs after the
        one before, as one by one gives each its own (sessions of an import: tables
        derived from their ingest times, such as the outbox's claim order, keep theirs).
        Inside `deferred`, only the dedupe read runs now, and not for the keys in `fresh`:
        those the caller knows no event was stored under (a build's first write). They are
        read once, when the rows go in (`FreshKeyStored` if the caller was wrong)."""
        state = self._deferring()
        keys = [e.dedupe_key for e in events if e.dedupe_key]
        found = self._by_dedupe_keys(keys, state, fresh)
        unseen = [e for e in events if e.dedupe_key is None or e.dedupe_key not in found]
        seqs, ts = self._next_seqs(len(unseen), state) if unseen else ([], None)
        out: list[AppendResult] = []
        rows: list[tuple[StoredEvent, str]] = []
        for event in events:
            known = found.get(event.dedupe_key) if event.dedupe_key else None
            if known is not None:
                out.append(AppendResult(known, created=False))
                continue
            at = ts + timedelta(microseconds=len(rows)) if spaced and ts else ts
            stored, text = _new_stored(event, seqs[len(rows)], at)
            rows.append((stored, text))
            if event.dedupe_key is not None:
                found[event.dedupe_key] = stored
            out.append(AppendResult(stored, created=True))
        if state is None:
            self._insert(rows)
        else:
            state.rows += rows
            state.keys.update((e.dedupe_key, e) for e, _ in rows if e.dedupe_key is not None)
            if rows:
                state.newest = max(rows[-1][0].ts, state.newest or rows[-1][0].ts)
        log = _APPENDED.get()
        if log is not None:
            log.extend(stored for stored, _ in rows)
        return out

    def _by_dedupe_keys(
        self, keys: Sequence[str], state: _Deferred | None, fresh: Collection[str] = ()
    ) -> dict[str, StoredEvent]:
        """The stored event of each of `keys` that is stored (or held back by `state`): the
        keys first (a narrow read of `event_dedup`), the events only when some are (a
        rerun; joining `events` for every append cost a scan of it). Keys in `fresh` are
        taken as not stored and left for `state`'s next flush to check (see `_unread`)."""
        held = {k: state.keys[k] for k in keys if k in state.keys} if state else {}
        keys = self._unread([k for k in keys if k not in held], state, fresh)
        if not keys:
            return held
        ids = self._conn.execute(
            "SELECT event_id FROM event_dedup WHERE dedupe_key IN (SELECT unnest(?))",
            [list(dict.fromkeys(keys))],
        ).fetchall()
        if not ids:
            return held
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE event_id IN (SELECT unnest(?))",
            [[r[0] for r in ids]],
        ).fetchall()
        events = [_row_to_event(r) for r in rows]
        return held | {e.dedupe_key: e for e in events if e.dedupe_key is not None}

    @staticmethod
    def _unread(keys: list[str], state: _Deferred | None, fresh: Collection[str]) -> list[str]:
        """`keys` but those in `fresh`, which `state` notes to check when it flushes: only
        inside `deferred` (the check needs a flush), and not while `reading_every_key`."""
        if state is None or not fresh or not _TRUST_FRESH.get():
            return keys
        state.unread.update(k for k in keys if k in fresh)
        return [k for k in keys if k not in fresh]

    def _next_seqs(self, n: int, state: _Deferred | None) -> tuple[list[int], datetime]:
        """`n` fresh sequence numbers and the `ts` of events appended now (`_next_ts`), in
        one read; from memory after the first when `state` holds inserts back."""
        if state is not None and state.next_seq is not None:
            seqs = list(range(state.next_seq, state.next_seq + n))
            state.next_seq += n
            state.drawn += n
            return seqs, _next_ts(state.newest)
        rows = self._conn.execute(
            "SELECT nextval('events_seq'), (SELECT max(ts) FROM events) FROM range(?)", [n]
        ).fetchall()
        seqs = sorted(r[0] for r in rows)
        if state is not None:
            state.next_seq, state.newest = seqs[-1] + 1, rows[0][1]
        return seqs, _next_ts(rows[0][1])

    def _insert(self, rows: Sequence[tuple[StoredEvent, str]]) -> None:
        """One insert per table, one list per column (`axiom.store.columns`; rows: the event
        and its payload text)."""
        insert_columns(
            self._conn,
            "events",
            _COLUMNS,
            [
                (e.event_id, e.seq, e.ts, e.event_type, e.actor, e.session_id)
                + (text, e.checksum, e.build_id, e.dedupe_key)
                for e, text in rows
            ],
        )
        keyed = [
            (e.dedupe_key, e.event_id, e.ts, e.event_type)
            for e, _ in rows
            if e.dedupe_key is not None
        ]
        insert_columns(self._conn, "event_dedup", "dedupe_key, event_id, ts, event_type", keyed)

    def count_dedupe_prefix(self, prefix: str) -> int:
        """How many stored dedupe keys start with `prefix` (numbering repeated attempts)."""
        return self.conn.execute(
            "SELECT count(*) FROM event_dedup WHERE starts_with(dedupe_key, ?)", [prefix]
        ).fetchone()[0]

    def get(self, event_id: str) -> StoredEvent | None:
        row = self.conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE event_id = ?", [event_id]
        ).fetchone()
        return _row_to_event(row) if row else None

    def get_by_dedupe_key(self, dedupe_key: str) -> StoredEvent | None:
        """The event stored (or held back by `deferred`) under `dedupe_key`, if any."""
        return self._by_dedupe_keys([dedupe_key], self._deferring()).get(dedupe_key)

    def fetch_since(
        self,
        last_ts: datetime | None,
        last_event_id: str | None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[StoredEvent]:
        """Events strictly after the position `(last_ts, last_event_id)`, oldest first."""
        where, params = [], []
        if last_ts is not None:
            where.append("(ts > ? OR (ts = ? AND event_id > ?))")
            params += [last_ts, last_ts, last_event_id or ""]
        if types:
            where.append(f"event_type IN ({', '.join('?' for _ in types)})")
            params += list(types)
        sql = f"SELECT {_COLUMNS} FROM events"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY ts, event_id"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_row_to_event(row) for row in self.conn.execute(sql, params).fetchall()]

    def fetch_pending(
        self, readers: Sequence[tuple[tuple[datetime, str] | None, Sequence[str]]], limit: int
    ) -> list[StoredEvent]:
        """The first `limit` events that some reader has not seen, oldest first, in one
        read: a reader is (its position, or None when it has seen nothing; its event
        types). Readers at different positions (projectors) then read no event that none
        of them needs, such as an import's transcripts once their one reader has them."""
        where, params = _pending_where(readers)
        if not where:
            return []
        sql = (
            f"SELECT {_COLUMNS} FROM events WHERE {where} ORDER BY ts, event_id LIMIT {int(limit)}"
        )
        return [_row_to_event(row) for row in self.conn.execute(sql, params).fetchall()]

    def count_pending(
        self, readers: Sequence[tuple[tuple[datetime, str] | None, Sequence[str]]], limit: int
    ) -> int:
        """How many of `fetch_pending`'s events there are, up to `limit`, without reading
        them (their payloads can be whole transcripts)."""
        where, params = _pending_where(readers)
        if not where:
            return 0
        sql = f"SELECT count(*) FROM (SELECT 1 FROM events WHERE {where} LIMIT {int(limit)})"
        return int(self.conn.execute(sql, params).fetchone()[0])

    def replay(self, types: Sequence[str] | None = None, batch: int = 500) -> Iterator[StoredEvent]:
        """Every event from the beginning, in order, read in batches."""
        last_ts, last_id = None, None
        while True:
            chunk = self.fetch_since(last_ts, last_id, types, limit=batch)
            if not chunk:
                return
            yield from chunk
            last_ts, last_id = chunk[-1].ts, chunk[-1].event_id

    def about(self, field_name: str, value: str, types: Sequence[str]) -> list[StoredEvent]:
        """Events of `types` whose payload has `field_name == value`, oldest first."""
        marks = ", ".join("?" for _ in types)
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE event_type IN ({marks})"
            f" AND json_extract_string(payload_json, '$.{field_name}') = ? ORDER BY ts, event_id",
            [*types, value],
        ).fetchall()
        return [_row_to_event(row) for row in rows]

    def ids_about(self, session_ids: Sequence[str], needles: Sequence[str]) -> list[str]:
        """Ids of the events of `session_ids` or whose payload holds any of `needles` (entry
        ids, session ids) as a whole JSON string: what forgetting has to redact. Matching
        the quoted form keeps `s1` from also catching `s10`."""
        quoted = [canonical_json(n) for n in needles]
        found = self.conn.execute(
            "SELECT event_id FROM events WHERE session_id IN (SELECT unnest(?))"
            " OR EXISTS (SELECT 1 FROM unnest(?::VARCHAR[]) AS n(x)"
            " WHERE contains(payload_json::VARCHAR, n.x))"
            " ORDER BY ts, event_id",
            [list(session_ids), quoted],
        ).fetchall()
        return [r[0] for r in found]

    def sessions_with(self, types: Sequence[str], session_ids: Sequence[str]) -> set[str]:
        """Which of `session_ids` have an event of `types`."""
        rows = self.conn.execute(
            "SELECT DISTINCT session_id FROM events WHERE event_type IN (SELECT unnest(?))"
            " AND session_id IN (SELECT unnest(?))",
            [list(types), list(dict.fromkeys(session_ids))],
        ).fetchall()
        return {r[0] for r in rows}

    def count_per_session(self, event_type: str, session_ids: Sequence[str]) -> dict[str, int]:
        """How many events of `event_type` each of `session_ids` has (those with none are
        left out), in one read."""
        rows = self.conn.execute(
            "SELECT session_id, count(*) FROM events WHERE event_type = ?"
            " AND session_id IN (SELECT unnest(?)) GROUP BY session_id",
            [event_type, list(dict.fromkeys(session_ids))],
        ).fetchall()
        return {r[0]: r[1] for r in rows}

    def tombstoned(self, tombstone_type: str) -> set[str]:
        """Every session a `tombstone_type` event names in its `session_ids`."""
        rows = self.conn.execute(
            "SELECT DISTINCT unnest(CAST(json_extract(payload_json, '$.session_ids')"
            " AS VARCHAR[])) FROM events WHERE event_type = ?",
            [tombstone_type],
        ).fetchall()
        return {r[0] for r in rows}

    def tombstone_for_session(self, session_id: str, tombstone_type: str) -> StoredEvent | None:
        """The `tombstone_type` event whose `session_ids` names `session_id`, if any."""
        row = self.conn.execute(
            "SELECT event_id FROM events WHERE event_type = ? AND list_contains("
            "CAST(json_extract(payload_json, '$.session_ids') AS VARCHAR[]), ?) LIMIT 1",
            [tombstone_type, session_id],
        ).fetchone()
        return self.get(row[0]) if row else None

    def redact(self, event_ids: Sequence[str], redaction_id: str) -> int:
        """Replace the payloads of `event_ids` with their redacted form (ids only, no text):
        the single exception to append-only, for forgetting. Returns how many changed."""
        changed = 0
        for event_id in dict.fromkeys(event_ids):
            event = self.get(event_id)
            if event is None or is_redacted(event.payload):
                continue
            self.replace_payload(event_id, redacted_payload(event.payload, redaction_id))
            changed += 1
        return changed

    def replace_payload(self, event_id: str, payload: dict[str, Any]) -> None:
        """Store `payload` as the event's payload: for forgetting only, when an event that
        is kept holds a copy of forgotten text (`axiom.forgetting.copies`)."""
        encoded = encode_payload(payload)
        self.conn.execute(
            "UPDATE events SET payload_json = ?, checksum = ? WHERE event_id = ?",
            [encoded.text, encoded.checksum, event_id],
        )

    def field_of(self, event_ids: Sequence[str], event_type: str, field_name: str) -> list[str]:
        """`field_name` of each `event_type` event among `event_ids` (where it is set)."""
        rows = self.conn.execute(
            f"SELECT DISTINCT json_extract_string(payload_json, '$.{field_name}') FROM events"
            " WHERE event_type = ? AND event_id IN (SELECT unnest(?::VARCHAR[]))",
            [event_type, list(event_ids)],
        ).fetchall()
        return sorted(r[0] for r in rows if r[0] is not None)

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM events").fetchone()[0]

    def about_any(
        self, field_name: str, values: Sequence[str], types: Sequence[str]
    ) -> list[StoredEvent]:
        """Events of `types` whose payload's `field_name` is one of `values`, oldest first."""
        marks = ", ".join("?" for _ in types)
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE event_type IN ({marks})"
            f" AND json_extract_string(payload_json, '$.{field_name}') IN (SELECT unnest(?))"
            " ORDER BY ts, event_id",
            [*types, list(dict.fromkeys(values))],
        ).fetchall()
        return [_row_to_event(row) for row in rows]

    def count_about(self, field_name: str, value: str, event_type: str) -> int:
        """How many events of `event_type` have `field_name == value` in their payload."""
        return self.conn.execute(
            "SELECT count(*) FROM events WHERE event_type = ?"
            f" AND json_extract_string(payload_json, '$.{field_name}') = ?",
            [event_type, value],
        ).fetchone()[0]

    def latest(self, types: Sequence[str]) -> StoredEvent | None:
        """The newest event of any of `types`."""
        row = self.conn.execute(
            f"SELECT event_id FROM events WHERE event_type IN ({', '.join('?' for _ in types)})"
            " ORDER BY ts DESC, event_id DESC LIMIT 1",
            list(types),
        ).fetchone()
        return self.get(row[0]) if row else None

    def latest_of_session(self, event_type: str, session_id: str) -> StoredEvent | None:
        """The newest event of `event_type` in the session."""
        row = self.conn.execute(
            "SELECT event_id FROM events WHERE event_type = ? AND session_id = ?"
            " ORDER BY ts DESC, event_id DESC LIMIT 1",
            [event_type, session_id],
        ).fetchone()
        return self.get(row[0]) if row else None

    def latest_per_session(
        self, event_type: str, session_ids: Sequence[str]
    ) -> dict[str, StoredEvent]:
        """`latest_of_session` of each of `session_ids` that has one, in one read."""
        rows = self.conn.execute(
            f"SELECT {_COLUMNS} FROM events WHERE event_type = ?"
            " AND session_id IN (SELECT unnest(?))"
            " QUALIFY row_number() OVER (PARTITION BY session_id ORDER BY ts DESC, event_id DESC)"
            " = 1",
            [event_type, list(dict.fromkeys(session_ids))],
        ).fetchall()
        return {e.session_id: e for e in map(_row_to_event, rows) if e.session_id is not None}

    def stored_keys(self, keys: Sequence[str], fresh: Collection[str] = ()) -> set[str]:
        """Which of the dedupe `keys` are stored (or held back by `deferred`); those in
        `fresh` are taken as not stored, as in `append_many`."""
        state = self._deferring()
        held = {k for k in keys if k in state.keys} if state else set()
        rest = self._unread(list(dict.fromkeys(k for k in keys if k not in held)), state, fresh)
        if not rest:
            return held
        rows = self._conn.execute(
            "SELECT dedupe_key FROM event_dedup WHERE dedupe_key IN (SELECT unnest(?))", [rest]
        ).fetchall()
        return held | {r[0] for r in rows}

    def latest_fields_per_session(
        self, event_type: str, session_ids: Sequence[str], paths: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """(session_id, *values at the JSON `paths`) of the newest event of `event_type` of
        each session; reads only those values out of the payloads (a path with `[*]`
        gives a list)."""
        fields = "".join(f", json_extract_string(payload_json, '{path}')" for path in paths)
        return self.conn.execute(
            f"SELECT session_id{fields}"
            " FROM events WHERE event_type = ? AND list_contains(?, session_id)"
            " QUALIFY row_number() OVER (PARTITION BY session_id ORDER BY ts DESC, event_id DESC)"
            " = 1",
            [event_type, list(session_ids)],
        ).fetchall()

    def fields_with_build_event(
        self,
        event_type: str,
        session_id: str,
        fields: Sequence[str],
        build_event_type: str,
        build_fields: Sequence[str],
    ) -> list[tuple[str | None, ...]]:
        """Payload `fields` of each event of `event_type` in the session, followed by the
        `build_fields` of the `build_event_type` event of the same build, oldest first."""
        own = [f"json_extract_string(c.payload_json, '$.{name}')" for name in fields]
        build = [f"json_extract_string(b.payload_json, '$.{name}')" for name in build_fields]
        return self.conn.execute(
            f"SELECT {', '.join(own + build)}"
            " FROM events c JOIN events b ON b.event_type = ? AND b.build_id = c.build_id"
            " WHERE c.event_type = ? AND c.session_id = ? ORDER BY c.ts, c.event_id",
            [build_event_type, event_type, session_id],
        ).fetchall()

    def ids_of_session(self, event_type: str, session_id: str) -> list[str]:
        """Ids of the session's events of `event_type`, newest first (read them lazily)."""
        rows = self.conn.execute(
            "SELECT event_id FROM events WHERE event_type = ? AND session_id = ?"
            " ORDER BY ts DESC, event_id DESC",
            [event_type, session_id],
        ).fetchall()
        return [r[0] for r in rows]
