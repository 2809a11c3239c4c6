"""Read-side queries over the task projection and the task events (history).

All functions take a connection (a read unit from `Database.read()` is enough) and return
frozen dataclasses with ``to_json()``; they never write. Task ids are accepted whole or as
an unambiguous prefix of at least 6 characters (`find_task_id`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from axiom.entries.queries import entry_sources
from axiom.extract.task_text import vague_title_sql
from axiom.store.event_types import (
    TASK_BLOCKERS_SET,
    TASK_CREATED,
    TASK_INPUT_REJECTED,
    TASK_MENTIONED,
    TASK_PRIORITY_CHANGED,
    TASK_STATUS_CHANGED,
    TASK_TITLE_CHANGED,
    TASK_TRANSITION_REJECTED,
)
from axiom.store.events import EventStore
from axiom.tasks.projector import BLOCKED_BY, BLOCKED_BY_SUGGESTED, EVIDENCE_OF
from axiom.tasks.state import STATUSES, TASK_EVENT_TYPES

__all__ = [
    "BlockedTask",
    "BlockerView",
    "HistoryEvent",
    "ResolvedCondition",
    "TaskDetail",
    "TaskSummary",
    "find_task_id",
    "get_task",
    "list_blocked_tasks",
    "list_resolved_conditions",
    "list_tasks",
    "list_tasks_with_only_suggested_blockers",
    "list_tasks_with_placeholder_blocker",
    "task_history",
    "tasks_blocked_by",
    "tasks_of_entries",
]

HISTORY_TYPES = tuple(sorted(TASK_EVENT_TYPES | {TASK_MENTIONED, TASK_INPUT_REJECTED}))


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


@dataclass(frozen=True)
class TaskSummary:
    task_id: str
    title: str
    project: str
    status: str
    priority: str | None
    canonical_key: str
    stage: str
    blocker_count: int
    suggested_count: int
    mention_count: int
    aliases: tuple[str, ...]
    created_at: datetime
    updated_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "title": self.title,
            "project": self.project,
            "status": self.status,
            "priority": self.priority,
            "canonical_key": self.canonical_key,
            "stage": self.stage,
            "blocker_count": self.blocker_count,
            "suggested_count": self.suggested_count,
            "mention_count": self.mention_count,
            "aliases": list(self.aliases),
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
        }


@dataclass(frozen=True)
class BlockerView:
    """A blocker of a task. For effective blockers, `declared_id`/`declared_title` name the
    condition the task was declared blocked by when `via_resolution` is true."""

    entity_id: str
    kind: str
    title: str
    status: str | None = None
    raw_text: str = ""
    auto_placeholder: bool = False
    via_resolution: bool = False
    declared_id: str | None = None
    declared_title: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "entity_id": self.entity_id,
            "kind": self.kind,
            "title": self.title,
            "status": self.status,
            "raw_text": self.raw_text,
            "auto_placeholder": self.auto_placeholder,
            "via_resolution": self.via_resolution,
            "declared_id": self.declared_id,
            "declared_title": self.declared_title,
        }


@dataclass(frozen=True)
class BlockedTask:
    task: TaskSummary
    blockers: tuple[BlockerView, ...]  # effective blockers

    def to_json(self) -> dict[str, Any]:
        return {**self.task.to_json(), "blockers": [b.to_json() for b in self.blockers]}


@dataclass(frozen=True)
class HistoryEvent:
    event_id: str
    ts: datetime
    event_type: str
    actor: str
    session_id: str | None
    payload: dict[str, Any]

    def summary(self) -> str:
        """One human-readable line about the event."""
        p = self.payload
        t = self.event_type
        if t == TASK_CREATED:
            extra = f" (first seen as {p['requested_status']})" if p.get("requested_status") else ""
            return f"created as {p.get('status')}{extra}: {p.get('title')!r}"
        if t == TASK_STATUS_CHANGED:
            return f"status {p.get('from')} -> {p.get('to')} ({p.get('reason') or 'no reason'})"
        if t == TASK_PRIORITY_CHANGED:
            return f"priority {p.get('from')} -> {p.get('to')}"
        if t == TASK_TITLE_CHANGED:
            return f"title {p.get('from')!r} -> {p.get('to')!r}"
        if t == TASK_BLOCKERS_SET:
            names = ", ".join(
                (b.get("raw_text") or b.get("entity_id", "?"))
                + (" [placeholder]" if b.get("auto_placeholder") else "")
                for b in p.get("blockers") or []
            )
            return f"blockers {p.get('mode')}: {names or '(none)'}"
        if t == TASK_TRANSITION_REJECTED:
            return f"rejected {p.get('from')} -> {p.get('to')}: {p.get('reason')}"
        if t == TASK_MENTIONED:
            match = p.get("match") or {}
            how = match.get("method", "?")
            if match.get("score") is not None:
                how += f" {match['score']:.2f}"
            stale = " (stale)" if p.get("stale") else ""
            return f"mentioned as {p.get('title')!r} [{how}] status={p.get('status')}{stale}"
        if t == TASK_INPUT_REJECTED:
            return f"input rejected: {p.get('field')}={p.get('value')!r}: {p.get('reason')}"
        return t

    def to_json(self) -> dict[str, Any]:
        return {
            "event_id": self.event_id,
            "ts": _iso(self.ts),
            "event_type": self.event_type,
            "actor": self.actor,
            "session_id": self.session_id,
            "summary": self.summary(),
            "payload": self.payload,
        }


@dataclass(frozen=True)
class EvidenceRef:
    entry_id: str
    session_id: str | None
    entry_title: str | None
    stage: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "session_id": self.session_id,
            "entry_title": self.entry_title,
            "stage": self.stage,
        }


@dataclass(frozen=True)
class TaskDetail:
    task: TaskSummary
    blockers: tuple[BlockerView, ...]  # declared (blocked_by edges)
    effective_blockers: tuple[BlockerView, ...]
    suggested_blockers: tuple[BlockerView, ...]
    blocking: tuple[TaskSummary, ...]  # tasks this one blocks
    evidence: tuple[EvidenceRef, ...]
    history: tuple[HistoryEvent, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            **self.task.to_json(),
            "blockers": [b.to_json() for b in self.blockers],
            "effective_blockers": [b.to_json() for b in self.effective_blockers],
            "suggested_blockers": [b.to_json() for b in self.suggested_blockers],
            "blocking": [t.to_json() for t in self.blocking],
            "evidence": [e.to_json() for e in self.evidence],
            "history": [h.to_json() for h in self.history],
        }


@dataclass(frozen=True)
class ResolvedCondition:
    condition_id: str
    condition_text: str
    target_id: str
    target_type: str | None
    target_title: str | None
    reason: str | None
    event_id: str | None
    resolved_at: datetime
    blocking: tuple[str, ...]  # tasks declared blocked by the condition

    def to_json(self) -> dict[str, Any]:
        return {
            "condition_id": self.condition_id,
            "condition_text": self.condition_text,
            "target_id": self.target_id,
            "target_type": self.target_type,
            "target_title": self.target_title,
            "reason": self.reason,
            "event_id": self.event_id,
            "resolved_at": _iso(self.resolved_at),
            "blocking": list(self.blocking),
        }


# --------------------------------------------------------------------------- tasks

_TASK_COLS = (
    "e.entity_id, e.title, e.canonical_key, e.stage, e.current_json, e.created_at, e.updated_at"
)


def _summary(row: tuple) -> TaskSummary:
    data = json.loads(row[4])
    return TaskSummary(
        task_id=row[0],
        title=row[1],
        project=data.get("project", ""),
        status=data.get("status", ""),
        priority=data.get("priority"),
        canonical_key=row[2],
        stage=row[3],
        blocker_count=len(data.get("blockers") or []),
        suggested_count=len(data.get("suggested_blockers") or []),
        mention_count=int(data.get("mention_count") or 0),
        aliases=tuple(data.get("aliases") or ()),
        created_at=row[5],
        updated_at=row[6],
    )


def list_tasks(
    conn: duckdb.DuckDBPyConnection,
    status: str | None = None,
    project: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    hide_vague: bool = False,
) -> list[TaskSummary]:
    """Tasks, newest change first, optionally by status and project; with `hide_vague`,
    without those whose title names nothing ("Fix", "Do something about it"): recorded
    before extraction refused such titles, they stay in the event store.

    Raises ValueError for a status that is not one of `STATUSES`.
    """
    if status is not None and status not in STATUSES:
        raise ValueError(f"unknown task status {status!r}; expected one of {', '.join(STATUSES)}")
    where, params = ["e.entity_type = 'task'"], []
    if hide_vague:
        where.append(f"NOT {vague_title_sql('e.title')}")
    if status is not None:
        where.append("json_extract_string(e.current_json, '$.status') = ?")
        params.append(status)
    if project is not None:
        where.append("json_extract_string(e.current_json, '$.project') = ?")
        params.append(project)
    sql = f"SELECT {_TASK_COLS} FROM entities e WHERE {' AND '.join(where)}"
    sql += " ORDER BY e.updated_at DESC, e.entity_id"
    if limit is not None:
        sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
    return [_summary(r) for r in conn.execute(sql, params).fetchall()]


def find_task_id(conn: duckdb.DuckDBPyConnection, ref: str) -> str | None:
    """The task id `ref` names: a whole id, or a unique id prefix of ≥ 6 characters."""
    if not isinstance(ref, str) or not ref.strip():
        return None
    ref = ref.strip()
    row = conn.execute(
        "SELECT entity_id FROM entities WHERE entity_id = ? AND entity_type = 'task'", [ref]
    ).fetchone()
    if row:
        return row[0]
    if len(ref) < 6:
        return None
    rows = conn.execute(
        "SELECT entity_id FROM entities WHERE entity_type = 'task' AND starts_with(entity_id, ?)"
        " LIMIT 2",
        [ref],
    ).fetchall()
    return rows[0][0] if len(rows) == 1 else None


def _effective(
    conn: duckdb.DuckDBPyConnection, task_ids: list[str]
) -> dict[str, list[BlockerView]]:
    if not task_ids:
        return {}
    marks = ", ".join("?" for _ in task_ids)
    rows = conn.execute(
        "SELECT v.task_id, v.blocker_id, v.blocker_type, v.blocker_title, v.blocker_status,"
        " v.via_resolution, v.auto_placeholder, v.declared_blocker_id, d.title,"
        " json_extract_string(b.meta_json, '$.raw_text')"
        " FROM v_task_blockers_effective v"
        " LEFT JOIN entities d ON d.entity_id = v.declared_blocker_id"
        " LEFT JOIN edges b ON b.src_id = v.task_id AND b.rel_type = 'blocked_by'"
        "   AND b.dst_id = v.declared_blocker_id"
        f" WHERE v.task_id IN ({marks})"
        " ORDER BY v.task_id, v.auto_placeholder, v.blocker_type, v.blocker_title, v.blocker_id",
        task_ids,
    ).fetchall()
    out: dict[str, list[BlockerView]] = {}
    for tid, bid, btype, btitle, bstatus, via, placeholder, did, dtitle, raw in rows:
        out.setdefault(tid, []).append(
            BlockerView(
                entity_id=bid,
                kind=btype or "unknown",
                title=btitle or bid,
                status=bstatus,
                raw_text=raw or "",
                auto_placeholder=bool(placeholder),
                via_resolution=bool(via),
                declared_id=did if via else None,
                declared_title=dtitle if via else None,
            )
        )
    return out


def _edge_blockers(conn: duckdb.DuckDBPyConnection, task_id: str, rel: str) -> list[BlockerView]:
    rows = conn.execute(
        "SELECT b.dst_id, coalesce(d.entity_type, json_extract_string(b.meta_json, '$.kind')),"
        " coalesce(d.title, b.dst_id), json_extract_string(d.current_json, '$.status'),"
        " json_extract_string(b.meta_json, '$.raw_text'),"
        " coalesce(json_extract(b.meta_json, '$.auto_placeholder')::BOOLEAN, FALSE)"
        " FROM edges b LEFT JOIN entities d ON d.entity_id = b.dst_id"
        " WHERE b.src_id = ? AND b.rel_type = ? ORDER BY b.created_at, b.dst_id",
        [task_id, rel],
    ).fetchall()
    return [
        BlockerView(
            entity_id=r[0],
            kind=r[1] or "unknown",
            title=r[2],
            status=r[3],
            raw_text=r[4] or "",
            auto_placeholder=bool(r[5]),
        )
        for r in rows
    ]


def task_json(conn: duckdb.DuckDBPyConnection, task_id: str) -> dict[str, Any] | None:
    """A task's projected state as stored (`TaskState` and its extras); None if unknown."""
    row = conn.execute(
        "SELECT current_json FROM entities WHERE entity_id = ? AND entity_type = 'task'",
        [task_id],
    ).fetchone()
    return None if row is None else json.loads(row[0])


