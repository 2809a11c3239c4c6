"""A stored entry as the validator sees it: what graduation checks, rebuilt from its row."""

from __future__ import annotations

from axiom.entries.queries import EntryRow
from axiom.graduation.candidate import CandidateEntry, EvidenceSpan


def stored_candidate(entry: EntryRow) -> CandidateEntry:
    """The `CandidateEntry` of a stored entry (its evidence as aligned when it was built),
    for graduating it again (`axiom.conflicts.graduate`) or emitting its Idris module."""
    spans = tuple(
        EvidenceSpan(
            session_id=e.get("session_id") or entry.session_id or "",
            message_index=e["message_index"],
            span_start=e.get("span_start"),
            span_end=e.get("span_end"),
            aligned=bool(e.get("aligned")),
            method=e.get("method"),
            confidence=e.get("confidence"),
            quote_hash=e.get("quote_hash") or "",
            failure_reason=e.get("failure_reason"),
        )
        for e in entry.evidence
    )
    task = entry.task or {}
    return CandidateEntry(
        entry.entry_id,
        entry.entry_type,
        entry.title,
        entry.content,
        entry.session_id or "",
        spans,
        task_title=task.get("title"),
    )
