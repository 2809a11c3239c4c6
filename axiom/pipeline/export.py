"""`axiom export`: the store as JSON lines (sessions, their messages, then entries)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from axiom.entries.queries import list_entries
from axiom.ingest.session_queries import list_messages, list_sessions
from axiom.store.db import Database

PAGE_SIZE = 200


def export_lines(db: Database) -> Iterator[dict[str, Any]]:
    """Sessions, their messages, then entries: one JSON object per line (stable field names)."""
    with db.read() as conn:
        page, total_pages = 1, 1
        while page <= total_pages:
            result = list_sessions(conn, page=page, per_page=PAGE_SIZE)
            total_pages = max(1, -(-result.total // PAGE_SIZE))
            for s in result.sessions:
                yield {
                    "kind": "session",
                    "session_id": s.session_id,
                    "project": s.project,
                    "source": s.source,
                    "title": s.title,
                    "started_at": s.started_at.isoformat() if s.started_at else None,
                    "message_count": s.message_count,
                }
                for m in list_messages(conn, s.session_id):
                    yield {
                        "kind": "message",
                        "session_id": s.session_id,
                        "index": m.index,
                        "role": m.role,
                        "text": m.text,
                        "ts": m.ts.isoformat() if m.ts else None,
                        "meta": m.meta,
                    }
            page += 1
        for entry in list_entries(conn):
            yield entry.to_json()
