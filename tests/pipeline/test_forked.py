"""Analysis shared with a forked child (`axiom.pipeline.forked`): the store it leaves is
the one analysing in one process leaves, whoever analysed which session, and a child that
dies or is left behind loses nothing and stays nowhere."""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from axiom.extract.types import ExtractionResult
from axiom.forking import can_fork
from axiom.ingest.importer import PreparedSession, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline import batch, forked
from axiom.pipeline.batch import process_many
from axiom.pipeline.forked import AnalysisAhead, ForkedAnalysis
from axiom.pipeline.process import Pipeline, pending_ingests
from axiom.store.db import Database
from axiom.store.events import StoredEvent, checksum_of
from axiom.store.migrate import migrate
from tests.conflicts.support import ScriptedExtractor
from tests.pipeline.conftest import Snapshot
from tests.pipeline.test_write_units import SCRIPT, _ingested, _timeless

EVENTS = (  # a build's timings (`build_finished`) differ from run to run
    "SELECT event_type, dedupe_key, if(event_type = 'build_finished', NULL, payload_json)"
    " FROM events ORDER BY seq"
)


class ChildCounting(ScriptedExtractor):
    """Counts the sessions extracted in another process than the test's (shared memory
    the fork inherits); with `in_child`, does that instead of extracting there. The test's
    process waits for the child to have taken one before it extracts any (a niced child on
    a loaded machine might otherwise find nothing left to take)."""

    def __init__(self, in_child: Callable[[], None] | None = None) -> None:
        super().__init__(SCRIPT)
        self.parent = os.getpid()
        self.in_child = in_child
        self.by_child = multiprocessing.get_context("fork").Value("i", 0)
        self.every = multiprocessing.get_context("fork").Value("i", 0)  # in any process

    def extract(self, transcript: Transcript) -> ExtractionResult:
        with self.every.get_lock():
            self.every.value += 1
        if os.getpid() != self.parent:
            with self.by_child.get_lock():
                self.by_child.value += 1
            if self.in_child is not None:
                self.in_child()
        else:
            began = time.monotonic()
            while self.by_child.value == 0 and time.monotonic() - began < 30:
                time.sleep(0.005)
        return super().extract(transcript)


def _processed(
    path: Path, workdir: Path, extractor: ScriptedExtractor, fork: bool
) -> tuple[Database, list[str]]:
    db = _ingested(path)
    reports = process_many(
        db, list(SCRIPT), Pipeline(extractor=extractor, workdir=workdir), fork=fork
    )
    return db, [r.status for r in reports]


def _events(db: Database) -> list[tuple[object, ...]]:
    with db.read() as conn:
        return conn.execute(EVENTS).fetchall()


@pytest.mark.parametrize("chunk", [2, 64])  # the chunks after the first start while it is written
def test_a_forked_child_s_share_leaves_the_store_one_process_leaves(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    snapshot: Callable[[Database], Snapshot],
    chunk: int,
) -> None:
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", chunk)
    one, statuses = _processed(tmp_path / "one.duckdb", tmp_path, ScriptedExtractor(SCRIPT), False)
    assert statuses == ["success"] * len(SCRIPT)
    extractor = ChildCounting()
    forked, statuses = _processed(tmp_path / "forked.duckdb", tmp_path, extractor, True)
    assert statuses == ["success"] * len(SCRIPT)
    assert extractor.by_child.value >= 1  # the child did analyse some
    assert _timeless(snapshot(forked)) == _timeless(snapshot(one))
    assert _events(forked) == _events(one)


def test_sessions_a_dead_child_claimed_are_analysed_by_the_parent(
    tmp_path: Path,
    snapshot: Callable[[Database], Snapshot],
    caplog: pytest.LogCaptureFixture,
) -> None:
    one, _ = _processed(tmp_path / "one.duckdb", tmp_path, ScriptedExtractor(SCRIPT), False)
    extractor = ChildCounting(in_child=lambda: os._exit(9))  # dies on the first it takes
    with caplog.at_level(logging.WARNING, logger="axiom.forking"):
        forked, statuses = _processed(tmp_path / "forked.duckdb", tmp_path, extractor, True)
    assert statuses == ["success"] * len(SCRIPT)
    assert extractor.by_child.value == 1
    assert any("sharing child exited with 9" in r.getMessage() for r in caplog.records)
    assert _timeless(snapshot(forked)) == _timeless(snapshot(one))
    assert _events(forked) == _events(one)


def test_closing_stops_a_child_still_analysing(tmp_path: Path) -> None:
    db = _ingested(tmp_path / "axiom.duckdb")
    pipeline = Pipeline(extractor=ChildCounting(in_child=lambda: time.sleep(60)), workdir=tmp_path)
    with db.read() as conn:
        ingests = [f for f in pending_ingests(conn, list(SCRIPT), pipeline)]
    assert all(isinstance(f, StoredEvent) for f in ingests)
    forked = ForkedAnalysis(db, pipeline, ingests)  # type: ignore[arg-type]
    began = time.monotonic()
    while pipeline.extractor.by_child.value == 0:  # type: ignore[attr-defined]
        assert time.monotonic() - began < 30, "the child never started"
        time.sleep(0.01)
    forked.close()
    assert not forked._shared._child.is_alive()
    assert time.monotonic() - began < 30  # terminated, not waited for


def test_a_daemon_process_does_not_fork() -> None:
    context = multiprocessing.get_context("fork")
    answers = context.Queue()
    child = context.Process(target=lambda: answers.put(can_fork()), daemon=True)
    child.start()
    assert answers.get(timeout=30) is False
    child.join()
    assert can_fork()  # the test process itself may


