"""`axiom.ingest_path` through a real broker and worker: the ingest appends, the writer's
`axiom.project` (chained by the task) fills the session tables, and a repeat is a no-op."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from axiom.ingest.formats import parse_file
from axiom.ingest.session_queries import get_session, list_messages, list_sessions
from axiom.observability.stats import collect_stats
from axiom.store.db import Database
from axiom.store.migrate import open_database
from axiom.tasks.queries import list_tasks

Waiter = Callable[..., Any]
Counter = Callable[[Database], dict[str, int]]


def test_it_ingests_a_file_sent_through_the_broker(
    celery_app: Celery, worker: object, sample_session: Path, wait_for: Waiter, counts: Counter
) -> None:
    (transcript,) = parse_file(sample_session).transcripts

    report = celery_app.send_task("axiom.ingest_path", args=[str(sample_session)]).get(timeout=30)

    assert report == {
        "files": 1,
        "sessions_new": 1,
        "sessions_unchanged": 0,
        "sessions_merged": 0,
        "sessions_extended": 0,
        "messages": len(transcript.messages),
        "messages_added": len(transcript.messages),
        "issues": [],
        "issue_count": 0,
    }
    db = open_database()
    # The ingest task only appends; the rows appear once the writer has projected.
    wait_for(lambda: counts(db)["sessions"] == 1)
    with db.read() as conn:
        page = list_sessions(conn)
        session = get_session(conn, transcript.session_id)
        messages = list_messages(conn, transcript.session_id)
    assert [s.session_id for s in page.sessions] == [transcript.session_id]
    assert session is not None
    assert session.message_count == len(transcript.messages)
    assert [m.text for m in messages] == [m.text for m in transcript.messages]


def test_it_leaves_counts_unchanged_when_the_same_file_is_sent_twice(
    celery_app: Celery, worker: object, sample_session: Path, wait_for: Waiter, counts: Counter
) -> None:
    (transcript,) = parse_file(sample_session).transcripts
    sid = transcript.session_id
    celery_app.send_task("axiom.ingest_path", args=[str(sample_session)]).get(timeout=30)
    # The ingest chains the memory pipeline; run it explicitly too and wait (idempotent).
    first = celery_app.send_task("axiom.process_session", args=[sid]).get(timeout=60)
    db = open_database()
    wait_for(lambda: counts(db)["sessions"] == 1)
    celery_app.send_task("axiom.project").get(timeout=30)
    before = counts(db)

    again = celery_app.send_task("axiom.ingest_path", args=[str(sample_session)]).get(timeout=30)
    rerun = celery_app.send_task("axiom.process_session", args=[sid]).get(timeout=60)
    # Whatever projection the repeat chained has nothing new to apply.
    projected = celery_app.send_task("axiom.project").get(timeout=30)

    assert first["status"] == rerun["status"] == "success"
    assert rerun["entries"] == 0  # the rerun found its build done and skipped
    assert {k: again[k] for k in ("sessions_new", "sessions_unchanged", "messages_added")} == {
        "sessions_new": 0,
        "sessions_unchanged": 1,
        "messages_added": 0,
    }
    assert again["issues"] == [] and again["issue_count"] == 0
    assert "sessions" in projected and not any(projected.values())
    assert counts(db) == before
    assert before["events"] > 1  # session_ingested plus the pipeline's events
    with db.read() as conn:
        assert collect_stats(conn)["entries"] > 0


ORDER_SESSIONS = sorted(
    (Path(__file__).resolve().parents[1] / "pipeline" / "data" / "todo_sessions").glob("*.jsonl")
)


def test_a_folder_sent_through_the_broker_is_processed_oldest_first(
    celery_app: Celery,
    worker: object,
    tmp_path: Path,
    wait_for: Waiter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")  # no model load in the worker thread
    # Three sessions (1-3 March, see tests/pipeline/test_order.py), the newest under the
    # file name that sorts first: the file order is newest first.
    folder = tmp_path / "src" / "-home-dev-shop"
    folder.mkdir(parents=True)
    for name, source in zip("cba", ORDER_SESSIONS, strict=True):
        shutil.copy(source, folder / f"{name}.jsonl")
    session_ids = [json.loads(p.read_text().splitlines()[0])["sessionId"] for p in ORDER_SESSIONS]

    report = celery_app.send_task("axiom.ingest_path", args=[str(folder.parent)]).get(timeout=30)

    assert report["sessions_new"] == 3
    db = open_database()

    def finished() -> list[str]:
        with db.read() as conn:
            rows = conn.execute(
                "SELECT session_id FROM events WHERE event_type = 'build_finished'"
                " ORDER BY ts, event_id"
            ).fetchall()
        return [r[0] for r in rows] if len(rows) == 3 else []

    assert wait_for(finished, timeout=90) == session_ids  # oldest first
    with db.read() as conn:
        assert {(t.title, t.status) for t in list_tasks(conn)} == {
            ("Publish the package", "done"),
            ("Write the release notes", "done"),
        }
