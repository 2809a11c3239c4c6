"""Read-side queries over the `sessions` and `messages` projection tables."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:  # only in annotations: hooks import this module and must not load pyarrow
    import pyarrow as pa


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    project: str | None
    source: str
    title: str | None
    started_at: datetime | None
    ended_at: datetime | None
    message_count: int


@dataclass(frozen=True)
class MessageRow:
    index: int
    role: str
    text: str
    ts: datetime | None
    is_sidechain: bool
    tool_calls: list[dict[str, Any]]
    meta: dict[str, Any]


@dataclass(frozen=True)
class SessionPage:
    """A window of the newest-first sessions: rows `offset` to `offset + per_page`; `page`
    is the page that window starts in (1 + offset // per_page)."""

    sessions: list[SessionSummary]
    page: int
    per_page: int
    total: int
    offset: int = 0

    @property
    def has_next(self) -> bool:
        return self.offset + self.per_page < self.total

    @property
    def has_previous(self) -> bool:
        return self.page > 1


_SUMMARY_COLS = "session_id, project, source, title, started_at, ended_at, message_count"


def list_sessions(
    conn: duckdb.DuckDBPyConnection,
    page: int = 1,
    per_page: int = 25,
    *,
    offset: int | None = None,
) -> SessionPage:
    """Newest first; sessions with no timestamps sort last. `offset`, when given, replaces
    `page` (the API takes limit/offset like its other listings, and page/per_page too)."""
    offset = max(0, offset) if offset is not None else (max(1, page) - 1) * per_page
    total = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    rows = conn.execute(
        f"SELECT {_SUMMARY_COLS} FROM sessions"
        " ORDER BY started_at DESC NULLS LAST, session_id LIMIT ? OFFSET ?",
        [per_page, offset],
    ).fetchall()
    summaries = [SessionSummary(*row) for row in rows]
    return SessionPage(summaries, 1 + offset // per_page, per_page, total, offset)


def get_session(conn: duckdb.DuckDBPyConnection, session_id: str) -> SessionSummary | None:
    row = conn.execute(
        f"SELECT {_SUMMARY_COLS} FROM sessions WHERE session_id = ?", [session_id]
    ).fetchone()
    return SessionSummary(*row) if row else None


def list_messages(conn: duckdb.DuckDBPyConnection, session_id: str) -> list[MessageRow]:
    rows = conn.execute(
        "SELECT message_index, role, text, ts, is_sidechain, tool_calls_json, meta_json"
        " FROM messages WHERE session_id = ? ORDER BY message_index",
        [session_id],
    ).fetchall()
    return [
        MessageRow(
            index=r[0],
            role=r[1],
            text=r[2],
            ts=r[3],
            is_sidechain=bool(r[4]),
            tool_calls=json.loads(r[5]) if r[5] else [],
            meta=json.loads(r[6]) if r[6] else {},
        )
        for r in rows
    ]


def session_ids_for_project(
    conn: duckdb.DuckDBPyConnection, project: str, cwd: str | None
) -> list[str]:
    """Sessions of one project: its Claude Code folder name, or the working directory the
    session recorded (`meta.cwd`)."""
    rows = conn.execute(
        "SELECT session_id FROM sessions WHERE project = ?"
        " OR (? IS NOT NULL AND json_extract_string(meta_json, '$.cwd') = ?)",
        [project, cwd, cwd],
    ).fetchall()
    return [r[0] for r in rows]


def session_ids_started_before(conn: duckdb.DuckDBPyConnection, before: datetime) -> list[str]:
    """Sessions that started before `before` (those with no start time: ingested before)."""
    rows = conn.execute(
        "SELECT session_id FROM sessions WHERE coalesce(started_at, ingested_at) < ?"
        " ORDER BY session_id",
        [before],
    ).fetchall()
    return [r[0] for r in rows]


# --- reads for other packages: the CLI, stats, the outbox writer, citations ---------------


def list_session_ids(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """Every stored session id, in id order."""
    rows = conn.execute("SELECT session_id FROM sessions ORDER BY session_id").fetchall()
    return [r[0] for r in rows]


def count_sessions(conn: duckdb.DuckDBPyConnection) -> int:
    return conn.execute("SELECT count(*) FROM sessions").fetchone()[0]


def count_messages(conn: duckdb.DuckDBPyConnection) -> int:
    return conn.execute("SELECT count(*) FROM messages").fetchone()[0]


def messages_with_previous(
    conn: duckdb.DuckDBPyConnection, keys: Sequence[tuple[str, int]]
) -> list[tuple[Any, ...]]:
    """(session_id, index, role, text, meta_json, ts or the session's start, previous
    message's role, text, meta_json) of each stored message of `keys` (session, index)."""
    return conn.execute(
        "SELECT m.session_id, m.message_index, m.role, m.text, m.meta_json,"
        " coalesce(m.ts, s.started_at), p.role, p.text, p.meta_json"
        " FROM (SELECT unnest(?) AS sid, unnest(?) AS idx) k"
        " JOIN messages m ON m.session_id = k.sid AND m.message_index = k.idx"
        " LEFT JOIN messages p ON p.session_id = m.session_id"
        "  AND p.message_index = m.message_index - 1"
        " LEFT JOIN sessions s ON s.session_id = m.session_id",
        [[k[0] for k in keys], [k[1] for k in keys]],
    ).fetchall()


def get_message_text_and_role(
    conn: duckdb.DuckDBPyConnection, session_id: str, message_index: int
) -> tuple[str, str] | None:
    """(text, role) of one stored message, None when the session has no such message."""
    return conn.execute(
        "SELECT text, role FROM messages WHERE session_id = ? AND message_index = ?",
        [session_id, message_index],
    ).fetchone()


def message_text_hashes(
    conn: duckdb.DuckDBPyConnection, keys: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], str]:
    """(session_id, index) -> sha256 hex of the stored message text, for the messages that
    exist (how a citation tells whether the text it quoted is still the stored one)."""
    if not keys:
        return {}
    rows = conn.execute(
        "SELECT m.session_id, m.message_index, sha256(m.text)"
        " FROM (SELECT unnest(?) AS sid, unnest(?) AS idx) k"
        " JOIN messages m ON m.session_id = k.sid AND m.message_index = k.idx",
        [[k[0] for k in keys], [k[1] for k in keys]],
    ).fetchall()
    return {(sid, idx): digest for sid, idx, digest in rows if digest is not None}


def session_ingest_event_id(conn: duckdb.DuckDBPyConnection, session_id: str) -> str | None:
    """The ingest event the session's stored messages come from (None: no such session)."""
    row = conn.execute(
        "SELECT ingest_event_id FROM sessions WHERE session_id = ?", [session_id]
    ).fetchone()
    return row[0] if row else None


# --- reads for search and disclosure (axiom.retrieval) -------------------------------------

MessageKey = tuple[str, int]  # (session_id, message_index)


def session_starts(
    conn: duckdb.DuckDBPyConnection, session_ids: list[str]
) -> dict[str, datetime | None]:
    """session_id -> its start time, for each existing session of `session_ids`."""
    if not session_ids:
        return {}
    rows = conn.execute(
        "SELECT session_id, started_at FROM sessions WHERE session_id IN (SELECT unnest(?))",
        [list(dict.fromkeys(session_ids))],
    ).fetchall()
    return dict(rows)


def message_times(
    conn: duckdb.DuckDBPyConnection, keys: list[MessageKey]
) -> dict[MessageKey, datetime | None]:
    """(session_id, index) -> the message's time, else its session's start, for each
    existing message of `keys`."""
    if not keys:
        return {}
    rows = conn.execute(
        "SELECT m.session_id, m.message_index, coalesce(m.ts, s.started_at)"
        " FROM (SELECT unnest(?) AS sid, unnest(?) AS idx) w"
        " JOIN messages m ON m.session_id = w.sid AND m.message_index = w.idx"
        " LEFT JOIN sessions s ON s.session_id = m.session_id",
        [[k[0] for k in keys], [k[1] for k in keys]],
    ).fetchall()
    return {(sid, idx): ts for sid, idx, ts in rows}


def message_time_table(conn: duckdb.DuckDBPyConnection) -> pa.Table:
    """Every message's key ("session_id:index") and time (else its session's start), in
    one columnar read: `message_times` for the whole store."""
    return conn.execute(
        "SELECT m.session_id || ':' || m.message_index AS key, coalesce(m.ts, s.started_at) AS ts"
        " FROM messages m LEFT JOIN sessions s ON s.session_id = m.session_id"
    ).fetch_arrow_table()


def all_session_starts(conn: duckdb.DuckDBPyConnection) -> dict[str, datetime | None]:
    """session_id -> its start time, for every session."""
    return dict(conn.execute("SELECT session_id, started_at FROM sessions").fetchall())


@dataclass(frozen=True)
class MessageText:
    """A message's role, text and meta: what a search hit shows of it."""

    role: str
    text: str
    meta: dict[str, Any]


def message_texts(
    conn: duckdb.DuckDBPyConnection, keys: list[MessageKey]
) -> dict[MessageKey, MessageText]:
    """(session_id, index) -> role, text and meta, for each existing message of `keys`."""
    if not keys:
        return {}
    rows = conn.execute(
        "SELECT m.session_id, m.message_index, m.role, m.text, m.meta_json"
        " FROM (SELECT unnest(?) AS sid, unnest(?) AS idx) w"
        " JOIN messages m ON m.session_id = w.sid AND m.message_index = w.idx",
        [[k[0] for k in keys], [k[1] for k in keys]],
    ).fetchall()
    return {
        (sid, idx): MessageText(role, text, json.loads(meta_json) if meta_json else {})
        for sid, idx, role, text, meta_json in rows
    }


@dataclass(frozen=True)
class WindowMessage:
    """One message of a session window (disclosure's timeline and detail layers)."""

    session_id: str
    index: int
    role: str
    text: str
    ts: datetime | None
    meta: dict[str, Any]


def message_windows(
    conn: duckdb.DuckDBPyConnection, windows: list[tuple[str, int, int]]
) -> dict[str, list[WindowMessage]]:
    """session_id -> its messages whose index lies in any (session_id, first, last) window
    of `windows`, in index order; one read for all windows."""
    if not windows:
        return {}
    rows = conn.execute(
        "SELECT DISTINCT m.session_id, m.message_index, m.role, m.text, m.ts, m.meta_json"
        " FROM (SELECT unnest(?) AS sid, unnest(?) AS lo, unnest(?) AS hi) w"
        " JOIN messages m ON m.session_id = w.sid AND m.message_index BETWEEN w.lo AND w.hi"
        " ORDER BY m.session_id, m.message_index",
        [[w[0] for w in windows], [w[1] for w in windows], [w[2] for w in windows]],
    ).fetchall()
    out: dict[str, list[WindowMessage]] = {}
    for sid, idx, role, text, ts, meta_json in rows:
        meta = json.loads(meta_json) if meta_json else {}
        out.setdefault(sid, []).append(WindowMessage(sid, idx, role, text, ts, meta))
    return out


def get_sessions(
    conn: duckdb.DuckDBPyConnection, session_ids: list[str]
) -> dict[str, SessionSummary]:
    """session_id -> its summary, for each existing session of `session_ids` (one read)."""
    if not session_ids:
        return {}
    rows = conn.execute(
        f"SELECT {_SUMMARY_COLS} FROM sessions WHERE session_id IN (SELECT unnest(?))",
        [list(dict.fromkeys(session_ids))],
    ).fetchall()
    return {row[0]: SessionSummary(*row) for row in rows}


def sessions_per_day(conn: duckdb.DuckDBPyConnection, days: int = 30) -> list[tuple[Any, int]]:
    """(day, sessions started that day) over the last `days` days that end at the newest
    session (a session with no start counts on the day it was ingested)."""
    return conn.execute(
        "WITH s AS (SELECT CAST(coalesce(started_at, ingested_at) AS DATE) AS d FROM sessions)"
        " SELECT d, count(*) FROM s WHERE d > (SELECT max(d) FROM s) - CAST(? AS INTEGER)"
        " GROUP BY d ORDER BY d",
        [int(days)],
    ).fetchall()


def named_speakers(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """The people sessions name as their speakers (`sessions.speakers`: a chat between named
    people), as opposed to the things entries are about ("Redis port", "Docker")."""
    rows = conn.execute(
        "SELECT DISTINCT unnest(speakers) FROM sessions WHERE speakers IS NOT NULL"
    ).fetchall()
    return [speaker for (speaker,) in rows]