def _transcripts() -> list[Transcript]:
    return [
        Transcript(
            sid, "demo", "json", tuple(Message(i, "user", s.text) for i, s in enumerate(said))
        )
        for sid, said in SCRIPT.items()
    ]


def _processed_ahead(
    path: Path, workdir: Path, extractor: ScriptedExtractor, sessions: int
) -> tuple[Database, AnalysisAhead, list[str]]:
    """The scripted sessions imported with `AnalysisAhead.offer` as the import's
    `before_write` (as `axiom import` does), then processed taking its builds."""
    db = Database(path)
    migrate(db)
    ahead = AnalysisAhead(Pipeline(extractor=extractor, workdir=workdir), True, sessions)
    try:
        ingest_transcripts(db, _transcripts(), before_write=ahead.offer)
        reports = process_many(db, list(SCRIPT), ahead.pipeline, fork=True, ahead=ahead)
    finally:
        ahead.close()
    return db, ahead, [r.status for r in reports]


@pytest.mark.parametrize("sessions", [2, 64])  # part of the first chunk, or all of it
def test_builds_analysed_while_the_import_writes_leave_the_store_one_process_leaves(
    tmp_path: Path, snapshot: Callable[[Database], Snapshot], sessions: int
) -> None:
    one, statuses = _processed(tmp_path / "one.duckdb", tmp_path, ScriptedExtractor(SCRIPT), False)
    extractor = ChildCounting()
    ahead_db, ahead, statuses = _processed_ahead(
        tmp_path / "ahead.duckdb", tmp_path, extractor, sessions
    )
    assert statuses == ["success"] * len(SCRIPT)
    assert extractor.by_child.value >= 1
    assert len(ahead._keys) == min(sessions, len(SCRIPT))
    assert ahead._results == {}  # every build analysed ahead was taken
    assert extractor.every.value == len(SCRIPT)  # and none analysed again
    assert _timeless(snapshot(ahead_db)) == _timeless(snapshot(one))
    assert _events(ahead_db) == _events(one)  # build ids name the stored ingests


def test_a_session_stored_with_another_payload_is_analysed_again(
    tmp_path: Path, snapshot: Callable[[Database], Snapshot]
) -> None:
    """A transcript holding part of a stored session is merged into it: the payload stored
    is not the one offered, so its build is not taken from the analysis ahead (a payload
    the merge leaves as offered is), and the store is the one without."""
    pipeline = Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path)
    plain = _ingested(tmp_path / "plain.duckdb")
    ahead_db = _ingested(tmp_path / "ahead.duckdb")
    partial = [  # the first message and a new one: s1 had two more
        replace(t, messages=(t.messages[0], Message(len(t.messages), "user", "and that is all")))
        for t in _transcripts()
    ]
    ingest_transcripts(plain, partial)
    process_many(plain, list(SCRIPT), pipeline)
    ahead = AnalysisAhead(pipeline, True, 64)
    offered: dict[str, str] = {}  # session -> checksum of the payload offered

    def offer(prepared: list[PreparedSession]) -> None:
        offered.update({p.transcript.session_id: checksum_of(p.payload) for p in prepared})
        ahead.offer(prepared)

    ingest_transcripts(ahead_db, partial, before_write=offer)
    with ahead_db.read() as conn:
        stored = {i.session_id: i.checksum for i in pending_ingests(conn, list(SCRIPT), pipeline)}  # type: ignore[union-attr]
    merged = {sid for sid, checksum in offered.items() if stored[sid] != checksum}
    assert "s1" in merged  # its stored version held two more messages
    process_many(ahead_db, list(SCRIPT), pipeline, fork=True, ahead=ahead)
    assert set(ahead._results or {}) == merged  # not taken; the rest were
    assert _timeless(snapshot(ahead_db)) == _timeless(snapshot(plain))
    assert _events(ahead_db) == _events(plain)


def test_nothing_is_analysed_ahead_without_a_child(tmp_path: Path) -> None:
    db = Database(tmp_path / "axiom.duckdb")
    migrate(db)
    ahead = AnalysisAhead(
        Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path), False, 64
    )
    ingest_transcripts(db, _transcripts(), before_write=ahead.offer)
    with db.read() as conn:
        (ingest, *_) = pending_ingests(conn, ["s1"], ahead.pipeline)
    assert isinstance(ingest, StoredEvent)
    assert ahead.take(db, ingest) is None


def test_an_analysis_ahead_that_cannot_start_leaves_the_import_as_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def no_shared_memory(*_args: object) -> None:
        raise OSError("no memfd here")

    monkeypatch.setattr(forked, "SharedMap", no_shared_memory)
    db = Database(tmp_path / "axiom.duckdb")
    migrate(db)
    ahead = AnalysisAhead(Pipeline(extractor=ScriptedExtractor(SCRIPT), workdir=tmp_path), True, 64)
    with caplog.at_level(logging.WARNING, logger="axiom.pipeline.forked"):
        results = ingest_transcripts(db, _transcripts(), before_write=ahead.offer)
    assert [r.created for r in results] == [True] * len(SCRIPT)
    assert any("could not analyse ahead" in r.getMessage() for r in caplog.records)
    reports = process_many(db, list(SCRIPT), ahead.pipeline, ahead=ahead)
    assert [r.status for r in reports] == ["success"] * len(SCRIPT)
