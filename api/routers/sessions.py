from __future__ import annotations

from dataclasses import asdict

import duckdb
from django.http import HttpRequest
from ninja import Query, Router

from api.errors import NotFound
from api.schemas import (
    SessionDetailOut,
    SessionPageOut,
    SessionPageParams,
    responses,
)
from axiom.ingest.session_queries import get_session, list_messages, list_sessions
from config.stores import get_database

router = Router(tags=["sessions"])


@router.get("", response=responses(SessionPageOut))
def sessions(request: HttpRequest, params: Query[SessionPageParams]) -> dict[str, object]:
    """Sessions, newest first: `limit`/`offset` (like `/entries`) or `page`/`per_page`."""
    per_page = params.limit or params.per_page
    with get_database().read() as conn:
        page = list_sessions(conn, page=params.page, per_page=per_page, offset=params.offset)
    return {
        "items": page.sessions,
        "limit": page.per_page,
        "offset": page.offset,
        "page": page.page,
        "per_page": page.per_page,
        "total": page.total,
        "has_next": page.has_next,
    }


@router.get("/{path:session_id}", response=responses(SessionDetailOut, 404))
def session(request: HttpRequest, session_id: str) -> dict[str, object]:
    """One session with all of its messages in order."""

    def find(conn: duckdb.DuckDBPyConnection) -> dict[str, object] | None:
        found = get_session(conn, session_id)
        if found is None:
            return None
        return {**asdict(found), "messages": [asdict(m) for m in list_messages(conn, session_id)]}

    detail = get_database().lookup(find)  # a snapshot that lacks it is not a 404
    if detail is None:
        raise NotFound(f"session {session_id!r} not found")
    return detail
