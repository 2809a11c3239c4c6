"""Read-side queries over `vector_outbox`: job counts and errors, for status and stats."""

from __future__ import annotations

import duckdb

OUTBOX_STATUSES = ("pending", "processing", "done", "failed")


def count_jobs_by_status(
    conn: duckdb.DuckDBPyConnection, embedding_version: str | None = None
) -> dict[str, int]:
    """status -> jobs (every status present, 0 when none), of one embedding version or all."""
    where, params = "", []
    if embedding_version is not None:
        where, params = " WHERE embedding_version = ?", [embedding_version]
    counts = dict.fromkeys(OUTBOX_STATUSES, 0)
    for status, n in conn.execute(
        f"SELECT status, count(*) FROM vector_outbox{where} GROUP BY status", params
    ).fetchall():
        counts[status] = n
    return counts


def count_unindexed(conn: duckdb.DuckDBPyConnection, embedding_version: str) -> int:
    """Jobs of `embedding_version` waiting for the writer or being embedded: items a search
    of that version cannot find yet."""
    return conn.execute(
        "SELECT count(*) FROM vector_outbox WHERE status IN ('pending', 'processing')"
        " AND embedding_version = ?",
        [embedding_version],
    ).fetchone()[0]


def top_errors(
    conn: duckdb.DuckDBPyConnection, embedding_version: str, limit: int = 5
) -> list[tuple[str, int]]:
    """(error, failed jobs) of one embedding version, most frequent first."""
    return conn.execute(
        "SELECT error, count(*) FROM vector_outbox WHERE status = 'failed'"
        " AND embedding_version = ? GROUP BY error ORDER BY count(*) DESC LIMIT ?",
        [embedding_version, int(limit)],
    ).fetchall()
