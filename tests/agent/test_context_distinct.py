"""The SessionStart block names each task and each memory text once: three sessions that
each said the refund report is blocked by OPS-77 made three task notes (one task) and three
"OPS-77" references; the agent sees the task once, the ticket once, and the room that
freed goes to the next memories, newest first. Real pipeline, real DuckDB."""

from __future__ import annotations

from pathlib import Path

from axiom.agent.context import HEADER, memories_from_store, project_folder, render
from axiom.agent.context import session_start_memories as start
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database

CWD = "/home/dev/shop"
SAID = [
    "We deploy the shop with Kamal.",
    "The refund report is blocked by OPS-77.",
    "The refund report is still blocked by OPS-77 today.",
    "Refund report: blocked by OPS-77 still.",
    "We use DuckDB for the event store.",
    "We use DuckDB for the event store.",
]


def _sessions(db: Database, tmp_path: Path) -> None:
    for number, text in enumerate(SAID):
        sid = f"s{number}"
        messages = (Message(0, "user", text),)
        ingest_transcripts(db, [Transcript(sid, project_folder(CWD), "json", messages)])
        pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "work")
        assert process_session(db, sid, pipeline).status == "success"


def _titles(block: str) -> list[str]:
    lines = block.splitlines()
    assert lines[0] == HEADER
    return [line[2:].split(" [", 1)[0] for line in lines[1:]]


def test_session_start_shows_each_task_and_each_text_once_in_order(
    db: Database, tmp_path: Path
) -> None:
    _sessions(db, tmp_path)
    with db.read() as conn:
        titles = _titles(render(start(conn, CWD), 600))
    assert titles[0] == "We use DuckDB for the event store"  # the newest first
    assert sorted(titles[1:3]) == ["OPS-77", "Refund report"]  # one session's two entries
    assert titles[3:] == ["We deploy the shop with Kamal"]  # the oldest, in the freed room


def test_the_full_text_fallback_shows_each_task_once(db: Database, tmp_path: Path) -> None:
    _sessions(db, tmp_path)
    with db.read() as conn:
        titles = _titles(render(memories_from_store(conn, "refund report OPS-77"), 600))
    assert len(titles) == len(set(titles))
    assert titles.count("Refund report") == 1
