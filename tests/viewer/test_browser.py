"""End to end in headless Chromium against a real HTTP server.

The server is `tests.live_server.runserver` (`manage.py runserver --noreload --insecure`
in a subprocess): the settings have DEBUG off, and `--insecure` makes runserver serve
static files anyway, which is what this test needs (vendored htmx, CSS, Swagger UI). Its data dir is filled by importing the
sample session plus 30 synthetic ones before the server starts. Every request the page
makes to another host is aborted and reported, which proves the pages work offline.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.store.db import Database
from axiom.store.migrate import migrate
from tests.live_server import runserver

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SAMPLE_TITLE = "Event store on DuckDB, importer and first blocked task"


@pytest.fixture
def server(tmp_path: Path, sample_session: Path, synthetic) -> Iterator[str]:
    data = tmp_path / "server-data"
    database = Database(data / "axiom.duckdb")
    migrate(database)
    import_paths(database, [sample_session])
    ingest_transcripts(database, [synthetic(n) for n in range(30)])
    with runserver(data, tmp_path / "runserver.log") as base:
        yield base


@pytest.fixture
def page(server: str):
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium);"
            " `playwright install` cannot download browsers here"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        offsite: list[str] = []

        def only_local(route):  # noqa: ANN001 - playwright Route
            if route.request.url.startswith(server):
                route.continue_()
            else:
                offsite.append(route.request.url)
                route.abort()

        context.route("**/*", only_local)
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.on(
            "dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss())
        )
        yield tab
        browser.close()
    assert offsite == [], f"pages tried to reach other hosts: {offsite}"
    assert errors == [], f"JavaScript errors or dialogs: {errors}"


def test_browsing_sessions_in_chromium(page, server: str, tmp_path: Path):
    from playwright.sync_api import expect

    page.goto(f"{server}/sessions/")
    expect(page.get_by_role("link", name=SAMPLE_TITLE)).to_be_visible()
    assert page.evaluate("typeof window.htmx") == "object"
    assert page.evaluate("getComputedStyle(document.body).margin") == "0px"  # app.css loaded

    rows = page.locator("#session-rows tr:not(.pager)")
    expect(rows).to_have_count(25)
    page.get_by_role("link", name="Load more").click()
    expect(rows).to_have_count(31)  # htmx appended page 2 in place
    expect(page.get_by_role("link", name="Load more")).to_have_count(0)
    assert page.url == f"{server}/sessions/"
    page.screenshot(path=str(tmp_path / "sessions.png"), full_page=True)

    page.get_by_role("link", name=SAMPLE_TITLE).click()
    expect(page.get_by_role("heading", level=1)).to_have_text(SAMPLE_TITLE)
    expect(page.locator("li.msg")).to_have_count(12)
    bash = page.locator("#m-5 details.tool-call")
    expect(bash.locator("summary")).to_have_text("tool: Bash")
    expect(bash.locator("pre")).to_be_hidden()  # folded
    bash.locator("summary").click()
    expect(bash.locator("pre")).to_contain_text('"command": "python -m axiom migrate"')
    # Transcript markup is shown as text, never run.
    expect(page.locator("#m-11 .text")).to_contain_text("<script>alert(")
    assert page.locator("#m-11 script").count() == 0
    page.screenshot(path=str(tmp_path / "session.png"), full_page=True)


def test_api_docs_render_offline(page, server: str, tmp_path: Path):
    from playwright.sync_api import expect

    page.goto(f"{server}/api/docs")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Axiom")
    expect(page.locator(".opblock-summary-path").first).to_be_visible()
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any("/api/v1/sessions" in p for p in paths), paths
    page.screenshot(path=str(tmp_path / "docs.png"), full_page=True)
