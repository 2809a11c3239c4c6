"""Folds `session_ingested` events into the `sessions` and `messages` tables.

A session re-ingested with more messages (a transcript that grew) replaces its rows, so the
tables always show the newest ingest of each session.
"""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from axiom.ingest.timestamps import parse_timestamp
from axiom.ingest.transcript import Transcript
from axiom.store.events import StoredEvent

SESSION_INGESTED = "session_ingested"
_COLS = (
    "session_id, message_index, role, text, ts, uuid, parent_uuid, is_sidechain,"
    " tool_calls_json, meta_json"
)


class SessionProjector:
    name = "sessions"
    event_types = (SESSION_INGESTED,)
    tables = ("messages", "sessions")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        transcript = Transcript.from_json(event.payload["transcript"])
        sid = transcript.session_id
        times = [parse_timestamp(m.timestamp) for m in transcript.messages]
        known = [t for t in times if t is not None]
        conn.execute("DELETE FROM messages WHERE session_id = ?", [sid])
        conn.execute("DELETE FROM sessions WHERE session_id = ?", [sid])
        conn.execute(
            "INSERT INTO sessions (session_id, project, source, title, started_at, ended_at,"
            " message_count, meta_json, ingest_event_id, ingested_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                sid,
                transcript.project,
                transcript.source,
                transcript.title,
                parse_timestamp(transcript.started_at) or (min(known) if known else None),
                max(known) if known else None,
                len(transcript.messages),
                json.dumps(transcript.meta, ensure_ascii=False),
                event.event_id,
                event.ts,
            ],
        )
        if not transcript.messages:
            return
        rows = pa.table(
            {
                "session_id": [sid] * len(transcript.messages),
                "message_index": pa.array([m.index for m in transcript.messages], pa.int32()),
                "role": [m.role for m in transcript.messages],
                "text": [m.text for m in transcript.messages],
                "ts": pa.array(times, pa.timestamp("us")),
                "uuid": [m.uuid for m in transcript.messages],
                "parent_uuid": [m.parent_uuid for m in transcript.messages],
                "is_sidechain": [m.is_sidechain for m in transcript.messages],
                "tool_calls_json": [
                    json.dumps([c.__dict__ for c in m.tool_calls], ensure_ascii=False)
                    for m in transcript.messages
                ],
                "meta_json": [json.dumps(m.meta, ensure_ascii=False) for m in transcript.messages],
            }
        )
        conn.register("incoming_messages", rows)
        try:
            conn.execute(f"INSERT INTO messages ({_COLS}) SELECT {_COLS} FROM incoming_messages")
        finally:
            conn.unregister("incoming_messages")
