"""Counts across the store, for `axiom stats`, the dashboard and the health endpoint."""

from __future__ import annotations

from typing import Any

import duckdb

from axiom.entries.queries import count_entries, count_entries_by_stage
from axiom.ingest.session_queries import count_messages, count_sessions
from axiom.outbox.queries import count_jobs_by_status
from axiom.store.events import EventStore
from axiom.store.projection import count_projection_errors

STAGES = ("raw", "working", "candidate", "verified", "certified")


def collect_stats(conn: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    return {
        "events": EventStore(conn).count(),
        "sessions": count_sessions(conn),
        "messages": count_messages(conn),
        "entries": count_entries(conn),
        "entries_by_stage": {**dict.fromkeys(STAGES, 0), **count_entries_by_stage(conn)},
        "projection_errors": count_projection_errors(conn),
        "outbox_by_status": count_jobs_by_status(conn),
    }
