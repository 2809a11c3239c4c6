"""`forget`: remove a session, an entry or every session before a date from disk.

In order, each step needed for the forgotten text to leave every file:

1. under the write lock, the events about the target are rewritten to their redacted form
   (`EventStore.redact`, the one exception to append-only: ids kept, text gone) and a
   `redacted` event records what, when and who (never the content). That event is a
   tombstone: a later import of the same session is refused (`axiom.ingest.importer`), and
   an entry's dedupe keys stay taken, so processing the session again does not bring it
   back. In the same unit, kept events lose their references to the tasks and conditions
   only the target created (`axiom.forgetting.copies`: the matcher's candidate titles),
   and the outbox jobs of the forgotten messages, entries and tasks are deleted (so no
   reconcile re-queues them and no drain fails them as "item not found"). Every read
   snapshot (a copy of the file, `axiom.store.snapshots`) is deleted in the same unit, so
   no page is served the text from a copy made before. A gone task that kept sessions
   spoke of takes what they said of it along: `plan` lists each (`lost_tasks`), and so
   does the report;
2. every derived table is rebuilt by replay (projectors skip redacted events), which
   removes the derived rows;
3. the LanceDB rows (messages, entries, the gone tasks) are deleted and every table compacted with no grace period, so no
   old version holding them is left (`purge_rows`);
4. the DuckDB file is rewritten into a fresh file under the exclusive lock
   (`rewrite_database`): freed blocks that still held the text are not carried over;
5. log files under `<data dir>/logs/` lose every line naming the target or quoting it, the
   hook spool every payload doing so, `<data dir>/uploads/` every kept upload doing so, and
   `<data dir>/idris/` the validator module of each forgotten entry (`axiom.forgetting.scrub`).

Step 1 writes a pending marker before its commit and step 5 removes it: a run killed in
between is finished by the next `forget`, `process` or `up` (`finish_pending`).
"""

from __future__ import annotations

import errno
import hashlib
import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from axiom.config import AxiomConfig
from axiom.entries.queries import get_entry, list_entries
from axiom.forgetting import pending
from axiom.forgetting.copies import LostTask, gone_entities, lost_tasks, scrub_copies
from axiom.forgetting.pending import Pending
from axiom.forgetting.scrub import remove_modules, scrub_logs, scrub_spool, scrub_uploads
from axiom.ingest.session_queries import get_session, list_messages, session_ids_started_before
from axiom.outbox.projector import forget_jobs
from axiom.projections import rebuild_all
from axiom.store import snapshots
from axiom.store.db import Database, OutOfSpace
from axiom.store.event_types import REDACTED
from axiom.store.events import EventStore, NewEvent
from axiom.store.rewrite import rewrite_database
from axiom.vectors.lance_store import entry_row_id, purge_rows, task_row_id

MIN_SCRUB_CHARS = 12  # shorter texts are too common to scrub log lines by


class ForgetError(ValueError):
    """A forget request that names nothing, or more than one target."""


class ForgetTargetNotFound(ForgetError):
    """The session or entry to forget does not exist."""


class ForgetUnfinished(OutOfSpace):
    """A forget whose commit is done (its events redacted, its tombstone stored) ran out of
    space while finishing: rebuilding the tables, rewriting the file. Running the same
    command again, or `process`, finishes it (`finish_pending`)."""

    def __init__(self, redaction_id: str, where: Path) -> None:
        super().__init__(
            errno.ENOSPC,
            f"the forget {redaction_id} is recorded (its events are redacted), but finishing"
            f" it (rebuilding the tables, rewriting the file without its text) needs more"
            f" space on the disk holding {where}; until then its rows may still be shown."
            " Free some space, then run the same command again (or `python -m axiom"
            " process`) to finish it",
        )
        self.redaction_id = redaction_id


