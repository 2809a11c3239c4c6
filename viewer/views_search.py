"""The search page: hybrid search with each hit's score breakdown, tier and citation.

A plain GET form (`/search/?q=…&mode=…`); with htmx, typing fetches only the results
fragment and keeps the URL in step. Errors (empty query, no index yet, no model) are shown
on the page, never as a 500.
"""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from axiom.config import AxiomConfig
from axiom.retrieval.search import MODES, QueryError, SearchService, SearchUnavailable
from viewer.db import get_database
from viewer.views import _fragment_wanted

RESULTS = 20
_lock = threading.Lock()
_services: dict[Path, SearchService] = {}


def _service() -> SearchService:
    data_dir = Path(settings.AXIOM_DATA_DIR)
    with _lock:
        service = _services.get(data_dir)
        if service is None:
            get_database()  # migrated before the first read
            service = SearchService.from_config(AxiomConfig(data_dir=data_dir))
            _services[data_dir] = service
    return service


def reset() -> None:
    with _lock:
        for service in _services.values():
            service.close()
        _services.clear()


def search(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")
    mode = request.GET.get("mode", "hybrid")
    if mode not in MODES:
        mode = "hybrid"
    context: dict[str, object] = {"q": query, "mode": mode, "modes": MODES}
    if query.strip():
        try:
            context["result"] = _service().search(query, k=RESULTS, mode=mode)
        except (QueryError, SearchUnavailable) as exc:
            context["error"] = str(exc)
    template = "viewer/search.html"
    if _fragment_wanted(request):
        template += "#search-results"
    response = render(request, template, context)
    patch_vary_headers(response, ["HX-Request"])
    return response
