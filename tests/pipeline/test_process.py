from __future__ import annotations

import json
from pathlib import Path

import pytest

from axiom.builds.projector import NESTED_STAGES
from axiom.builds.queries import recent_runs
from axiom.entries.queries import entry_history, list_entries
from axiom.extract.llm import LLMExtractor
from axiom.extract.rules import RuleExtractor
from axiom.extract.types import ExtractedEntry, ExtractedEvidence, ExtractionResult
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline import batch
from axiom.pipeline.batch import process_many
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import project_all, rebuild_all
from axiom.store.db import Database
from tests.locomo_data import LOCOMO_DEV

LOCOMO = LOCOMO_DEV


def _pipeline(tmp_path: Path, extractor=None) -> Pipeline:  # type: ignore[no-untyped-def]
    return Pipeline(extractor=extractor or RuleExtractor(), workdir=tmp_path / "idris")


class ScriptedExtractor:
    """An extractor whose output the test chooses: quotes missing from the source, bad indices."""

    name, model, prompt_hash = "scripted", "scripted-v1", "0" * 64

    def __init__(self, entries: list[ExtractedEntry]) -> None:
        self.entries = tuple(entries)

    def extract(self, transcript: Transcript) -> ExtractionResult:
        return ExtractionResult(self.entries, self.name, self.model, self.prompt_hash)


class ExplodingExtractor(ScriptedExtractor):
    def extract(self, transcript: Transcript) -> ExtractionResult:
        raise RuntimeError("extractor crashed")


def _session(sid: str, *texts: str) -> Transcript:
    return Transcript(
        sid, "demo", "json", tuple(Message(i, "user", t) for i, t in enumerate(texts))
    )


def test_the_sample_session_yields_entries_with_exact_spans(
    db: Database, sample_session: Path, tmp_path: Path
) -> None:
    (sid,) = import_paths(db, [sample_session]).session_ids
    report = process_session(db, sid, _pipeline(tmp_path))
    assert report.status == "success" and report.entries > 5
    with db.read() as conn:
        entries = list_entries(conn)
        texts = dict(conn.execute("SELECT message_index, text FROM messages").fetchall())
        builds = conn.execute("SELECT status, extractor_model FROM build_runs").fetchall()
        stages = {
            s for (s,) in conn.execute("SELECT DISTINCT stage FROM pipeline_metrics").fetchall()
        }
    assert builds == [("success", "rules:rules-v1")]
    assert {"extract", "align", "validate", "materialize", "promote", "resolve_tasks"} <= stages
    assert {e.stage for e in entries} == {"verified"}
    todos = [e for e in entries if e.task and e.task["source"] == "todowrite"]
    assert len(todos) >= 3  # quoted from the TodoWrite list written into the message text
    assert all(e.evidence[0]["method"] == "exact" for e in todos)
    exact = [ev for e in entries for ev in e.evidence if ev["method"] == "exact"]
    assert exact
    for ev in exact:
        assert texts[ev["message_index"]][ev["span_start"] : ev["span_end"]] == ev["quote"]


def test_a_build_run_lasts_the_work_of_its_stages(
    db: Database, sample_session: Path, tmp_path: Path
) -> None:
    """A build written in one flush has both of its events at one time: its duration is
    the sum of its outermost stages (the analysis done outside the lock included)."""
    (sid,) = import_paths(db, [sample_session]).session_ids
    process_session(db, sid, _pipeline(tmp_path))
    with db.read() as conn:
        (run,) = recent_runs(conn)
        stages = dict(conn.execute("SELECT stage, latency_ms FROM pipeline_metrics").fetchall())
    outer = sum(ms for stage, ms in stages.items() if stage not in NESTED_STAGES)
    assert run.duration_ms == pytest.approx(outer) and run.duration_ms > 0
    assert stages["materialize"] >= stages["promote"]  # nested: counted once, in materialize


def test_runs_stored_before_work_ms_are_filled_by_replaying_the_builds_projector(
    db: Database, sample_session: Path, tmp_path: Path
) -> None:
    """Migration 0010 replays the builds projector: a run stored without `work_ms` gets it,
    as a rebuild would give it."""
    (sid,) = import_paths(db, [sample_session]).session_ids
    process_session(db, sid, _pipeline(tmp_path))
    with db.write() as conn:
        conn.execute("UPDATE build_runs SET work_ms = NULL")
        conn.execute("DELETE FROM projection_offsets WHERE projector_name = 'builds'")
    project_all(db)
    with db.read() as conn:
        (run,) = recent_runs(conn)
        ((work,),) = conn.execute("SELECT work_ms FROM build_runs").fetchall()
    assert work is not None and work > 0 and run.duration_ms == pytest.approx(work)


def test_processing_twice_appends_nothing(
    db: Database, sample_session: Path, tmp_path: Path, snapshot, event_count
) -> None:
    (sid,) = import_paths(db, [sample_session]).session_ids
    process_session(db, sid, _pipeline(tmp_path))
    before, tables = event_count(db), snapshot(db)
    again = process_session(db, sid, _pipeline(tmp_path))
    import_paths(db, [sample_session])
    assert again.skipped and again.events_appended == 0
    assert event_count(db) == before
    assert snapshot(db) == tables


def test_rebuild_reproduces_every_derived_table(
    db: Database, sample_session: Path, tmp_path: Path, snapshot
) -> None:
    sids = import_paths(db, [sample_session, LOCOMO / "30.json"]).session_ids
    for sid in sids[:4]:
        process_session(db, sid, _pipeline(tmp_path))
    incremental = snapshot(db)
    assert incremental["entries"] and incremental["citations"] and incremental["entities"]
    rebuild_all(db)
    assert snapshot(db) == incremental