def condition_status(conn: duckdb.DuckDBPyConnection, condition_id: str) -> str | None:
    """A condition's status ('open', 'resolved', ...); None if unknown."""
    row = conn.execute(
        "SELECT json_extract_string(current_json, '$.status') FROM entities"
        " WHERE entity_id = ? AND entity_type = 'condition'",
        [condition_id],
    ).fetchone()
    return None if row is None else row[0]


def count_entities(conn: duckdb.DuckDBPyConnection, entity_ids: Sequence[str]) -> int:
    """How many of `entity_ids` are known tasks, conditions or artifacts."""
    row = conn.execute(
        "SELECT count(*) FROM entities WHERE entity_id IN (SELECT unnest(?))", [list(entity_ids)]
    ).fetchone()
    return int(row[0]) if row else 0


def tasks_blocked_by(
    conn: duckdb.DuckDBPyConnection, entity_ids: Sequence[str]
) -> list[tuple[str, str]]:
    """(task_id, declared blocker id) of every task that `entity_ids` block, directly or
    through a condition resolving to one of them: what "OPS-55 is done" unblocks."""
    if not entity_ids:
        return []
    return conn.execute(
        "SELECT DISTINCT task_id, declared_blocker_id FROM v_task_blockers_effective"
        " WHERE blocker_id IN (SELECT unnest(?)) OR declared_blocker_id IN (SELECT unnest(?))"
        " ORDER BY task_id, declared_blocker_id",
        [list(entity_ids), list(entity_ids)],
    ).fetchall()


