"""Folds entry events into the `entries` table.

Entries are immutable in content (the fact fields `subject`, `value`, `previous_value` and
`negated` included: conflicts read them); only `stage` (promotions, half-life demotions) and `status` (conflicts) move.
Queueing entries for embedding is `axiom.outbox.projector.OutboxProjector`'s job.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import duckdb

from axiom.store.event_types import (
    ENTRY_CREATED,
    ENTRY_DEMOTED,
    ENTRY_PROMOTED,
    ENTRY_STATUS_CHANGED,
)
from axiom.store.events import StoredEvent
from axiom.store.projection import Reject, fold_each, insert_new, insert_rows
from axiom.store.timepoints import source_time

_COLUMNS = (
    "entry_id, created_ts, entry_type, title, content_json, stage, status, build_id,"
    " evidence_json, canonical_key, session_id, said_at, subject, value, previous_value,"
    " negated, superseded_by"
)


def created_row(event: StoredEvent, p: dict[str, Any]) -> list[Any]:
    """The `entries` row an `entry_created` event makes (columns `_COLUMNS`)."""
    return [
        p["entry_id"],
        event.ts,
        p["entry_type"],
        p["title"],
        json.dumps({"content": p["content"], "task": p.get("task")}, ensure_ascii=False),
        "raw",
        "active",
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
        None,
    ]


STAGE, STATUS, SUPERSEDED_BY = 5, 6, 16  # positions in a `created_row`


class _Fold:
    """A batch of entry events folded in order: rows to insert, and the last stage and
    status set on each entry that was already stored (`EntryProjector.apply_many`)."""

    def __init__(self, stored: set[str]) -> None:
        self.stored = stored
        self.new: dict[str, list[Any]] = {}
        self.stages: dict[str, Any] = {}
        self.statuses: dict[str, tuple[Any, Any]] = {}

    def step(self, event: StoredEvent) -> None:
        p: dict[str, Any] = event.payload
        if event.event_type == ENTRY_CREATED:
            row = created_row(event, p)
            if row[0] not in self.stored:
                self.new.setdefault(row[0], row)
        elif event.event_type in (ENTRY_PROMOTED, ENTRY_DEMOTED):
            to, eid = p["to"], p["entry_id"]
            if eid in self.new:
                self.new[eid][STAGE] = to
            elif eid in self.stored:
                self.stages[eid] = to
        elif event.event_type == ENTRY_STATUS_CHANGED:
            to, by, eid = p["to"], p.get("superseded_by"), p["entry_id"]
            if eid in self.new:
                self.new[eid][STATUS], self.new[eid][SUPERSEDED_BY] = to, by
            elif eid in self.stored:
                self.statuses[eid] = (to, by)

    def write(self, conn: duckdb.DuckDBPyConnection) -> None:
        insert_rows(conn, "entries", _COLUMNS, list(self.new.values()))  # none stored
        if self.stages:
            conn.execute(
                "UPDATE entries SET stage = v.stage FROM (SELECT unnest(?) AS id,"
                " unnest(?) AS stage) v WHERE entries.entry_id = v.id",
                [list(self.stages), list(self.stages.values())],
            )
        if self.statuses:
            conn.execute(
                "UPDATE entries SET status = v.status, superseded_by = v.superseded_by"
                " FROM (SELECT unnest(?) AS id, unnest(?) AS status, unnest(?) AS superseded_by) v"
                " WHERE entries.entry_id = v.id",
                [
                    list(self.statuses),
                    [s for s, _ in self.statuses.values()],
                    [b for _, b in self.statuses.values()],
                ],
            )


def _stored_ids(conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent]) -> set[str]:
    """Which of the entries the events name are stored already (one read)."""
    ids = {e.payload.get("entry_id") for e in events}
    ids = {i for i in ids if isinstance(i, str)}
    if not ids:
        return set()
    rows = conn.execute(
        "SELECT entry_id FROM entries WHERE entry_id IN (SELECT unnest(?))", [sorted(ids)]
    ).fetchall()
    return {r[0] for r in rows}


class EntryProjector:
    name = "entries"
    event_types = (ENTRY_CREATED, ENTRY_PROMOTED, ENTRY_STATUS_CHANGED, ENTRY_DEMOTED)
    tables = ("entries",)

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        p: dict[str, Any] = event.payload
        if event.event_type == ENTRY_CREATED:
            insert_new(conn, "entries", _COLUMNS, [created_row(event, p)])
        elif event.event_type in (ENTRY_PROMOTED, ENTRY_DEMOTED):
            conn.execute(
                "UPDATE entries SET stage = ? WHERE entry_id = ?", [p["to"], p["entry_id"]]
            )
        elif event.event_type == ENTRY_STATUS_CHANGED:
            conn.execute(
                "UPDATE entries SET status = ?, superseded_by = ? WHERE entry_id = ?",
                [p["to"], p.get("superseded_by"), p["entry_id"]],
            )

    def apply_many(
        self, conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent], reject: Reject
    ) -> None:
        """`apply` over `events`: one read of which entries exist, one insert, at most two
        updates; a later event sees an earlier one's row through the fold."""
        fold = _Fold(_stored_ids(conn, events))
        fold_each(events, fold.step, reject)
        fold.write(conn)
