"""Everything the dashboard shows, read in one unit: counts, memories and sessions per
day, stage mix, pipeline health, the newest memories and the open conflicts.

Each figure is an aggregate in SQL or a bounded read, so the dashboard stays fast at
100,000 entries (`bench/bench_pages.py`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from axiom.builds.queries import count_runs_by_status
from axiom.conflicts.queries import ConflictRow, list_conflicts
from axiom.entries.queries import EntryRow, entries_per_day, recent_entries
from axiom.ingest.session_queries import sessions_per_day
from axiom.observability.stats import collect_stats

RECENT = 8
BELIEVED = ("active", "contested")


@dataclass(frozen=True)
class Dashboard:
    stats: dict[str, Any]
    entries_per_day: list[tuple[Any, int]]
    sessions_per_day: list[tuple[Any, int]]
    runs_by_status: dict[str, int]
    recent: list[EntryRow]
    open_conflicts: list[ConflictRow]

    @property
    def backlog(self) -> int:
        """Vector outbox jobs not yet embedded."""
        by_status = self.stats["outbox_by_status"]
        return int(by_status.get("pending", 0) + by_status.get("processing", 0))

    @property
    def healthy(self) -> bool:
        """No projection error, no failed outbox job, no failed build."""
        return not (
            self.stats["projection_errors"]
            or self.stats["outbox_by_status"].get("failed")
            or self.runs_by_status.get("failed")
        )


def collect_dashboard(conn: duckdb.DuckDBPyConnection, days: int = 30) -> Dashboard:
    """The dashboard's figures, `days` days of history each."""
    return Dashboard(
        stats=collect_stats(conn),
        entries_per_day=entries_per_day(conn, days),
        sessions_per_day=sessions_per_day(conn, days),
        runs_by_status=count_runs_by_status(conn),
        recent=recent_entries(conn, BELIEVED, RECENT),
        open_conflicts=list_conflicts(conn, status="open", limit=RECENT),
    )
