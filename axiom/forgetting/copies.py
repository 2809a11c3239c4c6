"""Copies of forgotten text inside events that are kept.

Redacting the events about a session is not enough: an event of another session may quote
what only the forgotten one said. The matcher stores the tasks a mention resembled as
``candidates`` (task id, title, scores) on ``task_mentioned`` and ``condition_declared``,
so a kept session's event can carry the title of a task that came only from the forgotten
session. Such a task or condition is *gone* once its creating event is redacted; every
kept event loses the list items (``{"task_id": …, "title": …}``) that point at it, at any
depth of its payload, and keeps the rest.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from axiom.store.event_types import CONDITION_DECLARED, TASK_CREATED
from axiom.store.events import EventStore

_REFERENCE_FIELDS = ("task_id", "condition_id")


def gone_entities(store: EventStore, doomed: Sequence[str]) -> tuple[list[str], list[str]]:
    """(task ids, condition ids) created by the events `doomed` (about to be redacted)."""
    return (
        store.field_of(doomed, TASK_CREATED, "task_id"),
        store.field_of(doomed, CONDITION_DECLARED, "condition_id"),
    )


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
