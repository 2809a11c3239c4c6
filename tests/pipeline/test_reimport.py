"""Re-importing a session whose text changed: new entries for the new text, the old ones
superseded (by events), their citations still opening the text they quoted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from axiom.entries.queries import list_entries
from axiom.evidence.citations import get_citation
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.batch import process_many
from axiom.pipeline.process import Pipeline, _BuildWriter, process_session
from axiom.projections import rebuild_all
from axiom.store.db import Database
from axiom.store.migrate import migrate
from tests.locomo_data import LOCOMO_DEV

LOCOMO = LOCOMO_DEV
CHANGED = ("session_1", "session_2")  # the second version rewrites these two sessions only


def _pipeline(tmp_path: Path) -> Pipeline:
    return Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")


def _versions(tmp_path: Path) -> tuple[Path, Path]:
    """Sessions 1-4 of LoCoMo 26, and the same with every turn of sessions 1-2 prefixed."""
    data = json.loads((LOCOMO / "26.json").read_text())
    keep = {f"session_{n}" for n in range(1, 5)}
    first = {
        k: v for k, v in data.items() if k.startswith("speaker_") or k.split("_date")[0] in keep
    }
    second = json.loads(json.dumps(first))
    for name in CHANGED:
        for turn in second[name]:
            turn["text"] = "Well, " + turn["text"]
    paths = []
    for label, conv in (("v1", first), ("v2", second)):
        folder = tmp_path / label
        folder.mkdir()
        path = folder / "26.json"  # session ids conv-26-session_N in both versions
        path.write_text(json.dumps(conv))
        paths.append(path)
    return paths[0], paths[1]


def _import_and_process(db: Database, path: Path, tmp_path: Path) -> list[str]:
    sids = import_paths(db, [path]).session_ids
    for sid in sids:
        process_session(db, sid, _pipeline(tmp_path))
    return sids


def _citations(db: Database) -> dict[str, str]:
    with db.read() as conn:
        return dict(conn.execute("SELECT citation_id, entry_id FROM citations").fetchall())


def test_a_changed_session_supersedes_its_old_entries_and_keeps_every_span_exact(
    db: Database, tmp_path: Path, snapshot, event_count
) -> None:
    v1, v2 = _versions(tmp_path)
    sids = _import_and_process(db, v1, tmp_path)
    with db.read() as conn:
        before = {e.entry_id: e for e in list_entries(conn)}
    cited_before = _citations(db)
    assert before and cited_before

    _import_and_process(db, v2, tmp_path)
    with db.read() as conn:
        after = {e.entry_id: e for e in list_entries(conn)}
        texts = {
            (s, i): t
            for s, i, t in conn.execute(
                "SELECT session_id, message_index, text FROM messages"
            ).fetchall()
        }
    changed = {f"conv-26-{name}" for name in CHANGED}
    assert set(sids) > changed

    # Every active entry's exact evidence is exactly its quote in the stored text.
    active = [e for e in after.values() if e.status == "active"]
    exact = [ev for e in active for ev in e.evidence if ev.get("method") == "exact"]
    assert len(exact) >= len(active) > 0
    for ev in exact:
        text = texts[(ev["session_id"], ev["message_index"])]
        assert text[ev["span_start"] : ev["span_end"]] == ev["quote"]

    # The changed sessions: every old entry superseded, new ones quoting "Well, ..." text.
    for eid, old in before.items():
        if old.session_id in changed:
            assert after[eid].status == "superseded", old.title
        else:  # unchanged sessions keep their entries, ids, status and stage
            assert (after[eid].status, after[eid].stage) == (old.status, old.stage), old.title
    new_in_changed = [e for e in active if e.session_id in changed]
    assert new_in_changed and not set(e.entry_id for e in new_in_changed) & set(before)
    with db.read() as conn:
        replaced = conn.execute(
            "SELECT count(*) FROM entries WHERE status = 'superseded' AND superseded_by IS NOT NULL"
        ).fetchone()[0]
    assert replaced > 0

    # Existing citation ids never change; a superseded entry's citation opens the old text.
    cited_after = _citations(db)
    assert {c: cited_after.get(c) for c in cited_before} == cited_before
    with db.read() as conn:
        for cid, eid in cited_before.items():
            citation = get_citation(conn, cid)
            assert citation is not None
            quote = next(
                ev["quote"]
                for ev in before[eid].evidence
                if ev.get("method") == "exact"
                and (ev["message_index"], ev["span_start"])
                == (citation.message_index, citation.span_start)
            )
            assert citation.quote == quote
            assert citation.outdated == (before[eid].session_id in changed)

    # Importing either version again appends nothing; rebuild equals incremental.
    events = event_count(db)
    incremental = snapshot(db)
    _import_and_process(db, v1, tmp_path)
    _import_and_process(db, v2, tmp_path)
    assert event_count(db) == events
    rebuild_all(db)
    assert snapshot(db) == incremental


def test_a_changed_session_written_in_batches_supersedes_as_one_by_one(
    db: Database, tmp_path: Path
) -> None:
    """`write_builds` tells a build its session has one ingest (`ingested_once`) so it
    skips the read for entries to supersede: on a re-import that read must still run."""
    v1, v2 = _versions(tmp_path)
    batched = Database(tmp_path / "batched.duckdb")
    migrate(batched)
    for path in (v1, v2):
        _import_and_process(db, path, tmp_path)
        sids = import_paths(batched, [path]).session_ids
        process_many(batched, sids, _pipeline(tmp_path))

    def states(database: Database) -> set[tuple[str, str, str, str | None]]:
        with database.read() as conn:
            rows = conn.execute("SELECT entry_id, status, stage, superseded_by FROM entries")
            return set(rows.fetchall())

    assert states(batched) == states(db)
    assert {s for _, s, _, _ in states(batched)} >= {"active", "superseded"}


def _session(*texts: str) -> Transcript:
    return Transcript(
        "s", "demo", "json", tuple(Message(i, "user", t) for i, t in enumerate(texts))
    )


def test_an_entry_whose_text_comes_back_is_active_again(
    db: Database, tmp_path: Path, snapshot, event_count, monkeypatch: pytest.MonkeyPatch
) -> None:
    status_reads = []
    read_statuses = _BuildWriter._statuses

    def counted(self: _BuildWriter, entry_ids: list[str]) -> dict[str, tuple[str, bool]]:
        status_reads.append(len(entry_ids))
        return read_statuses(self, entry_ids)

    monkeypatch.setattr(_BuildWriter, "_statuses", counted)
    decision = "We decided to use DuckDB for the event store."
    versions = [
        _session(decision, "Nothing else."),
        _session("We decided to use SQLite for the event store.", "Nothing else."),
        _session(decision, "Nothing else, really."),
    ]
    statuses, reads = [], []
    for version in versions:
        ingest_transcripts(db, [version])
        process_session(db, "s", _pipeline(tmp_path))
        with db.read() as conn:
            statuses.append(sorted((e.title, e.status) for e in list_entries(conn)))
        reads.append(len(status_reads))
    duck = "We decided to use DuckDB for the event store"
    lite = "We decided to use SQLite for the event store"
    assert statuses == [
        [(duck, "active")],
        [(duck, "superseded"), (lite, "active")],
        [(duck, "active"), (lite, "superseded")],
    ]
    assert reads == [0, 1, 2]  # the first build has no earlier entries: no status read
    tables, events = snapshot(db), event_count(db)
    process_session(db, "s", _pipeline(tmp_path))
    assert event_count(db) == events
    rebuild_all(db)
    assert snapshot(db) == tables
