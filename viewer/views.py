"""Thin views: read one unit from DuckDB through an `axiom` query, then render.

List pages render the whole page, or only the named `{% partialdef %}` fragment when htmx
asks for it (`viewer.rendering.render_page`), so every htmx control is also a plain link
that works without JavaScript; listings page through `viewer.paging`.
"""

from __future__ import annotations

from typing import Any

import duckdb
from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from axiom.evidence.citation_spans import list_citation_spans_in_session
from axiom.ingest.session_queries import MessageRow, get_session, list_messages, list_sessions
from axiom.observability.dashboard import collect_dashboard
from axiom.observability.stats import STAGES
from config.stores import get_database
from viewer.charts import bar_chart, fill_days, share_bar
from viewer.middleware import COOKIE_NAME, cookie_value, token_matches
from viewer.paging import Pager, page_number
from viewer.rendering import render_page
from viewer.spans import segments_by_message
from viewer.transcript import message_bodies

SESSIONS_PER_PAGE = 25
LOGIN_COOKIE_MAX_AGE = 30 * 24 * 3600


def dashboard(request: HttpRequest) -> HttpResponse:
    with get_database().read() as conn:
        board = collect_dashboard(conn)
    stages = board.stats["entries_by_stage"]
    charts = {
        "entries": bar_chart(
            fill_days(board.entries_per_day), title="Memories per day", unit="memories"
        ),
        "sessions": bar_chart(
            fill_days(board.sessions_per_day), title="Sessions per day", unit="sessions"
        ),
        "stages": share_bar([(s, stages[s]) for s in STAGES], title="Memories by stage"),
    }
    context = {"board": board, "stats": board.stats, "charts": charts}
    return render(request, "viewer/dashboard.html", context)


def session_list(request: HttpRequest) -> HttpResponse:
    number = page_number(request.GET.get("page"))
    with get_database().read() as conn:
        page = list_sessions(conn, page=number, per_page=SESSIONS_PER_PAGE)
    base = reverse("viewer-sessions")
    pager = Pager(
        page.page, page.per_page, len(page.sessions), page.has_next, lambda n: f"{base}?page={n}"
    )
    context = {"page": page, "pager": pager}
    return render_page(request, "viewer/sessions/list.html", context, fragment="session-rows")


def _tool_calls_by_id(messages: list[MessageRow]) -> dict[str, dict[str, Any]]:
    """tool_use_id → the call's name and message index, so a result can link to its call."""
    return {
        str(call.get("tool_use_id")): {"name": call.get("name"), "index": m.index}
        for m in messages
        for call in m.tool_calls
        if call.get("tool_use_id")
    }


def session_detail(request: HttpRequest, session_id: str) -> HttpResponse:

    def find(conn: duckdb.DuckDBPyConnection) -> tuple | None:
        session = get_session(conn, session_id)
        if session is None:
            return None
        messages = list_messages(conn, session_id)
        return session, messages, list_citation_spans_in_session(conn, session_id)

    found = get_database().lookup(find)  # a snapshot that lacks it is not a 404
    if found is None:
        raise Http404(f"No session {session_id!r}")
    session, messages, spans = found
    # Cited evidence spans, marked and linked to their citation pages.
    cited = segments_by_message({m.index: m.text for m in messages}, spans)
    context = {
        "session": session,
        "messages": messages,
        "tool_calls": _tool_calls_by_id(messages),
        "cited": cited,
        "bodies": message_bodies(messages, cited),
    }
    return render(request, "viewer/sessions/detail.html", context)


@require_http_methods(["GET", "POST"])
def login(request: HttpRequest) -> HttpResponse:
    """The form on this page, POSTed with its CSRF token, sets the auth cookie, then redirects.

    Only a POST body is read for the token: a token in the query string would be kept in
    the browser's history and the server's access log, so `/login?token=…` just shows the
    form.
    """
    data = request.POST if request.method == "POST" else request.GET
    next_url = data.get("next") or reverse("viewer-dashboard")
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = reverse("viewer-dashboard")
    expected = settings.AXIOM_AUTH_TOKEN
    if not expected:
        return HttpResponseRedirect(next_url)
    candidate = request.POST.get("token") if request.method == "POST" else None
    if candidate is None:
        return render(request, "viewer/login.html", {"next": next_url, "error": None})
    if not token_matches(candidate, expected):
        context = {"next": next_url, "error": "That token is not valid."}
        return render(request, "viewer/login.html", context, status=401)
    response = HttpResponseRedirect(next_url)
    response.set_cookie(
        COOKIE_NAME,
        cookie_value(expected),
        max_age=LOGIN_COOKIE_MAX_AGE,
        httponly=True,
        samesite="Lax",
        secure=request.is_secure(),
    )
    return response