@dataclass(frozen=True)
class ForgetTarget:
    """Exactly one of: a session, an entry, every session started before a time."""

    session_id: str | None = None
    entry_id: str | None = None
    before: datetime | None = None

    def __post_init__(self) -> None:
        given = [x for x in (self.session_id, self.entry_id, self.before) if x is not None]
        if len(given) != 1:
            raise ForgetError("name exactly one of: a session, an entry, a date")

    @property
    def scope(self) -> str:
        return "session" if self.session_id else "entry" if self.entry_id else "before"


@dataclass
class ForgetPlan:
    """What a target covers: sessions and entries, the texts to scrub from logs, and the
    tasks kept sessions spoke of that go with it (`axiom.forgetting.copies.lost_tasks`)."""

    session_ids: list[str] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    lost_tasks: list[LostTask] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.session_ids and not self.entry_ids


@dataclass
class ForgetReport:
    redaction_id: str
    scope: str
    session_ids: list[str]
    entry_ids: list[str]
    events_redacted: int = 0
    copies_scrubbed: int = 0
    outbox_jobs_removed: int = 0
    vector_rows_deleted: int = 0
    log_lines_removed: int = 0
    spool_payloads_removed: int = 0
    uploads_removed: int = 0
    validator_modules_removed: int = 0
    database_bytes: int = 0
    lost_tasks: list[dict] = field(default_factory=list)  # `LostTask.to_json` of each

    def to_json(self) -> dict:
        return asdict(self)


def plan(conn: duckdb.DuckDBPyConnection, target: ForgetTarget) -> ForgetPlan:
    """The sessions and entries `target` covers (nothing is changed)."""
    out = ForgetPlan()
    if target.entry_id is not None:
        entry = get_entry(conn, target.entry_id)
        if entry is None:
            raise ForgetTargetNotFound(f"unknown entry {target.entry_id!r}")
        out.entry_ids = [entry.entry_id]
        out.texts = [entry.title, entry.content, *(str(e.get("quote", "")) for e in entry.evidence)]
        return _with_lost_tasks(conn, out)
    if target.session_id is not None:
        if get_session(conn, target.session_id) is None:
            raise ForgetTargetNotFound(f"unknown session {target.session_id!r}")
        out.session_ids = [target.session_id]
    else:
        out.session_ids = session_ids_started_before(conn, target.before)  # type: ignore[arg-type]
    for sid in out.session_ids:
        out.texts += [m.text for m in list_messages(conn, sid)]
        for entry in list_entries(conn, session_id=sid):
            out.entry_ids.append(entry.entry_id)
            out.texts += [entry.title, entry.content]
    return _with_lost_tasks(conn, out)


def _with_lost_tasks(conn: duckdb.DuckDBPyConnection, covered: ForgetPlan) -> ForgetPlan:
    store = EventStore(conn)
    doomed = store.ids_about(covered.session_ids, covered.session_ids + covered.entry_ids)
    covered.lost_tasks = lost_tasks(store, gone_entities(store, doomed)[0], doomed)
    return covered


def _redaction_id(target: ForgetTarget, who: str, at: str) -> str:
    key = json.dumps(
        [target.scope, target.session_id, target.entry_id, str(target.before), who, at]
    )
    return "red_" + hashlib.sha256(key.encode()).hexdigest()[:16]


def forget(
    db: Database, target: ForgetTarget, who: str, config: AxiomConfig | None = None
) -> ForgetReport:
    """Forget `target` everywhere on disk (see the module docstring); idempotent. Work an
    earlier run left unfinished is finished first."""
    config = config or AxiomConfig(data_dir=db.path.parent)
    finish_pending(db, config)
    report, work = commit(db, target, who, config)
    return finish(db, config, work, report)


