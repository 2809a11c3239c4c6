"""Task vectors in the pipeline: a real DuckDB file, a real LanceDB directory filled by the
real outbox writer, and the real default embedder (multilingual-e5-small, offline).

A rewording that full text cannot reach is suggested by vector and never merged; without a
LanceDB table nothing is loaded and nothing is suggested; the model and LanceDB are used
before the write transaction opens, never inside it; suggestions change no dedupe key."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pytest

from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, ToolCall, Transcript
from axiom.outbox.writer import OutboxWriter
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import Pipeline, process_session
from axiom.pipeline.task_vectors import TaskVectors
from axiom.store.db import Database
from axiom.store.event_types import TASK_MENTIONED
from axiom.store.migrate import migrate
from axiom.tasks.canonical import normalize_text
from axiom.tasks.matcher import SUGGEST_MIN, similarity
from axiom.tasks.resolver import TaskMention, TaskResolver
from axiom.vectors.config import embedding_version_of, shared_embedder
from axiom.vectors.embedder import Embedder, EmbedderLoadError
from axiom.vectors.lance_store import LanceStore

OLD = "Speed up the CI pipeline"
NEW = "Make continuous integration faster"


def _session(session_id: str, title: str, day: str) -> Transcript:
    todo = ToolCall("t1", "TodoWrite", {"todos": [{"content": title, "status": "pending"}]})
    return Transcript(
        session_id,
        "shop",
        "claude_code",
        (
            Message(0, "user", "Let us plan the week.", f"{day}T10:00:00Z"),
            Message(
                1, "assistant", "Updating the todo list.", f"{day}T10:01:00Z", tool_calls=(todo,)
            ),
        ),
    )


SESSIONS = [_session("s1", OLD, "2025-04-01"), _session("s2", NEW, "2025-04-08")]


@pytest.fixture
def e5(monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """The default embedder, as the outbox projector run by process_session queues it."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    return shared_embedder("e5")


@pytest.fixture
def store(data_dir: Path, e5: Embedder) -> LanceStore:
    return LanceStore(data_dir / "lancedb", embedding_version_of(e5), e5.dim)


def _pipeline(tmp_path: Path, vectors: TaskVectors | None) -> Pipeline:
    return Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris", task_vectors=vectors)


def _drain(db: Database, store: LanceStore, embedder: Embedder) -> None:
    report = OutboxWriter(db, store, embedder, batch_size=32).drain()
    assert report.error is None and report.remaining == 0, report
    assert any(i.startswith("task:") for i in store.count_by_id())


def _receipts(db: Database, session_id: str) -> list[dict[str, Any]]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT payload_json FROM events WHERE event_type = ? AND session_id = ?"
            " ORDER BY ts, event_id",
            [TASK_MENTIONED, session_id],
        ).fetchall()
    return [json.loads(r[0]) for r in rows]


def _tasks(db: Database) -> dict[str, str]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT title, entity_id FROM entities WHERE entity_type = 'task'"
        ).fetchall()
    return dict(rows)


def _metric(db: Database, session_id: str, stage: str) -> list[tuple[bool, str | None]]:
    with db.read() as conn:
        return conn.execute(
            "SELECT success, error FROM pipeline_metrics WHERE session_id = ? AND stage = ?",
            [session_id, stage],
        ).fetchall()


def _vector_candidates(receipt: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in receipt["candidates"] if c["method"] == "vector"]


def test_a_rewording_beyond_full_text_is_suggested_by_vector_and_not_merged(
    db: Database, store: LanceStore, e5: Embedder, tmp_path: Path
) -> None:
    # Full text alone is nowhere near a suggestion for this pair.
    assert similarity(normalize_text(OLD), normalize_text(NEW)) < 0.5
    ingest_transcripts(db, SESSIONS)
    pipeline = _pipeline(tmp_path, TaskVectors(store, e5))
    process_session(db, "s1", pipeline)
    _drain(db, store, e5)  # the outbox writer embeds the task: LanceDB row task:<id>

    report = process_session(db, "s2", pipeline)

    assert report.status == "success"
    tasks = _tasks(db)
    assert set(tasks) == {OLD, NEW}  # not merged
    (receipt,) = _receipts(db, "s2")
    assert receipt["task_id"] == tasks[NEW]
    assert receipt["match"]["method"] == "new"
    suggested = _vector_candidates(receipt)
    assert [c["task_id"] for c in suggested] == [tasks[OLD]]
    assert SUGGEST_MIN <= suggested[0]["score"] < 0.92
    assert _metric(db, "s2", "task_vectors") == [(True, None)]


