"""Bad input is logged as well as recorded: one WARNING line per unaligned quote, per LLM
reply that is not JSON, per LLM timeout, naming the session and what was lost."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from axiom.entries.queries import list_entries
from axiom.extract.llm import LLMExtractor
from axiom.extract.types import ExtractedEntry, ExtractedEvidence, ExtractionResult
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database


class Scripted:
    name, model, prompt_hash = "scripted", "scripted-v1", "1" * 64

    def __init__(self, *entries: ExtractedEntry) -> None:
        self.entries = entries

    def extract(self, transcript: Transcript) -> ExtractionResult:
        return ExtractionResult(self.entries, self.name, self.model, self.prompt_hash)


def _ingest(db: Database, sid: str) -> None:
    messages = (Message(0, "user", "We decided to ship on Friday."), Message(1, "user", "Ok."))
    ingest_transcripts(db, [Transcript(sid, "demo", "json", messages)])


def _warnings(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelname == "WARNING"]


def test_each_unaligned_quote_logs_one_warning(
    db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    _ingest(db, "w1")
    extractor = Scripted(
        ExtractedEntry.create(
            "w1", "fact", "Ghost", "x", (ExtractedEvidence(0, "nowhere at all"),)
        ),
        ExtractedEntry.create("w1", "fact", "Far", "x", (ExtractedEvidence(9, "Ok."),)),
        ExtractedEntry.create("w1", "fact", "Blank", "x", (ExtractedEvidence(1, "  "),)),
        ExtractedEntry.create(
            "w1", "decision", "Ship", "x", (ExtractedEvidence(0, "We decided to ship on Friday."),)
        ),
    )
    caplog.set_level(logging.WARNING)
    process_session(db, "w1", Pipeline(extractor=extractor, workdir=tmp_path))
    with db.read() as conn:
        ids = {e.title: e.entry_id for e in list_entries(conn)}
    lines = _warnings(caplog, "axiom.pipeline.process")
    assert len(lines) == 3
    expected = {"Ghost": ("0", "not_found"), "Far": ("9", "message_index_out_of_range")}
    expected["Blank"] = ("1", "empty_quote")
    for title, (index, reason) in expected.items():
        (line,) = [line for line in lines if ids[title] in line]
        assert "session w1" in line and f"message {index}" in line and reason in line
    assert not any(ids["Ship"] in line for line in lines)


def test_an_llm_reply_that_is_not_json_logs_a_warning(
    db: Database, tmp_path: Path, fake_llm, caplog: pytest.LogCaptureFixture
) -> None:
    _ingest(db, "w2")
    fake_llm.reply = "Sorry, I cannot help with that."
    caplog.set_level(logging.WARNING)
    extractor = LLMExtractor(base_url=fake_llm.url, model="m", timeout=5)
    process_session(db, "w2", Pipeline(extractor=extractor, workdir=tmp_path))
    (line,) = _warnings(caplog, "axiom.extract.llm")
    assert "session w2" in line and "messages 0-1" in line and "not valid JSON" in line


def test_an_llm_timeout_logs_a_warning(
    db: Database, tmp_path: Path, fake_llm, caplog: pytest.LogCaptureFixture
) -> None:
    _ingest(db, "w3")
    fake_llm.delay = 1.0
    caplog.set_level(logging.WARNING)
    extractor = LLMExtractor(base_url=fake_llm.url, model="m", timeout=0.2)
    process_session(db, "w3", Pipeline(extractor=extractor, workdir=tmp_path))
    (line,) = _warnings(caplog, "axiom.extract.llm")
    assert "session w3" in line and "messages 0-1" in line and "timed out after 0.2s" in line
