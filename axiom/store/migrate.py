"""A tiny runner for the numbered `.sql` files in `migrations_duckdb/`.

Each file is applied once, inside the same transaction as the row recording it, so a
crash mid-way leaves no half-applied migration behind.

Every command migrates first, so `migrate` looks with a read (shared lock, read-only
connection) before it writes: when the schema is current, which is nearly always, a
command that only reads (`stats`, listings) never takes the write lock.
"""

from __future__ import annotations

import logging
from pathlib import Path

import duckdb

from axiom.config import AxiomConfig
from axiom.store import snapshots
from axiom.store.db import Database, DatabaseMissing
from axiom.store.rewrite import mend_row_groups

log = logging.getLogger(__name__)

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
    with a read: no write lock is taken then). A store that existed before has its row
    groups mended first (`axiom.store.rewrite.mend_row_groups`: a rewrite, under the
    exclusive lock, only when one is too long for the writers)."""
    if not pending_migrations(db, directory):
        return []
    if db.path.exists():  # before the migrations' write, which could not replay a WAL
        _mend(db)
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


def _mend(db: Database) -> None:
    """`mend_row_groups`, when a new version brings migrations: a failure (a full disk)
    is logged with what to run, and the store stays readable as it was."""
    try:
        mend_row_groups(db)
    except (duckdb.Error, OSError) as exc:
        log.warning(
            "%s could not be rewritten for its row groups (%s); writes to it may fail until"
            " `axiom compact` succeeds",
            db.path,
            exc,
        )


def open_database(config: AxiomConfig | None = None) -> Database:
    """The configured database, migrated to the current schema: the one way every driver
    (CLI, Celery tasks, web, API) gets its `Database`."""
    config = config or AxiomConfig.from_env()
    db = Database(config.duckdb_path)
    migrate(db)
    return db
