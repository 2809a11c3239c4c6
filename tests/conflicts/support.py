"""A deterministic extractor for conflict tests: each session's entries are scripted with
quotes taken from its own messages, so the real pipeline aligns, promotes and detects."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from axiom.extract.types import ExtractedEntry, ExtractedEvidence, ExtractionResult, FactFields
from axiom.graduation.idris import IdrisChecker
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database


@dataclass(frozen=True)
class Said:
    """One message of a session and the entry extracted from it."""

    text: str
    type: str = "decision"
    subject: str | None = None
    value: str | None = None
    previous_value: str | None = None
    when: str | None = None


class ScriptedExtractor:
    """Turns every message of a session into one entry quoting the whole message."""

    name, model, prompt_hash = "scripted-conflicts", "v1", "c" * 64

    def __init__(self, script: dict[str, list[Said]]) -> None:
        self.script = script

    def extract(self, transcript: Transcript) -> ExtractionResult:
        entries = tuple(
            ExtractedEntry.create(
                transcript.session_id,
                said.type,  # type: ignore[arg-type]
                said.text,
                said.text,
                (ExtractedEvidence(i, said.text),),
                fact=FactFields(
                    subject=said.subject, value=said.value, previous_value=said.previous_value
                ),
            )
            for i, said in enumerate(self.script[transcript.session_id])
        )
        return ExtractionResult(entries, self.name, self.model, self.prompt_hash)


def run_sessions(
    db: Database, workdir: Path, script: dict[str, list[Said]], modules: str = "idris2"
) -> Pipeline:
    """Ingest and process the scripted sessions in order, through the real pipeline
    (`modules`: when its validator writes an Idris module, `IdrisChecker`)."""
    transcripts = [
        Transcript(
            sid,
            "demo",
            "json",
            tuple(Message(i, "user", s.text, timestamp=s.when) for i, s in enumerate(said)),
            started_at=said[0].when,
        )
        for sid, said in script.items()
    ]
    ingest_transcripts(db, transcripts)
    checker = IdrisChecker(modules=modules)
    pipeline = Pipeline(extractor=ScriptedExtractor(script), workdir=workdir, checker=checker)
    for sid in script:
        report = process_session(db, sid, pipeline)
        assert report.status == "success", report.error
    return pipeline
