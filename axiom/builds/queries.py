"""Read-side queries over `build_runs` and `pipeline_metrics`, for the builds page and the
dashboard's pipeline health. Aggregates run in SQL: a store may hold many thousand runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

import duckdb

RUN_STATUSES = ("running", "success", "failed")


@dataclass(frozen=True)
class BuildRun:
    build_id: str
    started_at: datetime
    finished_at: datetime | None
    duration_ms: float | None
    status: str
    error: str | None
    extractor_model: str
    embedder_model: str
    schema_version: str


@dataclass(frozen=True)
class StageLatency:
    stage: str
    runs: int
    p50_ms: float
    p95_ms: float
    failures: int


def recent_runs(conn: duckdb.DuckDBPyConnection, limit: int = 50) -> list[BuildRun]:
    """The newest `limit` build runs, newest first, with their duration: the work of their
    stages (`work_ms`), else start to finish (a run that timed no stage)."""
    rows = conn.execute(
        "SELECT build_id, started_at, finished_at,"
        " coalesce(work_ms, epoch_ms(finished_at) - epoch_ms(started_at)), status, error,"
        " extractor_model,"
        " embedder_model, schema_version FROM build_runs"
        " ORDER BY started_at DESC, build_id LIMIT ?",
        [int(limit)],
    ).fetchall()
    return [BuildRun(*r) for r in rows]


def count_runs_by_status(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """status -> build runs (every known status present, 0 when none)."""
    counts = dict.fromkeys(RUN_STATUSES, 0)
    counts.update(
        conn.execute("SELECT status, count(*) FROM build_runs GROUP BY status").fetchall()
    )
    return counts


def runs_per_day(conn: duckdb.DuckDBPyConnection, days: int = 30) -> list[tuple[date, str, int]]:
    """(day, status, runs started) over the last `days` days that end at the newest run."""
    return conn.execute(
        "WITH r AS (SELECT CAST(started_at AS DATE) AS d, status FROM build_runs)"
        " SELECT d, status, count(*) FROM r"
        " WHERE d > (SELECT max(d) FROM r) - CAST(? AS INTEGER)"
        " GROUP BY d, status ORDER BY d, status",
        [int(days)],
    ).fetchall()


def stage_latencies(conn: duckdb.DuckDBPyConnection) -> list[StageLatency]:
    """Per pipeline stage: measurements, median and p95 latency, failed measurements."""
    rows = conn.execute(
        "SELECT stage, count(*), quantile_cont(latency_ms, 0.5), quantile_cont(latency_ms, 0.95),"
        " count(*) FILTER (WHERE NOT success) FROM pipeline_metrics"
        " GROUP BY stage ORDER BY stage"
    ).fetchall()
    return [StageLatency(*r) for r in rows]
