"""Memory pages: the entry browser, one entry with its evidence and history, citations.

Same shape as `viewer.views`: one `with db.read()` unit per request through an `axiom`
query, the whole page or only the named `{% partialdef %}` fragment when htmx asks, and
every htmx control also a plain link or form.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

import duckdb
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST

from axiom.conflicts.entries_as_of import with_statuses_as_of
from axiom.conflicts.queries import list_conflicts, possible_conflicts
from axiom.entries.queries import (
    ENTRY_SORTS,
    EntryFilter,
    EntryGroup,
    EntryRow,
    entry_history,
    get_entry,
    list_entry_groups,
)
from axiom.evidence.citation_spans import list_citation_spans_for_entry
from axiom.evidence.citations import get_citation, span_key
from axiom.extract.types import ENTRY_TYPES
from axiom.graduation.stages import STAGES, STATUSES
from axiom.pipeline.approval import ApprovalRejected, EntryNotFound, approve_entry
from config.stores import get_database
from viewer.as_of import as_of
from viewer.paging import offset_of, page_number, paged
from viewer.rendering import render_page

ENTRIES_PER_PAGE = 50
ALL_ROWS = sys.maxsize  # a limit that keeps every row the filters keep
# get_citation's context on each side of the span: this much means "the whole message".
WHOLE_MESSAGE = sys.maxsize


@dataclass(frozen=True)
class EntryFilters:
    """The browser's controls: text, stage / type / status, sort, duplicates grouped or
    not. Values outside the known ones are dropped, like a bad page number, so a stale link
    still shows a page; `as_of` rides along so paging keeps the point in time."""

    q: str = ""
    stage: str = ""
    type: str = ""
    status: str = ""
    sort: str = "newest"
    dups: str = "group"
    as_of: str = ""

    CHOICES = {"stage": tuple(STAGES), "type": ENTRY_TYPES, "status": tuple(STATUSES)}
    SORTS = ENTRY_SORTS
    DUPS = ("group", "each")
    MAX_TEXT = 200

    @classmethod
    def from_query(cls, query: QueryDict) -> EntryFilters:
        picked = {}
        for name, allowed in cls.CHOICES.items():
            value = query.get(name, "")
            picked[name] = value if value in allowed else ""
        sort, dups = query.get("sort", ""), query.get("dups", "")
        return cls(
            q=query.get("q", "").strip()[: cls.MAX_TEXT],
            sort=sort if sort in cls.SORTS else "newest",
            dups=dups if dups in cls.DUPS else "group",
            as_of=query.get("as_of", "").strip(),
            **picked,
        )

    @property
    def narrowed(self) -> bool:
        return bool(self.q or self.stage or self.type or self.status)

    def narrow(self, when: datetime | None) -> EntryFilter:
        return EntryFilter(self.q, self.stage or None, self.type or None, self.status or None, when)

    def url(self, page: int = 1) -> str:
        """This listing's URL with only the controls that differ from the defaults."""
        defaults = EntryFilters()
        params: list[tuple[str, Any]] = [
            (name, getattr(self, name))
            for name in ("q", "stage", "type", "status", "sort", "dups", "as_of")
            if getattr(self, name) != getattr(defaults, name)
        ]
        if page > 1:
            params.append(("page", page))
        base = reverse("viewer-entries")
        return f"{base}?{urlencode(params)}" if params else base


def entry_list(request: HttpRequest) -> HttpResponse:
    filters = EntryFilters.from_query(request.GET)
    number = page_number(request.GET.get("page"))
    when = as_of(request)
    offset = offset_of(number, ENTRIES_PER_PAGE)
    each_by_status_then = when.when is not None and bool(filters.status)
    with get_database().read() as conn:
        if each_by_status_then:
            groups = _each_with_status_then(conn, filters, when.when, offset)
        else:
            groups = list_entry_groups(
                conn,
                filters.narrow(when.when),
                sort=filters.sort,
                group=filters.dups == "group",
                limit=ENTRIES_PER_PAGE + 1,  # one more tells whether a next page exists
                offset=offset,
            )
            groups = _groups_as_of(conn, groups, when.when)
    shown, pager = paged(groups, number, ENTRIES_PER_PAGE, filters.url)
    context = {
        "each_by_status_then": each_by_status_then,
        "as_of": when,
        "groups": shown,
        "pager": pager,
        "filters": filters,
        "choices": EntryFilters.CHOICES,
        "sorts": EntryFilters.SORTS,
    }
    response = render_page(request, "viewer/entries/list.html", context, fragment="entry-rows")
    if request.htmx:  # the address bar shows only the controls that differ from the defaults
        response["HX-Push-Url"] = filters.url(number)
    return response


def _each_with_status_then(
    conn: Any, filters: EntryFilters, when: datetime, offset: int
) -> list[EntryGroup]:
    """A page of single memories whose status at `when` is the one asked for (and one more,
    for the pager). Statuses then are known only once computed, so every memory said by
    `when` that the other filters keep is read, and the page is cut after; groups are not
    formed, since a group's members can differ in their status then."""
    narrow = replace(filters.narrow(when), status=None)
    every = list_entry_groups(conn, narrow, sort=filters.sort, group=False, limit=ALL_ROWS)
    rows = with_statuses_as_of(conn, [g.lead for g in every], when)
    kept = [EntryGroup(r, 1, []) for r in rows if r.status == filters.status]
    return kept[offset : offset + ENTRIES_PER_PAGE + 1]


def _groups_as_of(conn: Any, groups: list[EntryGroup], when: datetime | None) -> list[EntryGroup]:
    """The groups with each entry's status as it was at `when` (one read for the page)."""
    if when is None:
        return groups
    rows = [g.lead for g in groups] + [m for g in groups for m in g.members]
    status = {r.entry_id: r.status for r in with_statuses_as_of(conn, rows, when)}
    return [
        EntryGroup(
            replace(g.lead, status=status[g.lead.entry_id]),
            g.count,
            [replace(m, status=status[m.entry_id]) for m in g.members],
        )
        for g in groups
    ]


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

    def find(conn: duckdb.DuckDBPyConnection) -> tuple | None:
        entry = get_entry(conn, entry_id, as_of=when.when)
        if entry is None:
            return None
        return (
            with_statuses_as_of(conn, [entry], when.when)[0],
            list_citation_spans_for_entry(conn, entry_id),
            entry_history(conn, entry_id),
            list_conflicts(conn, "all", entry_id, as_of=when.when),
            possible_conflicts(conn, entry_id),
        )

    found = get_database().lookup(find)  # a snapshot that lacks it is not a 404
    if found is None:
        raise Http404(f"No entry {entry_id!r}")
    entry, spans, history, conflicts, suggested = found
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
    citation = get_database().lookup(lambda c: get_citation(c, citation_id, context=WHOLE_MESSAGE))
    if citation is None:
        raise Http404(f"No citation {citation_id!r}")
    return render(request, "viewer/citation.html", {"citation": citation})
