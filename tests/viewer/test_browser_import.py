"""The import page in headless Chromium: upload a transcript, watch the htmx-polled status
reach its summary; a path outside `AXIOM_IMPORT_ROOTS` is refused on the page.

The server is `runserver` in a subprocess, the worker a real Celery worker on a real broker
(tests/queue/conftest.py), both over the same data dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.ingest.formats import parse_file
from axiom.service.broker import Broker
from tests.live_server import runserver
from tests.queue.conftest import (  # noqa: F401 - a real broker and worker
    broker,
    celery_app,
    worker,
)
from tests.viewer import test_browser as browser

page = browser.page
pytestmark = pytest.mark.browser


@pytest.fixture
def server(
    tmp_path: Path,
    data_dir: Path,
    broker: Broker,  # noqa: F811 - the fixture imported above
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[str]:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")  # the worker's: no model needed here
    roots = tmp_path / "roots"
    roots.mkdir()
    with runserver(
        data_dir,
        tmp_path / "runserver.log",
        AXIOM_BROKER_URL=broker.url,
        AXIOM_IMPORT_ROOTS=str(roots),
        AXIOM_EMBEDDER="none",
    ) as base:
        yield base


@pytest.mark.usefixtures("worker")
def test_an_uploaded_file_is_imported_and_its_summary_shown(
    page, server: str, sample_session: Path, tmp_path: Path
) -> None:
    (transcript,) = parse_file(sample_session).transcripts
    upload = tmp_path / "mine.jsonl"
    upload.write_bytes(sample_session.read_bytes() + b"{broken line\n")
    page.goto(f"{server}/import/")
    page.set_input_files('input[name="file"]', str(upload))
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/import/*/")
    page.get_by_text("Import finished").wait_for(timeout=60_000)  # swapped in by htmx
    assert page.locator("meta[http-equiv=refresh]").count() == 0
    cell = page.locator("td[data-k]")
    values = dict(
        zip(
            cell.evaluate_all("cs => cs.map(c => c.dataset.k)"), cell.all_inner_texts(), strict=True
        )
    )
    assert values["sessions_new"] == "1" and values["sessions_merged"] == "0"
    assert values["messages_added"] == str(len(transcript.messages))
    assert "1 problem(s)" in page.inner_text("#import-progress")
    page.click('#import-progress a[href="/sessions/"]')
    page.wait_for_url(f"{server}/sessions/")
    assert page.locator(f'a[href="/sessions/{transcript.session_id}/"]').count() >= 1


def test_a_path_outside_the_roots_is_refused_on_the_page(page, server: str) -> None:
    page.goto(f"{server}/import/")
    page.fill('input[name="path"]', "/etc/passwd")
    page.click("button[type=submit]")
    alert = page.locator('[role="alert"]')
    assert "outside the import roots" in alert.inner_text()
    assert page.url == f"{server}/import/"
