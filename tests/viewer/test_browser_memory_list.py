"""The memory browser in headless Chromium: typing filters the rows live (htmx, URL kept in
step), the sort select reorders them, and a decision said in three sessions is one row
whose members open from its count."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from axiom.store.db import Database
from axiom.store.migrate import migrate
from tests.live_server import runserver
from tests.viewer import test_browser as browser
from tests.viewer.test_memory_list import said_in_sessions

page = browser.page
pytestmark = pytest.mark.browser

SAID = {
    "s1": ["Decision: we will use DuckDB for the event store.", "Decision: we deploy on Fridays."],
    "s2": ["Decision: we will use DuckDB for the event store."],
    "s3": ["Decision: we will use DuckDB for the event store.", "Decision: keep all logs."],
}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    data = tmp_path / "server-data"
    database = Database(data / "axiom.duckdb")
    migrate(database)
    said_in_sessions(database, SAID)
    with runserver(data, tmp_path / "runserver.log") as base:
        yield base


def row_titles(tab) -> list[str]:  # noqa: ANN001 - playwright Page
    return [t.strip() for t in tab.locator("td.memory-text > a").all_inner_texts()]


def test_the_memory_list_filters_sorts_and_groups(page, server: str) -> None:
    page.goto(f"{server}/entries/")
    titles = row_titles(page)
    assert len(titles) == 3 and titles.count("We will use DuckDB for the event store") == 1
    group = page.locator("tr.memory.group")
    assert group.locator(".count").inner_text() == "×3"
    members = group.locator("details.members li")
    assert not members.first.is_visible()
    group.locator("summary").click()
    assert members.count() == 3 and members.first.is_visible()

    page.fill("#memory-q", "friday")  # no submit: htmx fetches after the pause
    expect(page.locator("tr.memory")).to_have_count(1)
    assert row_titles(page) == ["We deploy on Fridays"]
    assert "q=friday" in page.url

    page.fill("#memory-q", "")
    expect(page.locator("tr.memory")).to_have_count(3)
    newest = row_titles(page)
    page.select_option("select[name=sort]", "oldest")
    page.wait_for_url("**sort=oldest**")
    expect(page.locator("td.memory-text > a").first).not_to_have_text(newest[0])
    assert row_titles(page)[0] == "We will use DuckDB for the event store"
    assert row_titles(page)[-1] == newest[0] == "Keep all logs"

    page.select_option("select[name=dups]", "each")
    expect(page.locator("tr.memory")).to_have_count(5)
