"""`axiom.ingest_path` through a real broker and worker: the ingest appends, the writer's
`axiom.project` (chained by the task) fills the session tables, and a repeat is a no-op."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from celery import Celery

from axiom.cli import open_database
from axiom.ingest.formats import parse_file
from axiom.ingest.session_queries import get_session, list_messages, list_sessions
from axiom.observability.stats import collect_stats
from axiom.store.db import Database

Waiter = Callable[..., Any]
Counter = Callable[[Database], dict[str, int]]


def test_it_ingests_a_file_sent_through_the_broker(
    celery_app: Celery, worker: object, sample_session: Path, wait_for: Waiter, counts: Counter
) -> None:
    (transcript,) = parse_file(sample_session).transcripts

    report = celery_app.send_task("axiom.ingest_path", args=[str(sample_session)]).get(timeout=30)

    assert report == {"sessions_new": 1, "sessions_unchanged": 0, "issues": []}
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
    assert again == {"sessions_new": 0, "sessions_unchanged": 1, "issues": []}
    assert "sessions" in projected and not any(projected.values())
    assert counts(db) == before
    assert before["events"] > 1  # session_ingested plus the pipeline's events
    with db.read() as conn:
        assert collect_stats(conn)["entries"] > 0
