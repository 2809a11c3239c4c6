"""Memory pages: the entry browser, one entry with its evidence and history, citations.

Same shape as `viewer.views`: one `with db.read()` unit per request through an `axiom`
query, the whole page or only the named `{% partialdef %}` fragment when htmx asks, and
every htmx control also a plain link or form.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from axiom.conflicts.queries import list_conflicts, possible_conflicts
from axiom.entries.queries import EntryRow, entry_history, get_entry, list_entries
from axiom.evidence.citation_spans import list_citation_spans_for_entry
from axiom.evidence.citations import get_citation, span_key
from axiom.extract.types import ENTRY_TYPES
from axiom.graduation.stages import STAGES, STATUSES
from axiom.pipeline.approval import ApprovalRejected, EntryNotFound, approve_entry
from config.stores import get_database
from viewer.as_of import as_of, entries_as_of
from viewer.paging import offset_of, page_number, paged
from viewer.rendering import render_page

ENTRIES_PER_PAGE = 50
# get_citation's context on each side of the span: this much means "the whole message".
WHOLE_MESSAGE = sys.maxsize


@dataclass(frozen=True)
class EntryFilters:
    """The browser's stage / type / status filters; values outside the known ones are
    dropped, like a bad page number, so a stale link still shows a page."""

    stage: str = ""
    type: str = ""
    status: str = ""

    CHOICES = {"stage": tuple(STAGES), "type": ENTRY_TYPES, "status": tuple(STATUSES)}

    @classmethod
    def from_query(cls, query: QueryDict) -> EntryFilters:
        picked = {}
        for name, allowed in cls.CHOICES.items():
            value = query.get(name, "")
            picked[name] = value if value in allowed else ""
        return cls(**picked)

    def url(self, page: int = 1) -> str:
        """This listing's URL with only the filters that are set (for pager links)."""
        params: list[tuple[str, Any]] = [
            (name, getattr(self, name)) for name in self.CHOICES if getattr(self, name)
        ]
        if page > 1:
            params.append(("page", page))
        base = reverse("viewer-entries")
        return f"{base}?{urlencode(params)}" if params else base


def entry_list(request: HttpRequest) -> HttpResponse:
    filters = EntryFilters.from_query(request.GET)
    number = page_number(request.GET.get("page"))
    when = as_of(request)
    with get_database().read() as conn:
        rows = list_entries(
            conn,
            stage=filters.stage or None,
            entry_type=filters.type or None,
            status=filters.status or None,
            limit=ENTRIES_PER_PAGE + 1,  # one more tells whether a next page exists
            offset=offset_of(number, ENTRIES_PER_PAGE),
            as_of=when.when,
        )
        rows = entries_as_of(conn, rows, when.when)
    entries, pager = paged(rows, number, ENTRIES_PER_PAGE, filters.url)
    context = {
        "as_of": when,
        "entries": entries,
        "pager": pager,
        "filters": filters,
        "choices": EntryFilters.CHOICES,
    }
    return render_page(request, "viewer/entries/list.html", context, fragment="entry-rows")


@dataclass(frozen=True)
class Evidence:
    """One evidence item of an entry, with the citation that opens its span (if aligned)."""

    quote: str
    session_id: str | None
    message_index: int | None
    aligned: bool
    method: str | None
    confidence: float | None
    failure_reason: str | None
    citation_id: str | None


def _evidence(entry: EntryRow, citation_ids: dict[str, str]) -> list[Evidence]:
    items = []
    for ev in entry.evidence:
        aligned = bool(ev.get("aligned")) and ev.get("span_start") is not None
        items.append(
            Evidence(
                quote=str(ev.get("quote") or ""),
                session_id=ev.get("session_id"),
                message_index=ev.get("message_index"),
                aligned=aligned,
                method=ev.get("method"),
                confidence=ev.get("confidence"),
                failure_reason=ev.get("failure_reason"),
                citation_id=citation_ids.get(span_key(entry.entry_id, ev)) if aligned else None,
            )
        )
    return items


def _timeline(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**event, "when": datetime.fromisoformat(event["ts"])} for event in history]


@dataclass(frozen=True)
class ApprovalOutcome:
    ok: bool
    message: str
    approved_by: str = ""
    note: str = ""


def _render_entry(
    request: HttpRequest, entry_id: str, approval: ApprovalOutcome | None = None, status: int = 200
) -> HttpResponse:
    when = as_of(request)
    with get_database().read() as conn:
        entry = get_entry(conn, entry_id, as_of=when.when)
        if entry is None:
            raise Http404(f"No entry {entry_id!r}")
        (entry,) = entries_as_of(conn, [entry], when.when)
        spans = list_citation_spans_for_entry(conn, entry_id)
        history = entry_history(conn, entry_id)
        conflicts = list_conflicts(conn, "all", entry_id, as_of=when.when)
        suggested = possible_conflicts(conn, entry_id)
    context = {
        "as_of": when,
        "conflicts": conflicts,
        "open_conflicts": [c for c in conflicts if c.status == "open"],
        "possible_conflicts": suggested,
        "entry": entry,
        "evidence": _evidence(entry, {s.span_key: s.citation_id for s in spans}),
        "history": _timeline(history),
        "approval": approval,
    }
    return render_page(
        request, "viewer/entries/detail.html", context, fragment="entry", status=status
    )


def entry_detail(request: HttpRequest, entry_id: str) -> HttpResponse:
    return _render_entry(request, entry_id)


@require_POST
def entry_approve(request: HttpRequest, entry_id: str) -> HttpResponse:
    """The approve form: records `entry_approved` (certifying a verified entry), then shows
    the entry again with the result. htmx swaps the entry in place; a plain post gets the
    whole page (re-posting is harmless: an approval by the same person is recorded once)."""
    approved_by = request.POST.get("approved_by", "")
    note = request.POST.get("note", "").strip()
    try:
        result = approve_entry(get_database(), entry_id, approved_by, note)
    except EntryNotFound:
        raise Http404(f"No entry {entry_id!r}") from None
    except ApprovalRejected as exc:
        outcome = ApprovalOutcome(False, str(exc), approved_by, note)
        # htmx swaps only 2xx responses; a plain post gets the honest status.
        status = 200 if request.htmx else 422
        return _render_entry(request, entry_id, outcome, status=status)
    outcome = ApprovalOutcome(True, result.reason, result.approved_by)
    return _render_entry(request, entry_id, outcome)


def citation_detail(request: HttpRequest, citation_id: str) -> HttpResponse:
    """`/c/mem:7Fq2xA/` (or `/c/7Fq2xA/`): the whole source message, the span marked."""
    with get_database().read() as conn:
        citation = get_citation(conn, citation_id, context=WHOLE_MESSAGE)
    if citation is None:
        raise Http404(f"No citation {citation_id!r}")
    return render(request, "viewer/citation.html", {"citation": citation})
