"""A tiny runner for the numbered `.sql` files in `migrations_duckdb/`.

Each file is applied once, inside the same transaction as the row recording it, so a
crash mid-way leaves no half-applied migration behind.
"""

from __future__ import annotations

from pathlib import Path

from axiom.store.db import Database

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations_duckdb"


def migration_files(directory: Path = MIGRATIONS_DIR) -> list[Path]:
    return sorted(p for p in directory.glob("[0-9][0-9][0-9][0-9]_*.sql"))


def migrate(db: Database, directory: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply pending migrations; return the names applied (empty when up to date)."""
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
    return applied
