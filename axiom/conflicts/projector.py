"""Folds entry and conflict events into `conflict_facts` and `conflicts` (owner of both).

`conflict_facts` keeps what detection compares (subject, value, status) for every fact
and decision entry, so the pipeline reads one small table and never another module's.
"""

from __future__ import annotations

from typing import Any

import duckdb

from axiom.conflicts.detector import COMPARED_TYPES
from axiom.store.event_types import (
    CONFLICT_DETECTED,
    CONFLICT_RESOLVED,
    ENTRY_CREATED,
    ENTRY_STATUS_CHANGED,
)
from axiom.store.events import StoredEvent
from axiom.store.timepoints import source_time

RESOLUTION_CHOICES = ("keep_newer", "keep_older", "keep_both", "reject_both")


def subject_fields(source: Any) -> tuple[str | None, str | None, str | None]:
    """(subject, value, previous_value) of an entry, an event payload or a row, None for
    each one absent: entries extracted before these fields existed simply have none."""
    if isinstance(source, dict):
        return tuple(_text(source.get(k)) for k in ("subject", "value", "previous_value"))  # type: ignore[return-value]
    return tuple(  # type: ignore[return-value]
        _text(getattr(source, k, None)) for k in ("subject", "value", "previous_value")
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


class ConflictProjector:
    name = "conflicts"
    event_types = (ENTRY_CREATED, ENTRY_STATUS_CHANGED, CONFLICT_DETECTED, CONFLICT_RESOLVED)
    tables = ("conflicts", "conflict_facts")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        p: dict[str, Any] = event.payload
        if event.event_type == ENTRY_CREATED:
            if p["entry_type"] in COMPARED_TYPES:
                self._fact(conn, event, p)
        elif event.event_type == ENTRY_STATUS_CHANGED:
            conn.execute(
                "UPDATE conflict_facts SET status = ? WHERE entry_id = ?", [p["to"], p["entry_id"]]
            )
        elif event.event_type == CONFLICT_DETECTED:
            conn.execute(
                "INSERT INTO conflicts (conflict_id, older_id, newer_id, conflict_type, reason,"
                " detected_at, status, subject, detected_event_id)"
                " VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?) ON CONFLICT (conflict_id) DO NOTHING",
                [
                    p["conflict_id"],
                    p["older_id"],
                    p["newer_id"],
                    p["conflict_type"],
                    p.get("reason"),
                    event.ts,
                    p.get("subject"),
                    event.event_id,
                ],
            )
        elif event.event_type == CONFLICT_RESOLVED:
            if p["choice"] not in RESOLUTION_CHOICES:
                raise ValueError(f"unknown resolution choice {p['choice']!r}")
            conn.execute(
                "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ?,"
                " resolved_by = ?, note = ? WHERE conflict_id = ?",
                [event.ts, p["choice"], p.get("who"), p.get("note"), p["conflict_id"]],
            )

    def _fact(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent, p: dict[str, Any]) -> None:
        subject, value, previous = subject_fields(p)
        conn.execute(
            "INSERT INTO conflict_facts (entry_id, session_id, entry_type, title, content,"
            " canonical_key, subject, value, previous_value, said_at, created_ts, status)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active')"
            " ON CONFLICT (entry_id) DO NOTHING",
            [
                p["entry_id"],
                p.get("session_id"),
                p["entry_type"],
                p["title"],
                p.get("content") or "",
                p.get("canonical_key"),
                subject,
                value,
                previous,
                source_time(p.get("said_at")),
                event.ts,
            ],
        )
