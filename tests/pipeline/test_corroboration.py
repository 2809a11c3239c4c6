"""verified -> certified when another session restates the memory, through the pipeline."""

from __future__ import annotations

import logging
from contextlib import nullcontext
from pathlib import Path

from axiom.entries.queries import list_entries
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.batch import process_many
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import project_all, rebuild_all
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_DEMOTED
from axiom.store.events import EventStore, NewEvent, reading_every_key
from axiom.store.migrate import migrate


def _session(sid: str, text: str) -> Transcript:
    return Transcript(sid, "demo", "json", (Message(0, "user", text),))


def _stages(db: Database) -> dict[str, str]:
    with db.read() as conn:
        return {e.session_id: e.stage for e in list_entries(conn, entry_type="fact")}


def test_a_fact_restated_in_another_session_certifies_both(
    db: Database, tmp_path: Path, snapshot
) -> None:
    ingest_transcripts(
        db,
        [
            _session("one", "The event store uses DuckDB with JSON columns."),
            _session("two", "Our event store uses DuckDB and its JSON columns, as agreed."),
            _session("three", "The search index uses LanceDB."),
        ],
    )
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path)
    for sid in ("one", "two", "three"):
        process_session(db, sid, pipeline)
    assert _stages(db) == {"one": "certified", "two": "certified", "three": "verified"}
    with db.read() as conn:
        reasons = conn.execute(
            "SELECT json_extract_string(payload_json, '$.reason') FROM events"
            " WHERE event_type = 'entry_promoted'"
            " AND json_extract_string(payload_json, '$.to') = 'certified' ORDER BY ts"
        ).fetchall()
    assert len(reasons) == 2 and "from session two" in reasons[1][0]
    tables = snapshot(db)
    rebuild_all(db)
    assert snapshot(db) == tables


def test_a_fact_stated_again_in_other_words_certifies_both_by_subject_and_value(
    db: Database, tmp_path: Path
) -> None:
    """Titles too far apart to be the same memory by their words, but the same subject
    and value: a restatement (`axiom.conflicts.detector.restates`) corroborates."""
    ingest_transcripts(
        db,
        [
            _session("one", "The database port is 5432."),
            _session(
                "two",
                "The database port is 5432 (confirmed twice by infrastructure engineering"
                " colleagues).",
            ),
            _session("three", "The cache port is 6379."),
        ],
    )
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path)
    for sid in ("one", "two", "three"):
        process_session(db, sid, pipeline)
    assert _stages(db) == {"one": "certified", "two": "certified", "three": "verified"}


def _certified_then_demoted(db: Database, tmp_path: Path, reading: bool) -> list[tuple]:
    """Sessions one and two certify each other; one is demoted to verified by a policy;
    session four restates the fact. Returns every event's type and key, and the stages."""
    said = "The event store uses DuckDB with JSON columns."
    ingest_transcripts(db, [_session("one", said), _session("two", said)])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path)
    for sid in ("one", "two"):
        process_session(db, sid, pipeline)
    with db.read() as conn:
        (one,) = [e.entry_id for e in list_entries(conn) if e.session_id == "one"]
    demotion = {"entry_id": one, "from": "certified", "to": "verified", "policy_version": "v1"}
    with db.write() as conn:
        EventStore(conn).append(NewEvent(ENTRY_DEMOTED, demotion, f"demoted:{one}"))
    project_all(db)
    ingest_transcripts(db, [_session("four", said)])
    with reading_every_key() if reading else nullcontext():
        (report,) = process_many(db, ["four"], pipeline)  # a batch's write unit
    assert report.status == "success"
    with db.read() as conn:
        keys = conn.execute("SELECT event_type, dedupe_key FROM events ORDER BY seq").fetchall()
    return [*keys, sorted(_stages(db).items())]


def test_a_demoted_sibling_restated_again_is_not_certified_twice(
    db: Database, tmp_path: Path, caplog
) -> None:
    """A sibling certified before and demoted since has its certification's key stored:
    a batch's build reads it (no unit run again) and appends nothing for it, as reading
    every key from the start does."""
    with caplog.at_level(logging.INFO, logger="axiom.projection"):
        trusted = _certified_then_demoted(db, tmp_path / "a", reading=False)
    assert "running the unit of work again" not in caplog.text
    other = Database(tmp_path / "read" / "axiom.duckdb")
    migrate(other)
    assert trusted == _certified_then_demoted(other, tmp_path / "b", reading=True)
    assert trusted[-1] == [("four", "certified"), ("one", "verified"), ("two", "certified")]
