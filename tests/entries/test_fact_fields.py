"""The fact fields (subject, value, previous_value, negated) travel from an extractor's
entry through the `entry_created` event into the `entries` table, and replay gives the same."""

from __future__ import annotations

from pathlib import Path

from axiom.entries.queries import list_entries
from axiom.extract.types import (
    ExtractedEntry,
    ExtractedEvidence,
    ExtractionResult,
    FactFields,
)
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import rebuild_all
from axiom.store.db import Database


class _Scripted:
    name, model, prompt_hash = "scripted", "scripted-v1", "0" * 64

    def __init__(self, entries: list[ExtractedEntry]) -> None:
        self.entries = tuple(entries)

    def extract(self, transcript: Transcript) -> ExtractionResult:
        return ExtractionResult(self.entries, self.name, self.model, self.prompt_hash)


def _entries(sid: str) -> list[ExtractedEntry]:
    return [
        ExtractedEntry.create(
            sid,
            "decision",
            "Switched payments-service datastore from MySQL to PostgreSQL",
            "switched",
            (ExtractedEvidence(0, "We switched the payments-service datastore"),),
            fact=FactFields("payments-service datastore", "PostgreSQL", "MySQL"),
        ),
        ExtractedEntry.create(
            sid,
            "fact",
            "No longer uses Redis",
            "no longer",
            (ExtractedEvidence(1, "The cache no longer uses Redis"),),
            fact=FactFields("cache", None, "Redis", negated=True),
        ),
        ExtractedEntry.create(
            sid, "fact", "Plain", "plain", (ExtractedEvidence(1, "The cache no longer"),)
        ),
    ]


def _process(db: Database, tmp_path: Path, sid: str) -> None:
    texts = (
        "We switched the payments-service datastore from MySQL to PostgreSQL.",
        "The cache no longer uses Redis.",
    )
    transcript = Transcript(
        sid, "demo", "json", tuple(Message(i, "user", t) for i, t in enumerate(texts))
    )
    ingest_transcripts(db, [transcript])
    pipeline = Pipeline(extractor=_Scripted(_entries(sid)), workdir=tmp_path / "idris")
    assert process_session(db, sid, pipeline).status == "success"


def test_entries_table_carries_subject_value_and_previous_value(
    db: Database, tmp_path: Path
) -> None:
    _process(db, tmp_path, "s1")
    with db.read() as conn:
        rows = {e.title: e for e in list_entries(conn)}
    switched = rows["Switched payments-service datastore from MySQL to PostgreSQL"]
    assert (switched.subject, switched.value, switched.previous_value, switched.negated) == (
        "payments-service datastore",
        "PostgreSQL",
        "MySQL",
        False,
    )
    denial = rows["No longer uses Redis"]
    assert (denial.subject, denial.value, denial.previous_value, denial.negated) == (
        "cache",
        None,
        "Redis",
        True,
    )
    plain = rows["Plain"]
    assert (plain.subject, plain.value, plain.previous_value, plain.negated) == (
        None,
        None,
        None,
        False,
    )
    assert switched.to_json()["subject"] == "payments-service datastore"


def _entry_rows(db: Database) -> list[tuple]:
    """Every entries column except created_at (when the row was written)."""
    with db.read() as conn:
        cols = [r[0] for r in conn.execute("DESCRIBE entries").fetchall() if r[0] != "created_at"]
        return conn.execute(f"SELECT {', '.join(cols)} FROM entries ORDER BY ALL").fetchall()


def test_rebuild_gives_the_same_fact_columns_as_incremental(db: Database, tmp_path: Path) -> None:
    _process(db, tmp_path, "s1")
    _process(db, tmp_path, "s2")
    incremental = _entry_rows(db)
    assert any("PostgreSQL" in row for row in incremental)
    rebuild_all(db)
    assert _entry_rows(db) == incremental
