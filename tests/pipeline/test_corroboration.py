"""verified -> certified when another session restates the memory, through the pipeline."""

from __future__ import annotations

from pathlib import Path

from axiom.entries.queries import list_entries
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import rebuild_all
from axiom.store.db import Database


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
