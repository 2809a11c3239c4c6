"""Explicit task commands (a person in the UI, a script), run inside a write transaction.

Each validates against the task projection, appends its event(s) with a dedupe key and
advances `TaskProjector`, like `TaskResolver` does. Invalid requests raise
`TaskCommandError` (a ValueError) and append nothing; an id that names nothing raises its
subclass `UnknownEntity` (also a LookupError), so interfaces can tell "not found" from
"not allowed"; a well-formed request that the current graph forbids (a condition resolving
to itself, a cycle) raises its subclass `ResolutionConflict`.

`resolve_condition_in` is the entry point for people (CLI ``conditions resolve``, API
``POST /api/v1/conditions/{id}/resolve``): it runs one write unit through
`write_projecting` (an event the task projection cannot apply is recorded in
`projection_errors`, not left to fail every resolution), records the resolution and
returns the resolved-condition view read in that same transaction.
"""

from __future__ import annotations

from typing import Any

import duckdb

from axiom.store.db import Database
from axiom.store.event_types import CONDITION_RESOLVED_TO
from axiom.store.events import EventStore, NewEvent, StoredEvent
from axiom.store.projection import projection_error_of, run_projector, write_projecting
from axiom.tasks.events import digest
from axiom.tasks.projector import RESOLVES_TO, TaskProjector
from axiom.tasks.queries import ResolvedCondition, list_resolved_conditions
from axiom.tasks.resolver import load_task_state
from axiom.tasks.state import decide_title

__all__ = [
    "MAX_NOTE_CHARS",
    "ResolutionConflict",
    "TaskCommandError",
    "UnknownEntity",
    "rename_task",
    "resolve_condition",
    "resolve_condition_in",
]

MAX_NOTE_CHARS = 2000


class TaskCommandError(ValueError):
    """A task command that cannot be carried out (unknown id, cycle, …)."""


class UnknownEntity(TaskCommandError, LookupError):
    """An id that names no entity of the kind asked for."""


class ResolutionConflict(TaskCommandError):
    """A well-formed resolution that the current graph forbids (to itself, or a cycle)."""


def _entity_type(conn: duckdb.DuckDBPyConnection, entity_id: str) -> str | None:
    row = conn.execute(
        "SELECT entity_type FROM entities WHERE entity_id = ?", [entity_id]
    ).fetchone()
    return row[0] if row else None


def resolve_condition(
    conn: duckdb.DuckDBPyConnection,
    condition_id: str,
    target_id: str,
    *,
    reason: str = "",
    actor: str = "user",
    entry_id: str | None = None,
) -> StoredEvent:
    """Record that condition `condition_id` resolves to entity `target_id`.

    Refuses an unknown condition or target, a condition resolving to itself, and a
    resolution that would close a ``resolves_to`` cycle.
    """
    run_projector(conn, TaskProjector())
    if _entity_type(conn, condition_id) != "condition":
        raise UnknownEntity(f"unknown condition {condition_id!r}")
    target_type = _entity_type(conn, target_id)
    if target_type is None:
        raise UnknownEntity(f"unknown entity {target_id!r}")
    if target_id == condition_id:
        raise ResolutionConflict("a condition cannot resolve to itself")
    reachable = conn.execute(
        "WITH RECURSIVE walk(id, depth) AS ("
        " SELECT ?, 0 UNION ALL"
        " SELECT e.dst_id, w.depth + 1 FROM walk w"
        " JOIN edges e ON e.src_id = w.id AND e.rel_type = ? WHERE w.depth < 32)"
        " SELECT 1 FROM walk WHERE id = ? LIMIT 1",
        [target_id, RESOLVES_TO, condition_id],
    ).fetchone()
    if reachable is not None:
        raise ResolutionConflict(f"{target_id} already resolves to {condition_id}: that is a cycle")
    previous = EventStore(conn).count_about("condition_id", condition_id, CONDITION_RESOLVED_TO)
    payload = {
        "condition_id": condition_id,
        "target_id": target_id,
        "target_kind": target_type,
        "reason": reason,
        "entry_id": entry_id,
    }
    result = EventStore(conn).append(
        NewEvent(
            CONDITION_RESOLVED_TO,
            payload,
            dedupe_key=f"{CONDITION_RESOLVED_TO}:{condition_id}:{target_id}:{previous}",
            actor=actor,
        )
    )
    run_projector(conn, TaskProjector())
    return result.event


def resolve_condition_in(
    db: Database,
    condition_id: Any,
    target_id: Any,
    *,
    note: Any = "",
    actor: str = "user",
) -> tuple[StoredEvent, ResolvedCondition]:
    """`resolve_condition` for a person, in one write unit (`write_projecting`).

    Ids are taken whole (surrounding whitespace ignored); `note` (at most
    `MAX_NOTE_CHARS`) becomes the event's ``reason``. Returns the appended event and the
    condition's resolved view. Raises `UnknownEntity` / `TaskCommandError`.
    """
    if not isinstance(condition_id, str) or not condition_id.strip():
        raise TaskCommandError("a condition id is required")
    if not isinstance(target_id, str) or not target_id.strip():
        raise TaskCommandError("a target id (task, condition or artifact) is required")
    note = "" if note is None else note
    if not isinstance(note, str):
        raise TaskCommandError("note must be text")
    if len(note) > MAX_NOTE_CHARS:
        raise TaskCommandError(f"note is longer than {MAX_NOTE_CHARS} characters")
    condition_id, target_id = condition_id.strip(), target_id.strip()

    def work(conn: duckdb.DuckDBPyConnection) -> tuple[StoredEvent, list[ResolvedCondition]]:
        event = resolve_condition(conn, condition_id, target_id, reason=note.strip(), actor=actor)
        if projection_error_of(conn, event.event_id) is not None:
            return event, []
        return event, list_resolved_conditions(conn, condition_id=condition_id)

    event, views = write_projecting(db, work)
    if not views:  # committed, with the failure recorded in projection_errors
        raise RuntimeError(
            f"the resolution was recorded as {event.event_id} but the task projection could"
            " not apply it (see projection_errors)"
        )
    return event, views[0]


def rename_task(
    conn: duckdb.DuckDBPyConnection,
    task_id: str,
    title: str,
    *,
    actor: str = "user",
    reason: str = "",
) -> list[StoredEvent]:
    """``task_title_changed`` when `title` differs beyond case/spacing/punctuation.

    The old key stays the task's canonical key; the new title's key becomes an alias.
    """
    run_projector(conn, TaskProjector())
    loaded = load_task_state(conn, task_id)
    if loaded is None:
        raise TaskCommandError(f"unknown task {task_id!r}")
    state, _ = loaded
    store = EventStore(conn)
    appended = []
    for event_type, payload in decide_title(state, title):
        payload["reason"] = reason
        result = store.append(
            NewEvent(
                event_type,
                payload,
                dedupe_key=f"{event_type}:{task_id}:{state.version}:{digest(payload)}",
                actor=actor,
            )
        )
        if result.created:
            appended.append(result.event)
    run_projector(conn, TaskProjector())
    return appended
