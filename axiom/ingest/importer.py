"""Back-fills transcripts into the event store: parse → `session_ingested` → project.

Everything that does not need the database happens before the write lock is taken:
parsing, and `prepare_session` (normalize with `check_transcript`, apply the privacy filter,
prove the result projects with `session_rows`, build the payload and dedupe key). Each file
is then written in one short transaction that only appends its events and advances the
session projection. The transcript is immutable, so what was proven outside the lock is
what is appended inside it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from axiom.ingest.formats import UnknownFormat, discover, parse_file
from axiom.ingest.issues import InputIssue
from axiom.ingest.privacy.transcript import filter_transcript
from axiom.ingest.session_projector import SESSION_INGESTED, SessionProjector, session_rows
from axiom.ingest.transcript import Transcript
from axiom.ingest.validate import check_transcript
from axiom.store.db import Database
from axiom.store.event_types import REDACTED
from axiom.store.events import AppendResult, EventStore, NewEvent, canonical_json
from axiom.store.projection import run_projector, write_projecting

log = logging.getLogger("axiom.ingest")


@dataclass
class ImportReport:
    files: int = 0
    sessions_new: int = 0
    sessions_unchanged: int = 0
    messages: int = 0
    issues: list[InputIssue] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)

    @property
    def imported_anything(self) -> bool:
        return bool(self.sessions_new or self.sessions_unchanged)


def ingest_dedupe_key(transcript: Transcript) -> str:
    """Same session, same content → same key, wherever the file was read from."""
    content = transcript.to_json()
    content["meta"] = {k: v for k, v in content["meta"].items() if k != "path"}
    digest = hashlib.sha256(canonical_json(content).encode("utf-8")).hexdigest()
    return f"{SESSION_INGESTED}:{transcript.session_id}:{digest[:32]}"


@dataclass(frozen=True)
class PreparedSession:
    """A transcript ready to append: normalized, privacy-filtered and proven to project.
    Build it with `prepare_session` (outside the write lock)."""

    transcript: Transcript
    notes: tuple[str, ...]
    payload: dict[str, Any]
    dedupe_key: str


def prepare_session(transcript: Transcript) -> PreparedSession:
    """`check_transcript` normalizes it (ValueError if it cannot be stored), then the privacy
    filter runs, so nothing private ever reaches the event store, and what will be stored is
    proven to project (`session_rows`). No database access: call it before the lock."""
    checked, notes = check_transcript(transcript)
    stored = filter_transcript(checked)
    session_rows(stored)  # raises if the session projector could not fold it
    return PreparedSession(
        transcript=stored,
        notes=tuple(notes),
        payload={"transcript": stored.to_json()},
        dedupe_key=ingest_dedupe_key(stored),
    )


def append_session(
    conn: duckdb.DuckDBPyConnection, prepared: PreparedSession, actor: str = "import"
) -> AppendResult:
    """Record one prepared transcript as a `session_ingested` event (a no-op if already
    recorded). Only appends: the checks ran in `prepare_session`. A session that was
    forgotten (`redacted` tombstone, see `axiom.forgetting`) is not restored: the
    tombstone is returned, nothing appended."""
    store = EventStore(conn)
    tombstone = store.tombstone_for_session(prepared.transcript.session_id, REDACTED)
    if tombstone is not None:
        log.warning(
            "session %s was forgotten (%s): not restored",
            prepared.transcript.session_id,
            tombstone.payload.get("redaction_id"),
        )
        return AppendResult(tombstone, created=False)
    return store.append(
        NewEvent(
            event_type=SESSION_INGESTED,
            payload=prepared.payload,
            dedupe_key=prepared.dedupe_key,
            session_id=prepared.transcript.session_id,
            actor=actor,
        )
    )


def ingest_transcripts(
    db: Database,
    transcripts: Iterable[Transcript | PreparedSession],
    actor: str = "import",
    project: bool = True,
) -> list[AppendResult]:
    """Append the transcripts; with `project`, also advance the session tables in the same
    transaction (the CLI does; Celery's ingest task leaves projection to the writer).

    Transcripts are prepared (`prepare_session`, which raises ValueError for one that cannot
    be stored, before anything is written) and their notes logged before the write lock is
    taken; a `PreparedSession` is appended as it is."""
    prepared: list[PreparedSession] = []
    for item in transcripts:
        if isinstance(item, PreparedSession):
            prepared.append(item)
            continue
        session = prepare_session(item)
        for note in session.notes:
            log.warning("session %s: %s", session.transcript.session_id, note)
        prepared.append(session)

    def work(conn: duckdb.DuckDBPyConnection) -> list[AppendResult]:
        results = [append_session(conn, p, actor) for p in prepared]
        if project:
            run_projector(conn, SessionProjector())
        return results

    return write_projecting(db, work)


def import_paths(
    db: Database,
    paths: Iterable[Path],
    fmt: str | None = None,
    on_file: Callable[[Path], None] | None = None,
    project: bool = True,
) -> ImportReport:
    files, issues = discover(paths)
    report = ImportReport(issues=list(issues))
    for path in files:
        report.files += 1
        try:
            _import_file(db, path, fmt, project, report)
        except UnknownFormat:
            raise
        except Exception as exc:  # one file's surprise must not stop the other files
            log.debug("import of %s failed", path, exc_info=True)
            reason = f"not imported: {type(exc).__name__}: {exc}"[:500]
            report.issues.append(InputIssue(str(path), None, reason))
        if on_file:
            on_file(path)
    return report


def _import_file(
    db: Database, path: Path, fmt: str | None, project: bool, report: ImportReport
) -> None:
    parsed = parse_file(path, fmt)
    report.issues += parsed.issues
    prepared: list[PreparedSession] = []
    for transcript in parsed.transcripts:
        try:
            session = prepare_session(transcript)
        except ValueError as exc:
            reason = f"session {transcript.session_id!r} not imported: {exc}"
            report.issues.append(InputIssue(str(path), None, reason))
            continue
        sid = session.transcript.session_id
        report.issues += [InputIssue(str(path), None, f"session {sid}: {n}") for n in session.notes]
        prepared.append(session)
    if not prepared:
        return
    # Reported above, so not logged again (`ingest_transcripts` logs the notes only of the
    # transcripts it prepares itself).
    results = ingest_transcripts(db, prepared, project=project)
    for session, result in zip(prepared, results, strict=True):
        report.session_ids.append(session.transcript.session_id)
        report.messages += len(session.transcript.messages)
        if result.created:
            report.sessions_new += 1
        else:
            report.sessions_unchanged += 1
