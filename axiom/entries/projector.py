"""Folds entry events into the `entries` table.

Entries are immutable in content (the fact fields `subject`, `value`, `previous_value` and
`negated` included: conflicts read them); only `stage` (promotions, half-life demotions) and `status` (conflicts) move.
Queueing entries for embedding is `axiom.outbox.projector.OutboxProjector`'s job.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from axiom.store.event_types import (
    ENTRY_CREATED,
    ENTRY_DEMOTED,
    ENTRY_PROMOTED,
    ENTRY_STATUS_CHANGED,
)
from axiom.store.events import StoredEvent
from axiom.store.timepoints import source_time


class EntryProjector:
    name = "entries"
    event_types = (ENTRY_CREATED, ENTRY_PROMOTED, ENTRY_STATUS_CHANGED, ENTRY_DEMOTED)
    tables = ("entries",)

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        p: dict[str, Any] = event.payload
        if event.event_type == ENTRY_CREATED:
            self._create(conn, event, p)
        elif event.event_type in (ENTRY_PROMOTED, ENTRY_DEMOTED):
            conn.execute(
                "UPDATE entries SET stage = ? WHERE entry_id = ?", [p["to"], p["entry_id"]]
            )
        elif event.event_type == ENTRY_STATUS_CHANGED:
            conn.execute(
                "UPDATE entries SET status = ?, superseded_by = ? WHERE entry_id = ?",
                [p["to"], p.get("superseded_by"), p["entry_id"]],
            )

    def _create(
        self, conn: duckdb.DuckDBPyConnection, event: StoredEvent, p: dict[str, Any]
    ) -> None:
        conn.execute(
            "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json, stage,"
            " status, build_id, evidence_json, canonical_key, session_id, said_at, subject,"
            " value, previous_value, negated)"
            " VALUES (?, ?, ?, ?, ?, 'raw', 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (entry_id) DO NOTHING",
            [
                p["entry_id"],
                event.ts,
                p["entry_type"],
                p["title"],
                json.dumps({"content": p["content"], "task": p.get("task")}, ensure_ascii=False),
                event.build_id,
                json.dumps(p["evidence"], ensure_ascii=False),
                p["canonical_key"],
                p["session_id"],
                source_time(p.get("said_at")),
                # Fact fields: absent in events written before they existed (NULL/FALSE).
                p.get("subject"),
                p.get("value"),
                p.get("previous_value"),
                bool(p.get("negated", False)),
            ],
        )
