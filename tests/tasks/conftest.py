"""Fixtures for the task-system tests: a migrated DuckDB connection inside a transaction,
the way the pipeline hands one to `TaskResolver`."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from axiom.store.db import Database


@pytest.fixture
def conn(db: Database) -> Iterator[duckdb.DuckDBPyConnection]:
    """One write unit on the test's real DuckDB file (committed at the end of the test)."""
    with db.write() as connection:
        yield connection
