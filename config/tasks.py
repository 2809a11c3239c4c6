"""Celery tasks: thin adapters over the core. Every task is idempotent (dedupe keys), since
Redis redelivers a task whose worker died before acknowledging it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from celery import Task

from axiom.agent import drain as hook_spool
from axiom.config import AxiomConfig
from axiom.entries.demotion import demote
from axiom.graduation.demotion import CURRENT_POLICY
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Transcript
from axiom.ingest.uploads import settle_upload
from axiom.outbox.service import drain_outbox, reconcile_outbox
from axiom.pipeline.batch import ordered_sessions
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from axiom.projections import project_all
from axiom.store.migrate import open_database
from config.celery import BROKER_DOWN, app

log = logging.getLogger(__name__)
# An import of a broken folder can have thousands of issues; the result keeps the first.
MAX_ISSUES_REPORTED = 200
CAUGHT_UP_BY_BEAT = "beat's periodic task of the same name catches up once the broker is back"


def _queue(task: Task, *args: Any, instead: str = CAUGHT_UP_BY_BEAT) -> None:
    """Queue follow-up work. With the broker down, the work of the task that calls this is
    already done (and stored): say what was not queued and what a person does about it,
    rather than fail that task."""
    try:
        task.delay(*args)
    except BROKER_DOWN as exc:
        log.error("the broker does not answer (%s): %s was not queued; %s", exc, task.name, instead)


def _process_later(session_ids: list[str]) -> None:
    instead = (
        f"{len(session_ids)} session(s), {session_ids[0]} first, wait for the memory pipeline:"
        " send the same import again once the broker is back (it appends nothing twice)"
    )
    _queue(process_in_order, session_ids, instead=instead)


@app.task(name="axiom.ingest_path", bind=True)
def ingest_path(
    self: Task, path: str, fmt: str | None = None, within: list[str] | None = None
) -> dict[str, Any]:
    """Append the sessions found at `path`; the writer projects them; the memory pipeline
    then runs over them one after the other, oldest first (`process_in_order`). Each file
    read is reported as the task's PROGRESS state (the import page polls it). `within`:
    the import roots a path from the import page was confined to."""
    db = open_database()
    done = 0
    reporting = bool(self.request.id)  # called through the broker, not directly

    def on_file(_: Path) -> None:
        nonlocal done, reporting
        done += 1
        if not reporting:
            return
        try:
            self.update_state(state="PROGRESS", meta={"files_done": done})
        except BROKER_DOWN as exc:  # progress is for the page; the import goes on
            reporting = False
            log.error("the broker does not answer (%s): import progress is not reported", exc)

    roots = [Path(r) for r in within] if within is not None else None
    try:
        report = import_paths(db, [Path(path)], fmt=fmt, project=False, on_file=on_file, within=roots)  # fmt: skip
    except BaseException:  # a failed import keeps an upload for a retry, its secrets masked
        settle_upload(db.path.parent, Path(path), problems=1)
        raise
    settle_upload(db.path.parent, Path(path), len(report.issues))
    _queue(project)
    if report.session_ids:
        _process_later(ordered_sessions(db, report.session_ids))
    return {
        "files": report.files,
        "sessions_new": report.sessions_new,
        "sessions_unchanged": report.sessions_unchanged,
        "sessions_merged": report.sessions_merged,
        "sessions_extended": report.sessions_extended,
        "messages": report.messages,
        "messages_added": report.messages_added,
        "issues": [str(i) for i in report.issues[:MAX_ISSUES_REPORTED]],
        "issue_count": len(report.issues),
    }


@app.task(name="axiom.import_spooled_hooks")
def import_spooled_hooks() -> dict[str, Any]:
    """Import the transcripts of the spooled hook payloads and run the memory pipeline over
    their sessions, then delete the payloads. The web spools each hook payload before it
    queues this task, and beat runs it every minute, so a payload whose task the broker
    lost, or that a hook spooled itself, is imported all the same. A task killed midway is
    redelivered and finds the payloads still there (import and pipeline append nothing
    twice)."""
    db = open_database()
    report = hook_spool.drain(db, AxiomConfig.from_env().data_dir, delete=False)
    for line in report.failures:  # how many payloads went to spool/failed/, and why
        log.warning("%s", line)
    for session_id in ordered_sessions(db, report.session_ids):
        try:
            process(session_id)
        except Exception:  # one session's failure must not hold the others' payloads
            log.exception("processing session %s failed", session_id)
    hook_spool.forget_payloads(report)
    return {
        "payloads": report.payloads,
        "transcripts": report.transcripts,
        "session_ids": report.session_ids,
        "failed": report.failed,
    }


@app.task(name="axiom.ingest_transcript")
def ingest_transcript(transcript: dict[str, Any]) -> dict[str, Any]:
    (result,) = ingest_transcripts(
        open_database(), [Transcript.from_json(transcript)], actor="api", project=False
    )
    _queue(project)
    _process_later([result.event.session_id])
    return {"event_id": result.event.event_id, "created": result.created}


@app.task(name="axiom.process_session")
def process(session_id: str) -> dict[str, Any]:
    """The memory pipeline for one session (idempotent: a rerun appends nothing)."""
    # Projects in the same transaction: promotions read the entries table for corroboration.
    report = process_session(open_database(), session_id, configured_pipeline())
    _queue(drain)  # the session's messages, entries and tasks are queued for embedding now
    return {"session_id": session_id, "status": report.status, "entries": report.entries}


@app.task(name="axiom.process_sessions")
def process_in_order(session_ids: list[str]) -> dict[str, Any]:
    """The memory pipeline for ``session_ids[0]``, then this task again for the rest.

    The next session is queued only when this one is done, so the order holds on a
    `default` queue of any concurrency (separate `process` tasks could run side by side
    and reach the write lock in any order). A session that raises is logged and the rest
    still go on; a redelivered task re-runs its head, which appends nothing twice.
    """
    if not session_ids:
        return {"session_id": None, "remaining": 0}
    head, rest = session_ids[0], list(session_ids[1:])
    try:
        result = process(head)
    except Exception as exc:  # one session's failure must not strand the later ones
        log.exception("processing session %s failed", head)
        result = {"session_id": head, "status": "failed", "error": repr(exc)[:1000]}
    if rest:
        _process_later(rest)
    return {**result, "remaining": len(rest)}


@app.task(name="axiom.project")
def project() -> dict[str, int]:
    return project_all(open_database())


# A drain holds the writer queue; after this long it yields to projections queued meanwhile
# and re-queues itself if jobs remain.
DRAIN_BUDGET_SECONDS = 20.0


@app.task(name="axiom.drain_outbox")
def drain() -> dict[str, Any]:
    """Embed pending outbox jobs into LanceDB (writer queue: the only LanceDB writer)."""
    report = drain_outbox(open_database(), max_seconds=DRAIN_BUDGET_SECONDS)
    if report.remaining and not report.error and not report.busy:
        _queue(drain)
    return report.to_json()


@app.task(name="axiom.reconcile_outbox")
def reconcile() -> dict[str, Any]:
    """Re-queue stuck, failed (attempts left) and lost outbox jobs."""
    return reconcile_outbox(open_database()).to_json()


@app.task(name="axiom.demote_entries")
def demote_daily() -> dict[str, Any]:
    """Half-life demotion with the current policy version, computed for now (beat, daily).
    A redelivered run appends nothing: the stages already show the first run's work."""
    run = demote(open_database(), CURRENT_POLICY)
    return {"policy_version": run.policy_version, "demoted": run.appended}
