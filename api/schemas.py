"""Request and response shapes of the REST API."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from ninja import Schema
from pydantic import AfterValidator, Field


def _as_utc(value: datetime | None) -> datetime | None:
    """The store keeps naive UTC datetimes; say so on the wire (`…Z`)."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


UtcDatetime = Annotated[datetime | None, AfterValidator(_as_utc)]


class ErrorOut(Schema):
    detail: str


class HealthOut(Schema):
    status: str
    events: int
    sessions: int
    messages: int
    data_dir: str
    data_dir_ok: bool
    lock_wait_ms: float


class PageParams(Schema):
    page: int = Field(1, ge=1)
    per_page: int = Field(25, ge=1, le=200)


class SessionOut(Schema):
    session_id: str
    project: str | None
    source: str
    title: str | None
    started_at: UtcDatetime
    ended_at: UtcDatetime
    message_count: int


class SessionPageOut(Schema):
    items: list[SessionOut]
    page: int
    per_page: int
    total: int
    has_next: bool


class ToolCallOut(Schema):
    tool_use_id: str
    name: str
    input: dict[str, Any]


class MessageOut(Schema):
    index: int
    role: str
    text: str
    ts: UtcDatetime
    is_sidechain: bool
    tool_calls: list[ToolCallOut]
    meta: dict[str, Any]


class SessionDetailOut(SessionOut):
    messages: list[MessageOut]
