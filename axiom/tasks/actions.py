"""What a person does to a task from the viewer, the API or the CLI: mark it done, cancel
it, or link a blocker. Each is recorded as the task aggregate's own events
(``task_status_changed``, ``task_blockers_set``, and a ``condition_declared`` /
``artifact_declared`` for a new blocker), decided by `axiom.tasks.state` exactly like an
observation from a transcript, with ``actor`` naming the person and ``source: "person"``
in the payload; the task projection folds them like any other, so a rebuild gives the
same rows.

A person speaks with authority: closing a cancelled task as done (or the reverse) reopens
it first (``reopen=True``), which a transcript observation may not do.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from axiom.store.db import Database
from axiom.store.event_types import TASK_TRANSITION_REJECTED
from axiom.store.events import EventStore, NewEvent, StoredEvent
from axiom.store.projection import run_projector, write_projecting
from axiom.tasks.blockers import BlockerResolver
from axiom.tasks.commands import MAX_NOTE_CHARS, TaskCommandError, UnknownEntity
from axiom.tasks.events import digest
from axiom.tasks.matcher import TaskMatcher
from axiom.tasks.projector import PERSON, TaskProjector
from axiom.tasks.queries import find_task_id
from axiom.tasks.resolver import load_task_state
from axiom.tasks.state import (
    BLOCKED,
    CANCELLED,
    CLOSED_STATUSES,
    DONE,
    PENDING,
    Event,
    TaskState,
    decide_blockers,
    decide_status,
    evolve,
)

__all__ = ["ACTIONS", "ActionResult", "act_on_task", "link_blocker"]

ACTIONS = {"done": DONE, "cancel": CANCELLED}
MAX_BLOCKER_CHARS = 500


@dataclass(frozen=True)
class ActionResult:
    task_id: str
    status: str  # the task's status after the action
    events: tuple[StoredEvent, ...]  # appended now (none when nothing changed)


def _checked(text: object, name: str, limit: int) -> str:
    text = "" if text is None else text
    if not isinstance(text, str):
        raise TaskCommandError(f"{name} must be text")
    if len(text) > limit:
        raise TaskCommandError(f"{name} is longer than {limit} characters")
    return text.strip()


def _append(
    conn: duckdb.DuckDBPyConnection,
    planned: list[Event],
    declarations: list[NewEvent],
    version: int,
    actor: str,
    note: str,
) -> tuple[StoredEvent, ...]:
    store = EventStore(conn)
    out = [r.event for r in map(store.append, declarations) if r.created]
    for n, (event_type, payload) in enumerate(planned):
        if event_type == TASK_TRANSITION_REJECTED:
            raise TaskCommandError(f"not allowed: {payload['from']} → {payload['to']}")
        payload = {**payload, "source": PERSON, "reason": payload.get("reason") or note}
        key = f"{event_type}:{payload['task_id']}:{version}:{n}:{digest(payload)}"
        result = store.append(NewEvent(event_type, payload, dedupe_key=key, actor=actor))
        if result.created:
            out.append(result.event)
    run_projector(conn, TaskProjector())
    return tuple(out)


def _load(conn: duckdb.DuckDBPyConnection, task_ref: str) -> TaskState:
    run_projector(conn, TaskProjector())
    task_id = find_task_id(conn, task_ref)
    loaded = load_task_state(conn, task_id) if task_id else None
    if loaded is None:
        raise UnknownEntity(f"unknown task {task_ref!r}")
    return loaded[0]


def _decide_close(state: TaskState, to: str, note: str) -> list[Event]:
    """A closed task is reopened (to pending) before it is closed the other way, since
    done → cancelled is not one legal step."""
    if state.status not in CLOSED_STATUSES or state.status == to:
        return decide_status(state, to, note)
    reopened = decide_status(state, PENDING, note, reopen=True)
    for event_type, payload in reopened:
        state = evolve(state, event_type, payload)
    return [*reopened, *decide_status(state, to, note)]


def act_on_task(
    db: Database, task_ref: str, action: str, *, note: object = "", actor: str = "user"
) -> ActionResult:
    """Mark the task done (``action="done"``) or cancel it (``"cancel"``), in one write unit.

    Raises `UnknownEntity` for an unknown task, `TaskCommandError` for an unknown action."""
    if action not in ACTIONS:
        raise TaskCommandError(f"unknown action {action!r}: use one of {sorted(ACTIONS)}")
    note = _checked(note, "note", MAX_NOTE_CHARS)

    def work(conn: duckdb.DuckDBPyConnection) -> ActionResult:
        state = _load(conn, task_ref)
        to = ACTIONS[action]
        planned = _decide_close(state, to, note)
        events = _append(conn, planned, [], state.version, actor, note)
        return ActionResult(state.task_id, _load(conn, state.task_id).status, events)

    return write_projecting(db, work)


def link_blocker(
    db: Database, task_ref: str, blocker: object, *, note: object = "", actor: str = "user"
) -> ActionResult:
    """Record that `blocker` blocks the task: another task (its id or title), a ticket or
    URL (an artifact), or any other text (a condition). An open task becomes blocked; a
    closed one keeps its status and gets the blocker as a suggestion."""
    text = _checked(blocker, "blocker", MAX_BLOCKER_CHARS)
    if not text:
        raise TaskCommandError("a blocker (task id, title, ticket, URL or text) is required")
    note = _checked(note, "note", MAX_NOTE_CHARS)

    def work(conn: duckdb.DuckDBPyConnection) -> ActionResult:
        state = _load(conn, task_ref)
        resolver = BlockerResolver(conn, state.project, TaskMatcher(conn, state.project))
        found = resolver.resolve([text], task_id=state.task_id, entry_id=None, session_id=None)
        if not found.refs:
            reason = found.problems[0].reason if found.problems else "unrecognised_blocker"
            raise TaskCommandError(f"cannot link {text!r} as a blocker: {reason}")
        refs = [*state.blockers, *(r for r in found.refs if r.entity_id not in state.blocker_ids)]
        if state.status in CLOSED_STATUSES or state.status == BLOCKED:
            planned = decide_blockers(state, refs, evidence_aligned=True)
        else:
            planned = decide_status(state, BLOCKED, note, refs)
        declarations = list(found.declarations.values())
        events = _append(conn, planned, declarations, state.version, actor, note)
        return ActionResult(state.task_id, _load(conn, state.task_id).status, events)

    return write_projecting(db, work)
