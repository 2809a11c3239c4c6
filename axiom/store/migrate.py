"""A tiny runner for the numbered `.sql` files in `migrations_duckdb/`.

Each file is applied once, inside the same transaction as the row recording it, so a
crash mid-way leaves no half-applied migration behind.

Every command migrates first, so `migrate` looks with a read (shared lock, read-only
connection) before it writes: when the schema is current, which is nearly always, a
command that only reads (`stats`, listings) never takes the write lock.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from axiom.config import AxiomConfig
from axiom.store import snapshots
from axiom.store.db import Database, DatabaseMissing
from axiom.store.rewrite import mend_row_groups

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations_duckdb"


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[Path]:
    return sorted(p for p in directory.glob("[0-9][0-9][0-9][0-9]_*.sql"))


def pending_migrations(db: Database, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Names of the migrations not yet applied, read without the write lock (all of them
    when the database does not exist yet)."""
    names = [p.name for p in migration_files(directory)]
    try:
        with db.read(fresh=True) as conn:
            done = {r[0] for r in conn.execute("SELECT name FROM schema_migrations").fetchall()}
    except (DatabaseMissing, duckdb.CatalogException):
        return names
    return [name for name in names if name not in done]


def migrate(db: Database, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply pending migrations; return the names applied (empty when up to date, found
    with a read: no write lock is taken then)."""
    if not pending_migrations(db, directory):
        return []
    if db.path.exists():  # once, on the first run of a new version (`mend_row_groups`)
        mend_row_groups(db)
    applied: list[str] = []
    with db.write() as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " name VARCHAR PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)"
        )
        done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations").fetchall()}
        for path in migration_files(directory):
            if path.name in done:
                continue
            conn.execute(path.read_text(encoding="utf-8"))
            conn.execute("INSERT INTO schema_migrations (name) VALUES (?)", [path.name])
            applied.append(path.name)
        if applied:  # a snapshot of the old schema must not answer the new code's reads
            snapshots.delete_all(db.path)
    return applied


def open_database(config: AxiomConfig | None = None) -> Database:
    """The configured database, migrated to the current schema: the one way every driver
    (CLI, Celery tasks, web, API) gets its `Database`."""
    config = config or AxiomConfig.from_env()
    db = Database(config.duckdb_path)
    migrate(db)
    return db
