"""Read-side queries over `entries` and the entry-related events (history)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from axiom.store.events import EventStore

HISTORY_TYPES = (
    "entry_created",
    "idris_checked",
    "entry_promoted",
    "promotion_blocked",
    "entry_approved",
    "entry_status_changed",
)


@dataclass(frozen=True)
class EntryRow:
    entry_id: str
    entry_type: str
    title: str
    content: str
    task: dict[str, Any] | None
    stage: str
    status: str
    session_id: str | None
    canonical_key: str | None
    build_id: str | None
    created_ts: datetime
    evidence: list[dict[str, Any]]
    subject: str | None = None
    value: str | None = None
    previous_value: str | None = None
    negated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "entry",
            "entry_id": self.entry_id,
            "type": self.entry_type,
            "stage": self.stage,
            "status": self.status,
            "title": self.title,
            "content": self.content,
            "task": self.task,
            "session_id": self.session_id,
            "canonical_key": self.canonical_key,
            "build_id": self.build_id,
            "created_ts": self.created_ts.isoformat(),
            "evidence": self.evidence,
            "subject": self.subject,
            "value": self.value,
            "previous_value": self.previous_value,
            "negated": self.negated,
        }


_COLS = (
    "entry_id, entry_type, title, content_json, stage, status, session_id, canonical_key,"
    " build_id, created_ts, evidence_json, subject, value, previous_value, negated"
)


def _row(r: tuple) -> EntryRow:
    content = json.loads(r[3])
    return EntryRow(
        entry_id=r[0],
        entry_type=r[1],
        title=r[2],
        content=content.get("content", ""),
        task=content.get("task"),
        stage=r[4],
        status=r[5],
        session_id=r[6],
        canonical_key=r[7],
        build_id=r[8],
        created_ts=r[9],
        evidence=json.loads(r[10]) if r[10] else [],
        subject=r[11],
        value=r[12],
        previous_value=r[13],
        negated=bool(r[14]),
    )


def list_entries(
    conn: duckdb.DuckDBPyConnection,
    stage: str | None = None,
    entry_type: str | None = None,
    status: str | None = None,
    session_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
) -> list[EntryRow]:
    where, params = [], []
    for column, value in (
        ("stage", stage),
        ("entry_type", entry_type),
        ("status", status),
        ("session_id", session_id),
    ):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    sql = f"SELECT {_COLS} FROM entries"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY created_ts, entry_id"
    if limit is not None:
        sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
    return [_row(r) for r in conn.execute(sql, params).fetchall()]


def count_entries(conn: duckdb.DuckDBPyConnection) -> int:
    return conn.execute("SELECT count(*) FROM entries").fetchone()[0]


def get_entry(conn: duckdb.DuckDBPyConnection, entry_id: str) -> EntryRow | None:
    row = conn.execute(f"SELECT {_COLS} FROM entries WHERE entry_id = ?", [entry_id]).fetchone()
    return _row(row) if row else None


def entry_history(conn: duckdb.DuckDBPyConnection, entry_id: str) -> list[dict[str, Any]]:
    """Every event about the entry, oldest first: creation, checks, promotions, blocks."""
    return [
        {"event_id": e.event_id, "type": e.event_type, "ts": e.ts.isoformat(), "payload": e.payload}
        for e in EventStore(conn).about("entry_id", entry_id, HISTORY_TYPES)
    ]


def corroboration_pool(
    conn: duckdb.DuckDBPyConnection, entry_type: str, session_id: str
) -> list[tuple[str, str, str, str, str | None]]:
    """(entry_id, session_id, stage, title, canonical_key) of the active verified-or-better
    entries of a type from other sessions: what a new entry may be corroborated by."""
    return conn.execute(
        "SELECT entry_id, session_id, stage, title, canonical_key FROM entries"
        " WHERE entry_type = ? AND session_id IS DISTINCT FROM ?"
        " AND stage IN ('verified', 'certified') AND status = 'active' ORDER BY entry_id",
        [entry_type, session_id],
    ).fetchall()
