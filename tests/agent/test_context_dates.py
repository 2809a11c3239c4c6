"""The injected block dates a memory by when it was said (its quoted message's time),
not by when Axiom recorded it: an imported history is not all "today"."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from axiom.agent.context import memories_from_store, project_folder, render
from axiom.agent.context import session_start_memories as start
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database

CWD = "/home/dev/shop"


def _said(db: Database, tmp_path: Path, timestamp: str | None) -> None:
    messages = (Message(0, "user", "We deploy the shop with Kamal.", timestamp=timestamp),)
    ingest_transcripts(db, [Transcript("s1", project_folder(CWD), "json", messages)])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "work")
    assert process_session(db, "s1", pipeline).status == "success"


def test_it_dates_each_memory_by_its_source_message(db: Database, tmp_path: Path) -> None:
    _said(db, tmp_path, "2024-03-05T10:00:00Z")
    with db.read() as conn:
        for memories in (start(conn, CWD), memories_from_store(conn, "deploy shop Kamal")):
            (memory,) = memories
            assert memory.date is not None and memory.date.date() == date(2024, 3, 5)
            assert "2024-03-05" in render(memories, 600)


def test_an_undated_message_falls_back_to_the_recording_date(db: Database, tmp_path: Path) -> None:
    _said(db, tmp_path, None)
    with db.read() as conn:
        (memory,) = start(conn, CWD)
    assert memory.date is not None and memory.date.date() == datetime.now(UTC).date()
