"""Helpers shared by the pipeline tests: compare derived tables, count events."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from axiom.store.db import Database

DERIVED = (
    "sessions",
    "messages",
    "entries",
    "citations",
    "message_citations",
    "build_runs",
    "pipeline_metrics",
    "entities",
    "entity_aliases",
    "edges",
    "vector_outbox",
)
VOLATILE = {"created_at", "updated_at", "ingested_at"}

Snapshot = dict[str, list[tuple]]


def _snapshot(db: Database) -> Snapshot:
    """Every derived table, sorted, without the columns that record wall-clock time."""
    out = {}
    with db.read() as conn:
        for table in DERIVED:
            cols = [
                r[0] for r in conn.execute(f"DESCRIBE {table}").fetchall() if r[0] not in VOLATILE
            ]
            out[table] = conn.execute(
                f"SELECT {', '.join(cols)} FROM {table} ORDER BY ALL"
            ).fetchall()
    return out


def _event_count(db: Database) -> int:
    with db.read() as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


@pytest.fixture
def snapshot() -> Callable[[Database], Snapshot]:
    return _snapshot


@pytest.fixture
def event_count() -> Callable[[Database], int]:
    return _event_count
