"""Folds `session_ingested` events into the `sessions` and `messages` tables.

A session re-ingested with more messages (a transcript that grew) replaces its rows, so the
tables always show the newest ingest of each session.

`session_rows` turns a transcript into the rows without touching the database; `apply`
builds them before it deletes anything, so an event it cannot fold fails before any row
changes (the runner then records it, `axiom.store.projection`). The importer works out
every transcript's rows from its payload as stored before appending it (`prepare_session`),
so what it stores always projects, and hands them over (`known_rows`) to the write that
appends them, which then does not fold the payloads again.
"""

from __future__ import annotations

import contextvars
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from axiom.ingest.sanitize import clean_json
from axiom.ingest.timestamps import parse_timestamp
from axiom.ingest.transcript import Message, Transcript
from axiom.store.event_types import SESSION_INGESTED
from axiom.store.events import StoredEvent
from axiom.store.projection import Reject, fold_each, raise_error

_COLS = (
    "session_id, message_index, role, text, ts, uuid, parent_uuid, is_sidechain,"
    " tool_calls_json, meta_json"
)


@dataclass(frozen=True)
class SessionRows:
    session: dict[str, Any]  # the sessions row, without the event's id and time
    messages: pa.Table


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:  # NaN/Infinity in an event stored before ingest checked numbers
        return json.dumps(clean_json(json.loads(json.dumps(value)), []), ensure_ascii=False)


_NAME_CHAR = re.compile(r"[^\t\n\f\r ]")  # as migration 0011's regexp_matches reads it


def _names_someone(value: object) -> bool:
    return isinstance(value, str) and _NAME_CHAR.search(value) is not None


def named_speakers_of(messages: Sequence[Message]) -> list[str]:
    """The distinct names the messages give their speakers (meta "speaker", else "name"),
    sorted: who a chat between named people is between (migration 0011 fills the same)."""
    names = set()
    for message in messages:
        speaker, name = message.meta.get("speaker"), message.meta.get("name")
        said_by = speaker if _names_someone(speaker) else name
        if _names_someone(said_by):
            names.add(said_by)
    return sorted(names)


def session_rows(transcript: Transcript) -> SessionRows:
    """The rows `transcript` projects to; raises (TypeError, ValueError, pyarrow errors)
    when it cannot be stored."""
    sid = transcript.session_id
    if not isinstance(sid, str) or not sid:
        raise ValueError("session_id must be a non-empty string")
    messages = transcript.messages
    indexes = [m.index for m in messages]
    if len(set(indexes)) != len(indexes):
        raise ValueError("message indexes repeat")
    times: list[datetime | None] = [parse_timestamp(m.timestamp) for m in messages]
    known = [t for t in times if t is not None]
    session = {
        "session_id": sid,
        "project": transcript.project,
        "source": transcript.source,
        "title": transcript.title,
        "started_at": parse_timestamp(transcript.started_at) or (min(known) if known else None),
        "ended_at": max(known) if known else None,
        "message_count": len(messages),
        "meta_json": _json(transcript.meta),
        "speakers": named_speakers_of(messages) or None,
    }
    table = pa.table(
        {
            "session_id": pa.array([sid] * len(messages), pa.string()),
            "message_index": pa.array(indexes, pa.int32()),
            "role": pa.array([m.role for m in messages], pa.string()),
            "text": pa.array([m.text for m in messages], pa.string()),
            "ts": pa.array(times, pa.timestamp("us")),
            "uuid": pa.array([m.uuid for m in messages], pa.string()),
            "parent_uuid": pa.array([m.parent_uuid for m in messages], pa.string()),
            "is_sidechain": pa.array([m.is_sidechain for m in messages], pa.bool_()),
            "tool_calls_json": pa.array(
                [_json([c.__dict__ for c in m.tool_calls]) for m in messages], pa.string()
            ),
            "meta_json": pa.array([_json(m.meta) for m in messages], pa.string()),
        }
    )
    if table.column("role").null_count or table.column("text").null_count:
        raise ValueError("a message has no role or no text")
    return SessionRows(session, table)


# Rows worked out ahead, by the checksum of the `session_ingested` payload they fold.
_ROWS_BY_CHECKSUM: contextvars.ContextVar[Mapping[str, SessionRows] | None] = (
    contextvars.ContextVar("axiom_known_session_rows", default=None)
)


@contextmanager
def known_rows(rows: Mapping[str, SessionRows]) -> Iterator[None]:
    """Inside, an event whose payload checksum is a key of `rows` folds to those rows: the
    checksum is taken over the very text the rows were folded from (`prepare_session`)."""
    token = _ROWS_BY_CHECKSUM.set(rows)
    try:
        yield
    finally:
        _ROWS_BY_CHECKSUM.reset(token)


class SessionProjector:
    name = "sessions"
    event_types = (SESSION_INGESTED,)
    tables = ("messages", "sessions")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        self.apply_many(conn, [event], raise_error)

    def apply_many(
        self, conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent], reject: Reject
    ) -> None:
        """The rows of each event folded first (an event that cannot fold goes to `reject`
        and changes nothing), then the sessions they name replaced in four statements: the
        newest event of a session wins, as applying them one by one leaves it."""
        newest: dict[str, tuple[StoredEvent, SessionRows]] = {}
        known = _ROWS_BY_CHECKSUM.get() or {}

        def step(event: StoredEvent) -> None:
            rows = known.get(event.checksum) or session_rows(
                Transcript.from_json(event.payload["transcript"])
            )
            sid = rows.session["session_id"]
            newest.pop(sid, None)  # re-inserted last: the rows keep the order of events
            newest[sid] = (event, rows)

        fold_each(events, step, reject)
        if not newest:
            return
        sids = list(newest)
        conn.execute("DELETE FROM messages WHERE session_id IN (SELECT unnest(?))", [sids])
        conn.execute("DELETE FROM sessions WHERE session_id IN (SELECT unnest(?))", [sids])
        sessions = [
            {**rows.session, "ingest_event_id": event.event_id, "ingested_at": event.ts}
            for event, rows in newest.values()
        ]
        columns = list(sessions[0])
        marks = "(" + ", ".join("?" for _ in columns) + ")"
        conn.execute(
            f"INSERT INTO sessions ({', '.join(columns)}) VALUES "
            + ", ".join(marks for _ in sessions),
            [row[c] for row in sessions for c in columns],
        )
        messages = pa.concat_tables([rows.messages for _, rows in newest.values()])
        if messages.num_rows == 0:
            return
        conn.register("incoming_messages", messages)
        try:
            conn.execute(f"INSERT INTO messages ({_COLS}) SELECT {_COLS} FROM incoming_messages")
        finally:
            conn.unregister("incoming_messages")
