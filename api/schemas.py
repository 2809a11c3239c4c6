"""Request and response shapes of the REST API."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from ninja import Schema
from pydantic import AfterValidator, Field

from axiom.store.bounds import MAX_OFFSET, MAX_PAGE


def _as_utc(value: datetime | None) -> datetime | None:
    """The store keeps naive UTC datetimes; say so on the wire (`…Z`)."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


UtcDatetime = Annotated[datetime | None, AfterValidator(_as_utc)]


# A text field that must hold something: one character that is not whitespace. `\x1c`-`\x1f`
# are whitespace to Python's `str.strip()`/`split()` (what the core uses) but not to the
# regex engines (pydantic's, a client's), so the pattern names them too.
NOT_BLANK = r"[^\s\x1c-\x1f]"
# `?as_of=`: an ISO date (its end, UTC) or datetime, read as the CLI's `--as-of`. Documented
# as a date-time, so schema-driven clients send one; a date is accepted too.
AsOf = Annotated[
    str,  # not required: a default of None is not validated, and means "now"
    Field(
        json_schema_extra={"format": "date-time"},
        description="ISO 8601 datetime (or date: its end, UTC): the state as of then",
    ),
]


class ErrorOut(Schema):
    # A message, or (422 from request validation) pydantic's list of what was wrong.
    detail: str | list[dict[str, Any]]


# Error statuses every operation may answer (401 only when AXIOM_AUTH_TOKEN is set;
# 422: a parameter out of range; 503: no database yet).
READ_ERRORS: dict[int, type[Schema]] = {401: ErrorOut, 422: ErrorOut, 503: ErrorOut}
# A write may also answer: 400 malformed JSON, 403 another origin, 404 unknown id,
# 413 body over 1 MB, 415 not application/json.
WRITE_ERRORS: dict[int, type[Schema]] = {
    **READ_ERRORS,
    400: ErrorOut,
    403: ErrorOut,
    404: ErrorOut,
    413: ErrorOut,
    415: ErrorOut,
}


def responses(ok: Any, *errors: int, write: bool = False) -> dict[int, Any]:
    """The `response={...}` of an operation: its 200 shape, the shared errors and `errors`."""
    shared = WRITE_ERRORS if write else READ_ERRORS
    return {200: ok, **shared, **{status: ErrorOut for status in errors}}


class HealthOut(Schema):
    status: str
    events: int
    sessions: int
    messages: int
    data_dir_ok: bool
    lock_wait_ms: float
    warm: bool


SESSIONS_PER_PAGE = 25
MAX_SESSIONS_PER_PAGE = 200


class SessionPageParams(Schema):
    """limit/offset, like `/entries`; page/per_page still work (the older form). Mixed,
    `limit` wins over `per_page` and `offset` over `page`."""

    limit: int | None = Field(None, ge=1, le=MAX_SESSIONS_PER_PAGE)
    offset: int | None = Field(None, ge=0, le=MAX_OFFSET)
    page: int = Field(1, ge=1, le=MAX_PAGE)
    per_page: int = Field(SESSIONS_PER_PAGE, ge=1, le=MAX_SESSIONS_PER_PAGE)


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
    limit: int
    offset: int
    page: int  # 1 + offset // limit
    per_page: int  # = limit
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
