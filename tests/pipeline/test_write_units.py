"""Builds written several per write transaction (`axiom.pipeline.batch.write_builds`) leave
what one build per transaction leaves: a later build of the same transaction reads the
tables the projectors derived from an earlier one (conflicts, corroboration)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from axiom.conflicts.queries import list_conflicts
from axiom.entries.queries import list_entries
from axiom.extract.types import ExtractionResult
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline import batch
from axiom.pipeline.batch import catch_up, process_many
from axiom.pipeline.process import Pipeline, ProcessReport, pending_ingests
from axiom.projections import project_all, rebuild_all
from axiom.store import snapshots
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_STATUS_CHANGED, MEMORY_EXTRACTED
from axiom.store.events import EventStore, NewEvent, reading_every_key
from axiom.store.migrate import migrate
from tests.conflicts.support import Said, ScriptedExtractor
from tests.pipeline.conftest import Snapshot

TIMINGS = ("build_runs", "pipeline_metrics")  # how long each stage took: differs per run
SCRIPT = {  # a replaced decision, a changed value, a restatement (corroboration)
    "s1": [
        Said("Use Postgres as the primary store for the billing ledger service"),
        Said("The upload limit is 20MB", "fact", "upload limit", "20MB"),
        Said("The deploy region is eu-west-1", "fact", "deploy region", "eu-west-1"),
    ],
    "s2": [
        Said(
            "We moved the billing ledger service off Postgres, having migrated from Postgres"
            " to CockroachDB last sprint"
        ),
        Said("The upload limit is 50MB now", "fact", "upload limit", "50MB"),
    ],
    "s3": [Said("The deploy region is eu-west-1", "fact", "deploy region", "eu-west-1")],
    "s4": [Said("The upload limit is 80MB", "fact", "upload limit", "80MB")],
}


def _ingested(path: Path) -> Database:
    """The scripted sessions ingested: the projectors but the session projector are behind."""
    db = Database(path)
    migrate(db)
    transcripts = [
        Transcript(
            sid, "demo", "json", tuple(Message(i, "user", s.text) for i, s in enumerate(said))
        )
        for sid, said in SCRIPT.items()
    ]
    ingest_transcripts(db, transcripts)
    return db


def _run(path: Path, workdir: Path, budget: float, monkeypatch: pytest.MonkeyPatch) -> Database:
    """The scripted sessions through `process_many` with `WRITE_BUDGET_S = budget`."""
    db = _ingested(path)
    monkeypatch.setattr(batch, "WRITE_BUDGET_S", budget)
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=workdir)
    before = snapshots.sequence(db.generation())
    reports = process_many(db, list(SCRIPT), pipeline)
    assert [r.status for r in reports] == ["success"] * len(SCRIPT)
    units = snapshots.sequence(db.generation()) - before
    assert units == (len(SCRIPT) if budget == 0 else 1)
    return db


def _beside_one_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> tuple[Database, Database]:
    """A store built one build per transaction, and the scripted sessions ingested into
    another, to be processed in chunks of `chunk` sessions."""
    one_each = _run(tmp_path / "one.duckdb", tmp_path, 0, monkeypatch)
    db = _ingested(tmp_path / "chunked.duckdb")
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", chunk)
    return one_each, db


def _conflicts(db: Database) -> list[tuple[str, str]]:
    with db.read() as conn:
        return sorted((c.conflict_type, c.status) for c in list_conflicts(conn))


def _stages(db: Database) -> set[str]:
    with db.read() as conn:
        return {e.stage for e in list_entries(conn)}


def _timeless(tables: Snapshot) -> Snapshot:
    """`tables` without the values two runs cannot share: times (event ts, metrics)."""
    return {
        name: sorted(tuple(v for v in row if not isinstance(v, datetime | float)) for row in rows)
        for name, rows in tables.items()
        if name not in TIMINGS
    }


def test_one_transaction_for_all_builds_equals_one_per_build(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    snapshot: Callable[[Database], Snapshot],
) -> None:
    one_each = _run(tmp_path / "one.duckdb", tmp_path, 0, monkeypatch)
    together = _run(tmp_path / "all.duckdb", tmp_path, 3600, monkeypatch)
    assert len(_conflicts(together)) == 4  # three on the upload limit, one replacement
    assert "certified" in _stages(together)  # the deploy region, said in s1 and s3
    assert _conflicts(together) == _conflicts(one_each)
    assert _timeless(snapshot(together)) == _timeless(snapshot(one_each))
    incremental = snapshot(together)
    rebuild_all(together)
    assert snapshot(together) == incremental


def _planted(path: Path, workdir: Path) -> tuple[Database, Pipeline]:
    """The scripted sessions ingested, with an event stored under the key session s2's
    build will give its `memory_extracted`, though the session was never built: what
    `never_built` takes for impossible."""
    db = _ingested(path)
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=workdir)
    with db.write() as conn:
        (ingest,) = pending_ingests(conn, ["s2"], pipeline)
        build_id = pipeline.spec.build_id_for(ingest.event_id)
        key = f"{MEMORY_EXTRACTED}:{build_id}"
        EventStore(conn).append(NewEvent(MEMORY_EXTRACTED, {"planted": True}, dedupe_key=key))
    return db, pipeline


def test_a_stored_key_taken_for_fresh_runs_the_transaction_again_reading_every_key(
    tmp_path: Path,
    snapshot: Callable[[Database], Snapshot],
    caplog: pytest.LogCaptureFixture,
) -> None:
    read, pipeline = _planted(tmp_path / "read.duckdb", tmp_path)
    with reading_every_key():  # every key read before it is appended, as before
        process_many(read, list(SCRIPT), pipeline)
    trusted, pipeline = _planted(tmp_path / "trusted.duckdb", tmp_path)
    with caplog.at_level(logging.INFO, logger="axiom.projection"):
        reports = process_many(trusted, list(SCRIPT), pipeline)
    assert [r.status for r in reports] == ["success"] * len(SCRIPT)
    again = [r for r in caplog.records if "reading every key" in r.getMessage()]
    assert len(again) == 1 and "memory_extracted:bld_" in again[0].getMessage()
    assert _timeless(snapshot(trusted)) == _timeless(snapshot(read))
    with trusted.read() as a, read.read() as b:
        events = (  # a build's timings (`build_finished`) differ from run to run
            "SELECT event_type, dedupe_key, if(event_type = 'build_finished', NULL, payload_json)"
            " FROM events ORDER BY seq"
        )
        assert a.execute(events).fetchall() == b.execute(events).fetchall()
        planted = "SELECT count(*) FROM events WHERE event_type = ?"
        assert a.execute(planted, [MEMORY_EXTRACTED]).fetchone()[0] == len(SCRIPT)


def test_a_backlog_is_caught_up_in_bounded_transactions_with_the_same_tables(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    snapshot: Callable[[Database], Snapshot],
) -> None:
    at_once = _ingested(tmp_path / "once.duckdb")
    project_all(at_once)
    stepped = _ingested(tmp_path / "steps.duckdb")
    assert _timeless(snapshot(stepped)) != _timeless(snapshot(at_once))  # a real backlog
    monkeypatch.setattr(batch, "CATCH_UP_EVENTS", 3)
    with stepped.read() as conn:
        pending = len(EventStore(conn).fetch_since(None, None))
    assert catch_up(stepped) >= 2
    assert _timeless(snapshot(stepped)) == _timeless(snapshot(at_once))
    assert catch_up(stepped) == 0  # nothing left: not even a transaction
    assert pending > 3
    monkeypatch.setattr(batch, "CATCH_UP_EVENTS", 150)
    assert catch_up(_ingested(tmp_path / "small.duckdb")) == 0  # left to the first build


def test_process_many_catches_a_backlog_up_before_its_first_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first chunk's lookup reads whether the projectors are behind (no read of its
    own): a backlog goes in catch-up steps before any build is written."""
    db = _ingested(tmp_path / "axiom.duckdb")
    monkeypatch.setattr(batch, "CATCH_UP_EVENTS", 3)
    steps: list[int] = []  # builds written when each catch-up step ran
    written: list[str] = []
    real_step, real_write = batch.run_projectors_step, batch.write_build

    def step(conn, projectors, limit):  # type: ignore[no-untyped-def]
        steps.append(len(written))
        return real_step(conn, projectors, limit)

    def write(conn, build, *rest):  # type: ignore[no-untyped-def]
        written.append(build.report.session_id)
        return real_write(conn, build, *rest)

    monkeypatch.setattr(batch, "run_projectors_step", step)
    monkeypatch.setattr(batch, "write_build", write)
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path)
    reports = process_many(db, list(SCRIPT), pipeline)
    assert [r.status for r in reports] == ["success"] * len(SCRIPT)
    assert len(steps) >= 2 and set(steps) == {0}
    assert sorted(written) == sorted(SCRIPT)


