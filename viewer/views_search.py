"""The search page, and the live results of the search boxes in the navigation and on the
dashboard.

A plain GET form (`/search/?q=…&mode=…`); with htmx, typing fetches only a results
fragment: the page's own (`search-results`, with score breakdowns) or, for a search box
elsewhere (`HX-Target` names its results box), the short `quick-results`. Which hits are
shown is the core's one rule (`axiom.retrieval.confidence.relevance`): those that clear
it. When none does, the page says so and still shows the `CLOSEST` best weaker matches,
labelled as such: the top hit of a plainly worded question is often the answer with a
match just under the bar, and a page that shows nothing hides it. The rest of the weaker
matches are a link away (`?all=1`).
Errors (empty query, no index yet, no model) are shown on the page, never as a 500.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from axiom.retrieval.confidence import SET_ASIDE, clears, relevance
from axiom.retrieval.query import MODES, QueryError, SearchUnavailable
from axiom.retrieval.results import SearchHit, SearchResult
from config.stores import search_service
from viewer.rendering import render_page

RESULTS = 20
CLOSEST = 3  # weaker matches shown when none clears the relevance rule
QUICK_TARGETS = frozenset({"nav-results", "dashboard-results"})


def _shown(result: SearchResult, everything: bool) -> tuple[list[dict[str, object]], int, bool]:
    """The hits to show, each with its relevance; how many weaker ones were left out; and
    whether the hits shown are only the closest weaker ones (none cleared the rule)."""
    kept: list[SearchHit] = [h for h in result.hits if everything or clears(h)]
    closest = not kept and bool(result.hits)
    if closest:  # a memory set aside (superseded, deprecated) is no answer, even a weak one
        kept = [h for h in result.hits if h.status not in SET_ASIDE][:CLOSEST]
    rows = [{"hit": h, "relevance": relevance(h)} for h in kept]
    return rows, len(result.hits) - len(kept), closest


def search(request: HttpRequest) -> HttpResponse:
    query = request.GET.get("q", "")
    mode = request.GET.get("mode", "hybrid")
    if mode not in MODES:
        mode = "hybrid"
    everything = request.GET.get("all") == "1"
    context: dict[str, object] = {"q": query, "mode": mode, "modes": MODES, "all": everything}
    if query.strip():
        try:
            with search_service() as service:
                result = service.search(query, k=RESULTS, mode=mode)
        except (QueryError, SearchUnavailable) as exc:
            context["error"] = str(exc)
        else:
            context["result"] = result
            context["rows"], context["weaker"], context["closest"] = _shown(result, everything)
    quick = request.htmx and request.htmx.target in QUICK_TARGETS
    fragment = "quick-results" if quick else "search-results"
    return render_page(request, "viewer/search.html", context, fragment=fragment)
