"""What the build runs page shows: the newest runs with the memories each produced, runs
per day by status, and per-stage latency of the pipeline, in one read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import duckdb

from axiom.builds.queries import (
    BuildRun,
    StageLatency,
    count_runs_by_status,
    recent_runs,
    runs_per_day,
    stage_latencies,
)
from axiom.entries.queries import count_entries_by_build


@dataclass(frozen=True)
class BuildReport:
    runs: list[BuildRun]  # newest first
    entries_by_build: dict[str, int]
    by_status: dict[str, int]
    per_day: list[tuple[date, str, int]]
    stages: list[StageLatency]


def collect_build_report(conn: duckdb.DuckDBPyConnection, limit: int = 50) -> BuildReport:
    """The newest `limit` runs and the aggregates over all of them."""
    runs = recent_runs(conn, limit)
    return BuildReport(
        runs=runs,
        entries_by_build=count_entries_by_build(conn, [r.build_id for r in runs]),
        by_status=count_runs_by_status(conn),
        per_day=runs_per_day(conn),
        stages=stage_latencies(conn),
    )
