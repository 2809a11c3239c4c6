"""The decision ledger cites only verified or certified evidence; replay rebuilds it."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.entries.queries import list_entries
from axiom.extract.types import ExtractedEntry, ExtractedEvidence, ExtractionResult
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import rebuild_all
from axiom.store.db import Database
from tests.cli_support import run_cli
from tests.conflicts.support import Said, run_sessions


class MisquotingExtractor:
    """One entry whose quote is only partly in the message: it stays below verified."""

    name, model, prompt_hash = "misquote", "v1", "m" * 64

    def extract(self, transcript: Transcript) -> ExtractionResult:
        evidence = (ExtractedEvidence(0, "cache TTL"), ExtractedEvidence(0, "words never said"))
        entry = ExtractedEntry.create(transcript.session_id, "decision", "Cache TTL", "x", evidence)
        return ExtractionResult((entry,), self.name, self.model, self.prompt_hash)


def test_decisions_cite_only_verified_evidence(
    db: Database, data_dir: Path, tmp_path: Path, table_rows
) -> None:
    run_sessions(db, tmp_path, {"a": [Said("Use Redis for the cache of the search page")]})
    ingest_transcripts(
        db, [Transcript("b", "demo", "json", (Message(0, "user", "The cache TTL is 5 minutes"),))]
    )
    process_session(db, "b", Pipeline(extractor=MisquotingExtractor(), workdir=tmp_path))
    with db.read() as conn:
        stages = {e.session_id: (e.entry_id, e.stage) for e in list_entries(conn)}
    (verified, stage_a), (weak, stage_b) = stages["a"], stages["b"]
    assert stage_a == "verified" and stage_b not in ("verified", "certified")

    refused = run_cli(data_dir, "decisions", "record", "Cache TTL stays", "--evidence", weak)
    assert refused.returncode == 1 and "decisions cite only verified or certified" in refused.stderr
    first = run_cli(data_dir, "decisions", "record", "Use Redis", "--evidence", verified, "--json")
    assert first.returncode == 0, first.stderr
    first_id = json.loads(first.stdout)["decision_id"]
    second = run_cli(
        data_dir,
        "decisions",
        "record",
        "Use Redis 7",
        "--evidence",
        verified,
        "--supersedes",
        first_id,
    )
    assert second.returncode == 0, second.stderr
    # Without --json, one human line: the id, the action, what it replaces, its evidence.
    assert second.stdout.startswith("recorded dec_") and "Use Redis 7" in second.stdout
    assert f"supersedes {first_id}" in second.stdout and f"{verified} (verified)" in second.stdout
    assert len(second.stdout.splitlines()) == 1
    listed = json.loads(run_cli(data_dir, "decisions", "--json").stdout)
    assert [d["supersedes"] for d in listed] == [None, first_id]
    assert listed[0]["evidence"] == [{"entry_id": verified, "stage": "verified"}]
    before = table_rows(db, "decision_evidence")
    rebuild_all(db)
    assert table_rows(db, "decision_evidence") == before
    assert json.loads(run_cli(data_dir, "decisions", "--json").stdout) == listed
