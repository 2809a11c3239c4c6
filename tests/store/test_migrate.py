from __future__ import annotations

from pathlib import Path

from axiom.store.db import Database
from axiom.store.migrate import MIGRATIONS_DIR, migrate, migration_files

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
