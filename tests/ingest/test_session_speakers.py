"""A session records who it is between (`sessions.speakers`), so search can tell the
people its entries are about from the things; migration 0011 fills the sessions stored
before it exactly as the projector fills new ones."""

from __future__ import annotations

from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.session_queries import named_speakers
from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import Database
from axiom.store.migrate import MIGRATIONS_DIR


def _session(sid: str, metas: list[dict]) -> Transcript:
    messages = tuple(Message(i, "user", f"turn {i}", meta=m) for i, m in enumerate(metas))
    return Transcript(sid, "p", "json", messages)


SESSIONS = [
    _session("chat", [{"speaker": "Melanie"}, {"speaker": "Caroline"}, {"speaker": "Melanie"}]),
    _session("named", [{"name": "Gina"}, {"speaker": " ", "name": "Jon"}, {"speaker": 5}]),
    _session("blank", [{"speaker": "\t", "name": "Cy"}, {"name": "\n"}, {"speaker": None}]),
    _session("code", [{}, {"dia_id": "x"}]),  # user and assistant: no named speaker
]


def _speakers(db: Database) -> dict[str, list[str] | None]:
    with db.read() as conn:
        return dict(conn.execute("SELECT session_id, speakers FROM sessions").fetchall())


def test_sessions_record_their_named_speakers_sorted(db: Database) -> None:
    ingest_transcripts(db, SESSIONS)
    assert _speakers(db) == {
        "chat": ["Caroline", "Melanie"],
        "named": ["Gina", "Jon"],
        "blank": ["Cy"],
        "code": None,
    }
    with db.read() as conn:
        assert sorted(named_speakers(conn)) == ["Caroline", "Cy", "Gina", "Jon", "Melanie"]


def test_migration_0011_fills_stored_sessions_as_the_projector_does(db: Database) -> None:
    ingest_transcripts(db, SESSIONS)
    projected = _speakers(db)
    sql = (MIGRATIONS_DIR / "0011_session_speakers.sql").read_text()
    update = sql[sql.index("UPDATE sessions") :]
    with db.write() as conn:
        conn.execute("UPDATE sessions SET speakers = NULL")
        conn.execute(update)
    assert _speakers(db) == projected
