from __future__ import annotations

from typing import Any

import duckdb
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from api.auth import api_write_auth
from api.errors import NotFound
from api.schemas import NOT_BLANK, AsOf, responses
from axiom.conflicts.entries_as_of import list_entries_as_of
from axiom.entries.queries import entry_history, get_entry, list_entries
from axiom.evidence.citations import citations_for_entry, get_citation
from axiom.pipeline.approval import approve_entry
from axiom.store.bounds import MAX_OFFSET
from axiom.store.timepoints import parse_timepoint
from config.stores import get_database

router = Router(tags=["entries"])


class EntryFilters(Schema):
    stage: str | None = None
    type: str | None = None
    status: str | None = None
    session_id: str | None = None
    as_of: AsOf = None
    limit: int = Field(100, ge=1, le=1000)
    offset: int = Field(0, ge=0, le=MAX_OFFSET)


class ApprovalIn(Schema):
    approved_by: str = Field(..., max_length=200, pattern=NOT_BLANK)
    note: str = Field("", max_length=2000)


@router.get("/entries", response=responses(list[dict[str, Any]]))
def entries(request: HttpRequest, filters: Query[EntryFilters]) -> list[dict]:
    """Memory entries, oldest first, filtered by stage / type / status / session; with
    `as_of`, those said by then, with (and filtered by) the statuses their conflicts gave
    them then."""
    when = parse_timepoint(filters.as_of, end_of_day=True) if filters.as_of else None
    with get_database().read() as conn:
        if when is None:
            rows = list_entries(
                conn, filters.stage, filters.type, filters.status, filters.session_id,
                filters.limit, filters.offset,
            )  # fmt: skip
        else:
            rows = list_entries_as_of(
                conn, when, filters.stage, filters.type, filters.status, filters.session_id,
                filters.limit, filters.offset,
            )  # fmt: skip
    return [row.to_json() for row in rows]


@router.get("/entries/{entry_id}", response=responses(dict[str, Any], 404))
def entry(request: HttpRequest, entry_id: str) -> dict:
    """One entry with its evidence, citations and full promotion history."""

    def find(conn: duckdb.DuckDBPyConnection) -> dict | None:
        row = get_entry(conn, entry_id)
        if row is None:
            return None
        return {
            **row.to_json(),
            "citations": citations_for_entry(conn, entry_id),
            "history": entry_history(conn, entry_id),
        }

    found = get_database().lookup(find)  # a snapshot that lacks it is not a 404
    if found is None:
        raise NotFound(f"entry {entry_id!r} not found")
    return found


@router.post(
    "/entries/{entry_id}/approve",
    response=responses(dict[str, Any], write=True),
    auth=api_write_auth,
)
def approve(request: HttpRequest, entry_id: str, body: ApprovalIn) -> dict:
    """A person's approval: certifies a verified entry (recorded as an event)."""
    result = approve_entry(get_database(), entry_id, body.approved_by, body.note)
    return result.__dict__


@router.get("/citations/{citation_id}", response=responses(dict[str, Any], 404))
def citation(request: HttpRequest, citation_id: str) -> dict:
    """The cited span: session, message, offsets, the quoted text and context around it."""
    found = get_database().lookup(lambda conn: get_citation(conn, citation_id))
    if found is None:
        raise NotFound(f"citation {citation_id!r} not found")
    return found.to_json()
