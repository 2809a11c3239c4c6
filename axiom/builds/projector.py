"""Build runs: which extractor, embedder and validator produced a set of events.

A build id is derived from the spec and the ingest event it processes, so re-running the
same pipeline over the same session maps to the same build and dedupes to nothing new.
`build_runs` and `pipeline_metrics` are projections of `build_started`/`build_finished`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from axiom.evidence.aligner import DEFAULT_FUZZY_THRESHOLD
from axiom.store.event_types import BUILD_FINISHED, BUILD_STARTED
from axiom.store.events import StoredEvent, canonical_json
from axiom.store.projection import Reject, fold_each, insert_new, insert_rows, raise_error

SCHEMA_VERSION = "2"


@dataclass(frozen=True)
class BuildSpec:
    extractor_model: str
    extractor_prompt_hash: str
    embedder_model: str
    embedding_version: str
    idris_version: str
    schema_version: str = SCHEMA_VERSION
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD

    def build_id_for(self, ingest_event_id: str) -> str:
        """Alignment with another fuzzy threshold is another build; the default threshold
        is left out of the hash so builds from before it was recorded keep their ids."""
        spec = asdict(self)
        if spec["fuzzy_threshold"] == DEFAULT_FUZZY_THRESHOLD:
            del spec["fuzzy_threshold"]
        digest = hashlib.sha256(
            canonical_json({"spec": spec, "ingest": ingest_event_id}).encode()
        ).hexdigest()
        return f"bld_{digest[:16]}"


@dataclass(frozen=True)
class StageMetric:
    stage: str
    latency_ms: float
    success: bool
    error: str | None = None


_RUN_COLUMNS = (
    "build_id, started_at, extractor_model, extractor_prompt_hash, embedder_model,"
    " embedding_version, idris_version, schema_version, status, finished_at, error, work_ms"
)
_METRIC_COLUMNS = "id, ts, stage, latency_ms, success, error, session_id"
FINISH = slice(8, 12)  # status, finished_at, error, work_ms in a `_run_row`
# Stages timed inside another stage ("materialize" holds both): left out of a build's work.
NESTED_STAGES = frozenset({"promote", "resolve_tasks"})


def _run_row(event: StoredEvent, p: dict[str, Any]) -> list[Any]:
    spec = p["spec"]
    return [
        p["build_id"],
        event.ts,
        spec["extractor_model"],
        spec["extractor_prompt_hash"],
        spec["embedder_model"],
        spec["embedding_version"],
        spec["idris_version"],
        spec["schema_version"],
        "running",
        None,
        None,
        None,
    ]


def work_ms(p: dict[str, Any]) -> float | None:
    """The build's work: its outermost stages' latencies summed (None when it timed none)."""
    stages = [m for m in p.get("metrics", []) if m.get("stage") not in NESTED_STAGES]
    return sum(float(m["latency_ms"]) for m in stages) if stages else None


def _metric_rows(event: StoredEvent, p: dict[str, Any]) -> list[list[Any]]:
    return [
        [
            f"{event.event_id}:{i}",
            event.ts,
            metric["stage"],
            metric["latency_ms"],
            metric["success"],
            metric.get("error"),
            event.session_id,
        ]
        for i, metric in enumerate(p.get("metrics", []))
    ]


class _Fold:
    """A batch of build events folded in order: runs and metrics to insert, and the last
    finish of each run already stored (`BuildProjector.apply_many`)."""

    def __init__(self, stored: set[str]) -> None:
        self.stored = stored
        self.runs: dict[str, list[Any]] = {}
        self.finished: dict[str, list[Any]] = {}  # stored run -> [status, finished_at, error]
        self.metrics: dict[str, list[Any]] = {}

    def step(self, event: StoredEvent) -> None:
        p: dict[str, Any] = event.payload
        if event.event_type == BUILD_STARTED:
            row = _run_row(event, p)
            if row[0] not in self.stored:
                self.runs.setdefault(row[0], row)
            return
        finish = [p["status"], event.ts, p.get("error"), work_ms(p)]
        build_id = p["build_id"]
        metrics = _metric_rows(event, p)
        if build_id in self.runs:
            self.runs[build_id][FINISH] = finish
        elif build_id in self.stored:
            self.finished[build_id] = finish
        for row in metrics:
            self.metrics.setdefault(row[0], row)

    def write(self, conn: duckdb.DuckDBPyConnection) -> None:
        insert_rows(conn, "build_runs", _RUN_COLUMNS, list(self.runs.values()))
        if self.finished:
            f = list(self.finished.values())
            conn.execute(
                "UPDATE build_runs SET status = v.status, finished_at = v.at, error = v.error,"
                " work_ms = v.work FROM (SELECT unnest(?) AS id, unnest(?) AS status,"
                " unnest(?::TIMESTAMP[]) AS at, unnest(?::VARCHAR[]) AS error,"
                " unnest(?::DOUBLE[]) AS work) v WHERE build_runs.build_id = v.id",
                [list(self.finished), *([x[i] for x in f] for i in range(4))],
            )
        insert_new(conn, "pipeline_metrics", _METRIC_COLUMNS, list(self.metrics.values()))


class BuildProjector:
    name = "builds"
    event_types = (BUILD_STARTED, BUILD_FINISHED)
    tables = ("pipeline_metrics", "build_runs")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        self.apply_many(conn, [event], raise_error)

    def apply_many(
        self, conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent], reject: Reject
    ) -> None:
        """`apply` over `events` in order: one read of the stored runs, one insert per
        table, at most one update; a finish sees its start's row through the fold."""
        ids = sorted({str(e.payload.get("build_id")) for e in events})
        rows = conn.execute(
            "SELECT build_id FROM build_runs WHERE build_id IN (SELECT unnest(?))", [ids]
        ).fetchall()
        fold = _Fold({r[0] for r in rows})
        fold_each(events, fold.step, reject)
        fold.write(conn)