def tasks_of_entries(
    conn: duckdb.DuckDBPyConnection, entry_ids: Sequence[str]
) -> dict[str, set[str]]:
    """The tasks each of `entry_ids` is evidence of (entries of no task are left out): so
    a reader can show one task once however many sessions' notes mention it."""
    out: dict[str, set[str]] = {}
    if not entry_ids:
        return out
    for entry_id, task_id in conn.execute(
        "SELECT src_id, dst_id FROM edges WHERE rel_type = ? AND src_id IN (SELECT unnest(?))",
        [EVIDENCE_OF, list(entry_ids)],
    ).fetchall():
        out.setdefault(entry_id, set()).add(task_id)
    return out


def tasks_to_embed(
    conn: duckdb.DuckDBPyConnection, task_ids: Sequence[str]
) -> list[tuple[str, str, datetime]]:
    """(task_id, title, updated_at) of the tasks that exist: what the vector outbox embeds."""
    return conn.execute(
        "SELECT entity_id, title, updated_at FROM entities"
        " WHERE entity_type = 'task' AND entity_id IN (SELECT unnest(?))",
        [list(task_ids)],
    ).fetchall()


def list_blocked_tasks(
    conn: duckdb.DuckDBPyConnection, project: str | None = None
) -> list[BlockedTask]:
    """Every task whose status is ``blocked``, with its effective blockers."""
    tasks = list_tasks(conn, status="blocked", project=project)
    effective = _effective(conn, [t.task_id for t in tasks])
    return [BlockedTask(t, tuple(effective.get(t.task_id, ()))) for t in tasks]