class _Clock:
    """A `perf_counter` that moves one second per call: every build "takes" a second."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


def test_a_chunk_s_unfilled_tail_goes_with_the_next_chunk_s_builds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    snapshot: Callable[[Database], Snapshot],
) -> None:
    # Under this clock a 6 s budget takes two builds per transaction. Chunks of three: the
    # first transaction takes s1, s2; s3 alone would be a transaction of its own (a commit
    # and a checkpoint), so it waits and goes with s4.
    one_each, db = _beside_one_each(tmp_path, monkeypatch, chunk=3)
    monkeypatch.setattr(batch, "time", _Clock())
    told: list[str] = []
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path)
    before = snapshots.sequence(db.generation())
    reports = process_many(db, list(SCRIPT), pipeline, told.append, budget_s=6.0)
    assert snapshots.sequence(db.generation()) - before == 2  # three without the carry
    assert [r.session_id for r in reports] == told == list(SCRIPT)
    assert [r.status for r in reports] == ["success"] * len(SCRIPT)
    assert _timeless(snapshot(db)) == _timeless(snapshot(one_each))


def test_a_session_repeated_in_a_later_chunk_is_written_before_it_is_looked_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = _ingested(tmp_path / "repeat.duckdb")
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", 3)
    monkeypatch.setattr(batch, "time", _Clock())
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path)
    reports = process_many(db, ["s1", "s2", "s3", "s3", "s4"], pipeline, budget_s=6.0)
    assert [(r.session_id, r.skipped) for r in reports] == [
        ("s1", False),
        ("s2", False),
        ("s3", False),
        ("s3", True),  # its build was written (the tail) before the chunk was looked up
        ("s4", False),
    ]


def test_a_backlog_is_projected_before_the_first_build_of_a_transaction_reads(
    tmp_path: Path,
) -> None:
    """An entry event appended without projecting (a backlog smaller than a catch-up step)
    is in the tables before the transaction's first build reads them: the upload limit s1
    stated was rejected meanwhile, so s2's new value contradicts nothing believed."""
    db = _ingested(tmp_path / "store.duckdb")
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path / "work")
    process_many(db, ["s1"], pipeline)
    with db.read() as conn:
        (limit,) = [e for e in list_entries(conn) if e.title.startswith("The upload limit")]
    with db.write() as conn:
        EventStore(conn).append(
            NewEvent(
                ENTRY_STATUS_CHANGED,
                {"entry_id": limit.entry_id, "from": "active", "to": "rejected"},
                session_id="s1",
            )
        )
    process_many(db, ["s2"], pipeline)
    with db.read() as conn:
        assert list_conflicts(conn, "all", entry_id=limit.entry_id) == []
        assert [c.conflict_type for c in list_conflicts(conn, "all")] == ["replacement"]
        statuses = {e.entry_id: e.status for e in list_entries(conn)}
    assert statuses[limit.entry_id] == "rejected"


