"""OutboxProjector: which items get a job, and why replay never disturbs the queue."""

from __future__ import annotations

from pathlib import Path

from axiom.entries.projector import EntryProjector
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.outbox.projector import OutboxProjector, job_id
from axiom.outbox.writer import OutboxWriter
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import all_projectors, project_all, rebuild_all
from axiom.store.db import Database
from axiom.tasks.commands import rename_task
from axiom.vectors.config import configured_embedding_version
from tests.locomo_data import LOCOMO_DEV
from tests.outbox.support import by_status, jobs, session, snapshot

LOCOMO = LOCOMO_DEV
DECISION = "Decision: vectors are written by a single outbox writer only."
TODO = "TODO: add retries to the outbox writer."


def _pipeline(tmp_path: Path) -> Pipeline:
    return Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")


def test_it_is_registered_last_with_the_configured_version() -> None:
    last = all_projectors()[-1]
    assert isinstance(last, OutboxProjector)
    assert last.embedding_version == configured_embedding_version()
    assert last.tables == ()
    assert EntryProjector.tables == ("entries",)  # the entry projector no longer queues


def test_it_queues_for_the_full_text_table_when_vectors_are_off(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    last = all_projectors()[-1]
    assert isinstance(last, OutboxProjector)
    assert last.embedding_version == "none@full-text-only"


def test_it_queues_one_job_per_message_with_text(db: Database) -> None:
    ingest_transcripts(db, [session("s1", "first", "   ", "third")])
    project_all(db)

    version = configured_embedding_version()
    assert jobs(db, "job_id", "item_kind", "item_id", "embedding_version", "status") == sorted(
        [
            (job_id("message", "s1:0", version), "message", "s1:0", version, "pending"),
            (job_id("message", "s1:2", version), "message", "s1:2", version, "pending"),
        ]
    )


def test_it_queues_entries_and_tasks_from_the_pipeline(db: Database, tmp_path: Path) -> None:
    ingest_transcripts(db, [session("s1", DECISION, TODO, role="assistant")])
    process_session(db, "s1", _pipeline(tmp_path))

    with db.read() as conn:
        entry_ids = {r[0] for r in conn.execute("SELECT entry_id FROM entries").fetchall()}
        task_ids = {
            r[0]
            for r in conn.execute(
                "SELECT entity_id FROM entities WHERE entity_type = 'task'"
            ).fetchall()
        }
    queued = jobs(db)
    assert entry_ids and task_ids
    assert {i for k, i, _ in queued if k == "entry"} == entry_ids
    assert {i for k, i, _ in queued if k == "task"} == task_ids
    assert {i for k, i, _ in queued if k == "message"} == {"s1:0", "s1:1"}
    assert {s for _, _, s in queued} == {"pending"}


def test_reimporting_and_reprocessing_add_no_job(db: Database, tmp_path: Path) -> None:
    (sid,) = import_paths(db, [LOCOMO / "30.json"]).session_ids[:1]
    process_session(db, sid, _pipeline(tmp_path))
    before = snapshot(db)

    import_paths(db, [LOCOMO / "30.json"])
    process_session(db, sid, _pipeline(tmp_path))
    project_all(db)

    assert snapshot(db) == before


def test_a_rebuild_leaves_the_outbox_identical_after_a_drain(
    db: Database, writer: OutboxWriter, tmp_path: Path
) -> None:
    ingest_transcripts(db, [session("s1", DECISION, TODO, "plain chat", role="assistant")])
    ingest_transcripts(db, [session("s2", "another session")])
    process_session(db, "s1", _pipeline(tmp_path))
    writer.drain(max_jobs=3)  # a mix of done and pending rows
    with db.write() as conn:  # and a failed one
        conn.execute(
            "UPDATE vector_outbox SET status = 'failed', error = 'boom'"
            " WHERE job_id = (SELECT min(job_id) FROM vector_outbox WHERE status = 'pending')"
        )
    before = snapshot(db)
    assert {"done", "pending", "failed"} <= set(by_status(db))

    rebuild_all(db)

    assert snapshot(db) == before


def test_a_grown_session_queues_only_its_new_messages(db: Database, writer: OutboxWriter) -> None:
    ingest_transcripts(db, [session("s1", "one", "two")])
    project_all(db)
    writer.drain()

    ingest_transcripts(db, [session("s1", "one", "two", "three")])
    project_all(db)

    assert jobs(db) == [
        ("message", "s1:0", "done"),
        ("message", "s1:1", "done"),
        ("message", "s1:2", "pending"),
    ]


def test_a_renamed_task_is_queued_again_and_replaces_its_vector(
    db: Database, writer: OutboxWriter, tmp_path: Path
) -> None:
    ingest_transcripts(db, [session("s1", TODO, role="assistant")])
    process_session(db, "s1", _pipeline(tmp_path))
    writer.drain()
    ((task_id,),) = [(i,) for k, i, _ in jobs(db) if k == "task"]

    with db.write() as conn:
        assert rename_task(conn, task_id, "Retry failed outbox jobs with backoff")
    project_all(db)
    assert ("task", task_id, "pending") in jobs(db)
    before_rebuild = snapshot(db)
    rebuild_all(db)
    assert snapshot(db) == before_rebuild
    writer.drain()

    assert ("task", task_id, "done") in jobs(db)
    counts = writer.store.count_by_id()
    assert counts[f"task:{task_id}"] == 1
    rows = writer.store.open_table_for_read().search().where(f"id = 'task:{task_id}'").to_list()
    assert [r["text"] for r in rows] == ["Retry failed outbox jobs with backoff"]


def test_another_embedding_version_gets_its_own_jobs(db: Database) -> None:
    ingest_transcripts(db, [session("s1", "hello")])
    project_all(db)
    with db.write() as conn:
        from axiom.store.projection import run_projector

        run_projector(conn, OutboxProjector("other-model@1"))

    assert sorted((v, s) for v, s in jobs(db, "embedding_version", "status")) == sorted(
        [(configured_embedding_version(), "pending"), ("other-model@1", "pending")]
    )
