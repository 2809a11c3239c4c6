"""The dashboard offers to import Claude Code's transcripts when the store is empty: a
CSRF-protected POST that reads only what sits inside the Claude projects folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from tests.agent.support import SAMPLE, SAMPLE_SESSION

BUTTON = "Import your Claude Code transcripts"


@pytest.fixture
def claude_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """CLAUDE_CONFIG_DIR with the sample in its projects folder, plus a symlinked transcript
    that points outside the folder (which must not be read)."""
    config = tmp_path / "claude"
    folder = config / "projects" / SAMPLE.parent.name
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    outside = tmp_path / "elsewhere" / "secret.jsonl"
    outside.parent.mkdir()
    outside.write_text(
        SAMPLE.read_text(encoding="utf-8").replace(SAMPLE_SESSION, "outside-session"),
        encoding="utf-8",
    )
    (folder / "linked.jsonl").symlink_to(outside)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config))
    return config


def _sessions(db) -> list[str]:  # type: ignore[no-untyped-def]
    with db.read() as conn:
        return [r[0] for r in conn.execute("SELECT session_id FROM sessions").fetchall()]


def test_an_empty_store_offers_the_import_and_a_full_one_does_not(client, site, make_sessions):
    page = client.get(reverse("viewer-dashboard")).content.decode()
    assert BUTTON in page and "csrfmiddlewaretoken" in page
    make_sessions(1)
    assert BUTTON not in client.get(reverse("viewer-dashboard")).content.decode()


def test_the_import_needs_a_post_with_the_csrf_token(site, claude_dir):
    browser = Client(enforce_csrf_checks=True)
    url = reverse("viewer-import-claude")
    assert browser.get(url).status_code == 405
    assert browser.post(url).status_code == 403
    assert _sessions(site) == []
    browser.get(reverse("viewer-dashboard"))
    token = browser.cookies["csrftoken"].value
    done = browser.post(url, {"csrfmiddlewaretoken": token})
    assert done.status_code == 200
    page = done.content.decode()
    assert "1 new session(s)" in page and BUTTON not in page
    assert "1 link(s) out of the folder skipped" in page
    assert _sessions(site) == [SAMPLE_SESSION]  # the symlink out of the folder was not read
    again = browser.post(url, {"csrfmiddlewaretoken": token})
    assert "0 new session(s), 1 unchanged" in again.content.decode()
    assert _sessions(site) == [SAMPLE_SESSION]


def test_no_transcripts_says_where_it_looked(client, site, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "nothing-here"))
    page = client.post(reverse("viewer-import-claude")).content.decode()
    assert "no Claude Code transcripts found under" in page and BUTTON in page
