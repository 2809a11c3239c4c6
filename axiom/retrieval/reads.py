"""What search reads from DuckDB, through the owners of each table: the current stage,
status and time of every candidate, the details of the few shown, their citations.

Stage and status come from DuckDB at query time (LanceDB's copy would be stale after a
promotion); a candidate missing here is stale (deleted or not yet projected) and dropped.
"""

from __future__ import annotations

from typing import Any

import duckdb

from axiom.conflicts.queries import open_partners
from axiom.entries.queries import entry_headlines, entry_rank_facts
from axiom.evidence.citations import first_citations, message_citations
from axiom.ingest.session_queries import message_texts, message_times, session_starts
from axiom.retrieval.candidates import Doc
from axiom.retrieval.scoring import Facts, MessageKey, Scored


def read_facts(conn: duckdb.DuckDBPyConnection, docs: list[Doc]) -> dict[str, Facts]:
    """Current stage, status and time of every candidate still in DuckDB, by document id.

    An entry's time is its session's start (when it was said), else its creation; a
    message's its own timestamp, else its session's start.
    """
    entry_ids = [d.entry_id for d in docs if d.kind == "entry" and d.entry_id]
    keys = [
        (d.session_id, int(d.message_index))
        for d in docs
        if d.kind == "message" and d.session_id is not None and d.message_index is not None
    ]
    out: dict[str, Facts] = {}
    entries = entry_rank_facts(conn, entry_ids)
    starts = session_starts(conn, [e.session_id for e in entries if e.session_id])
    for e in entries:
        out[f"entry:{e.entry_id}"] = Facts(
            stage=e.stage,
            status=e.status or "active",
            session_id=e.session_id,
            ts=starts.get(e.session_id or "") or e.created_ts,
        )
    for (sid, idx), ts in message_times(conn, keys).items():
        out[f"message:{sid}:{idx}"] = Facts(ts=ts)
    return out


def read_details(conn: duckdb.DuckDBPyConnection, items: list[Scored]) -> None:
    """Title, type and evidence of entries; role, text and meta of messages."""
    entries = {i.hit.entry_id: i for i in items if i.hit.kind == "entry" and i.hit.entry_id}
    messages: dict[MessageKey, Scored] = {
        (str(i.hit.session_id), int(i.hit.message_index or 0)): i
        for i in items
        if i.hit.kind == "message"
    }
    for head in entry_headlines(conn, list(entries)):
        fact = entries[head.entry_id].fact
        fact.entry_type, fact.title = head.entry_type, head.title
        fact.evidence = _evidence_keys(head.evidence, fact.session_id)
    for key, message in message_texts(conn, list(messages)).items():
        fact = messages[key].fact
        fact.role, fact.text, fact.meta = message.role, message.text, message.meta


def attach_citations(conn: duckdb.DuckDBPyConnection, items: list[Scored]) -> None:
    """An entry's first evidence citation; an entry none of whose quotes aligned gets
    the message citation of its first evidence message; a message its own."""
    entry_ids = [i.hit.entry_id for i in items if i.hit.kind == "entry" and i.hit.entry_id]
    by_entry = first_citations(conn, entry_ids)
    wanted: dict[str, MessageKey] = {}
    for i in items:
        if i.hit.kind == "message":
            wanted[i.hit.id] = (str(i.hit.session_id), int(i.hit.message_index or 0))
        elif i.hit.entry_id not in by_entry and i.fact.evidence:
            wanted[i.hit.id] = i.fact.evidence[0]
    by_message = message_citations(conn, list(wanted.values()))
    for i in items:
        if i.hit.kind == "entry" and i.hit.entry_id in by_entry:
            i.hit.citation = by_entry[i.hit.entry_id]
        elif i.hit.id in wanted:
            i.hit.citation = by_message.get(wanted[i.hit.id])


def _evidence_keys(
    evidence: list[dict[str, Any]] | None, session_id: str | None
) -> tuple[MessageKey, ...]:
    """(session_id, message_index) of each evidence item, in evidence order."""
    out = []
    for ev in evidence or ():
        if isinstance(ev, dict) and isinstance(ev.get("message_index"), int):
            out.append((str(ev.get("session_id") or session_id), ev["message_index"]))
    return tuple(dict.fromkeys(out))


def attach_conflicts(conn: duckdb.DuckDBPyConnection, items: list[Scored]) -> None:
    """A contested entry's hit names the entries it is in an open conflict with."""
    entry_ids = [i.hit.entry_id for i in items if i.hit.status == "contested" and i.hit.entry_id]
    if not entry_ids:
        return
    partners = open_partners(conn, entry_ids)
    for i in items:
        i.hit.conflicts_with = partners.get(i.hit.entry_id or "", [])
