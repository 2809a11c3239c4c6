"""``POST /api/v1/forget`` with exactly one of ``session_id``, ``entry_id``, ``before``:
forget it everywhere on disk (`axiom.forgetting.forget`). The answer names ids and
counts, never the forgotten text. An unknown session or entry is 404; no target, two
targets or a bad date are 422."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema
from pydantic import ConfigDict

from api.auth import api_write_auth
from api.schemas import responses
from axiom.forgetting.forget import ForgetTarget, forget
from axiom.store.timepoints import parse_timepoint
from config.stores import get_database, reset

router = Router(tags=["forgetting"])


class ForgetIn(Schema):
    """Exactly one of the three targets (the schema says so with `oneOf`, so a client
    generating bodies from it never sends an empty or double target)."""

    model_config = ConfigDict(
        json_schema_extra={
            "oneOf": [
                {"required": ["session_id"]},
                {"required": ["entry_id"]},
                {"required": ["before"]},
            ]
        }
    )

    session_id: str = Field(None, min_length=1)  # type: ignore[assignment]
    entry_id: str = Field(None, min_length=1)  # type: ignore[assignment]
    before: date = Field(None, description="forget every session that started before")  # type: ignore[assignment]
    who: str = ""


class LostTaskOut(Schema):
    """A task only the target created that kept sessions spoke of: it goes, and what they
    said of it no longer applies (their memories stay)."""

    task_id: str
    titles: list[str] = Field(description="the kept sessions' own titles for it")
    session_ids: list[str]
    events: int = Field(description="kept task events that no longer apply")


class ForgetOut(Schema):
    redaction_id: str
    scope: str
    session_ids: list[str]
    entry_ids: list[str]
    events_redacted: int
    copies_scrubbed: int
    outbox_jobs_removed: int
    vector_rows_deleted: int
    log_lines_removed: int
    spool_payloads_removed: int
    uploads_removed: int
    validator_modules_removed: int
    database_bytes: int
    lost_tasks: list[LostTaskOut]


@router.post("/forget", response=responses(ForgetOut, write=True), auth=api_write_auth)
def forget_target(request: HttpRequest, body: ForgetIn) -> dict[str, Any]:
    """Forget a session, an entry or every session before a date. Irreversible."""
    before = parse_timepoint(body.before.isoformat(), end_of_day=False) if body.before else None
    target = ForgetTarget(session_id=body.session_id, entry_id=body.entry_id, before=before)
    user = getattr(request, "user", None)
    who = body.who or (user.get_username() if user and user.is_authenticated else "api")
    report = forget(get_database(), target, who)
    reset()  # the search service holds LanceDB handles to versions just deleted
    return report.to_json()
