"""Event types of the task system beyond the task aggregate's own, and their dedupe keys.

The task aggregate's events (``task_created``, ``task_status_changed``,
``task_priority_changed``, ``task_title_changed``, ``task_blockers_set``,
``task_transition_rejected``) are defined in `axiom.tasks.state`; their payloads are the
ones `decide_*` returns, to which the resolver adds where the observation came from::

    entry_id, session_id, observed_at (ISO-8601 or null), source (todowrite|text|...)

(``task_created`` also gets ``evidence_aligned`` and, when a first sighting said "done",
``requested_status: "done"``: a new task never starts done.)

The other events, all appended by `axiom.tasks.resolver` / `axiom.tasks.commands`:

``condition_declared``
    A condition entity exists: ``{condition_id, canonical_key, text, raw_text, project,
    auto_placeholder, for_task, candidates: [TaskCandidate.to_json()], entry_id,
    session_id}``. ``auto_placeholder`` conditions stand for "blocked by something
    unknown" of one task (``for_task``). Dedupe: ``condition_declared:{condition_id}``.
``artifact_declared``
    An artifact entity exists (Jira key, GitHub issue/PR, URL): ``{artifact_id,
    canonical_key, artifact_kind: jira|gh_issue|url, ref, raw_text, entry_id,
    session_id}``. Dedupe: ``artifact_declared:{artifact_id}``.
``condition_resolved_to``
    A condition is (from now on) the same thing as another entity: ``{condition_id,
    target_id, target_kind, reason, entry_id}``. Effective-blocker views expand it.
    Dedupe: ``condition_resolved_to:{condition_id}:{target_id}`` (automatic) or
    ``…:{target_id}:{n}`` (the n-th explicit resolution of that condition).
``task_mentioned``
    One observation of a task (one extracted entry) was processed: ``{task_id, entry_id,
    session_id, title, alias_key, match: {method, score, similarity} | null, candidates,
    status, priority, observed_at, evidence_aligned, source, stale}``. It is the receipt
    that makes re-processing a no-op (dedupe ``task_mentioned:{mention_key}``), the source
    of the ``evidence_of`` edge entry → task, and of the alias for a differently worded
    title. ``status`` is the coerced status the mention stated (null if none).
``task_input_rejected``
    Part of a mention could not be used, and why: ``{task_id (null when no task could be
    identified), entry_id, session_id, field: title|status|priority|blocked_by|mention,
    value, reason}``. ``value`` is the original value as found (a status
    ``"frobnicated"``, a priority ``5``, a todo item that is a plain string; JSON values
    are kept as they are, a JSON text over 2,000 characters is cut). Reasons:
    ``empty_title``, ``missing_entry_id``, ``unknown_status``, ``missing_status`` (a
    TodoWrite item without one), ``unknown_priority``, ``unrecognised_blocker``,
    ``unknown_task_id``, ``self_reference``, ``internal_error``.
    Dedupe: ``task_input_rejected:{mention_key}:{field}:{digest(value, reason)}``.

    A TodoWrite call or item that yielded no task at all gives one with ``task_id`` and
    ``entry_id`` null, ``source: "todowrite"`` and where it was (``message_index``,
    ``tool_use_id``, ``item``: position in ``todos``). Reasons (field): ``input_not_an_object``,
    ``missing_todos``, ``todos_not_a_list``, ``todo_not_an_object`` (mention);
    ``missing_title`` (value: the whole item), ``title_not_a_string``, ``empty_title``
    (title). When a todo without a usable ``content`` still has an ``activeForm``, the
    task is made from that and the ``content`` problem is recorded against it. Dedupe:
    ``task_input_rejected:session:{session_id}:{digest(where, field, value, reason)}``.
"""

from __future__ import annotations

import hashlib
from typing import Any

from axiom.store.event_types import (
    ARTIFACT_DECLARED,
    CONDITION_DECLARED,
    CONDITION_RESOLVED_TO,
    TASK_INPUT_REJECTED,
    TASK_MENTIONED,
)
from axiom.store.events import canonical_json
from axiom.tasks.canonical import normalize_text

__all__ = [
    "OTHER_EVENT_TYPES",
    "digest",
    "mention_key",
]

OTHER_EVENT_TYPES = frozenset(
    {
        CONDITION_DECLARED,
        ARTIFACT_DECLARED,
        CONDITION_RESOLVED_TO,
        TASK_MENTIONED,
        TASK_INPUT_REJECTED,
    }
)


def digest(value: Any, length: int = 16) -> str:
    """Short SHA-1 of the canonical JSON of `value` (for dedupe keys and edge ids)."""
    return hashlib.sha1(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def mention_key(entry_id: str, title: Any) -> str:
    """Identity of one mention: its entry plus the (normalized) title it names.

    One extracted entry carries one task, so this is in practice the entry id; the title
    digest keeps two different tasks handed over under one entry id apart.
    """
    text = title if isinstance(title, str) else repr(title)
    return f"{entry_id}:{digest(normalize_text(text) or text, 12)}"