def list_tasks_with_only_suggested_blockers(conn: duckdb.DuckDBPyConnection) -> list[TaskSummary]:
    """Open tasks with suggested blockers and no confirmed (``blocked_by``) one."""
    rows = conn.execute(
        f"SELECT {_TASK_COLS} FROM entities e WHERE e.entity_type = 'task'"
        " AND json_extract_string(e.current_json, '$.status') NOT IN ('done', 'cancelled')"
        f" AND EXISTS (SELECT 1 FROM edges s WHERE s.src_id = e.entity_id AND s.rel_type = '{BLOCKED_BY_SUGGESTED}')"
        f" AND NOT EXISTS (SELECT 1 FROM edges b WHERE b.src_id = e.entity_id AND b.rel_type = '{BLOCKED_BY}')"
        " ORDER BY e.updated_at DESC, e.entity_id"
    ).fetchall()
    return [_summary(r) for r in rows]


def list_tasks_with_placeholder_blocker(conn: duckdb.DuckDBPyConnection) -> list[TaskSummary]:
    """Tasks blocked by an "unknown blocker" placeholder condition (need a person's look)."""
    rows = conn.execute(
        f"SELECT {_TASK_COLS} FROM entities e WHERE e.entity_type = 'task'"
        " AND EXISTS (SELECT 1 FROM edges b JOIN entities c ON c.entity_id = b.dst_id"
        f"  WHERE b.src_id = e.entity_id AND b.rel_type = '{BLOCKED_BY}'"
        "  AND coalesce(json_extract(c.current_json, '$.auto_placeholder')::BOOLEAN, FALSE))"
        " ORDER BY e.updated_at DESC, e.entity_id"
    ).fetchall()
    return [_summary(r) for r in rows]


