"""The task aggregate as a pure fold over task events, and the decisions that emit them.

Events are plain ``(event_type, payload)`` pairs — the event store's shape — whose payloads
are JSON-ready dicts (lists, not tuples), so a fold over events read back from DuckDB equals
a fold over the events as they were decided.

Two kinds of function live here:

* `evolve` / `fold` apply events. They never validate business rules: the event log is the
  source of truth and a replay must reproduce history exactly, even history written under
  an older rule. They only reject structurally impossible input (an event before
  ``task_created``, an event for another task, an unknown status).
* ``decide_*`` look at a `TaskState` and an observation and return the events to append.
  They are the only gate for the rules below.

Status rules (see `ALLOWED_TRANSITIONS` / `REOPEN_TRANSITIONS`)::

    pending      -> in_progress | blocked | cancelled
    in_progress  -> pending | blocked | done | cancelled
    blocked      -> pending | in_progress | cancelled
    done         -> (closed)   with reopen=True: pending | in_progress | blocked
    cancelled    -> (closed)   with reopen=True: pending | in_progress | blocked

* ``done`` is entered only from ``in_progress``. An observation "done" for a task that is
  pending or blocked (or cancelled, with reopen) is recorded as two legal steps,
  ``X -> in_progress`` (reason ``"implied: <reason>"``) then ``in_progress -> done``: the
  observation is kept, and no single event ever jumps from pending to done.
* ``done`` and ``cancelled`` are closed. Leaving them needs ``reopen=True`` — the caller's
  statement that the evidence explicitly reopens the task (a person in the UI, or a
  transcript saying so). Without it, the attempt is recorded as
  ``task_transition_rejected`` with reason ``"closed_needs_reopen"``; this is what keeps a
  stale snapshot from an older session (re-imported late) from undoing a completion.
  ``done -> cancelled`` and ``cancelled -> done`` without reopen are rejected too.
* Same status → no events (idempotent).
* ``blocked`` needs at least one blocker: blockers given with the transition are applied
  first; with none given and none present, an auto placeholder condition is inserted.
* Entering ``done`` clears blockers and suggested blockers.
* Leaving ``blocked`` for ``pending`` or ``in_progress`` ("the deploy is unblocked")
  clears the blockers: the status change is followed by ``task_blockers_set`` replace
  ``[]``, so no open task shows "blocked by" once it is no longer blocked.
* `decide_blocker_resolved`: one blocker reported resolved ("OPS-55 is done") is taken
  off; a blocked task left with none goes back to ``pending``.

Blocker rules: ``mode="replace"`` when the evidence was aligned (the list becomes the
task's blockers), ``mode="suggest"`` otherwise (only adds to ``suggested_blockers``).
Blockers are identified by ``entity_id``; a list with the same ids as the current one is
no change. A done task takes no blockers: aligned blockers for it are recorded as
suggestions. Blockers otherwise persist until replaced, resolved, the task is unblocked or done.

Invariants (checked by the property tests): after every decision's events are applied,
``blocked`` ⇒ ≥ 1 blocker, ``done`` ⇒ no blockers, a task unblocked or with
every blocker resolved is not ``blocked`` and has none; every ``task_status_changed`` is in
the tables above; none goes pending → done. The one event-level exception is
`decide_create` for an initially blocked task: ``task_created(status=blocked)`` is directly
followed, in the same decision, by the ``task_blockers_set`` that satisfies the rule, so a
store must append one decision's events together.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from axiom.store.event_types import (
    TASK_BLOCKERS_SET,
    TASK_CREATED,
    TASK_PRIORITY_CHANGED,
    TASK_STATUS_CHANGED,
    TASK_TITLE_CHANGED,
    TASK_TRANSITION_REJECTED,
)
from axiom.tasks.canonical import (
    entity_id_for,
    normalize_text,
    placeholder_condition_key,
    task_key,
)

__all__ = [
    "ALLOWED_TRANSITIONS",
    "BLOCKER_KINDS",
    "BLOCKED",
    "CANCELLED",
    "CLOSED_STATUSES",
    "DONE",
    "IMPLIED_PREFIX",
    "IN_PROGRESS",
    "PENDING",
    "PRIORITIES",
    "REASON_CLOSED_NEEDS_REOPEN",
    "REASON_NOT_ALLOWED",
    "REASON_STALE",
    "REOPEN_TRANSITIONS",
    "STATUSES",
    "TASK_EVENT_TYPES",
    "BlockerRef",
    "Event",
    "TaskEventError",
    "TaskState",
    "coerce_priority",
    "coerce_status",
    "decide_blocker_resolved",
    "decide_blockers",
    "decide_create",
    "decide_priority",
    "decide_status",
    "decide_title",
    "evolve",
    "fold",
    "is_allowed_transition",
    "placeholder_blocker",
]

Event = tuple[str, dict[str, Any]]

PENDING = "pending"
IN_PROGRESS = "in_progress"
BLOCKED = "blocked"
DONE = "done"
CANCELLED = "cancelled"
STATUSES = (PENDING, IN_PROGRESS, BLOCKED, DONE, CANCELLED)
CLOSED_STATUSES = frozenset({DONE, CANCELLED})
PRIORITIES = ("low", "medium", "high")
BLOCKER_KINDS = ("task", "condition", "artifact")

ALLOWED_TRANSITIONS: Mapping[str, frozenset[str]] = {
    PENDING: frozenset({IN_PROGRESS, BLOCKED, CANCELLED}),
    IN_PROGRESS: frozenset({PENDING, BLOCKED, DONE, CANCELLED}),
    BLOCKED: frozenset({PENDING, IN_PROGRESS, CANCELLED}),
    DONE: frozenset(),
    CANCELLED: frozenset(),
}
# Extra moves allowed only with reopen=True.
REOPEN_TRANSITIONS: Mapping[str, frozenset[str]] = {
    PENDING: frozenset(),
    IN_PROGRESS: frozenset(),
    BLOCKED: frozenset(),
    DONE: frozenset({PENDING, IN_PROGRESS, BLOCKED}),
    CANCELLED: frozenset({PENDING, IN_PROGRESS, BLOCKED}),
}

TASK_EVENT_TYPES = frozenset(
    {
        TASK_CREATED,
        TASK_STATUS_CHANGED,
        TASK_PRIORITY_CHANGED,
        TASK_TITLE_CHANGED,
        TASK_BLOCKERS_SET,
        TASK_TRANSITION_REJECTED,
    }
)

REASON_CLOSED_NEEDS_REOPEN = "closed_needs_reopen"
REASON_NOT_ALLOWED = "not_allowed"
# An observation older than the task's newest status observation (the resolver's rule;
# `axiom.tasks.as_of` applies it again in said order).
REASON_STALE = "stale_observation"
IMPLIED_PREFIX = "implied: "


class TaskEventError(ValueError):
    """An event that cannot be applied to the state it was given (corrupt stream)."""


# --------------------------------------------------------------------------- vocabulary

_STATUS_SYNONYMS = {
    "pending": PENDING,
    "todo": PENDING,
    "to do": PENDING,
    "open": PENDING,
    "not started": PENDING,
    "backlog": PENDING,
    "in_progress": IN_PROGRESS,
    "in progress": IN_PROGRESS,
    "in-progress": IN_PROGRESS,
    "doing": IN_PROGRESS,
    "started": IN_PROGRESS,
    "wip": IN_PROGRESS,
    "blocked": BLOCKED,
    "on hold": BLOCKED,
    "waiting": BLOCKED,
    "done": DONE,
    "completed": DONE,
    "complete": DONE,
    "finished": DONE,
    "resolved": DONE,
    "closed": DONE,
    "cancelled": CANCELLED,
    "canceled": CANCELLED,
    "dropped": CANCELLED,
    "abandoned": CANCELLED,
    "wontfix": CANCELLED,
    "won't fix": CANCELLED,
}
_PRIORITY_SYNONYMS = {
    "low": "low",
    "minor": "low",
    "lowest": "low",
    "p3": "low",
    "p4": "low",
    "medium": "medium",
    "normal": "medium",
    "moderate": "medium",
    "p2": "medium",
    "high": "high",
    "urgent": "high",
    "critical": "high",
    "highest": "high",
    "blocker": "high",
    "p0": "high",
    "p1": "high",
}


def coerce_status(value: str | None) -> str | None:
    """Map an extractor's status word to a domain status (``"completed"`` → ``"done"``,
    TodoWrite's ``"in_progress"`` stays), or None when it is not recognised."""
    if value is None:
        return None
    return _STATUS_SYNONYMS.get(" ".join(value.strip().lower().split()))


