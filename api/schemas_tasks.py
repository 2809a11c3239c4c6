"""Response shapes of the task endpoints (`api.routers.tasks`)."""

from __future__ import annotations

from typing import Any, Literal

from ninja import Schema
from pydantic import Field

from api.schemas import NOT_BLANK, AsOf, UtcDatetime
from axiom.store.bounds import MAX_OFFSET
from axiom.tasks.commands import MAX_NOTE_CHARS

TaskStatusName = Literal["pending", "in_progress", "blocked", "done", "cancelled"]


class TaskListParams(Schema):
    status: TaskStatusName | None = None
    project: str | None = None
    as_of: AsOf = None
    limit: int = Field(100, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class TaskOut(Schema):
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
    aliases: list[str]
    created_at: UtcDatetime
    updated_at: UtcDatetime


class BlockerOut(Schema):
    entity_id: str
    kind: str
    title: str
    status: str | None
    raw_text: str
    auto_placeholder: bool
    via_resolution: bool
    declared_id: str | None
    declared_title: str | None


class BlockedTaskOut(TaskOut):
    blockers: list[BlockerOut]


class EvidenceOut(Schema):
    entry_id: str
    session_id: str | None
    entry_title: str | None
    stage: str | None


class HistoryEventOut(Schema):
    event_id: str
    ts: UtcDatetime
    event_type: str
    actor: str
    session_id: str | None
    summary: str
    payload: dict[str, Any]


class TaskDetailOut(TaskOut):
    blockers: list[BlockerOut]
    effective_blockers: list[BlockerOut]
    suggested_blockers: list[BlockerOut]
    blocking: list[TaskOut]
    evidence: list[EvidenceOut]
    history: list[HistoryEventOut]


class ResolvedConditionOut(Schema):
    condition_id: str
    condition_text: str
    target_id: str
    target_type: str | None
    target_title: str | None
    reason: str | None
    event_id: str | None
    resolved_at: UtcDatetime
    blocking: list[str]


class ResolveConditionIn(Schema):
    target_id: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)
    note: str = Field("", max_length=MAX_NOTE_CHARS)


class TaskActionIn(Schema):
    action: Literal["done", "cancel"]
    note: str = Field("", max_length=MAX_NOTE_CHARS)


class LinkBlockerIn(Schema):
    blocker: str = Field(min_length=1, max_length=500, pattern=NOT_BLANK)
    note: str = Field("", max_length=MAX_NOTE_CHARS)


class TaskActionOut(Schema):
    task_id: str
    status: str
    event_ids: list[str]  # the events appended (empty when nothing changed)
