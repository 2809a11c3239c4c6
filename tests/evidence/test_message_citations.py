"""Message citations: every ingested message opens as a citation of its whole text."""

from __future__ import annotations

from pathlib import Path

from axiom.evidence.citations import citations_for_entry, get_citation, message_citations
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import project_all, rebuild_all
from axiom.store.db import Database
from axiom.store.migrate import migrate


def _chat(texts: list[str], sid: str = "s1") -> Transcript:
    return Transcript(
        session_id=sid,
        project="p",
        source="markdown",
        messages=tuple(Message(index=i, role="user", text=t) for i, t in enumerate(texts)),
    )


def _message_rows(db: Database) -> list[tuple]:
    with db.read() as conn:
        return conn.execute(
            "SELECT citation_id, session_id, message_index, span_end, quote_hash, created_at"
            " FROM message_citations ORDER BY session_id, message_index"
        ).fetchall()


def test_each_message_gets_a_citation_that_opens_the_whole_message(db: Database) -> None:
    ingest_transcripts(db, [_chat(["첫 메시지: 배포는 화요일", "second message"])])
    project_all(db)
    with db.read() as conn:
        ids = message_citations(conn, [("s1", 0), ("s1", 1), ("s1", 2)])
        first = get_citation(conn, ids[("s1", 0)])
    assert set(ids) == {("s1", 0), ("s1", 1)}
    assert all(8 <= len(cid.removeprefix("mem:")) <= 10 for cid in ids.values())
    assert first.kind == "message" and first.entry_id is None
    assert first.quote == "첫 메시지: 배포는 화요일"
    assert (first.span_start, first.span_end) == (0, len(first.quote))
    assert first.before == "" and first.after == "" and first.method == "message"
    assert first.to_json()["kind"] == "message"


def test_reimporting_and_rebuilding_keep_every_id(db: Database, tmp_path: Path) -> None:
    ingest_transcripts(db, [_chat(["one", "two"])])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")
    process_session(db, "s1", pipeline)
    before = _message_rows(db)
    ingest_transcripts(db, [_chat(["one", "two"])])  # same content: no new event
    ingest_transcripts(db, [_chat(["one", "two", "three"])])  # grown: one new message
    project_all(db)
    grown = _message_rows(db)
    assert grown[:2] == before and len(grown) == 3
    rebuild_all(db)
    assert _message_rows(db) == grown


def test_migration_0006_back_fills_and_keeps_entry_citation_ids(
    db: Database, tmp_path: Path, sample_session: Path
) -> None:
    """A database from before migration 0006 (entry citations only, the citations projector
    at the end of the log) gets message citations on the next projection run, and every
    entry keeps the citation ids it had."""
    (sid,) = import_paths(db, [sample_session]).session_ids
    process_session(db, sid, Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "i"))
    with db.write() as conn:  # back to the schema and state of before 0006
        conn.execute("DROP TABLE message_citations")
        conn.execute("DELETE FROM schema_migrations WHERE name = '0006_message_citations.sql'")
    with db.read() as conn:
        entries = [r[0] for r in conn.execute("SELECT entry_id FROM entries").fetchall()]
        before = {e: citations_for_entry(conn, e) for e in entries}
    assert any(before.values())

    assert migrate(db) == ["0006_message_citations.sql"]
    project_all(db)
    with db.read() as conn:
        after = {e: citations_for_entry(conn, e) for e in entries}
        n_messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        n_cited = conn.execute("SELECT count(*) FROM message_citations").fetchone()[0]
    assert after == before
    assert n_cited == n_messages > 0
