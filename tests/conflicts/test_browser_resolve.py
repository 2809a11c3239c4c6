"""Settling a conflict through the plain POST form in headless Chromium (real CSRF):
statuses change on the pages and in search ranking at once.

Reuses the runserver and Chromium fixtures of `tests/viewer/test_browser.py`; the
scripted sessions are processed into the server's data dir through the same lock the
server reads under, and search runs in-process over that DuckDB file with a LanceDB table
embedded by the retrieval tests' hashing embedder (statuses are read at query time).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from axiom.outbox.projector import OutboxProjector
from axiom.outbox.writer import OutboxWriter
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.store.projection import run_projector
from axiom.vectors.config import embedding_version_of
from axiom.vectors.lance_store import LanceStore
from tests.conflicts.support import Said, run_sessions
from tests.retrieval.conftest import HashEmbedder
from tests.viewer import test_browser as browser
from tests.viewer.conftest import synthetic_transcript

server = browser.server
page = browser.page
pytestmark = pytest.mark.browser


@pytest.fixture
def synthetic():  # noqa: ANN201 - the viewer fixture `server` needs, by name
    return synthetic_transcript


OLD = "Use Memcached as the session cache of the checkout service"
NEW = "Switched the session cache of the checkout service from Memcached to Redis"


def _ranking(db: Database, service: SearchService) -> list[tuple[str, str]]:
    hits = service.search("session cache checkout service", k=10, kinds=("entry",)).hits
    # An entry's summary is "[type] title".
    titles = [(h.summary.split("] ", 1)[-1], h.status) for h in hits]
    return [(title, status) for title, status in titles if title in (OLD, NEW)]


def test_resolving_through_the_form_changes_statuses_and_ranking(
    page, server: str, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    db = Database(tmp_path / "server-data" / "axiom.duckdb")
    run_sessions(db, tmp_path / "idris", {"old": [Said(OLD)], "new": [Said(NEW)]})
    embedder = HashEmbedder()
    store = LanceStore(tmp_path / "lance", embedding_version_of(embedder), embedder.dim)
    with db.write() as conn:
        run_projector(conn, OutboxProjector(store.embedding_version))
    assert OutboxWriter(db, store, embedder, batch_size=32).drain().remaining == 0
    service = SearchService(db, store, embedder)
    before = _ranking(db, service)
    assert {status for _, status in before} == {"contested"}

    page.goto(f"{server}/conflicts/")
    link = page.locator("table.open a").first
    expect(link).to_be_visible()
    link.click()
    expect(page.locator("section.memory")).to_have_count(2)
    expect(page.locator("section.side-older blockquote mark")).to_have_text(OLD)
    expect(page.locator("section.side-newer blockquote mark")).to_have_text(NEW)
    page.get_by_label("Keep the older memory").check()
    page.get_by_label("Note").fill("Redis was rolled back")
    page.get_by_role("button", name="Resolve").click()
    expect(page.locator("dd.resolution")).to_contain_text("keep_older")
    expect(page.locator("dd.resolution")).to_contain_text("Redis was rolled back")
    expect(page.locator("section.side-older .status")).to_have_text("active")
    expect(page.locator("section.side-newer .status")).to_have_text("superseded")
    page.screenshot(path=str(tmp_path / "conflict.png"), full_page=True)

    page.goto(f"{server}/conflicts/")
    expect(page.locator("table.resolved a")).to_have_count(1)
    page.locator("table.resolved a").first.click()
    expect(page).to_have_url(re.compile(r"/conflicts/cf_[0-9a-f]+/$"))

    after = _ranking(db, service)
    service.close()
    assert after[0] == (OLD, "active") and (NEW, "superseded") in after
    assert before != after