def coerce_priority(value: str | None) -> str | None:
    """Map a priority word to low|medium|high, or None when absent or not recognised."""
    if value is None:
        return None
    return _PRIORITY_SYNONYMS.get(value.strip().lower())


def _check_status(status: str) -> str:
    if status not in STATUSES:
        raise ValueError(f"unknown task status {status!r}; expected one of {STATUSES}")
    return status


def _check_priority(priority: str | None) -> str | None:
    if priority is not None and priority not in PRIORITIES:
        raise ValueError(f"unknown priority {priority!r}; expected one of {PRIORITIES} or None")
    return priority


def is_allowed_transition(frm: str, to: str, *, reopen: bool = False) -> bool:
    """Whether one ``task_status_changed`` event may go from `frm` to `to`."""
    allowed = ALLOWED_TRANSITIONS[frm] | (REOPEN_TRANSITIONS[frm] if reopen else frozenset())
    return to in allowed


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class BlockerRef:
    """A reference from a task to what blocks it (a task, condition or artifact entity)."""

    entity_id: str
    kind: str  # task | condition | artifact
    raw_text: str = ""
    auto_placeholder: bool = False

    def __post_init__(self) -> None:
        if self.kind not in BLOCKER_KINDS:
            raise ValueError(f"unknown blocker kind {self.kind!r}; expected {BLOCKER_KINDS}")
        if not self.entity_id:
            raise ValueError("a blocker needs an entity_id")

    def to_json(self) -> dict[str, Any]:
        return {
            "entity_id": self.entity_id,
            "kind": self.kind,
            "raw_text": self.raw_text,
            "auto_placeholder": self.auto_placeholder,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BlockerRef:
        return cls(
            entity_id=str(data["entity_id"]),
            kind=str(data["kind"]),
            raw_text=str(data.get("raw_text") or ""),
            auto_placeholder=bool(data.get("auto_placeholder", False)),
        )


def placeholder_blocker(project: str | None, task_id: str) -> BlockerRef:
    """The deterministic "unknown blocker" condition ref for one task.

    The caller that appends the events must also declare this condition
    (``condition_declared`` for `placeholder_condition_key`) — recognisable in the emitted
    ``task_blockers_set`` payload by ``auto_placeholder: true``.
    """
    key = placeholder_condition_key(project, task_id)
    return BlockerRef(
        entity_id=entity_id_for(key),
        kind="condition",
        raw_text="unknown blocker",
        auto_placeholder=True,
    )


@dataclass(frozen=True)
class TaskState:
    """The current state of one task, as folded from its events."""

    task_id: str
    title: str
    canonical_key: str
    project: str
    status: str
    priority: str | None = None
    blockers: tuple[BlockerRef, ...] = ()
    suggested_blockers: tuple[BlockerRef, ...] = ()
    version: int = 1  # number of task events folded, rejected transitions included
    rejected_transitions: int = 0

    @property
    def is_closed(self) -> bool:
        return self.status in CLOSED_STATUSES

    @property
    def cancelled(self) -> bool:
        return self.status == CANCELLED

    @property
    def has_placeholder_blocker(self) -> bool:
        return any(b.auto_placeholder for b in self.blockers)

    @property
    def blocker_ids(self) -> frozenset[str]:
        return frozenset(b.entity_id for b in self.blockers)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready snapshot (e.g. for an entity's ``current_json`` cache)."""
        return {
            "task_id": self.task_id,
            "title": self.title,
            "canonical_key": self.canonical_key,
            "project": self.project,
            "status": self.status,
            "priority": self.priority,
            "blockers": [b.to_json() for b in self.blockers],
            "suggested_blockers": [b.to_json() for b in self.suggested_blockers],
            "version": self.version,
            "rejected_transitions": self.rejected_transitions,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TaskState:
        """The inverse of `to_json`; keys it does not know (projection extras) are ignored."""
        return cls(
            task_id=str(data["task_id"]),
            title=str(data["title"]),
            canonical_key=str(data["canonical_key"]),
            project=str(data["project"]),
            status=_check_status(str(data["status"])),
            priority=_check_priority(data.get("priority")),
            blockers=_refs(data.get("blockers") or ()),
            suggested_blockers=_refs(data.get("suggested_blockers") or ()),
            version=int(data.get("version", 1)),
            rejected_transitions=int(data.get("rejected_transitions", 0)),
        )


# --------------------------------------------------------------------------- fold


def _refs(items: Iterable[BlockerRef | Mapping[str, Any]]) -> tuple[BlockerRef, ...]:
    """BlockerRefs from refs or payload dicts, first occurrence of each entity_id kept."""
    seen: set[str] = set()
    out: list[BlockerRef] = []
    for item in items:
        ref = item if isinstance(item, BlockerRef) else BlockerRef.from_json(item)
        if ref.entity_id not in seen:
            seen.add(ref.entity_id)
            out.append(ref)
    return tuple(out)


def evolve(
    state: TaskState | None, event_type: str, payload: Mapping[str, Any]
) -> TaskState | None:
    """Apply one event. Events of other types (e.g. ``condition_declared``) are ignored.

    Does not re-validate transitions (see the module docstring). Raises `TaskEventError`
    for an event before ``task_created``, a second ``task_created`` or an event carrying
    another task's id.
    """
    if event_type not in TASK_EVENT_TYPES:
        return state
    task_id = payload.get("task_id")
    if event_type == TASK_CREATED:
        if state is not None:
            raise TaskEventError(f"task {state.task_id} is already created")
        return TaskState(
            task_id=str(task_id),
            title=str(payload["title"]),
            canonical_key=str(payload["canonical_key"]),
            project=str(payload["project"]),
            status=_check_status(payload["status"]),
            priority=_check_priority(payload.get("priority")),
        )
    if state is None:
        raise TaskEventError(f"{event_type} for task {task_id} before task_created")
    if task_id != state.task_id:
        raise TaskEventError(f"{event_type} for task {task_id} applied to task {state.task_id}")

    state = replace(state, version=state.version + 1)
    if event_type == TASK_STATUS_CHANGED:
        to = _check_status(payload["to"])
        if to == DONE:
            return replace(state, status=to, blockers=(), suggested_blockers=())
        return replace(state, status=to)
    if event_type == TASK_PRIORITY_CHANGED:
        return replace(state, priority=_check_priority(payload.get("to")))
    if event_type == TASK_TITLE_CHANGED:
        return replace(state, title=str(payload["to"]))
    if event_type == TASK_TRANSITION_REJECTED:
        return replace(state, rejected_transitions=state.rejected_transitions + 1)
    # TASK_BLOCKERS_SET
    refs = _refs(payload.get("blockers") or ())
    mode = payload.get("mode")
    if mode == "replace":
        ids = {r.entity_id for r in refs}
        kept = tuple(s for s in state.suggested_blockers if s.entity_id not in ids)
        return replace(state, blockers=refs, suggested_blockers=kept)
    if mode == "suggest":
        known = state.blocker_ids | {s.entity_id for s in state.suggested_blockers}
        new = tuple(r for r in refs if r.entity_id not in known)
        return replace(state, suggested_blockers=state.suggested_blockers + new)
    raise TaskEventError(f"task_blockers_set with unknown mode {mode!r}")


def fold(events: Iterable[tuple[str, Mapping[str, Any]]]) -> TaskState | None:
    """Fold one task's events, oldest first, into its state (None if there are none)."""
    state: TaskState | None = None
    for event_type, payload in events:
        state = evolve(state, event_type, payload)
    return state


# --------------------------------------------------------------------------- decisions

Placeholder = BlockerRef | Callable[[], BlockerRef] | None


def _resolve_placeholder(placeholder: Placeholder, state: TaskState) -> BlockerRef:
    if placeholder is None:
        return placeholder_blocker(state.project, state.task_id)
    ref = placeholder() if callable(placeholder) else placeholder
    if not ref.auto_placeholder:
        ref = replace(ref, auto_placeholder=True)
    return ref


def _blockers_event(task_id: str, mode: str, refs: Iterable[BlockerRef]) -> Event:
    return (
        TASK_BLOCKERS_SET,
        {"task_id": task_id, "mode": mode, "blockers": [r.to_json() for r in refs]},
    )


def _blocker_events(
    state: TaskState,
    blockers: Iterable[BlockerRef],
    evidence_aligned: bool,
    target_status: str,
    placeholder: Placeholder,
) -> list[Event]:
    """Events that apply an observed blocker list to `state`, for a task that is (or is
    about to be) in `target_status`."""
    refs = _refs(blockers)
    events: list[Event] = []
    if evidence_aligned and target_status != DONE:
        new = refs
        if target_status == BLOCKED and not new:
            # An empty list says nothing about what blocks a blocked task: keep what is
            # known, or insert the placeholder.
            new = state.blockers or (_resolve_placeholder(placeholder, state),)
        if {r.entity_id for r in new} != state.blocker_ids:
            events.append(_blockers_event(state.task_id, "replace", new))
        return events

    known = state.blocker_ids | {s.entity_id for s in state.suggested_blockers}
    suggestions = [r for r in refs if r.entity_id not in known]
    if suggestions:
        events.append(_blockers_event(state.task_id, "suggest", suggestions))
    if target_status == BLOCKED and not state.blockers:
        events.append(
            _blockers_event(state.task_id, "replace", [_resolve_placeholder(placeholder, state)])
        )
    return events


def decide_create(
    task_id: str,
    title: str,
    key: str,
    project: str,
    status: str | None = PENDING,
    priority: str | None = None,
    blockers: Iterable[BlockerRef] = (),
    *,
    evidence_aligned: bool = True,
    placeholder: Placeholder = None,
) -> list[Event]:
    """Events that create a task first seen with `status`.

    * ``status=None`` means pending.
    * A new task never starts as ``done``: it is created ``in_progress``. Seeing a task
      for the first time already "done" proves that it exists and that someone worked on
      it, but an extractor reading "we'll fix X" or a stale checklist as "completed"
      must not be able to create tasks that are closed before anyone saw them open (and
      would then be invisible in every open-task view). Completion has to be observed
      again, later, through `decide_status`; a resolver must not feed the same evidence
      straight back as a done transition.
    * ``blocked`` without blockers gets the auto placeholder condition (see
      `placeholder_blocker`; `placeholder` overrides it: a ref or a zero-argument
      callable returning one).
    * `blockers` are applied as for `decide_blockers` (replace if aligned, else suggest).
    """
    status = PENDING if status is None else _check_status(status)
    initial = IN_PROGRESS if status == DONE else status
    title = title.strip()
    if not title:
        raise ValueError("a task needs a non-empty title")
    if not task_id or not key:
        raise ValueError("a task needs a task_id and a canonical key")
    created: Event = (
        TASK_CREATED,
        {
            "task_id": task_id,
            "title": title,
            "canonical_key": key,
            "project": project,
            "status": initial,
            "priority": _check_priority(priority),
        },
    )
    state = evolve(None, *created)
    assert state is not None
    return [created, *_blocker_events(state, blockers, evidence_aligned, initial, placeholder)]


def _status_event(task_id: str, frm: str, to: str, reason: str) -> Event:
    return (TASK_STATUS_CHANGED, {"task_id": task_id, "from": frm, "to": to, "reason": reason})


def _path(frm: str, to: str, reopen: bool) -> list[str] | None:
    """Statuses to step through from `frm` to reach `to`, or None when not reachable."""
    if is_allowed_transition(frm, to, reopen=reopen):
        return [to]
    if (
        to == DONE
        and is_allowed_transition(frm, IN_PROGRESS, reopen=reopen)
        and is_allowed_transition(IN_PROGRESS, DONE)
    ):
        return [IN_PROGRESS, DONE]
    return None


def decide_status(
    state: TaskState | None,
    to: str,
    reason: str = "",
    blockers: Iterable[BlockerRef] = (),
    *,
    evidence_aligned: bool = True,
    reopen: bool = False,
    placeholder: Placeholder = None,
) -> list[Event]:
    """Events that move the task to status `to` (see the module docstring for the table).

    * Same status → ``[]``. To change the blockers of a task that is already blocked, use
      `decide_blockers`.
    * Not reachable → one ``task_transition_rejected`` {task_id, from, to, reason} with
      reason ``"closed_needs_reopen"`` (leaving done/cancelled without `reopen`) or
      ``"not_allowed"``.
    * To ``done`` from pending/blocked: two steps through ``in_progress``.
    * To ``blocked``: `blockers` are applied first (replace if `evidence_aligned`, else
      suggest) and, if that leaves no blocker, the placeholder is inserted; then the
      status change. `blockers` are ignored for any other target.

    Raises ValueError for an unknown task (`state` None) or an unknown status; use
    `coerce_status` on extractor output first.
    """
    if state is None:
        raise ValueError("decide_status on a task that does not exist; create it first")
    _check_status(to)
    frm = state.status
    if to == frm:
        return []
    path = _path(frm, to, reopen)
    if path is None:
        code = (
            REASON_CLOSED_NEEDS_REOPEN
            if frm in CLOSED_STATUSES and not reopen
            else REASON_NOT_ALLOWED
        )
        note = f"{code}: {reason}" if reason else code
        return [
            (
                TASK_TRANSITION_REJECTED,
                {"task_id": state.task_id, "from": frm, "to": to, "reason": note},
            )
        ]

    events: list[Event] = []
    if to == BLOCKED:
        events.extend(_blocker_events(state, blockers, evidence_aligned, BLOCKED, placeholder))
    for i, step in enumerate(path):
        step_reason = reason if i == len(path) - 1 else f"{IMPLIED_PREFIX}{reason}".rstrip()
        events.append(_status_event(state.task_id, frm, step, step_reason))
        frm = step
    if state.status == BLOCKED and to in (PENDING, IN_PROGRESS) and state.blockers:
        events.append(_blockers_event(state.task_id, "replace", ()))  # unblocked: none left
    return events


def decide_blocker_resolved(
    state: TaskState | None, entity_id: str, reason: str = ""
) -> list[Event]:
    """Events for "blocker `entity_id` is resolved" (its ticket is done, merged, …).

    * Not one of the task's blockers, or the task is closed → ``[]``.
    * Other blockers remain → ``task_blockers_set`` replace with the rest.
    * It was the last one: a blocked task goes to ``pending`` (which clears it, as
      `decide_status` does); a task in another open status just loses it.
    """
    if state is None:
        raise ValueError("decide_blocker_resolved on a task that does not exist")
    if state.is_closed or entity_id not in state.blocker_ids:
        return []
    rest = [b for b in state.blockers if b.entity_id != entity_id]
    if not rest and state.status == BLOCKED:
        return decide_status(state, PENDING, reason)
    return [_blockers_event(state.task_id, "replace", rest)]


def decide_blockers(
    state: TaskState | None,
    blockers: Iterable[BlockerRef],
    evidence_aligned: bool,
    *,
    placeholder: Placeholder = None,
) -> list[Event]:
    """Events that record an observed blocker list.

    * `evidence_aligned` → ``mode="replace"``: the list becomes the blockers. An empty
      list clears the blockers, except on a blocked task, where it keeps the current ones
      (or inserts the placeholder). On a done task the list is recorded as suggestions
      instead (done ⇒ no blockers).
    * Not aligned → ``mode="suggest"`` with the refs not already blockers or suggestions.
    * Nothing new → ``[]``.
    """
    if state is None:
        raise ValueError("decide_blockers on a task that does not exist; create it first")
    return _blocker_events(state, blockers, evidence_aligned, state.status, placeholder)


def decide_priority(state: TaskState | None, priority: str | None) -> list[Event]:
    """``task_priority_changed`` when `priority` differs. None means "not stated" and
    never erases a known priority."""
    if state is None:
        raise ValueError("decide_priority on a task that does not exist; create it first")
    _check_priority(priority)
    if priority is None or priority == state.priority:
        return []
    return [
        (
            TASK_PRIORITY_CHANGED,
            {"task_id": state.task_id, "from": state.priority, "to": priority},
        )
    ]


def decide_title(state: TaskState | None, title: str) -> list[Event]:
    """``task_title_changed`` when `title` differs from the current one beyond case,
    spacing and punctuation (so re-stating a title in other casing does not churn
    events). The canonical key is not changed: the new title's key is an alias, carried in
    the payload (``alias_key``) so a replay does not depend on the key rule of its day."""
    if state is None:
        raise ValueError("decide_title on a task that does not exist; create it first")
    title = title.strip()
    if not title or normalize_text(title) == normalize_text(state.title):
        return []
    payload = {
        "task_id": state.task_id,
        "from": state.title,
        "to": title,
        "alias_key": task_key(state.project, title),
    }
    return [(TASK_TITLE_CHANGED, payload)]
