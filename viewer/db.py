"""The web process's handle on the DuckDB file.

A `Database` holds no connection: it only knows the file and its lock, and every read is
one short `with db.read() as conn:` unit. So one instance per data dir is shared by all
threads. The first use in a process migrates the file (that takes the write lock once);
after that requests only ever take the shared read lock.
"""

from __future__ import annotations

import threading
from pathlib import Path

from django.conf import settings

from axiom.config import AxiomConfig
from axiom.store.db import Database
from axiom.store.migrate import migrate

_lock = threading.Lock()
_databases: dict[Path, Database] = {}


def get_database() -> Database:
    """The migrated database under `settings.AXIOM_DATA_DIR`, created on first use."""
    path = AxiomConfig(data_dir=Path(settings.AXIOM_DATA_DIR)).duckdb_path
    with _lock:
        database = _databases.get(path)
        if database is None:
            database = Database(path)
            migrate(database)
            _databases[path] = database
    return database


def reset() -> None:
    """Forget every cached database (tests point the settings at a fresh data dir)."""
    with _lock:
        _databases.clear()
