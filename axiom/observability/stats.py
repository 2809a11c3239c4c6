"""Counts across the store, for `axiom stats`, the dashboard and the health endpoint."""

from __future__ import annotations

from typing import Any

import duckdb

STAGES = ("raw", "working", "candidate", "verified", "certified")
OUTBOX_STATUSES = ("pending", "processing", "done", "failed")


def _grouped(conn: duckdb.DuckDBPyConnection, sql: str, keys: tuple[str, ...]) -> dict[str, int]:
    counts = dict.fromkeys(keys, 0)
    for key, n in conn.execute(sql).fetchall():
        counts[key] = n
    return counts


def collect_stats(conn: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    def scalar(sql: str) -> int:
        return conn.execute(sql).fetchone()[0]

    return {
        "events": scalar("SELECT count(*) FROM events"),
        "sessions": scalar("SELECT count(*) FROM sessions"),
        "messages": scalar("SELECT count(*) FROM messages"),
        "entries": scalar("SELECT count(*) FROM entries"),
        "entries_by_stage": _grouped(
            conn, "SELECT stage, count(*) FROM entries GROUP BY stage", STAGES
        ),
        "projection_errors": scalar("SELECT count(*) FROM projection_errors"),
        "outbox_by_status": _grouped(
            conn, "SELECT status, count(*) FROM vector_outbox GROUP BY status", OUTBOX_STATUSES
        ),
    }
