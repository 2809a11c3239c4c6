"""Tasks as they stood at a point in time: the task events folded again, keeping only
those whose source time is not later than T.

An event's source time is the transcript time it carries (``observed_at``, the message
that was observed), else the time it was recorded (a person's command). Conditions and
resolutions are not time-travelled: blockers are shown as the task events named them.

The events are folded in the order they were said, not recorded: a session imported
after a newer one had its status change rejected as stale (``task_transition_rejected``,
`REASON_STALE`), but by T, before the newer observation was said, that change had
happened, so the fold decides it again (`decide_status`) at its place in said order. The
newer observation, folded after it, still wins at any later T, whether it moved the
status or only restated it (a ``task_mentioned`` receipt with a status, not stale and not
refused, which emitted no status change): its status is set again, so the fold as of now
is the current state. An event said before its task's ``task_created`` (a task first
recorded from a transcript without timestamps) counts from the creation; a stale change
said before the creation stays rejected, the creation being the newer observation.
Created / updated times are these said times too.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

import duckdb

from axiom.entries.queries import entry_sources
from axiom.extract.task_text import vague_title
from axiom.store.event_types import (
    TASK_BLOCKERS_SET,
    TASK_CREATED,
    TASK_MENTIONED,
    TASK_STATUS_CHANGED,
    TASK_TITLE_CHANGED,
    TASK_TRANSITION_REJECTED,
)
from axiom.store.events import EventStore, StoredEvent
from axiom.store.timepoints import source_time
from axiom.tasks.queries import (
    HISTORY_TYPES,
    BlockedTask,
    BlockerView,
    EvidenceRef,
    HistoryEvent,
    TaskDetail,
    TaskSummary,
    find_task_id,
)
from axiom.tasks.state import (
    BLOCKED,
    DONE,
    REASON_STALE,
    STATUSES,
    TASK_EVENT_TYPES,
    BlockerRef,
    TaskEventError,
    TaskState,
    decide_status,
    evolve,
)

__all__ = ["event_source_time", "get_task_as_of", "list_blocked_tasks_as_of", "list_tasks_as_of"]


def event_source_time(event: StoredEvent) -> datetime:
    """When what the event records was said: its ``observed_at``, else its recording time."""
    return source_time(event.payload.get("observed_at")) or event.ts


@dataclass
class _Folded:
    state: TaskState
    created_at: datetime
    updated_at: datetime
    aligned: bool = False
    mentions: int = 0
    aliases: list[str] = field(default_factory=list)
    evidence: dict[str, str | None] = field(default_factory=dict)  # entry id -> session id
    history: list[StoredEvent] = field(default_factory=list)
    refused: set[str] = field(default_factory=set)  # entries whose status change was refused
    # While a stale change decided again stands: the blockers the table has (it never
    # had the stale change's), until a newer status observation.
    displaced: tuple[BlockerRef, ...] | None = None
    # The recording position of the completion the task is in (a task_status_changed to
    # done; None once another status change is folded, or never done).
    completed_seq: int | None = None


def _is_stale(event: StoredEvent) -> bool:
    return event.event_type == TASK_TRANSITION_REJECTED and str(
        event.payload.get("reason", "")
    ).startswith(REASON_STALE)


def _redecided(current: _Folded, payload: dict) -> TaskState:
    """A change rejected only as stale, decided again against the state folded so far
    (said order), with the blockers it named (older rejections carry none)."""
    state = current.state
    blockers = tuple(BlockerRef.from_json(b) for b in payload.get("blockers") or ())
    decided = decide_status(
        state,
        str(payload["to"]),
        str(payload["reason"]),
        blockers,
        evidence_aligned=bool(payload.get("evidence_aligned", True)),
    )
    for event_type, p in decided:
        state = evolve(state, event_type, p)  # type: ignore[assignment]
    if state.status != current.state.status and current.displaced is None:
        current.displaced = current.state.blockers
    return state


def _evolve(current: _Folded | None, event: StoredEvent, early: bool) -> TaskState | None:
    """The task's state after `event`; a status change rejected only as stale is decided
    again, unless it was said before the task was created (`_over_displaced` for what is
    said after one). A done task has no blockers: blockers said after a recorded
    completion but recorded before it stay cleared, suggestions too (the completion
    cleared them in the projector's fold, recording order, and nothing reopened the task
    since); any other blockers change folded onto a done state adds none."""
    if current is not None and _is_stale(event) and not early:
        return _redecided(current, event.payload)
    before = _over_displaced(current, event) if current is not None else None
    state = evolve(before, event.event_type, event.payload)
    if current is None or state is None:
        return state
    if event.event_type == TASK_STATUS_CHANGED:
        current.completed_seq = event.seq if state.status == DONE else None
    elif event.event_type == TASK_BLOCKERS_SET and state.status == DONE:
        if event.seq < (current.completed_seq or 0):
            return replace(state, blockers=(), suggested_blockers=())
        return replace(state, blockers=())  # done has no blockers at any time
    return state


def _over_displaced(current: _Folded, event: StoredEvent) -> TaskState:
    """The state a recorded event folded after stale changes decided again applies to.
    The table never had their blockers (`_Folded.displaced`): a status change, a newer
    status observation, applies over the table's blockers and ends their effect; a
    blockers change leaves their status standing and changes the table's blockers as it
    changed them there. (An event said at the stale change's own time comes from its
    mention, so it is only a suggestion, which changes no blocker.)"""
    displaced = current.displaced
    if displaced is None:
        return current.state
    if event.event_type == TASK_STATUS_CHANGED:
        current.displaced = None
        return replace(current.state, blockers=displaced)
    if event.event_type == TASK_BLOCKERS_SET:
        table = evolve(replace(current.state, blockers=displaced), event.event_type, event.payload)
        current.displaced = table.blockers if table is not None else displaced
    return current.state


def _restated(current: _Folded, payload: dict) -> None:
    """A receipt reporting a status (not stale, not refused, not the creating one) is an
    observation even when it moved nothing: the status it saw is set again, over any
    stale change decided again since."""
    to = payload.get("status")
    method = (payload.get("match") or {}).get("method")
    if (
        to not in STATUSES
        or payload.get("stale")
        or method == "new"
        or payload.get("entry_id") in current.refused
    ):
        return
    state = current.state
    if to != state.status:
        blockers = current.displaced or () if to == BLOCKED else ()
        decided = decide_status(state, to, "restated", blockers, reopen=True)
        for event_type, p in decided:
            state = evolve(state, event_type, p)  # type: ignore[assignment]
        if current.displaced is not None:  # the blockers as before the stale change
            state = replace(state, blockers=current.displaced)
        current.state = state
    current.displaced = None


def _apply(folded: dict[str, _Folded], event: StoredEvent, said: datetime, early: bool) -> None:
    p = event.payload
    task_id = str(p.get("task_id"))
    current = folded.get(task_id)
    if event.event_type in TASK_EVENT_TYPES:
        try:
            state = _evolve(current, event, early)
        except (TaskEventError, KeyError, TypeError, ValueError):
            return  # the projector skips it too
        if state is None:
            return
        if current is None:
            current = folded[task_id] = _Folded(state, said, said)
            current.aligned = bool(p.get("evidence_aligned"))
        elif event.event_type == TASK_TITLE_CHANGED and current.state.title not in current.aliases:
            current.aliases.append(current.state.title)
        elif event.event_type == TASK_TRANSITION_REJECTED and not _is_stale(event):
            current.refused.add(str(p.get("entry_id")))
        current.state, current.updated_at = state, said
    elif current is None:
        return
    elif event.event_type == TASK_MENTIONED:
        current.mentions += 1
        current.aligned = current.aligned or bool(p.get("evidence_aligned"))
        if isinstance(p.get("entry_id"), str):
            current.evidence.setdefault(p["entry_id"], p.get("session_id"))
        _restated(current, p)
        current.updated_at = said
    current.history.append(event)


def _fold(conn: duckdb.DuckDBPyConnection, when: datetime) -> dict[str, _Folded]:
    """The task events said by `when`, folded in said order (recording order among
    equal times)."""
    events = list(EventStore(conn).replay(HISTORY_TYPES))
    created = {
        str(e.payload.get("task_id")): event_source_time(e)
        for e in events
        if e.event_type == TASK_CREATED
    }
    said = []
    for event in events:
        at = event_source_time(event)
        start = created.get(str(event.payload.get("task_id")), at)
        if max(at, start) <= when:
            said.append((max(at, start), at < start, event))
    said.sort(key=lambda item: item[0])
    folded: dict[str, _Folded] = {}
    for at, early, event in said:
        _apply(folded, event, at, early)
    return folded


def _summary(f: _Folded) -> TaskSummary:
    s = f.state
    return TaskSummary(
        task_id=s.task_id,
        title=s.title,
        project=s.project,
        status=s.status,
        priority=s.priority,
        canonical_key=s.canonical_key,
        stage="candidate" if f.aligned else "working",
        blocker_count=len(s.blockers),
        suggested_count=len(s.suggested_blockers),
        mention_count=f.mentions,
        aliases=tuple(f.aliases),
        created_at=f.created_at,
        updated_at=f.updated_at,
    )


def list_tasks_as_of(
    conn: duckdb.DuckDBPyConnection,
    when: datetime,
    status: str | None = None,
    project: str | None = None,
    hide_vague: bool = False,
) -> list[TaskSummary]:
    """Tasks known at `when`, newest change first, in the state they had then (with
    `hide_vague`, as `list_tasks`: without titles that name nothing)."""
    if status is not None and status not in STATUSES:
        raise ValueError(f"unknown task status {status!r}; expected one of {', '.join(STATUSES)}")
    return _listed(_fold(conn, when), status, project, hide_vague)


def _listed(
    folded: dict[str, _Folded],
    status: str | None,
    project: str | None,
    hide_vague: bool = False,
) -> list[TaskSummary]:
    tasks = [_summary(f) for f in folded.values()]
    tasks = [
        t
        for t in tasks
        if (status is None or t.status == status)
        and (project is None or t.project == project)
        and not (hide_vague and vague_title(t.title))
    ]
    return sorted(tasks, key=lambda t: (-t.updated_at.timestamp(), t.task_id))


def _views(refs: tuple[BlockerRef, ...]) -> tuple[BlockerView, ...]:
    return tuple(
        BlockerView(
            r.entity_id, r.kind, r.raw_text or r.entity_id, None, r.raw_text, r.auto_placeholder
        )
        for r in refs
    )


def list_blocked_tasks_as_of(
    conn: duckdb.DuckDBPyConnection, when: datetime, project: str | None = None
) -> list[BlockedTask]:
    """Tasks that were blocked at `when`, each with the blockers the task events had named
    by then (conditions are not time-travelled, so no resolution expands them)."""
    folded = _fold(conn, when)
    tasks = _listed(folded, "blocked", project)
    return [BlockedTask(t, _views(folded[t.task_id].state.blockers)) for t in tasks]


def get_task_as_of(
    conn: duckdb.DuckDBPyConnection, task_ref: str, when: datetime
) -> TaskDetail | None:
    """The task as it stood at `when` (None if it did not exist yet)."""
    task_id = find_task_id(conn, task_ref)
    folded = _fold(conn, when)
    if task_id is None or task_id not in folded:
        return None
    f = folded[task_id]
    sources = entry_sources(conn, list(f.evidence))
    evidence = []
    for entry_id, edge_session in f.evidence.items():
        session_id, title, stage = sources.get(entry_id, (None, None, None))
        evidence.append(EvidenceRef(entry_id, session_id or edge_session, title, stage))
    blocking = tuple(
        _summary(o) for _, o in sorted(folded.items()) if task_id in o.state.blocker_ids
    )
    history = tuple(
        HistoryEvent(e.event_id, e.ts, e.event_type, e.actor, e.session_id, e.payload)
        for e in f.history
    )
    blockers = _views(f.state.blockers)
    return TaskDetail(
        task=_summary(f),
        blockers=blockers,
        effective_blockers=blockers,
        suggested_blockers=_views(f.state.suggested_blockers),
        blocking=blocking,
        evidence=tuple(evidence),
        history=history,
    )
