"""Read-only: where citations sit, by entry or by session (for linking and highlighting).

`citations.get_citation` opens one citation; these queries list the spans themselves, so a
page can map an evidence item to its citation id (through `span_key`) or mark every cited
span inside a session's messages. Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb


@dataclass(frozen=True)
class CitationSpan:
    citation_id: str
    span_key: str
    entry_id: str
    session_id: str
    message_index: int
    span_start: int
    span_end: int


_COLS = "citation_id, span_key, entry_id, session_id, message_index, span_start, span_end"
_ORDER = " ORDER BY session_id, message_index, span_start, span_end, citation_id"


def list_citation_spans_for_entry(
    conn: duckdb.DuckDBPyConnection, entry_id: str
) -> list[CitationSpan]:
    """The entry's cited spans, in message order."""
    rows = conn.execute(
        f"SELECT {_COLS} FROM citations WHERE entry_id = ?" + _ORDER, [entry_id]
    ).fetchall()
    return [CitationSpan(*r) for r in rows]


def list_citation_spans_in_session(
    conn: duckdb.DuckDBPyConnection, session_id: str
) -> list[CitationSpan]:
    """Every cited span inside the session's messages, in message and offset order."""
    rows = conn.execute(
        f"SELECT {_COLS} FROM citations WHERE session_id = ?" + _ORDER, [session_id]
    ).fetchall()
    return [CitationSpan(*r) for r in rows]
