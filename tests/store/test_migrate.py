from __future__ import annotations

import threading
from pathlib import Path

import pytest

from axiom.cli.main import main
from axiom.store.db import Database
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


def _store_before(tmp_path: Path, version: str, row: str) -> Database:
    """A store as the versions of Axiom before migration `version` left it, holding `row`."""
    db = Database(tmp_path / "a.duckdb")
    before = [p.name for p in migration_files() if p.name < version]
    with db.write() as conn:
        for name in before:
            conn.execute((MIGRATIONS_DIR / name).read_text(encoding="utf-8"))
        conn.execute(
            "CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY,"
            " applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)"
        )
        conn.executemany("INSERT INTO schema_migrations (name) VALUES (?)", [[n] for n in before])
        conn.execute(row)
    return db


def _index_names(db: Database) -> set[str]:
    with db.read() as conn:
        return {r[0] for r in conn.execute("SELECT index_name FROM duckdb_indexes()").fetchall()}


def test_the_event_log_keeps_only_its_keys(tmp_path: Path) -> None:
    """Secondary indexes on `events` served no read and cost every append and checkpoint
    (migration 0012); a store made before has them dropped, keys and rows kept."""
    db = _store_before(
        tmp_path,
        "0012",
        "INSERT INTO events (event_id, seq, ts, event_type, actor, payload_json, checksum)"
        " VALUES ('ev_1', 1, now(), 'x', 'test', '{}', 'c')",
    )
    names = _index_names(db)
    assert {"idx_events_ts", "idx_events_type", "idx_events_session"} <= names
    assert migrate(db)[0] == "0012_drop_event_indexes.sql"
    with db.read() as conn:
        on_events = conn.execute(
            "SELECT index_name FROM duckdb_indexes() WHERE table_name = 'events'"
        ).fetchall()
        assert on_events == []  # the primary key is a constraint, not listed here
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (1,)
    with pytest.raises(Exception, match="Duplicate key"), db.write() as conn:
        conn.execute(
            "INSERT INTO events (event_id, seq, ts, event_type, actor, payload_json, checksum)"
            " VALUES ('ev_1', 2, now(), 'x', 'test', '{}', 'c')"
        )


DROPPED_IN_0013 = {
    "idx_sessions_started",
    "idx_entries_type",
    "idx_entries_stage",
    "idx_entities_type_key",
    "idx_entities_status",
    "idx_edges_src_rel",
    "idx_edges_dst_rel",
    "idx_edges_rel",
    "idx_outbox_status",
    "idx_conflict_facts_type",
}
KEPT = {"idx_citations_entry"}


def test_the_derived_tables_keep_their_keys_and_the_index_reads_use(tmp_path: Path) -> None:
    """Migration 0013 drops the derived tables' indexes no read scans through (every
    checkpoint wrote them whole again); a store made before keeps its rows, its keys and
    the citations' index by entry."""
    db = _store_before(
        tmp_path,
        "0013",
        "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json, stage,"
        " status) VALUES ('ent_1', now(), 'fact', 't', '{}', 'raw', 'active')",
    )
    assert _index_names(db) >= DROPPED_IN_0013 | KEPT
    assert migrate(db) == ["0013_drop_derived_indexes.sql"]
    assert _index_names(db) == KEPT
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM entries").fetchone() == (1,)
    with pytest.raises(Exception, match="Duplicate key"), db.write() as conn:
        conn.execute(
            "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json, stage,"
            " status) VALUES ('ent_1', now(), 'fact', 't', '{}', 'raw', 'active')"
        )


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
