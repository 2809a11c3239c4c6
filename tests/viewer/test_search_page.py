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
from config import stores

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
