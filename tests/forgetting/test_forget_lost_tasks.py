"""Forgetting the session that created a task also drops what kept sessions said of that
task (their task events no longer apply). Nothing of that goes silently: the forget plan
(the preview), the report and the CLI list each such task under the name the kept
sessions gave it, with those sessions; the kept sessions' own notes stay as entries."""

from __future__ import annotations

import json
from pathlib import Path

from django.urls import reverse

from axiom.entries.queries import list_entries
from axiom.extract.rules import RuleExtractor
from axiom.forgetting.forget import ForgetTarget, plan
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database
from tests.cli_support import run_cli


def _run(db: Database, tmp_path: Path, sid: str, text: str) -> None:
    ingest_transcripts(db, [Transcript(sid, "shop", "json", (Message(0, "user", text),))])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "work")
    assert process_session(db, sid, pipeline).status == "success"


def _sessions(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "made", "The refund report is blocked by OPS-77.")
    _run(db, tmp_path, "later", "Status: the refund report is still blocked.")
    _run(db, tmp_path, "other", "I'm working on the invoice retry logic.")


def test_the_preview_lists_a_task_kept_sessions_spoke_of(db: Database, tmp_path: Path) -> None:
    _sessions(db, tmp_path)
    with db.read() as conn:
        covered = plan(conn, ForgetTarget(session_id="made"))
    [lost] = covered.lost_tasks
    assert lost.titles == ["refund report"]  # as the kept session named it
    assert lost.session_ids == ["later"]
    assert lost.events >= 1


def test_the_cli_preview_and_report_list_it_and_the_kept_notes_stay(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    _sessions(db, tmp_path)
    asked = run_cli(data_dir, "forget", "--session", "made")  # no --yes, no terminal
    assert asked.returncode == 1
    assert "1 task(s) kept sessions spoke of: 'refund report' (later)" in asked.stderr

    done = run_cli(data_dir, "forget", "--session", "made", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    [lost] = json.loads(done.stdout)["lost_tasks"]
    assert (lost["titles"], lost["session_ids"]) == (["refund report"], ["later"])
    with db.read() as conn:
        assert [e.session_id for e in list_entries(conn, session_id="later")] == ["later"]


def test_forgetting_a_session_no_kept_session_followed_loses_no_task(
    db: Database, tmp_path: Path
) -> None:
    _sessions(db, tmp_path)
    with db.read() as conn:
        assert plan(conn, ForgetTarget(session_id="other")).lost_tasks == []
        assert plan(conn, ForgetTarget(session_id="later")).lost_tasks == []


def test_the_confirmation_page_lists_it(client, site: Database, tmp_path: Path) -> None:
    _sessions(site, tmp_path)
    page = client.get(reverse("viewer-forget"), {"session": "made"}).content.decode()
    assert '<ul class="lost-tasks">' in page and "refund report — later" in page
    other = client.get(reverse("viewer-forget"), {"session": "other"}).content.decode()
    assert "lost-tasks" not in other
