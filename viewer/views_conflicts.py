"""Conflict pages: `/conflicts/` (open and resolved) and `/conflicts/<id>/`, both memories
side by side with their evidence in context and a plain POST form (CSRF, no JavaScript
needed) to settle the conflict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from axiom.conflicts.commands import ConflictCommandError, ConflictNotFound, resolve
from axiom.conflicts.projector import RESOLUTION_CHOICES
from axiom.conflicts.queries import get_conflict, get_fact, list_conflicts
from axiom.entries.queries import EntryRow, get_entry
from axiom.evidence.citation_spans import list_citation_spans_for_entry
from axiom.evidence.citations import Citation, get_citation
from config.stores import get_database
from viewer.as_of import as_of

CONTEXT_CHARS = 160
CHOICE_LABELS = {
    "keep_newer": "Keep the newer memory",
    "keep_older": "Keep the older memory",
    "keep_both": "Keep both (not a real conflict)",
    "reject_both": "Both are wrong",
}


@dataclass(frozen=True)
class Side:
    """One memory of a conflict: the entry, when it was said, its evidence in context."""

    label: str
    entry: EntryRow | None
    said_at: Any
    citations: list[Citation]


def conflict_list(request: HttpRequest) -> HttpResponse:
    when = as_of(request)
    with get_database().read() as conn:
        found = list_conflicts(conn, "all", as_of=when.when)
    context = {
        "as_of": when,
        "open": [c for c in found if c.status == "open"],
        "resolved": [c for c in found if c.status == "resolved"],
    }
    return render(request, "viewer/conflicts/list.html", context)


def _side(conn: Any, label: str, entry_id: str) -> Side:
    spans = list_citation_spans_for_entry(conn, entry_id)
    citations = [c for s in spans if (c := get_citation(conn, s.citation_id, CONTEXT_CHARS))]
    fact = get_fact(conn, entry_id)
    return Side(label, get_entry(conn, entry_id), fact.said_at if fact else None, citations)


def _render(
    request: HttpRequest, conflict_id: str, error: str = "", status: int = 200
) -> HttpResponse:
    when = as_of(request)

    def find(conn: duckdb.DuckDBPyConnection) -> tuple | None:
        conflict = get_conflict(conn, conflict_id, as_of=when.when)
        if conflict is None:
            return None
        return conflict, [
            _side(conn, "Older", conflict.older_id),
            _side(conn, "Newer", conflict.newer_id),
        ]

    found = get_database().lookup(find)  # a snapshot that lacks it is not a 404
    if found is None:
        raise Http404(f"No conflict {conflict_id!r}")
    conflict, sides = found
    context = {
        "conflict": conflict,
        "sides": sides,
        "choices": [(c, CHOICE_LABELS[c]) for c in RESOLUTION_CHOICES],
        "error": error,
        "as_of": when,
    }
    return render(request, "viewer/conflicts/detail.html", context, status=status)


def conflict_detail(request: HttpRequest, conflict_id: str) -> HttpResponse:
    return _render(request, conflict_id)


@require_POST
def conflict_resolve(request: HttpRequest, conflict_id: str) -> HttpResponse:
    """The resolution form: records `conflict_resolved`, then back to the conflict page
    (post/redirect/get, so a reload does not post again)."""
    choice = request.POST.get("choice", "")
    note = request.POST.get("note", "").strip()
    user = getattr(request, "user", None)
    who = request.POST.get("who", "").strip() or (
        user.get_username() if user is not None and user.is_authenticated else "viewer"
    )
    try:
        resolve(get_database(), conflict_id, choice, who, note)
    except ConflictNotFound:
        raise Http404(f"No conflict {conflict_id!r}") from None
    except ConflictCommandError as exc:
        return _render(request, conflict_id, str(exc), status=422)
    return redirect("viewer-conflict", conflict_id=conflict_id)