class _Remote(ScriptedExtractor):
    """The scripted entries from an extractor that says it waits on an endpoint, as the
    LLM extractor does: `process_many` analyses ahead of its writes."""

    remote = True


class _WaitsForAWrite(_Remote):
    """Extracts `late`'s session only once a write of builds has begun (`writing`), and
    says so (`analysed_while_writing`): it can only happen when the next chunk is analysed
    while a chunk's builds are written."""

    def __init__(self, late: str) -> None:
        super().__init__(SCRIPT)
        self.late = late
        self.writing = threading.Event()
        self.analysed_while_writing = threading.Event()

    def extract(self, transcript: Transcript) -> ExtractionResult:
        if transcript.session_id == self.late and self.writing.wait(timeout=10):
            self.analysed_while_writing.set()
        return super().extract(transcript)


def test_the_next_chunk_is_analysed_while_this_chunk_s_builds_are_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    snapshot: Callable[[Database], Snapshot],
) -> None:
    one_each, db = _beside_one_each(tmp_path, monkeypatch, chunk=2)
    extractor = _WaitsForAWrite(late="s3")  # the first session of the second chunk
    write_waiting = batch._write_waiting
    overlapped: list[bool] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        extractor.writing.set()
        overlapped.append(extractor.analysed_while_writing.wait(timeout=10))
        return write_waiting(*args, **kwargs)

    monkeypatch.setattr(batch, "_write_waiting", watched)
    pipeline = Pipeline(extractor=extractor, workdir=tmp_path)
    reports = process_many(db, list(SCRIPT), pipeline, budget_s=0)
    assert overlapped[0]  # s3 was extracted while s1 and s2 were being written
    assert [(r.session_id, r.status) for r in reports] == [(s, "success") for s in SCRIPT]
    assert _timeless(snapshot(db)) == _timeless(snapshot(one_each))