def test_without_a_lancedb_table_nothing_is_loaded_or_suggested(
    db: Database, store: LanceStore, e5: Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    loads: list[int] = []

    def loader() -> Embedder:
        loads.append(1)
        return e5

    ingest_transcripts(db, SESSIONS)
    pipeline = _pipeline(tmp_path, TaskVectors(store, loader))
    with caplog.at_level(logging.INFO, logger="axiom.pipeline.task_vectors"):
        reports = [process_session(db, sid, pipeline) for sid in ("s1", "s2")]

    assert [r.status for r in reports] == ["success", "success"]
    assert loads == []  # no table: the model is never loaded
    assert set(_tasks(db)) == {OLD, NEW}
    assert all(not _vector_candidates(r) for s in ("s1", "s2") for r in _receipts(db, s))
    lines = [r for r in caplog.records if r.name == "axiom.pipeline.task_vectors"]
    assert len(lines) == 1 and lines[0].levelno == logging.INFO  # once per process
    assert "no LanceDB table" in lines[0].getMessage()
    assert _metric(db, "s2", "task_vectors") == [(True, None)]


def test_an_unreadable_table_or_a_model_that_fails_never_fails_the_build(
    db: Database, store: LanceStore, e5: Embedder, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ingest_transcripts(db, SESSIONS)
    process_session(db, "s1", _pipeline(tmp_path, None))
    _drain(db, store, e5)

    def broken() -> Embedder:
        raise EmbedderLoadError("could not load multilingual-e5-small: weights are missing")

    with caplog.at_level(logging.WARNING, logger="axiom.pipeline.task_vectors"):
        report = process_session(db, "s2", _pipeline(tmp_path, TaskVectors(store, broken)))

    assert report.status == "success"
    assert set(_tasks(db)) == {OLD, NEW}
    assert not _vector_candidates(_receipts(db, "s2")[0])
    ((ok, error),) = _metric(db, "s2", "task_vectors")
    assert not ok and "weights are missing" in error
    assert [r.levelno for r in caplog.records if r.name == "axiom.pipeline.task_vectors"] == [
        logging.WARNING
    ]

    # A directory where the table should be that LanceDB cannot open.
    elsewhere = LanceStore(tmp_path / "broken-lancedb", store.embedding_version, store.dim)
    elsewhere.table_path.mkdir(parents=True)
    found = TaskVectors(elsewhere, e5).neighbours(db, "shop", [NEW])
    assert found.neighbours is None and found.error is not None


class _RecordingDatabase(Database):
    """Records when a write transaction opens, and whether one is open."""

    def __init__(self, path: Path, log: list[Any]) -> None:
        super().__init__(path)
        self.log = log
        self.writing = False

    @contextmanager
    def write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self.log.append("write")
        with super().write() as conn:
            self.writing = True
            try:
                yield conn
            finally:
                self.writing = False


def test_the_model_and_lancedb_are_used_before_the_write_transaction_opens(
    db: Database, store: LanceStore, e5: Embedder, tmp_path: Path
) -> None:
    log: list[Any] = []
    rdb = _RecordingDatabase(db.path, log)

    class Model:
        name, version, dim = e5.name, e5.version, e5.dim

        def embed(self, texts: Any, kind: Any = "document") -> Any:
            log.append(("embed", rdb.writing, kind))
            return e5.embed(texts, kind=kind)

    class Vectors(TaskVectors):
        def neighbours(self, database: Database, project: Any, texts: Any) -> Any:
            log.append(("neighbours", rdb.writing, tuple(texts)))
            return super().neighbours(database, project, texts)

    ingest_transcripts(rdb, SESSIONS)
    process_session(rdb, "s1", _pipeline(tmp_path, None))
    _drain(rdb, store, e5)
    log.clear()

    process_session(rdb, "s2", _pipeline(tmp_path, Vectors(store, Model())))

    assert log == [("neighbours", False, (NEW,)), ("embed", False, "query"), "write"]
    assert _vector_candidates(_receipts(rdb, "s2")[0])  # and the suggestion got through


def _dedupe_keys(db: Database, session_id: str) -> set[str]:
    with db.read() as conn:
        rows = conn.execute(
            "SELECT dedupe_key FROM events WHERE session_id = ? AND dedupe_key IS NOT NULL",
            [session_id],
        ).fetchall()
    return {r[0] for r in rows}


def test_suggestions_change_no_dedupe_key_so_a_rerun_in_another_state_appends_nothing(
    db: Database, store: LanceStore, e5: Embedder, tmp_path: Path
) -> None:
    ingest_transcripts(db, SESSIONS)
    process_session(db, "s1", _pipeline(tmp_path, None))
    _drain(db, store, e5)
    with_vectors = process_session(db, "s2", _pipeline(tmp_path, TaskVectors(store, e5)))

    other = Database(tmp_path / "other" / "axiom.duckdb")
    migrate(other)
    ingest_transcripts(other, SESSIONS)
    for sid in ("s1", "s2"):
        without = process_session(other, sid, _pipeline(tmp_path, None))

    # Same build (task vectors are not part of the build spec), same keys: each event of
    # one run is a duplicate of the other's, and only the receipt's candidates differ.
    assert without.build_id == with_vectors.build_id
    assert _dedupe_keys(db, "s2") == _dedupe_keys(other, "s2")
    (a,), (b,) = _receipts(db, "s2"), _receipts(other, "s2")
    assert _vector_candidates(a) and not _vector_candidates(b)
    assert {k: v for k, v in a.items() if k != "candidates"} == {
        k: v for k, v in b.items() if k != "candidates"
    }

    # Re-resolving the mention without vectors (a retried build) appends nothing.
    mention = TaskMention(
        a["entry_id"], "s2", NEW, "pending", evidence_aligned=True, source="todowrite"
    )
    with db.write() as conn:
        assert TaskResolver(conn, "shop", build_id=with_vectors.build_id).resolve([mention]) == []


def test_the_factory_switches_task_vectors(monkeypatch: pytest.MonkeyPatch, data_dir: Path) -> None:
    monkeypatch.delenv("AXIOM_TASK_VECTORS", raising=False)
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    on = configured_pipeline().task_vectors
    assert on is not None and on.store.lancedb_dir == (data_dir / "lancedb").resolve()
    spec = configured_pipeline().spec
    for value in ("0", "off"):
        monkeypatch.setenv("AXIOM_TASK_VECTORS", value)
        assert configured_pipeline().task_vectors is None
        assert configured_pipeline().spec == spec  # not part of the build
    monkeypatch.setenv("AXIOM_TASK_VECTORS", "1")
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    assert configured_pipeline().task_vectors is None