def task_history(conn: duckdb.DuckDBPyConnection, task_id: str) -> list[HistoryEvent]:
    """Every event about the task, oldest first (task events, mentions, rejected input)."""
    return [
        HistoryEvent(e.event_id, e.ts, e.event_type, e.actor, e.session_id, e.payload)
        for e in EventStore(conn).about("task_id", task_id, HISTORY_TYPES)
    ]


def _evidence_rows(
    conn: duckdb.DuckDBPyConnection, task_id: str
) -> list[tuple[str, str | None, str | None, str | None]]:
    """(entry_id, session_id, title, stage) of the task's evidence edges, oldest first; an
    entry no longer stored keeps the session its edge recorded."""
    edges = conn.execute(
        "SELECT src_id, json_extract_string(meta_json, '$.session_id') FROM edges"
        " WHERE dst_id = ? AND rel_type = ? ORDER BY created_at, src_id",
        [task_id, EVIDENCE_OF],
    ).fetchall()
    sources = entry_sources(conn, [src for src, _ in edges])
    rows = []
    for src, edge_session in edges:
        session_id, title, stage = sources.get(src, (None, None, None))
        rows.append((src, session_id if session_id is not None else edge_session, title, stage))
    return rows


def get_task(conn: duckdb.DuckDBPyConnection, task_ref: str) -> TaskDetail | None:
    """Snapshot, blockers (declared, effective, suggested), evidence and full history."""
    task_id = find_task_id(conn, task_ref)
    if task_id is None:
        return None
    row = conn.execute(
        f"SELECT {_TASK_COLS} FROM entities e WHERE e.entity_id = ?", [task_id]
    ).fetchone()
    summary = _summary(row)
    evidence_rows = _evidence_rows(conn, task_id)
    blocking_rows = conn.execute(
        f"SELECT {_TASK_COLS} FROM entities e WHERE e.entity_type = 'task' AND e.entity_id IN ("
        " SELECT v.task_id FROM v_task_blockers_effective v"
        " WHERE v.blocker_id = ? OR v.declared_blocker_id = ?) ORDER BY e.entity_id",
        [task_id, task_id],
    ).fetchall()
    return TaskDetail(
        task=summary,
        blockers=tuple(_edge_blockers(conn, task_id, BLOCKED_BY)),
        effective_blockers=tuple(_effective(conn, [task_id]).get(task_id, ())),
        suggested_blockers=tuple(_edge_blockers(conn, task_id, BLOCKED_BY_SUGGESTED)),
        blocking=tuple(_summary(r) for r in blocking_rows),
        evidence=tuple(EvidenceRef(*r) for r in evidence_rows),
        history=tuple(task_history(conn, task_id)),
    )


def list_resolved_conditions(
    conn: duckdb.DuckDBPyConnection, condition_id: str | None = None
) -> list[ResolvedCondition]:
    """Conditions that resolve to another entity, newest first (only `condition_id`'s,
    when given)."""
    rows = conn.execute(
        "SELECT r.condition_id, r.condition_text, r.target_id, r.target_type, r.target_title,"
        " r.reason, r.event_id, r.resolved_at,"
        " list(b.src_id ORDER BY b.src_id) FILTER (WHERE b.src_id IS NOT NULL)"
        " FROM v_resolved_conditions r"
        " LEFT JOIN edges b ON b.dst_id = r.condition_id AND b.rel_type = 'blocked_by'"
        " WHERE ? IS NULL OR r.condition_id = ?"
        " GROUP BY ALL ORDER BY r.resolved_at DESC, r.condition_id",
        [condition_id, condition_id],
    ).fetchall()
    return [
        ResolvedCondition(
            condition_id=r[0],
            condition_text=r[1],
            target_id=r[2],
            target_type=r[3],
            target_title=r[4],
            reason=r[5],
            event_id=r[6],
            resolved_at=r[7],
            blocking=tuple(r[8] or ()),
        )
        for r in rows
    ]
