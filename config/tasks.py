"""Celery tasks: thin adapters over the core. Every task is idempotent (dedupe keys), since
Redis redelivers a task whose worker died before acknowledging it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from axiom.cli import open_database
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Transcript
from axiom.outbox.config import vectors_enabled
from axiom.outbox.service import drain_outbox, reconcile_outbox
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.projections import project_all
from config.celery import app


@app.task(name="axiom.ingest_path")
def ingest_path(path: str, fmt: str | None = None) -> dict[str, Any]:
    """Append the sessions found at `path`; the writer projects them."""
    report = import_paths(open_database(), [Path(path)], fmt=fmt, project=False)
    project.delay()
    for session_id in dict.fromkeys(report.session_ids):
        process.delay(session_id)
    return {
        "sessions_new": report.sessions_new,
        "sessions_unchanged": report.sessions_unchanged,
        "issues": [str(i) for i in report.issues],
    }


@app.task(name="axiom.ingest_transcript")
def ingest_transcript(transcript: dict[str, Any]) -> dict[str, Any]:
    (result,) = ingest_transcripts(
        open_database(), [Transcript.from_json(transcript)], actor="api", project=False
    )
    project.delay()
    process.delay(result.event.session_id)
    return {"event_id": result.event.event_id, "created": result.created}


@app.task(name="axiom.process_session")
def process(session_id: str) -> dict[str, Any]:
    """The memory pipeline for one session (idempotent: a rerun appends nothing)."""
    # Projects in the same transaction: promotions read the entries table for corroboration.
    report = process_session(open_database(), session_id, configured_pipeline())
    drain.delay()  # the session's messages, entries and tasks are queued for embedding now
    return {"session_id": session_id, "status": report.status, "entries": report.entries}


@app.task(name="axiom.project")
def project() -> dict[str, int]:
    return project_all(open_database())


# A drain holds the writer queue; after this long it yields to projections queued meanwhile
# and re-queues itself if jobs remain.
DRAIN_BUDGET_SECONDS = 20.0


@app.task(name="axiom.drain_outbox")
def drain() -> dict[str, Any]:
    """Embed pending outbox jobs into LanceDB (writer queue: the only LanceDB writer)."""
    if not vectors_enabled():
        return {"disabled": True}
    report = drain_outbox(open_database(), max_seconds=DRAIN_BUDGET_SECONDS)
    if report.remaining and not report.error and not report.busy:
        drain.delay()
    return report.to_json()


@app.task(name="axiom.reconcile_outbox")
def reconcile() -> dict[str, Any]:
    """Re-queue stuck, failed (attempts left) and lost outbox jobs."""
    if not vectors_enabled():
        return {"disabled": True}
    return reconcile_outbox(open_database()).to_json()
