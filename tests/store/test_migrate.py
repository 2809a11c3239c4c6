from __future__ import annotations

import threading
from pathlib import Path

import pytest

from axiom.cli.main import main
from axiom.store.db import Database
from axiom.store.events import EventStore, NewEvent
from axiom.store.migrate import MIGRATIONS_DIR, migrate, migration_files, pending_migrations

SEED_TABLES = {
    "events",
    "event_dedup",
    "projection_offsets",
    "entries",
    "entities",
    "entity_aliases",
    "edges",
    "vector_outbox",
    "build_runs",
    "decisions",
    "decision_evidence",
    "conflicts",
    "pipeline_metrics",
    "sessions",
    "messages",
}


def _schema(db: Database) -> list[tuple]:
    with db.read() as conn:
        return conn.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns"
            " ORDER BY table_name, column_name"
        ).fetchall()


def test_it_creates_every_table_of_the_design(tmp_path: Path) -> None:
    db = Database(tmp_path / "a.duckdb")
    assert migrate(db) == [p.name for p in migration_files()]
    tables = {row[0] for row in _schema(db)}
    assert tables >= SEED_TABLES


def test_migrating_twice_is_a_no_op(tmp_path: Path) -> None:
    db = Database(tmp_path / "a.duckdb")
    migrate(db)
    before = _schema(db)
    assert migrate(db) == []
    assert _schema(db) == before


def test_no_migration_uses_jsonb() -> None:
    for path in MIGRATIONS_DIR.glob("*.sql"):
        assert "JSONB" not in path.read_text().upper(), path.name


def test_json_columns_are_json(tmp_path: Path) -> None:
    db = Database(tmp_path / "a.duckdb")
    migrate(db)
    types = {(t, c): d for t, c, d in _schema(db)}
    assert types[("events", "payload_json")] == "JSON"
    assert types[("entries", "evidence_json")] == "JSON"


def test_a_current_schema_is_checked_without_the_write_lock(
    db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """`stats` (which migrates first) runs while another reader holds the shared lock, so
    it never asked for the exclusive one, and it leaves the file untouched."""
    mtime = db.path.stat().st_mtime_ns
    results: list[int] = []
    with db.read():  # a reader in progress: a writer would wait for it
        worker = threading.Thread(target=lambda: results.append(main(["stats", "--json"])))
        worker.start()
        worker.join(timeout=30)
        finished = not worker.is_alive()
    worker.join()
    assert finished and results == [0]
    assert '"events": 0' in capsys.readouterr().out
    assert db.path.stat().st_mtime_ns == mtime
    assert pending_migrations(db) == []


def test_a_new_migration_is_seen_and_applied(tmp_path: Path) -> None:
    db = Database(tmp_path / "a.duckdb")
    assert pending_migrations(db) == [p.name for p in migration_files()]
    migrate(db)
    directory = tmp_path / "migrations"
    directory.mkdir()
    for path in migration_files():
        (directory / path.name).write_text(path.read_text())
    (directory / "9999_extra.sql").write_text("CREATE TABLE extra (x INTEGER);")
    assert pending_migrations(db, directory) == ["9999_extra.sql"]
    assert migrate(db, directory) == ["9999_extra.sql"]
    assert pending_migrations(db, directory) == []


def test_0011_keeps_an_existing_event_log_and_drops_its_indexes(tmp_path: Path) -> None:
    """A store written before 0011 keeps every event and dedupe row, in order, with its
    defaults; afterwards the log has no index or key to serialize at each checkpoint, and
    appends still dedupe (the writer's read, not a constraint) and keep ids unique."""
    older = tmp_path / "older"
    older.mkdir()
    for path in migration_files():
        if path.name < "0011":
            (older / path.name).write_text(path.read_text())
    db = Database(tmp_path / "a.duckdb")
    migrate(db, older)
    with db.write() as conn:
        store = EventStore(conn)
        store.append_many([NewEvent("x", {"n": n}, dedupe_key=f"k{n}") for n in range(5)])
        store.append(NewEvent("y", {"free": True}))
    with db.read() as conn:
        before = conn.execute("SELECT * FROM events ORDER BY rowid").fetchall()
        dedup = conn.execute("SELECT * FROM event_dedup ORDER BY rowid").fetchall()
    assert migrate(db) == ["0011_events_without_indexes.sql"]
    with db.read() as conn:
        assert conn.execute("SELECT * FROM events ORDER BY rowid").fetchall() == before
        assert conn.execute("SELECT * FROM event_dedup ORDER BY rowid").fetchall() == dedup
        indexed = conn.execute(
            "SELECT count(*) FROM duckdb_indexes() WHERE table_name IN ('events', 'event_dedup')"
        ).fetchone()[0]
        keyed = conn.execute(
            "SELECT count(*) FROM duckdb_constraints() WHERE table_name IN"
            " ('events', 'event_dedup') AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')"
        ).fetchone()[0]
    assert (indexed, keyed) == (0, 0)
    with db.write() as conn:
        store = EventStore(conn)
        again = store.append_many([NewEvent("x", {"n": 9}, dedupe_key=f"k{n}") for n in (1, 7, 7)])
        assert [r.created for r in again] == [False, True, False]
        assert again[0].event.payload == {"n": 1} and again[2].event == again[1].event
        rows = conn.execute(
            "SELECT count(*), count(DISTINCT event_id), max(sensitivity), min(created_at)"
            " FROM events"
        ).fetchone()
    assert rows[:3] == (7, 7, "normal") and rows[3] is not None
