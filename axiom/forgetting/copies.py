"""Copies of forgotten text inside events that are kept.

Redacting the events about a session is not enough: an event of another session may quote
what only the forgotten one said. The matcher stores the tasks a mention resembled as
``candidates`` (task id, title, scores) on ``task_mentioned`` and ``condition_declared``,
so a kept session's event can carry the title of a task that came only from the forgotten
session. Such a task or condition is *gone* once its creating event is redacted; every
kept event loses the list items (``{"task_id": …, "title": …}``) that point at it, at any
depth of its payload, and keeps the rest.

A gone task may also be one kept sessions went on to speak of ("the refund report is still
blocked" after the forgotten session created it): their task events no longer apply once
it is gone (a rebuild skips them as about an unknown task). `lost_tasks` names each such
task as the kept sessions did, so the forget preview and report say what goes with it;
the kept sessions' notes themselves stay as entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from axiom.store.event_types import CONDITION_DECLARED, TASK_CREATED, TASK_MENTIONED
from axiom.store.events import EventStore
from axiom.tasks.state import TASK_EVENT_TYPES

_REFERENCE_FIELDS = ("task_id", "condition_id")


def gone_entities(store: EventStore, doomed: Sequence[str]) -> tuple[list[str], list[str]]:
    """(task ids, condition ids) created by the events `doomed` (about to be redacted)."""
    return (
        store.field_of(doomed, TASK_CREATED, "task_id"),
        store.field_of(doomed, CONDITION_DECLARED, "condition_id"),
    )


@dataclass(frozen=True)
class LostTask:
    """A gone task kept sessions spoke of: the titles they gave it (their own words, never
    the forgotten ones), those sessions, and how many of their task events no longer apply."""

    task_id: str
    titles: list[str]
    session_ids: list[str]
    events: int

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def lost_tasks(store: EventStore, tasks: Sequence[str], doomed: Sequence[str]) -> list[LostTask]:
    """The `tasks` (gone) that events outside `doomed` are about, in task id order."""
    if not tasks:
        return []
    skip = set(doomed)
    types = sorted(TASK_EVENT_TYPES | {TASK_MENTIONED})
    kept: dict[str, list[Any]] = {}
    for event in store.about_any("task_id", list(tasks), types):
        if event.event_id not in skip:
            kept.setdefault(str(event.payload["task_id"]), []).append(event)
    out = []
    for task_id, events in sorted(kept.items()):
        titles = [e.payload.get("title") for e in events if e.event_type == TASK_MENTIONED]
        out.append(
            LostTask(
                task_id,
                list(dict.fromkeys(t for t in titles if isinstance(t, str))),
                list(dict.fromkeys(e.session_id for e in events if e.session_id)),
                len(events),
            )
        )
    return out


def _without(value: Any, gone: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, gone) for k, v in value.items()}
    if isinstance(value, list):
        return [
            _without(v, gone)
            for v in value
            if not (isinstance(v, dict) and any(v.get(f) in gone for f in _REFERENCE_FIELDS))
        ]
    return value


def scrub_copies(store: EventStore, gone: Sequence[str], doomed: Sequence[str]) -> int:
    """Drop every reference to a `gone` entity from the events not in `doomed`; returns how
    many events changed."""
    if not gone:
        return 0
    skip, wanted = set(doomed), set(gone)
    changed = 0
    for event_id in store.ids_about([], list(gone)):
        event = store.get(event_id)
        if event_id in skip or event is None:
            continue
        cleaned = _without(event.payload, wanted)
        if cleaned != event.payload:
            store.replace_payload(event_id, cleaned)
            changed += 1
    return changed
