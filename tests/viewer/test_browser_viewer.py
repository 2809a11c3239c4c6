"""The viewer a person would open, in headless Chromium against a real server: search
from the dashboard as you type, open a hit, approve it, follow its citation to the
marked span; the build runs page with its charts; no page scrolls sideways at 390 px.

The server's data dir holds the sample session, processed and embedded (e5) before the
server starts, plus 30 synthetic sessions; one server serves the module (the approval
test certifies the decision, which no other test here depends on). Reuses the Chromium fixture of
`test_browser.py`, which fails on any request to another host or any JavaScript error.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.outbox.service import configured_writer
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.store.db import Database
from axiom.store.migrate import migrate
from tests.conftest import SAMPLE_SESSION
from tests.live_server import runserver
from tests.viewer import test_browser as browser
from tests.viewer.conftest import synthetic_transcript

page = browser.page  # Chromium, offline, JavaScript errors fail the test

pytestmark = pytest.mark.browser

SAMPLE_ID = "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57"
DECISION = "We will use DuckDB for the event store, with JSON columns (not JSONB)"
QUOTE = "Decision: we will use DuckDB for the event store, with JSON columns (not JSONB)."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One server for the module: processing and embedding the sample takes a while."""
    root = tmp_path_factory.mktemp("viewer")
    data = root / "server-data"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AXIOM_DATA_DIR", str(data))
        env.setenv("AXIOM_EMBEDDER", "e5")
        database = Database(data / "axiom.duckdb")
        migrate(database)
        import_paths(database, [SAMPLE_SESSION])
        ingest_transcripts(database, [synthetic_transcript(n) for n in range(30)])
        process_session(database, SAMPLE_ID, configured_pipeline())
        assert configured_writer(database).drain().remaining == 0
    with runserver(data, root / "runserver.log", AXIOM_EMBEDDER="e5") as base:
        yield base


def test_search_from_the_dashboard_to_the_cited_span(page, server: str, tmp_path: Path):
    from playwright.sync_api import expect

    page.goto(f"{server}/")
    box = page.get_by_label("Search your memories")
    box.press_sequentially("DuckDB event store", delay=40)
    hits = page.locator("#dashboard-results .search-hit")
    expect(hits.first).to_be_visible(timeout=30_000)
    first = hits.first
    expect(first.locator(".tier")).to_have_text(re.compile(r"^(high|suggested)$"))
    expect(first.locator(".snippet mark").first).to_have_text(
        re.compile(r"duckdb|event|store", re.IGNORECASE)
    )
    expect(first.locator(".hit-meta time")).to_have_text(re.compile(r"^\d{4}-\d{2}-\d{2}$"))
    expect(page).to_have_url(f"{server}/")  # results swapped in, no navigation
    page.screenshot(path=str(tmp_path / "dashboard-search.png"), full_page=True)

    page.locator("#dashboard-results .search-hit a.hit-title", has_text=DECISION).first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text(DECISION)

    page.get_by_label("Your name").fill("Ana")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator("#approval-result")).to_have_text("certified: approved by Ana")
    expect(page.locator("dl.facts .stage")).to_have_text("certified")

    page.locator("a.cite").first.click()
    expect(page).to_have_url(re.compile(r"/c/mem:[\w-]+/#cited$"))
    mark = page.locator("mark#cited")
    expect(mark).to_have_text(QUOTE)
    expect(mark).to_be_in_viewport()


def test_the_navigation_searches_on_every_page(page, server: str):
    from playwright.sync_api import expect

    page.goto(f"{server}/builds/")
    page.get_by_role("searchbox", name="Search memories").press_sequentially("JSONB", delay=40)
    expect(page.locator("#nav-results .search-hit").first).to_be_visible(timeout=30_000)
    page.get_by_role("searchbox", name="Search memories").press("Enter")  # the plain form
    expect(page).to_have_url(re.compile(r"/search/\?q=JSONB$"))
    expect(page.locator("#search-results .search-hit").first).to_be_visible()


def test_the_build_runs_page_draws_its_charts(page, server: str, tmp_path: Path):
    from playwright.sync_api import expect

    page.goto(f"{server}/")
    page.get_by_role("link", name="Builds", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Build runs")
    charts = page.locator("svg.chart[role=img]")
    expect(charts).to_have_count(4)
    expect(charts.first.locator("title").first).to_have_text("Build runs per day")
    expect(page.locator("svg.chart rect.bar").first).to_be_visible()
    expect(page.locator("table.runs tbody tr")).to_have_count(1)
    expect(page.locator("table.runs .run-status-success")).to_have_count(1)
    page.screenshot(path=str(tmp_path / "builds.png"), full_page=True)


def test_no_page_scrolls_sideways_at_390_px(page, server: str, tmp_path: Path):
    page.set_viewport_size({"width": 390, "height": 844})
    paths = [
        "/",
        "/search/?q=DuckDB+event+store",
        "/entries/",
        "/tasks/",
        "/sessions/",
        f"/sessions/{SAMPLE_ID}/",
        "/conflicts/",
        "/builds/",
    ]
    wide = {}
    for path in paths:
        page.goto(f"{server}{path}")
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide[path] = width
        name = path.strip("/").replace("/", "_").replace("?", "_") or "dashboard"
        page.screenshot(path=str(tmp_path / f"390-{name[:40]}.png"), full_page=True)
    assert wide == {}, f"pages wider than 390 px: {wide}"
