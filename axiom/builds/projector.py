"""Build runs: which extractor, embedder and validator produced a set of events.

A build id is derived from the spec and the ingest event it processes, so re-running the
same pipeline over the same session maps to the same build and dedupes to nothing new.
`build_runs` and `pipeline_metrics` are projections of `build_started`/`build_finished`.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from axiom.evidence.aligner import DEFAULT_FUZZY_THRESHOLD
from axiom.store.event_types import BUILD_FINISHED, BUILD_STARTED
from axiom.store.events import StoredEvent, canonical_json

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


class BuildProjector:
    name = "builds"
    event_types = (BUILD_STARTED, BUILD_FINISHED)
    tables = ("pipeline_metrics", "build_runs")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        p: dict[str, Any] = event.payload
        if event.event_type == BUILD_STARTED:
            spec = p["spec"]
            conn.execute(
                "INSERT INTO build_runs (build_id, started_at, extractor_model,"
                " extractor_prompt_hash, embedder_model, embedding_version, idris_version,"
                " schema_version, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running')"
                " ON CONFLICT (build_id) DO NOTHING",
                [
                    p["build_id"],
                    event.ts,
                    spec["extractor_model"],
                    spec["extractor_prompt_hash"],
                    spec["embedder_model"],
                    spec["embedding_version"],
                    spec["idris_version"],
                    spec["schema_version"],
                ],
            )
            return
        conn.execute(
            "UPDATE build_runs SET finished_at = ?, status = ?, error = ? WHERE build_id = ?",
            [event.ts, p["status"], p.get("error"), p["build_id"]],
        )
        for i, metric in enumerate(p.get("metrics", [])):
            conn.execute(
                "INSERT INTO pipeline_metrics (id, ts, stage, latency_ms, success, error, session_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING",
                [
                    f"{event.event_id}:{i}",
                    event.ts,
                    metric["stage"],
                    metric["latency_ms"],
                    metric["success"],
                    metric.get("error"),
                    event.session_id,
                ],
            )
