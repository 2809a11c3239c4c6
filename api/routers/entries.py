from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Schema

from api.errors import NotFound
from axiom.entries.queries import entry_history, get_entry, list_entries
from axiom.evidence.citations import citations_for_entry, get_citation
from axiom.pipeline.approval import approve_entry
from config.stores import get_database

router = Router(tags=["entries"])


class EntryFilters(Schema):
    stage: str | None = None
    type: str | None = None
    status: str | None = None
    session_id: str | None = None
    limit: int = 100
    offset: int = 0


class ApprovalIn(Schema):
    approved_by: str
    note: str = ""


@router.get("/entries")
def entries(request: HttpRequest, filters: Query[EntryFilters]) -> list[dict]:
    """Memory entries, oldest first, filtered by stage / type / status / session."""
    with get_database().read() as conn:
        rows = list_entries(
            conn,
            stage=filters.stage,
            entry_type=filters.type,
            status=filters.status,
            session_id=filters.session_id,
            limit=min(max(filters.limit, 1), 1000),
            offset=max(filters.offset, 0),
        )
    return [row.to_json() for row in rows]


@router.get("/entries/{entry_id}")
def entry(request: HttpRequest, entry_id: str) -> dict:
    """One entry with its evidence, citations and full promotion history."""
    with get_database().read() as conn:
        row = get_entry(conn, entry_id)
        if row is None:
            raise NotFound(f"entry {entry_id!r} not found")
        return {
            **row.to_json(),
            "citations": citations_for_entry(conn, entry_id),
            "history": entry_history(conn, entry_id),
        }


@router.post("/entries/{entry_id}/approve")
def approve(request: HttpRequest, entry_id: str, body: ApprovalIn) -> dict:
    """A person's approval: certifies a verified entry (recorded as an event)."""
    result = approve_entry(get_database(), entry_id, body.approved_by, body.note)
    return result.__dict__


@router.get("/citations/{citation_id}")
def citation(request: HttpRequest, citation_id: str) -> dict:
    """The cited span: session, message, offsets, the quoted text and context around it."""
    with get_database().read() as conn:
        found = get_citation(conn, citation_id)
    if found is None:
        raise NotFound(f"citation {citation_id!r} not found")
    return found.to_json()
