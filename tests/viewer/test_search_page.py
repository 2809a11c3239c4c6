"""The search page: results with score breakdowns, tiers and citation links; errors shown
on the page; the htmx fragment; transcript text escaped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.urls import reverse

from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.outbox.service import configured_writer
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.retrieval.confidence import relevance
from config import stores
from viewer import views_search

XSS = "Decision: we will show <script>alert('x')</script> as plain text in search."


@pytest.fixture
def searchable(site, sample_session: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    (sid,) = import_paths(site, [sample_session]).session_ids
    xss = Transcript("xss", "p", "markdown", (Message(index=0, role="user", text=XSS),))
    ingest_transcripts(site, [xss])
    for session_id in (sid, "xss"):
        process_session(site, session_id, configured_pipeline())
    assert configured_writer(site).drain().remaining == 0
    stores.reset()
    yield sid
    stores.reset()


def test_the_page_lists_hits_with_breakdown_and_citation_links(client, searchable) -> None:
    page = client.get(reverse("viewer-search"), {"q": "publish blocked"}).content.decode()
    assert "score breakdown" in page and "lexical_own" in page and "dense_ctx" in page
    assert 'class="citation" href="/c/mem:' in page


def test_message_citations_open_on_the_citation_page(client, searchable) -> None:
    page = client.get(reverse("viewer-search"), {"q": "publish blocked", "mode": "fts"})
    html = page.content.decode()
    start = html.index('class="citation" href="') + len('class="citation" href="')
    url = html[start : html.index('"', start)]
    cited = client.get(url)
    assert cited.status_code == 200 and "<mark" in cited.content.decode()


def test_htmx_gets_only_the_results(client, searchable) -> None:
    fragment = client.get(reverse("viewer-search"), {"q": "publish"}, HTTP_HX_REQUEST="true")
    text = fragment.content.decode()
    assert "search-hit" in text and "<nav" not in text


def test_transcript_text_is_escaped(client, searchable) -> None:
    page = client.get(reverse("viewer-search"), {"q": "plain text in search"}).content.decode()
    assert "<script>alert(" not in page and "&lt;script&gt;" in page


def test_errors_are_shown_on_the_page(client, site, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    stores.reset()
    empty = client.get(reverse("viewer-search"))
    missing = client.get(reverse("viewer-search"), {"q": "anything"})
    stores.reset()
    assert empty.status_code == 200 and "search-hit" not in empty.content.decode()
    assert missing.status_code == 200 and "outbox drain" in missing.content.decode()


def test_a_message_citation_page_names_the_session_not_a_memory(client, site) -> None:  # noqa: ANN001
    from axiom.evidence.citations import message_citations
    from axiom.projections import project_all

    hello = Transcript("s", "p", "markdown", (Message(index=0, role="user", text="hello world"),))
    ingest_transcripts(site, [hello])
    project_all(site)
    with site.read() as conn:
        citation_id = message_citations(conn, [("s", 0)])[("s", 0)]
    page = client.get(reverse("viewer-citation", args=[citation_id])).content.decode()
    assert '<mark id="cited">hello world</mark>' in page
    assert "the whole message" in page and "/entries/None/" not in page


# --- the search boxes, snippets and the relevance rule -------------------------------------


def test_every_page_has_a_plain_search_form(client, site) -> None:  # noqa: ANN001
    for name in ("viewer-dashboard", "viewer-sessions", "viewer-builds"):
        page = client.get(reverse(name)).content.decode()
        assert 'class="nav-search" method="get" action="/search/"' in page
        assert 'name="q"' in page
    dashboard = client.get(reverse("viewer-dashboard")).content.decode()
    assert 'class="dashboard-search" method="get" action="/search/"' in dashboard


def test_the_plain_form_answers_a_whole_page_with_marked_snippets(client, searchable) -> None:
    page = client.get(reverse("viewer-search"), {"q": "DuckDB event store"}).content.decode()
    assert "<nav" in page and "search-hit" in page
    assert '<p class="snippet">' in page and "<mark>DuckDB</mark>" in page
    assert 'class="tier tier-high"' in page or 'class="tier tier-suggested"' in page
    assert 'class="tier tier-none"' not in page  # weaker hits wait behind a link


def test_a_search_box_elsewhere_gets_the_short_fragment(client, searchable) -> None:
    fragment = client.get(
        reverse("viewer-search"),
        {"q": "DuckDB event store"},
        HTTP_HX_REQUEST="true",
        HTTP_HX_TARGET="dashboard-results",
    ).content.decode()
    assert "search-hit" in fragment and "<details" not in fragment
    assert "All results with score breakdowns" in fragment and "<nav" not in fragment


def test_nothing_relevant_is_said_and_the_closest_weaker_matches_shown(client, searchable) -> None:
    """When no hit clears the relevance rule the page says so, shows the closest few,
    labelled weaker (a plainly worded question's answer is often just under the bar),
    and links to the rest."""
    query = {"q": "zebra quokka saxophone"}
    page = client.get(reverse("viewer-search"), query).content.decode()
    assert "Nothing relevant found for “zebra quokka saxophone”. The closest" in page
    shown = page.count('class="search-hit"')
    assert 1 <= shown <= views_search.CLOSEST
    assert page.count('class="tier tier-none"') == shown
    assert 'class="tier tier-high"' not in page and 'class="tier tier-suggested"' not in page
    weaker = client.get(reverse("viewer-search"), {**query, "all": "1"}).content.decode()
    total = weaker.count('class="search-hit"')
    assert total >= shown
    if total > shown:
        link = (
            'class="weaker" href="/search/?q=zebra%20quokka%20saxophone&amp;mode=hybrid&amp;all=1"'
        )
        assert link in page and f"show all {total}" in page


def test_the_tier_shown_is_the_core_rule_and_its_number_the_match(client, searchable) -> None:
    """A hit once read "high" beside a score of 0.000: the score was the rank score, relative
    to the result set. The number beside the tier is now the match the tier comes from."""
    with stores.search_service() as service:
        result = service.search("DuckDB event store", k=20)
    page = client.get(reverse("viewer-search"), {"q": "DuckDB event store", "all": "1"})
    html = page.content.decode()
    for hit in result.hits:
        shown = f'<span class="tier tier-{relevance(hit)}" title="confidence tier (match {hit.match:.2f})">'
        assert shown in html
    assert "rank score" in html and "relative to this result set" in html


def test_snippets_escape_before_marking(client, searchable) -> None:
    page = client.get(reverse("viewer-search"), {"q": "script alert plain text"}).content.decode()
    assert "<script>alert(" not in page
    assert "&lt;<mark>script</mark>&gt;<mark>alert</mark>" in page


def test_items_not_embedded_yet_are_announced_above_the_hits(client, site, searchable) -> None:  # noqa: ANN001
    quiet = client.get(reverse("viewer-search"), {"q": "publish blocked"}).content.decode()
    assert 'id="search-unindexed"' not in quiet
    later = Transcript("later", "p", "markdown", (Message(index=0, role="user", text=XSS),))
    ingest_transcripts(site, [later])
    process_session(site, "later", configured_pipeline())
    stores.reset()  # a fresh service reads the count at once (a warm one waits 2 s)
    page = client.get(reverse("viewer-search"), {"q": "publish blocked"}).content.decode()
    assert 'id="search-unindexed"' in page and "not searchable yet" in page
    assert "search-hit" in page  # what is indexed is still found
