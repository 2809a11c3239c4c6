"""The search page: hybrid search with each hit's score breakdown, tier and citation.

A plain GET form (`/search/?q=…&mode=…`); with htmx, typing fetches only the results
fragment and keeps the URL in step. Errors (empty query, no index yet, no model) are shown
on the page, never as a 500.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from axiom.retrieval.query import MODES, QueryError, SearchUnavailable
from config.stores import get_search_service
from viewer.views import _fragment_wanted

RESULTS = 20


def search(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")
    mode = request.GET.get("mode", "hybrid")
    if mode not in MODES:
        mode = "hybrid"
    context: dict[str, object] = {"q": query, "mode": mode, "modes": MODES}
    if query.strip():
        try:
            context["result"] = get_search_service().search(query, k=RESULTS, mode=mode)
        except (QueryError, SearchUnavailable) as exc:
            context["error"] = str(exc)
    template = "viewer/search.html"
    if _fragment_wanted(request):
        template += "#search-results"
    response = render(request, template, context)
    patch_vary_headers(response, ["HX-Request"])
    return response
