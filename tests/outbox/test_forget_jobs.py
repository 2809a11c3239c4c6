"""`forget_jobs`: the jobs of forgotten sessions, entries and tasks leave the outbox; an id
that merely starts like a forgotten one (`s1` and `s10`) keeps its jobs; a kept rename of
a forgotten task queues no job again on replay."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb

from axiom.config import AxiomConfig
from axiom.extract.rules import RuleExtractor
from axiom.forgetting.forget import ForgetTarget, forget
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.outbox.projector import OutboxProjector, forget_jobs, job_id
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database
from axiom.store.projection import rebuild, run_projector
from axiom.tasks.commands import rename_task
from axiom.tasks.queries import list_tasks


def _jobs(db: Database) -> list[tuple[str, str]]:
    with db.read() as conn:
        return conn.execute(
            "SELECT item_kind, item_id FROM vector_outbox ORDER BY item_kind, item_id"
        ).fetchall()


def test_it_deletes_the_jobs_of_forgotten_items_only(db: Database) -> None:
    items = [
        ("message", "s1:0"), ("message", "s1:1"), ("message", "s10:0"), ("message", "s2:0"),
        ("entry", "ent_a"), ("entry", "ent_b"), ("task", "tsk_a"), ("task", "tsk_b"),
    ]  # fmt: skip
    now = datetime(2026, 1, 1)
    with db.write() as conn:
        for kind, item in items:
            conn.execute(
                "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version,"
                " status, attempts, created_at, updated_at) VALUES (?, ?, ?, 'v', 'done', 1, ?, ?)",
                [job_id(kind, item, "v"), kind, item, now, now],
            )
        assert forget_jobs(conn, ["s1"], ["ent_a", "tsk_b"]) == 4
        assert forget_jobs(conn, [], []) == 0
    assert _jobs(db) == [
        ("entry", "ent_b"), ("message", "s10:0"), ("message", "s2:0"), ("task", "tsk_a"),
    ]  # fmt: skip


def test_a_renamed_task_whose_creating_session_is_forgotten_gets_no_job_again(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    """A person's rename is kept when the session that created the task is forgotten; the
    task is gone, so replaying the rename must not queue a job the writer would fail as
    "item not found" (a title change re-queues a task's job, it never creates one)."""
    messages = (Message(0, "user", "The refund report is blocked by OPS-77."),)
    ingest_transcripts(db, [Transcript("made", "shop", "json", messages)])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "work")
    assert process_session(db, "made", pipeline).status == "success"
    with db.write() as conn:
        [task] = list_tasks(conn, project="shop")
        assert rename_task(conn, task.task_id, "Quarterly refund report", actor="person:me")
        run_projector(conn, OutboxProjector("v"))
    assert ("task", task.task_id) in _jobs(db)

    forget(db, ForgetTarget(session_id="made"), "me", AxiomConfig(data_dir=data_dir))
    with db.write() as conn:
        run_projector(conn, OutboxProjector("v"))
        assert ("task", task.task_id) not in _jobs_in(conn)
        rebuild(conn, [OutboxProjector("v")])
        assert _jobs_in(conn) == []


def test_a_rename_still_requeues_a_known_tasks_job_and_replay_adds_nothing(
    db: Database, tmp_path: Path
) -> None:
    messages = (Message(0, "user", "The refund report is blocked by OPS-77."),)
    ingest_transcripts(db, [Transcript("made", "shop", "json", messages)])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "work")
    assert process_session(db, "made", pipeline).status == "success"
    with db.write() as conn:
        run_projector(conn, OutboxProjector("v"))
        conn.execute("UPDATE vector_outbox SET status = 'done'")
        [task] = list_tasks(conn, project="shop")
        rename_task(conn, task.task_id, "Quarterly refund report", actor="person:me")
        run_projector(conn, OutboxProjector("v"))
        jobs = _rows(conn)
        assert jobs[("task", task.task_id)] == "pending"  # the new title is embedded again
        rebuild(conn, [OutboxProjector("v")])
        assert _rows(conn) == jobs


def _jobs_in(conn: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT item_kind, item_id FROM vector_outbox WHERE item_kind = 'task'"
    ).fetchall()


def _rows(conn: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], str]:
    rows = conn.execute("SELECT item_kind, item_id, status FROM vector_outbox").fetchall()
    return {(kind, item): status for kind, item, status in rows}