def test_a_failed_write_does_not_wait_for_the_next_chunk_s_analysis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error (a full disk, Ctrl-C) ends `process_many` at once, even while the next
    chunk's first session waits on a slow extractor; the analyst stops after that session
    (the chunk's second session is never extracted)."""
    db = _ingested(tmp_path / "store.duckdb")
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", 2)
    extracted: list[str] = []
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    class Slow(_Remote):
        def extract(self, transcript: Transcript) -> ExtractionResult:
            extracted.append(transcript.session_id)
            if transcript.session_id == "s3":
                started.set()
                release.wait(timeout=10)
                finished.set()
            return super().extract(transcript)

    def disk_full(*args: Any, **kwargs: Any) -> Any:
        assert started.wait(timeout=10)  # s3 is being analysed
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch, "_write_waiting", disk_full)
    pipeline = Pipeline(extractor=Slow(SCRIPT), workdir=tmp_path)
    with pytest.raises(OSError, match="No space left"):
        process_many(db, list(SCRIPT), pipeline)
    assert not finished.is_set()  # returned while s3's extraction still waited
    release.set()
    for thread in threading.enumerate():
        if thread.name == "axiom-analyse":
            thread.join(timeout=10)
    assert extracted == ["s1", "s2", "s3"]  # stopped after the session it was on


@pytest.mark.parametrize("extractor", [ScriptedExtractor, _Remote])
def test_an_unknown_session_is_reported_after_the_chunk_before_it_is_all_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extractor: type[ScriptedExtractor]
) -> None:
    """The next chunk is looked up before this one is written; a session id it cannot find
    is raised only once every build of this chunk is stored, the tail a transaction would
    have left for the next chunk included (under this clock a 6 s budget takes two builds
    per transaction: s3 would wait for the next chunk's, which never comes)."""
    db = _ingested(tmp_path / "store.duckdb")
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", 3)
    monkeypatch.setattr(batch, "time", _Clock())
    pipeline = Pipeline(extractor=extractor(SCRIPT), workdir=tmp_path)
    with pytest.raises(LookupError, match="nope"):
        process_many(db, ["s1", "s2", "s3", "nope"], pipeline, budget_s=6.0)
    with db.read() as conn:
        found = pending_ingests(conn, ["s1", "s2", "s3", "s4"], pipeline)
    assert [isinstance(f, ProcessReport) and f.skipped for f in found] == [
        True,
        True,
        True,
        False,
    ]


def test_the_rule_extractor_s_chunks_are_analysed_between_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CPU-bound analysis ahead of the writes would take the core that pages and search
    use during an import, so an extractor that does not wait on an endpoint is run one
    chunk after another."""
    db = _ingested(tmp_path / "store.duckdb")
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", 2)
    order: list[str] = []
    threads: set[str] = set()

    class Local(ScriptedExtractor):
        def extract(self, transcript: Transcript) -> ExtractionResult:
            order.append(transcript.session_id)
            threads.add(threading.current_thread().name)
            return super().extract(transcript)

    write_waiting = batch._write_waiting

    def watched(*args: Any, **kwargs: Any) -> Any:
        order.append("write")
        return write_waiting(*args, **kwargs)

    monkeypatch.setattr(batch, "_write_waiting", watched)
    pipeline = Pipeline(extractor=Local(SCRIPT), workdir=tmp_path)
    process_many(db, list(SCRIPT), pipeline, budget_s=0)
    assert order == ["s1", "s2", "write", "s3", "s4", "write"]
    assert threads == {threading.current_thread().name}  # no second thread


class _CountingReads(Database):
    """A store that counts its read units and notes where the first write came."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.reads = 0
        self.reads_before_write: int | None = None

    def read(self, *args: Any, **kwargs: Any) -> Any:
        self.reads += 1
        return super().read(*args, **kwargs)

    def write(self) -> Any:
        if self.reads_before_write is None:
            self.reads_before_write = self.reads
        return super().write()


def test_one_read_orders_the_sessions_and_looks_up_the_first_two_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before its first write `process_many` reads once: the sessions' order, whether the
    projectors are behind, and the first two chunks' lookups. The later chunk is looked
    up on its own, while the one before it is written."""
    _ingested(tmp_path / "store.duckdb")
    db = _CountingReads(tmp_path / "store.duckdb")
    project_all(db)  # no backlog: the first write is a build's
    db.reads, db.reads_before_write = 0, None
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", 1)
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path)
    told: list[str] = []
    reports = process_many(
        db, ["s4", "s3", "s2", "s1", "s3"], pipeline, told.append, budget_s=0, order=True
    )
    assert [r.session_id for r in reports] == ["s1", "s2", "s3", "s4"]  # oldest first
    assert told == ["s1", "s2", "s3", "s4"]  # progress in that order, each once
    assert [r.status for r in reports] == ["success"] * 4
    assert db.reads_before_write == 1
    assert db.reads == 3  # the first read, then s3's and s4's lookups
