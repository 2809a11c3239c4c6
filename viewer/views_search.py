"""The search page: hybrid search with each hit's score breakdown, tier and citation.

A plain GET form (`/search/?q=…&mode=…`); with htmx, typing fetches only the results
fragment and keeps the URL in step. Errors (empty query, no index yet, no model) are shown
on the page, never as a 500.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from axiom.retrieval.query import MODES, QueryError, SearchUnavailable
from config.stores import search_service
from viewer.rendering import render_page

RESULTS = 20


def search(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")
    mode = request.GET.get("mode", "hybrid")
    if mode not in MODES:
        mode = "hybrid"
    context: dict[str, object] = {"q": query, "mode": mode, "modes": MODES}
    if query.strip():
        try:
            with search_service() as service:
                context["result"] = service.search(query, k=RESULTS, mode=mode)
        except (QueryError, SearchUnavailable) as exc:
            context["error"] = str(exc)
    return render_page(request, "viewer/search.html", context, fragment="search-results")
