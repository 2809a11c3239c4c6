"""Memories end to end in headless Chromium: browse, filter with htmx, open an entry,
approve it through the htmx form (real CSRF checks), open a citation and see the mark.

Reuses the runserver and Chromium fixtures of `test_browser.py`. The server's data dir
holds the imported sample session; the test runs the pipeline over it through the same
cross-process lock the server reads under, then browses the result.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.store.db import Database
from tests.viewer import test_browser as browser

# The runserver and Chromium fixtures of test_browser.py, made available here by name.
server = browser.server
page = browser.page

pytestmark = pytest.mark.browser

SAMPLE_ID = "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57"
DECISION = "We will use DuckDB for the event store, with JSON columns (not JSONB)"
QUOTE = "Decision: we will use DuckDB for the event store, with JSON columns (not JSONB)."


@pytest.fixture
def processed(server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    data = tmp_path / "server-data"  # where `server` put its database
    monkeypatch.setenv("AXIOM_DATA_DIR", str(data))
    process_session(Database(data / "axiom.duckdb"), SAMPLE_ID, configured_pipeline())
    return server


def test_from_the_memory_browser_to_the_cited_span(page, processed: str, tmp_path: Path):
    from playwright.sync_api import expect

    base = processed
    page.goto(f"{base}/entries/")
    rows = page.locator("#entry-rows tr.memory")
    expect(rows).to_have_count(10)  # 13 memories, three of them said twice: grouped
    expect(page.get_by_role("link", name="Memories")).to_have_attribute("aria-current", "page")

    # The stage select drives htmx: only the rows change, and the URL follows.
    page.locator("select[name=stage]").select_option("verified")
    expect(rows).to_have_count(10)  # the TodoWrite tasks too: their list is in the text
    expect(page).to_have_url(re.compile(r"/entries/\?stage=verified"))
    expect(page.locator("#entry-rows .stage-raw")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "entries.png"), full_page=True)

    page.get_by_role("link", name=DECISION).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(DECISION)
    expect(page.locator("ol.timeline li")).to_have_count(6)

    # Approve through the htmx form: the entry is swapped in place, certified.
    page.get_by_label("Your name").fill("Ana")
    page.get_by_role("button", name="Approve").click()
    expect(page.locator("#approval-result")).to_have_text("certified: approved by Ana")
    expect(page.locator("dl.facts .stage")).to_have_text("certified")
    expect(page.locator("ol.timeline li.ev-entry_approved")).to_contain_text("approved by Ana")
    expect(page).to_have_url(re.compile(r"/entries/ent_[0-9a-f]+/$"))  # swapped, not navigated
    page.screenshot(path=str(tmp_path / "entry.png"), full_page=True)

    page.locator("a.cite").first.click()
    expect(page).to_have_url(re.compile(r"/c/mem:[\w-]+/#cited$"))
    mark = page.locator("mark#cited")
    expect(mark).to_have_text(QUOTE)
    expect(mark).to_be_in_viewport()
    assert page.evaluate("getComputedStyle(document.getElementById('cited')).backgroundColor") != (
        "rgba(0, 0, 0, 0)"
    )
    page.screenshot(path=str(tmp_path / "citation.png"), full_page=True)

    # The session page marks the same span and links it back to its citation.
    page.get_by_role("link", name=SAMPLE_ID).click()
    expect(page.locator("#m-1 mark")).to_have_text(QUOTE)

    page.goto(f"{base}/tasks/blocked/")
    page.get_by_role("link", name="Publish the package to the internal index").click()
    expect(page.locator("figure.graph svg g.node")).to_have_count(2)
    page.screenshot(path=str(tmp_path / "task.png"), full_page=True)
