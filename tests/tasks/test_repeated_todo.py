"""A task restated as a plain TODO ("TODO: fix the login bug", "we still need to …") in a
later message is not a status report: it leaves an in-progress or blocked task where it
is, and a done task done, through the real pipeline (messages of one session, and later
sessions)."""

from __future__ import annotations

from pathlib import Path

from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database
from axiom.tasks.queries import list_blocked_tasks, list_tasks


def _run(db: Database, tmp_path: Path, sid: str, *said: tuple[str, str]) -> None:
    messages = tuple(Message(i, role, text) for i, (role, text) in enumerate(said))
    ingest_transcripts(db, [Transcript(sid, "shop", "json", messages)])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "work")
    assert process_session(db, sid, pipeline).status == "success"


def _tasks(db: Database) -> dict[str, str]:
    with db.read() as conn:
        return {t.title: t.status for t in list_tasks(conn, project="shop")}


def test_a_todo_in_a_later_message_keeps_the_task_in_progress(db: Database, tmp_path: Path) -> None:
    _run(
        db,
        tmp_path,
        "s1",
        ("user", "I'm fixing the login bug right now."),
        ("assistant", "Noted. TODO: fix the login bug"),
    )
    assert _tasks(db) == {"Fix the login bug": "in_progress"}


def test_a_todo_in_a_later_session_keeps_a_blocked_task_blocked_with_its_blocker(
    db: Database, tmp_path: Path
) -> None:
    _run(db, tmp_path, "s1", ("user", "The refund report is blocked by OPS-77."))
    _run(db, tmp_path, "s2", ("assistant", "TODO: refund report"))
    assert _tasks(db) == {"Refund report": "blocked"}
    with db.read() as conn:
        (blocked,) = list_blocked_tasks(conn, project="shop")
    assert any("OPS-77" in b.title or "OPS-77" in b.raw_text for b in blocked.blockers)


def test_a_todo_of_a_done_task_leaves_it_done_without_a_rejected_transition(
    db: Database, tmp_path: Path
) -> None:
    _run(db, tmp_path, "s1", ("user", "I'm working on the retry logic."))
    _run(db, tmp_path, "s2", ("user", "The retry logic is done."))
    assert _tasks(db) == {"Retry logic": "done"}
    _run(db, tmp_path, "s3", ("assistant", "TODO: retry logic"))
    assert _tasks(db) == {"Retry logic": "done"}
    with db.read() as conn:
        rejected = conn.execute(
            "SELECT count(*) FROM events WHERE event_type = 'task_transition_rejected'"
        ).fetchone()[0]
    assert rejected == 0


def test_a_todo_of_a_new_task_still_creates_it_pending(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "s1", ("assistant", "TODO: fix the login bug"))
    assert _tasks(db) == {"Fix the login bug": "pending"}