def commit(
    db: Database, target: ForgetTarget, who: str, config: AxiomConfig
) -> tuple[ForgetReport, Pending]:
    """Step 1, under the write lock: redact the events and append the `redacted` tombstone,
    with a pending marker written before the commit (see `axiom.forgetting.pending`)."""
    at = datetime.now(UTC).isoformat()
    redaction_id = _redaction_id(target, who, at)
    with db.write() as conn:
        covered = plan(conn, target)
        report = ForgetReport(redaction_id, target.scope, covered.session_ids, covered.entry_ids)
        report.lost_tasks = [lost.to_json() for lost in covered.lost_tasks]
        store = EventStore(conn)
        doomed = store.ids_about(covered.session_ids, covered.session_ids + covered.entry_ids)
        tasks, conditions = gone_entities(store, doomed)
        report.events_redacted = store.redact(doomed, redaction_id)
        report.copies_scrubbed = scrub_copies(store, tasks + conditions, doomed)
        report.outbox_jobs_removed = forget_jobs(
            conn, covered.session_ids, covered.entry_ids + tasks
        )
        store.append(
            NewEvent(
                REDACTED,
                {
                    "redaction_id": redaction_id,
                    "scope": target.scope,
                    "session_ids": covered.session_ids,
                    "entry_ids": covered.entry_ids,
                    "before": target.before.isoformat() if target.before else None,
                    "who": who,
                    "at": at,
                    "events_redacted": report.events_redacted,
                },
                dedupe_key=_dedupe_key(redaction_id),
                actor=f"person:{who}",
            )
        )
        # No page is served the text from an older copy, nor from one published before
        # the tables are rebuilt and the file rewritten (the hold lasts until `finish`).
        snapshots.hold(db.path, redaction_id)
        snapshots.delete_all(db.path)
        texts = [t for t in covered.texts if len(t) >= MIN_SCRUB_CHARS]
        work = Pending(
            redaction_id, target.scope, covered.session_ids, covered.entry_ids, texts, tasks
        )
        pending.write(config.forget_pending_dir, work)
    return report, work


def finish(db: Database, config: AxiomConfig, work: Pending, report: ForgetReport) -> ForgetReport:
    """Steps 2 to 5; each is idempotent, so a run cut short is finished by running it again.
    The marker goes last. A full disk in the database's steps is `ForgetUnfinished`."""
    try:
        return _finish(db, config, work, report)
    except OutOfSpace as exc:
        raise ForgetUnfinished(work.redaction_id, db.path.parent) from exc


def _finish(db: Database, config: AxiomConfig, work: Pending, report: ForgetReport) -> ForgetReport:
    rebuild_all(db)
    report.vector_rows_deleted = purge_rows(
        config.lancedb_dir,
        [entry_row_id(e) for e in work.entry_ids] + [task_row_id(t) for t in work.task_ids],
        work.session_ids,
    )
    report.database_bytes = rewrite_database(db)
    ids = work.session_ids + work.entry_ids
    report.log_lines_removed = scrub_logs(config.data_dir / "logs", ids, work.texts)
    report.spool_payloads_removed = scrub_spool(config.spool_dir, ids, work.texts)
    report.uploads_removed = scrub_uploads(config.data_dir, ids, work.texts)
    report.validator_modules_removed = remove_modules(config.idris_dir, work.entry_ids)
    pending.done(config.forget_pending_dir, work.redaction_id)
    snapshots.release(db.path, work.redaction_id)
    return report


def finish_pending(db: Database, config: AxiomConfig) -> list[ForgetReport]:
    """Finish every `forget` whose commit happened but whose cleanup did not end (a crash,
    a kill); drop the markers of runs that never committed. Run by `forget`, `process`
    and `up` before their own work."""
    reports = []
    for work in pending.waiting(config.forget_pending_dir):
        with db.read(fresh=True) as conn:  # never a snapshot: it may predate the commit
            committed = EventStore(conn).get_by_dedupe_key(_dedupe_key(work.redaction_id))
        if committed is None:
            pending.done(config.forget_pending_dir, work.redaction_id)
            snapshots.release(db.path, work.redaction_id)
            continue
        report = ForgetReport(work.redaction_id, work.scope, work.session_ids, work.entry_ids)
        reports.append(finish(db, config, work, report))
    return reports


def _dedupe_key(redaction_id: str) -> str:
    return f"{REDACTED}:{redaction_id}"
