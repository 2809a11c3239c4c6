"""The order in which sessions are run through the memory pipeline: chronological.

The task system reads observations in processing order: a task seen for the first time
never starts ``done``, and an observation older than one already applied is stale (it
cannot move the status). Processing a newer session before an older one therefore leaves
tasks behind (the completion arrives first and is refused, then the older progress is
stale). Claude Code names transcript files after random UUIDs, so the order of file
names, or of session ids, says nothing about time.

`chronological` sorts sessions by their start: the earliest parseable time of the newest
``session_ingested`` transcript of each session (its ``started_at`` and every message
timestamp, as naive UTC). Ties are broken by the path the transcript was read from, then
by session id; sessions with no timestamp at all come last, in the same tie order. Every
entry point that processes more than one session uses it (``import``, ``process``, the
Celery ``axiom.ingest_path`` task), so a folder imported together ends in the same state
whatever its file names. Sessions imported in separate runs are processed in the order of
the runs; the resolver's stale-observation rule is what protects those.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import duckdb

from axiom.ingest.timestamps import parse_timestamp
from axiom.store.event_types import SESSION_INGESTED
from axiom.store.events import EventStore

__all__ = ["chronological", "payload_order", "session_starts"]

Start = tuple[datetime | None, str]  # a session's start (None: no time at all) and path


def session_starts(
    conn: duckdb.DuckDBPyConnection, session_ids: Iterable[str]
) -> dict[str, tuple[datetime | None, str]]:
    """``{session_id: (start or None, path or "")}`` from the newest ingest of each session.

    Sessions never ingested are left out. Reads only the timestamps and the path out of
    the stored transcript (in DuckDB), never the message texts.
    """
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return {}
    rows = EventStore(conn).latest_fields_per_session(
        SESSION_INGESTED,
        ids,
        (
            "$.transcript.started_at",
            "$.transcript.messages[*].timestamp",
            "$.transcript.meta.path",
        ),
    )
    return {sid: _start(started_at, stamps, path) for sid, started_at, stamps, path in rows}


def _start(started_at: object, stamps: list[object] | None, path: object) -> Start:
    times = [t for t in map(parse_timestamp, [started_at, *(stamps or [])]) if t is not None]
    return (min(times) if times else None, str(path or ""))


def _key(session_id: str, start: Start) -> tuple[bool, datetime, str, str]:
    return (start[0] is None, start[0] or datetime.min, start[1], session_id)


def chronological(conn: duckdb.DuckDBPyConnection, session_ids: Iterable[str]) -> list[str]:
    """`session_ids` without duplicates, oldest session first (see the module docstring).

    Ids with no ingest keep their place after all known sessions, so processing still
    reports them (as unknown) rather than dropping them silently.
    """
    ids = list(dict.fromkeys(session_ids))
    starts = session_starts(conn, ids)

    known = sorted((sid for sid in ids if sid in starts), key=lambda sid: _key(sid, starts[sid]))
    return known + [sid for sid in ids if sid not in starts]


def payload_order(payloads: list[tuple[str, dict[str, Any]]]) -> list[int]:
    """The positions of `(session id, session_ingested payload)` pairs in the order
    `chronological` gives their sessions once stored (read from the payloads in memory)."""

    def start(payload: dict[str, Any]) -> Start:
        transcript = payload.get("transcript") or {}
        stamps = [m.get("timestamp") for m in transcript.get("messages") or []]
        path = (transcript.get("meta") or {}).get("path")
        return _start(transcript.get("started_at"), stamps, path)

    keys = [_key(sid, start(payload)) for sid, payload in payloads]
    return sorted(range(len(payloads)), key=keys.__getitem__)
