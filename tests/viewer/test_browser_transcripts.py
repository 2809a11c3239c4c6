"""Transcripts in headless Chromium: Markdown renders inert, long messages fold, LoCoMo
speakers show by name.

The server (`tests.live_server.runserver`) reads a store holding one hostile transcript
(raw HTML, a `javascript:` link, an image, a bare URL, a code block, a 200 KB message) and
one small LoCoMo conversation imported from a file, exactly as `axiom import` would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import Database
from axiom.store.migrate import migrate
from tests.live_server import runserver
from tests.viewer import test_browser as browser

page = browser.page
pytestmark = pytest.mark.browser

HOSTILE = (
    "# Plan\n\nRead **the docs** at [the site](https://example.org/docs) or"
    " https://example.org/bare and <https://example.org/auto>.\n\n"
    "[click](javascript:window.__pwned=1) <img src=x onerror=window.__pwned=2>"
    " <script>window.__pwned=3</script> ![pic](https://example.org/p.png)\n\n"
    "```python\nprint('<b>kept</b>')\n```\n"
)
LONG = "A very long paste begins here. " + ("lorem ipsum dolor sit amet " * 7600)


def locomo_file(folder: Path) -> Path:
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {
                "speaker": "Caroline",
                "dia_id": "D1:1",
                "text": "Hey Mel, I went to a support group.",
            },
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "That sounds great, Caroline!"},
        ],
    }
    path = folder / "conv-demo.json"
    path.write_text(json.dumps({"sample_id": "demo", "conversation": conversation}))
    return path


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    data = tmp_path / "server-data"
    database = Database(data / "axiom.duckdb")
    migrate(database)
    messages = (
        Message(index=0, role="user", text=HOSTILE, timestamp="2025-01-01T00:00:00Z"),
        Message(index=1, role="assistant", text=LONG, timestamp="2025-01-01T00:01:00Z"),
        Message(index=2, role="assistant", text="Short and *plain*.", timestamp=None),
    )
    transcript = Transcript(
        session_id="hostile-1",
        project="demo",
        source="json",
        messages=messages,
        started_at="2025-01-01T00:00:00Z",
        title="Hostile transcript",
    )
    ingest_transcripts(database, [transcript])
    report = import_paths(database, [locomo_file(tmp_path)])
    assert report.sessions_new == 1, report
    with runserver(data, tmp_path / "runserver.log") as base:
        yield base


def test_markdown_renders_inert_and_long_messages_fold(page, server: str, tmp_path: Path):
    from playwright.sync_api import expect

    page.goto(f"{server}/sessions/hostile-1/")
    first = page.locator("#m-0 .text.md")
    expect(first.locator("h1")).to_have_text("Plan")
    expect(first.locator("strong")).to_have_text("the docs")
    links = first.locator("a")
    # The Markdown link, the bare URL, the autolink, and the image as a link to it.
    expect(links).to_have_count(4)
    expect(links.nth(3)).to_have_text("image: pic")
    for i in range(4):
        assert links.nth(i).get_attribute("rel") == "noopener noreferrer"
        assert links.nth(i).get_attribute("target") == "_blank"
        assert links.nth(i).get_attribute("href").startswith("https://example.org/")
    # Raw HTML, script and the javascript: link stay text; nothing ran; no image was loaded.
    expect(first).to_contain_text("<script>window.__pwned=3</script>")
    expect(first).to_contain_text("[click](javascript:window.__pwned=1)")
    assert first.locator("script, img, [onerror]").count() == 0
    assert page.evaluate("window.__pwned") is None
    expect(first.locator("pre code")).to_have_text("print('<b>kept</b>')\n")

    # The 200 KB message is folded behind a preview: the page stays short until opened.
    long = page.locator("#m-1 details.long-message")
    expect(long.locator("summary")).to_contain_text("A very long paste begins here.")
    expect(long.locator(".text.md")).to_be_hidden()
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 3000, height
    long.locator("summary").click()
    expect(long.locator(".text.md")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollHeight") > height
    expect(page.locator("#m-2 .text.md em")).to_have_text("plain")
    expect(page.locator("#m-2 details")).to_have_count(0)
    page.screenshot(path=str(tmp_path / "markdown.png"))


def test_locomo_speakers_show_by_name(page, server: str):
    from playwright.sync_api import expect

    page.goto(f"{server}/sessions/demo-session_1/")
    expect(page.locator("#m-0 .role")).to_have_text("Caroline")
    expect(page.locator("#m-1 .role")).to_have_text("Melanie")
    expect(page.locator("#m-1 .text")).to_contain_text("That sounds great, Caroline!")
