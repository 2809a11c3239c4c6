"""Folds entry and conflict events into `conflict_facts` and `conflicts` (owner of both).

`conflict_facts` keeps what detection compares (subject, value, status) for every fact
and decision entry, so the pipeline reads one small table and never another module's.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from axiom.store.projection import Reject, fold_each, insert_rows, raise_error, stored_keys
from axiom.store.timepoints import source_time

RESOLUTION_CHOICES = ("keep_newer", "keep_older", "keep_both", "reject_both")  # a person's
# A session that grew and took back one side (or both) of a conflict its earlier build
# opened settles it itself (`axiom.pipeline.build_conflicts`): no person chose these.
SETTLED_CHOICES = ("taken_back_older", "taken_back_newer", "taken_back_both")


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


_FACT_COLUMNS = (
    "entry_id, session_id, entry_type, title, content, canonical_key, subject, value,"
    " previous_value, said_at, created_ts, status"
)
_CONFLICT_COLUMNS = (
    "conflict_id, older_id, newer_id, conflict_type, reason, detected_at, status, subject,"
    " detected_event_id, resolved_at, resolution, resolved_by, note"
)
FACT_STATUS = 11  # position in a `fact_row`
RESOLVED = slice(6, 7), slice(9, 13)  # status; resolved_at, resolution, resolved_by, note


def fact_row(event: StoredEvent, p: dict[str, Any]) -> list[Any]:
    """The `conflict_facts` row an `entry_created` event of a compared type makes."""
    subject, value, previous = subject_fields(p)
    return [
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
        "active",
    ]


def conflict_row(event: StoredEvent, p: dict[str, Any]) -> list[Any]:
    """The `conflicts` row a `conflict_detected` event makes."""
    return [
        p["conflict_id"],
        p["older_id"],
        p["newer_id"],
        p["conflict_type"],
        p.get("reason"),
        event.ts,
        "open",
        p.get("subject"),
        event.event_id,
        None,
        None,
        None,
        None,
    ]


def resolution_fields(event: StoredEvent, p: dict[str, Any]) -> list[Any]:
    """(resolved_at, resolution, resolved_by, note) of a `conflict_resolved` event."""
    if p["choice"] not in (*RESOLUTION_CHOICES, *SETTLED_CHOICES):
        raise ValueError(f"unknown resolution choice {p['choice']!r}")
    return [event.ts, p["choice"], p.get("who"), p.get("note")]


class _Fold:
    """A batch of events folded in order: facts and conflicts to insert, and the last
    change to each one already stored (`ConflictProjector.apply_many`)."""

    def __init__(self, facts: set[str], conflicts: set[str]) -> None:
        self.stored_facts, self.stored_conflicts = facts, conflicts
        self.facts: dict[str, list[Any]] = {}
        self.conflicts: dict[str, list[Any]] = {}
        self.statuses: dict[str, Any] = {}  # stored fact -> status
        self.resolutions: dict[str, list[Any]] = {}  # stored conflict -> `resolution_fields`

    def step(self, event: StoredEvent) -> None:
        p: dict[str, Any] = event.payload
        if event.event_type == ENTRY_CREATED:
            if p["entry_type"] in COMPARED_TYPES:
                row = fact_row(event, p)
                if row[0] not in self.stored_facts:
                    self.facts.setdefault(row[0], row)
        elif event.event_type == ENTRY_STATUS_CHANGED:
            to, eid = p["to"], p["entry_id"]
            if eid in self.facts:
                self.facts[eid][FACT_STATUS] = to
            elif eid in self.stored_facts:
                self.statuses[eid] = to
        elif event.event_type == CONFLICT_DETECTED:
            row = conflict_row(event, p)
            if row[0] not in self.stored_conflicts:
                self.conflicts.setdefault(row[0], row)
        elif event.event_type == CONFLICT_RESOLVED:
            resolution, cid = resolution_fields(event, p), p["conflict_id"]
            if cid in self.conflicts:
                self.conflicts[cid][RESOLVED[0]] = ["resolved"]
                self.conflicts[cid][RESOLVED[1]] = resolution
            elif cid in self.stored_conflicts:
                self.resolutions[cid] = resolution

    def write(self, conn: duckdb.DuckDBPyConnection) -> None:
        insert_rows(conn, "conflict_facts", _FACT_COLUMNS, list(self.facts.values()))
        insert_rows(conn, "conflicts", _CONFLICT_COLUMNS, list(self.conflicts.values()))
        if self.statuses:
            conn.execute(
                "UPDATE conflict_facts SET status = v.status FROM (SELECT unnest(?) AS id,"
                " unnest(?) AS status) v WHERE conflict_facts.entry_id = v.id",
                [list(self.statuses), list(self.statuses.values())],
            )
        if self.resolutions:
            r = list(self.resolutions.values())
            conn.execute(
                "UPDATE conflicts SET status = 'resolved', resolved_at = v.at,"
                " resolution = v.choice, resolved_by = v.who, note = v.note"
                " FROM (SELECT unnest(?) AS id, unnest(?::TIMESTAMP[]) AS at, unnest(?) AS choice,"
                " unnest(?::VARCHAR[]) AS who, unnest(?::VARCHAR[]) AS note) v"
                " WHERE conflicts.conflict_id = v.id",
                [list(self.resolutions), *([x[i] for x in r] for i in range(4))],
            )


def _stored(conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent]) -> _Fold:
    """A fold that knows which of the facts and conflicts the events name are stored (a
    read per table whose rows the events name: a build's events seldom name a conflict)."""
    ids = sorted({str(e.payload.get("entry_id")) for e in events if e.event_type in _FACT_EVENTS})
    cids = sorted(
        {str(e.payload.get("conflict_id")) for e in events if e.event_type in _CONFLICT_EVENTS}
    )
    return _Fold(
        stored_keys(conn, "conflict_facts", "entry_id", ids),
        stored_keys(conn, "conflicts", "conflict_id", cids),
    )


# The events whose rows `_Fold` looks up: facts by entry id, conflicts by conflict id.
_FACT_EVENTS = (ENTRY_CREATED, ENTRY_STATUS_CHANGED)
_CONFLICT_EVENTS = (CONFLICT_DETECTED, CONFLICT_RESOLVED)


class ConflictProjector:
    name = "conflicts"
    event_types = (ENTRY_CREATED, ENTRY_STATUS_CHANGED, CONFLICT_DETECTED, CONFLICT_RESOLVED)
    tables = ("conflicts", "conflict_facts")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        self.apply_many(conn, [event], raise_error)

    def apply_many(
        self, conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent], reject: Reject
    ) -> None:
        """`apply` over `events` in order: two reads of what is stored, one insert per
        table, at most one update per table; later events see earlier rows via the fold."""
        fold = _stored(conn, events)
        fold_each(events, fold.step, reject)
        fold.write(conn)
