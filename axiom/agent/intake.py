"""The service's side of a hook call (`POST /api/v1/hooks`): store, then answer with context.

`accept` imports the transcript a Stop / SessionEnd / PostToolUse payload names (through
`import_paths`: privacy-filtered, deduplicated, so the same transcript handed over twice
is stored once), or hands its path to `queue_import` (the web queues it for the worker, so
the hook is answered at once and the serving process does not write), and, for
SessionStart / UserPromptSubmit, returns the context block from
the full hybrid search (`axiom.agent.context`), falling back to full text when the search
index is unavailable.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from axiom.agent.context import (
    distinct,
    memories_from_hits,
    memories_from_store,
    render,
    session_start_memories,
)
from axiom.agent.spool import scrub
from axiom.ingest.import_roots import PathOutsideImportRoots, confine_to_import_roots
from axiom.ingest.importer import import_paths
from axiom.retrieval.query import SearchError
from axiom.retrieval.search import SearchService
from axiom.store.db import Database

IMPORTING_EVENTS = frozenset({"PostToolUse", "Stop", "SessionEnd"})
CONTEXT_K = 10


class HookRejected(ValueError):
    """A hook payload Axiom cannot use (wrong shape, unknown transcript)."""


def accept(
    db: Database,
    search: SearchService | None,
    event: str,
    payload: dict[str, Any],
    budget: int,
    queue_import: Callable[[Path], str | None] | None = None,
) -> dict[str, Any]:
    """Store what the payload hands over; return `{accepted, event, imported, new_sessions,
    queued, context}` (`imported`: the sessions the transcript holds, new or already
    stored; `queued`: the id of the queued import when `queue_import` took the path,
    else None; it returns None to have the import done here)."""
    if not isinstance(payload, dict):
        raise HookRejected("payload must be a JSON object")
    imported: list[str] = []
    new_sessions = 0
    queued: str | None = None
    raw = payload.get("transcript_path")
    if event in IMPORTING_EVENTS and isinstance(raw, str) and raw:
        try:  # a path that reaches the server must lie under AXIOM_IMPORT_ROOTS
            path = confine_to_import_roots(raw)
        except PathOutsideImportRoots as exc:
            raise HookRejected(str(exc)) from None
        if not path.is_file():
            raise HookRejected(f"transcript not found: {path}")
        queued = queue_import(path) if queue_import is not None else None
        if queued is None:
            report = import_paths(db, [path])
            imported, new_sessions = report.session_ids, report.sessions_new
    context = _context(db, search, event, scrub(payload), budget) if budget > 0 else ""
    return {
        "accepted": True,
        "event": event,
        "imported": imported,
        "new_sessions": new_sessions,
        "queued": queued,
        "context": context,
    }


def _context(
    db: Database, search: SearchService | None, event: str, payload: dict[str, Any], budget: int
) -> str:
    if event == "SessionStart":
        with db.read() as conn:
            return render(session_start_memories(conn, payload.get("cwd")), budget)
    prompt = str(payload.get("prompt") or "").strip()
    if event != "UserPromptSubmit" or not prompt:
        return ""
    if search is not None:
        try:
            result = search.search(prompt, k=CONTEXT_K, kinds=("entry",))
            with db.read() as conn:
                return render(distinct(conn, memories_from_hits(result.hits)), budget)
        except SearchError:
            pass  # no index yet: full text below
    with db.read() as conn:
        return render(memories_from_store(conn, prompt), budget)
