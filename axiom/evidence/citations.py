"""Citations: a short, stable id for every aligned evidence span (`mem:7Fq2xA`).

The id is the first 6 url-safe base64 characters of a hash of the span's identity (entry,
session, message, offsets, quote hash), lengthened to 7 or 8 characters only if a shorter
id is already taken by another span. Because events replay in a fixed order, a rebuild
assigns exactly the same ids, and re-importing the same session adds no new span, so an
existing id never changes.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from axiom.store.events import StoredEvent

PREFIX = "mem:"
MIN_LEN, MAX_LEN = 6, 8
CONTEXT_CHARS = 160


class CitationIdExhausted(RuntimeError):
    """Every id length up to MAX_LEN collided: practically impossible, but never silent."""


def span_key(entry_id: str, evidence: dict[str, Any]) -> str:
    return (
        "|".join(
            str(evidence.get(k))
            for k in ("session_id", "message_index", "span_start", "span_end", "quote_hash")
        )
        + f"|{entry_id}"
    )


def _digest(key: str) -> str:
    raw = hashlib.sha256(key.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def assign_citation_id(conn: duckdb.DuckDBPyConnection, key: str) -> str:
    """The existing id for this span, or the shortest free id derived from it."""
    row = conn.execute("SELECT citation_id FROM citations WHERE span_key = ?", [key]).fetchone()
    if row:
        return row[0]
    digest = _digest(key)
    for length in range(MIN_LEN, MAX_LEN + 1):
        candidate = PREFIX + digest[:length]
        taken = conn.execute(
            "SELECT 1 FROM citations WHERE citation_id = ?", [candidate]
        ).fetchone()
        if not taken:
            return candidate
    raise CitationIdExhausted(f"no free citation id for span {key!r}")


class CitationProjector:
    name = "citations"
    event_types = ("entry_created",)
    tables = ("citations",)

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        entry_id = event.payload["entry_id"]
        for ev in event.payload.get("evidence", []):
            if not ev.get("aligned") or ev.get("span_start") is None:
                continue
            key = span_key(entry_id, ev)
            citation_id = assign_citation_id(conn, key)
            conn.execute(
                "INSERT INTO citations (citation_id, span_key, entry_id, session_id, message_index,"
                " span_start, span_end, quote_hash, method, confidence, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (citation_id) DO NOTHING",
                [
                    citation_id,
                    key,
                    entry_id,
                    ev["session_id"],
                    ev["message_index"],
                    ev["span_start"],
                    ev["span_end"],
                    ev.get("quote_hash", ""),
                    ev.get("method"),
                    ev.get("confidence"),
                    event.ts,
                ],
            )


@dataclass(frozen=True)
class Citation:
    citation_id: str
    entry_id: str
    entry_title: str | None
    session_id: str
    message_index: int
    span_start: int
    span_end: int
    method: str | None
    confidence: float | None
    quote: str
    before: str
    after: str
    role: str | None
    created_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "citation_id": self.citation_id,
            "entry_id": self.entry_id,
            "entry_title": self.entry_title,
            "session_id": self.session_id,
            "message_index": self.message_index,
            "span_start": self.span_start,
            "span_end": self.span_end,
            "method": self.method,
            "confidence": self.confidence,
            "quote": self.quote,
            "context_before": self.before,
            "context_after": self.after,
            "role": self.role,
        }


def normalize_citation_id(raw: str) -> str:
    """Accepts `mem:abc123`, `abc123` or `[mem:abc123]`."""
    text = raw.strip().strip("[]")
    return text if text.startswith(PREFIX) else PREFIX + text


def get_citation(
    conn: duckdb.DuckDBPyConnection, citation_id: str, context: int = CONTEXT_CHARS
) -> Citation | None:
    row = conn.execute(
        "SELECT c.citation_id, c.entry_id, e.title, c.session_id, c.message_index, c.span_start,"
        " c.span_end, c.method, c.confidence, m.text, m.role, c.created_at"
        " FROM citations c LEFT JOIN entries e USING (entry_id)"
        " LEFT JOIN messages m ON m.session_id = c.session_id AND m.message_index = c.message_index"
        " WHERE c.citation_id = ?",
        [normalize_citation_id(citation_id)],
    ).fetchone()
    if row is None:
        return None
    text = row[9] or ""
    start, end = row[5], row[6]
    return Citation(
        citation_id=row[0],
        entry_id=row[1],
        entry_title=row[2],
        session_id=row[3],
        message_index=row[4],
        span_start=start,
        span_end=end,
        method=row[7],
        confidence=row[8],
        quote=text[start:end],
        before=text[max(0, start - context) : start],
        after=text[end : end + context],
        role=row[10],
        created_at=row[11],
    )


def citations_for_entry(conn: duckdb.DuckDBPyConnection, entry_id: str) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT citation_id FROM citations WHERE entry_id = ? ORDER BY message_index, span_start",
            [entry_id],
        ).fetchall()
    ]
