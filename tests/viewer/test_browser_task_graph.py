"""The project blocker graph and task actions in headless Chromium.

The store holds tasks from the task resolver (as the pipeline makes them): one blocked by
another task, a ticket (PLAT-142), a URL and a condition. The test opens the graph, follows
a node, marks a task done through the page's form, and checks the status survives a
rebuild of the task projection.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.store.db import Database
from axiom.store.migrate import migrate
from axiom.store.projection import rebuild
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.projector import TaskProjector
from axiom.tasks.queries import get_task
from axiom.tasks.resolver import TaskMention, TaskResolver
from tests.live_server import runserver
from tests.viewer import test_browser as browser

page = browser.page
pytestmark = pytest.mark.browser

LONG = "Publish the package to the internal index once the signing key is rotated everywhere"
URL = "https://status.example.org/incidents/77"


def tid(title: str) -> str:
    return entity_id_for(task_key("axiom", title))


@pytest.fixture
def store(tmp_path: Path) -> Database:
    database = Database(tmp_path / "server-data" / "axiom.duckdb")
    migrate(database)
    mentions = [
        TaskMention("e1", "s1", "Rotate the signing key", "in_progress"),
        TaskMention(
            "e2",
            "s1",
            LONG,
            "blocked",
            blocked_by=("Rotate the signing key", "PLAT-142", URL, "waiting on legal review"),
            evidence_aligned=True,
        ),  # fmt: skip
    ]
    with database.write() as conn:
        TaskResolver(conn, "axiom").resolve(mentions)
    return database


@pytest.fixture
def server(tmp_path: Path, store: Database) -> Iterator[str]:
    with runserver(tmp_path / "server-data", tmp_path / "runserver.log") as base:
        yield base


def test_the_project_graph_links_every_node(page, server: str, store: Database, tmp_path: Path):
    from playwright.sync_api import expect

    page.goto(f"{server}/tasks/")
    page.get_by_role("link", name="Blocker graph →").click()
    nodes = page.locator("figure.graph svg g.node")
    expect(nodes).to_have_count(5)
    assert page.locator("figure.graph svg g.node a").count() == 5  # every node is a link
    expect(page.locator("svg .edge")).to_have_count(4)
    blocked = page.locator(f'g.node[data-id="{tid(LONG)}"]')
    assert "status-blocked" in blocked.get_attribute("class")
    # The long title wraps onto two lines, and its <title> has all of it.
    assert blocked.locator("tspan").count() == 2
    expect(blocked.locator("title")).to_have_text(f"task · blocked: {LONG}")
    url_link = page.locator(f'svg a[href="{URL}"]')
    assert url_link.get_attribute("rel") == "noopener noreferrer"
    assert page.locator('svg a[href="/search/?q=PLAT-142"]').count() == 1

    before = page.evaluate(
        "document.querySelector('figure.graph svg').getBoundingClientRect().width"
    )
    page.get_by_role("button", name="Zoom in").click()
    after = page.evaluate(
        "document.querySelector('figure.graph svg').getBoundingClientRect().width"
    )
    assert after > before * 1.2
    page.screenshot(path=str(tmp_path / "graph.png"), full_page=True)

    page.locator(f'g.node[data-id="{tid("Rotate the signing key")}"] a').click()
    expect(page).to_have_url(re.compile(rf"/tasks/{tid('Rotate the signing key')}/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Rotate the signing key")

    # Mark it done through the form (htmx posts it; the page follows the redirect).
    page.get_by_label("Your name").fill("Ana")
    page.get_by_role("button", name="Mark done").click()
    expect(page.locator("dl.facts .task-status")).to_have_text("done")
    expect(page.locator("table.history")).to_contain_text("person:Ana")

    with store.write() as conn:
        rebuild(conn, [TaskProjector()])
        assert get_task(conn, tid("Rotate the signing key")).task.status == "done"
    page.reload()
    expect(page.locator("dl.facts .task-status")).to_have_text("done")

    # Link a ticket from the page: the graph thumbnail gains the artifact, as a search link.
    page.get_by_role("textbox", name="Blocked by").fill("#412")
    page.get_by_role("button", name="Link blocker").click()
    expect(page.locator("dl.facts .task-status")).to_have_text("done")  # closed: a suggestion
