"""Conflicts between memories, mounted at ``/api/v1/``: the list and one write,
``POST /conflicts/{conflict_id}/resolve`` with ``{"choice", "note"}`` (choice one of
keep_newer, keep_older, keep_both, reject_both). Unknown ids are 404, refused
resolutions (bad choice, already resolved) 422, mapped in `api.api`.
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest
from ninja import Router, Schema

from api.auth import api_write_auth
from api.schemas import AsOf, responses
from axiom.conflicts.commands import resolve
from axiom.conflicts.queries import list_conflicts
from axiom.store.timepoints import parse_timepoint
from config.stores import get_database

router = Router(tags=["conflicts"])


class ConflictOut(Schema):
    conflict_id: str
    status: str
    older_id: str
    newer_id: str
    entry_ids: list[str]
    conflict_type: str
    subject: str | None
    reason: str | None
    detected_at: str
    resolved_at: str | None
    resolution: str | None
    resolved_by: str | None
    note: str | None


class ResolveConflictIn(Schema):
    choice: Literal["keep_newer", "keep_older", "keep_both", "reject_both"]
    note: str = ""
    who: str = ""


@router.get("/conflicts", response=list[ConflictOut])
def conflicts(
    request: HttpRequest,
    status: Literal["open", "resolved", "all"] = "all",
    as_of: AsOf = None,
) -> list[dict[str, Any]]:
    """Conflicts between memories, newest first, optionally only open or resolved ones;
    with `as_of` (as `conflicts --as-of`), those between memories said by then, as they
    stood then."""
    when = parse_timepoint(as_of, end_of_day=True) if as_of else None
    with get_database().read() as conn:
        return [c.to_json() for c in list_conflicts(conn, status, as_of=when)]


@router.post(
    "/conflicts/{conflict_id}/resolve",
    response=responses(ConflictOut, write=True),
    auth=api_write_auth,
)
def resolve_conflict(
    request: HttpRequest, conflict_id: str, body: ResolveConflictIn
) -> dict[str, Any]:
    """Settle a conflict: the entry not kept becomes superseded (keep_newer/keep_older),
    keep_both leaves both active, reject_both deprecates both."""
    user = getattr(request, "user", None)
    who = body.who or (user.get_username() if user and user.is_authenticated else "api")
    return resolve(get_database(), conflict_id, body.choice, who, body.note).to_json()