def test_bad_quotes_are_recorded_and_the_rest_still_processes(db: Database, tmp_path: Path) -> None:
    ingest_transcripts(db, [_session("bad", "We decided to ship on Friday.", "Second message.")])
    entries = [
        ExtractedEntry.create(
            "bad",
            "decision",
            "Ship Friday",
            "ship",
            (ExtractedEvidence(0, "We decided to ship on Friday"),),
        ),
        ExtractedEntry.create(
            "bad",
            "fact",
            "Ghost",
            "x",
            (ExtractedEvidence(0, "words that are nowhere in the text"),),
        ),
        ExtractedEntry.create("bad", "fact", "Far", "x", (ExtractedEvidence(7, "Second message"),)),
    ]
    report = process_session(db, "bad", _pipeline(tmp_path, ScriptedExtractor(entries)))
    assert report.status == "success"
    with db.read() as conn:
        rows = {e.title: e for e in list_entries(conn)}
        reasons = {e.title: e.evidence[0]["failure_reason"] for e in rows.values()}
        history = entry_history(conn, rows["Ghost"].entry_id)
    assert rows["Ship Friday"].stage == "verified"
    assert (rows["Ghost"].stage, rows["Far"].stage) == ("raw", "raw")
    assert reasons == {
        "Ship Friday": None,
        "Ghost": "not_found",
        "Far": "message_index_out_of_range",
    }
    blocked = [h for h in history if h["type"] == "promotion_blocked"]
    assert blocked and "not aligned" in blocked[0]["payload"]["reason"]


def test_a_crashing_extractor_fails_the_build_with_its_error(db: Database, tmp_path: Path) -> None:
    ingest_transcripts(
        db, [_session("boom", "hello"), _session("fine", "We decided to use DuckDB.")]
    )
    failed = process_session(db, "boom", _pipeline(tmp_path, ExplodingExtractor([])))
    ok = process_session(db, "fine", _pipeline(tmp_path))
    assert failed.status == "failed" and "extractor crashed" in (failed.error or "")
    assert ok.status == "success"
    with db.read() as conn:
        builds = dict(conn.execute("SELECT status, error FROM build_runs").fetchall())
        metric = conn.execute(
            "SELECT success, error FROM pipeline_metrics WHERE stage = 'extract' AND NOT success"
        ).fetchone()
    assert "extractor crashed" in builds["failed"]
    assert metric[0] is False and "extractor crashed" in metric[1]


def test_corroboration_from_two_sessions_certifies(db: Database, tmp_path: Path) -> None:
    line = "We decided to use DuckDB for the event store."
    ingest_transcripts(db, [_session("one", line), _session("two", "Recap: " + line)])
    process_session(db, "one", _pipeline(tmp_path))
    process_session(db, "two", _pipeline(tmp_path))
    with db.read() as conn:
        stages = sorted(e.stage for e in list_entries(conn, entry_type="decision"))
    assert stages == ["certified", "certified"]


def test_an_llm_that_times_out_fails_the_build_not_the_process(
    db: Database, tmp_path: Path, fake_llm
) -> None:
    ingest_transcripts(db, [_session("llm", "We decided to use DuckDB.")])
    fake_llm.delay = 1.5
    extractor = LLMExtractor(base_url=fake_llm.url, model="m", timeout=0.3)
    report = process_session(db, "llm", _pipeline(tmp_path, extractor))
    assert report.status == "failed" and report.entries == 0
    assert "timed out after 0.3s" in (report.error or "")
    with db.read() as conn:
        ((status, error),) = conn.execute("SELECT status, error FROM build_runs").fetchall()
        extracted = conn.execute(
            "SELECT count(*) FROM events WHERE event_type = 'memory_extracted'"
        ).fetchone()[0]
    assert status == "failed" and "timed out" in error and extracted == 0


def test_an_unknown_session_is_a_clear_error(db: Database, tmp_path: Path) -> None:
    with pytest.raises(LookupError, match="no session_ingested event"):
        process_session(db, "nope", _pipeline(tmp_path))


def test_sessions_an_llm_extracts_are_analysed_ahead_of_the_writes_and_all_land(
    db: Database, tmp_path: Path, fake_llm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LLM extractor says it waits on its endpoint (`remote`), so `process_many`
    analyses the next chunk on a second thread while it writes this one; over a real
    local endpoint every session's build lands, each once."""
    line = "We decided to use DuckDB for events."
    fake_llm.reply = json.dumps(
        {
            "entries": [
                {
                    "type": "decision",
                    "title": "Use DuckDB for events",
                    "content": "The event store is DuckDB.",
                    "evidence": [{"messageIndex": 0, "quote": line}],
                }
            ]
        }
    )
    sids = ["a", "b", "c", "d"]
    ingest_transcripts(db, [_session(sid, line) for sid in sids])
    monkeypatch.setattr(batch, "ANALYSE_CHUNK", 1)
    extractor = LLMExtractor(base_url=fake_llm.url, model="m", timeout=5)
    assert extractor.remote
    reports = process_many(db, sids, _pipeline(tmp_path, extractor))
    assert [(r.session_id, r.status, r.entries) for r in reports] == [
        (sid, "success", 1) for sid in sids
    ]
    assert fake_llm.calls == len(sids)
    with db.read() as conn:
        sessions = sorted(e.session_id for e in list_entries(conn, entry_type="decision"))
    assert sessions == sids
