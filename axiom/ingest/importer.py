"""Back-fills transcripts into the event store: parse → `session_ingested` → project.

Everything that does not need the database happens before the write lock is taken:
parsing, and `prepare_session` (normalize with `check_transcript`, apply the privacy filter,
prove the result projects with `session_rows`, build the payload and dedupe key). Files are
then written several per short transaction (`import_paths`) that only appends their events
and advances the projections (the session tables; with `projectors`, every projector that
reads an ingest, from memory). The transcript is immutable, so what was proven outside the
lock is what is appended inside it.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import duckdb

from axiom.forking import Failed, map_shared
from axiom.heap import batch_work
from axiom.ingest.formats import UnknownFormat, discover, parse_file
from axiom.ingest.issues import InputIssue
from axiom.ingest.merge import MergeCounts, merge_transcripts
from axiom.ingest.privacy.excerpt import masked_excerpt
from axiom.ingest.privacy.transcript import filter_transcript
from axiom.ingest.session_projector import SessionProjector, SessionRows, known_rows, session_rows
from axiom.ingest.transcript import Transcript
from axiom.ingest.validate import check_transcript
from axiom.settings import Settings
from axiom.store.db import Database, OutOfSpace, is_interrupt
from axiom.store.event_types import REDACTED, SESSION_INGESTED
from axiom.store.events import (
    AppendResult,
    EncodedPayload,
    EventStore,
    NewEvent,
    StoredEvent,
    appended,
    canonical_json,
    encode_payload,
)
from axiom.store.projection import Follower, Projector, has_backlog, write_projecting

log = logging.getLogger("axiom.ingest")


@dataclass
class ImportReport:
    files: int = 0
    sessions_new: int = 0
    sessions_unchanged: int = 0
    messages: int = 0
    # Merging into sessions already stored (`axiom.ingest.merge`): sessions whose stored
    # version held messages this import lacked and that gained from it, and the messages
    # that were new to their session or a new version of a stored one.
    sessions_merged: int = 0
    # Stored sessions this import held whole and grew (or edited): a transcript file read
    # again after Claude Code appended to it.
    sessions_extended: int = 0
    messages_added: int = 0
    messages_changed: int = 0
    issues: list[InputIssue] = field(default_factory=list)
    session_ids: list[str] = field(default_factory=list)

    @property
    def imported_anything(self) -> bool:
        return bool(
            self.sessions_new
            or self.sessions_unchanged
            or self.sessions_merged
            or self.sessions_extended
        )


def ingest_dedupe_key(transcript: Transcript) -> str:
    """Same session, same content → same key, wherever the file was read from."""
    return _dedupe_key(transcript.session_id, transcript.to_json())


def _dedupe_key(session_id: str, content: dict[str, Any]) -> str:
    """`ingest_dedupe_key` of the transcript whose `to_json()` is `content` (left as it is)."""
    meta = {k: v for k, v in content["meta"].items() if k != "path"}
    digest = hashlib.sha256(canonical_json({**content, "meta": meta}).encode("utf-8")).hexdigest()
    return f"{SESSION_INGESTED}:{session_id}:{digest[:32]}"


@dataclass(frozen=True)
class PreparedSession:
    """A transcript ready to append: normalized, privacy-filtered and proven to project.
    Build it with `prepare_session` (outside the write lock)."""

    transcript: Transcript
    notes: tuple[str, ...]
    payload: dict[str, Any]
    dedupe_key: str
    encoded: EncodedPayload  # `payload` as it will be stored
    rows: SessionRows  # what the session projector folds the stored payload to


def prepare_session(transcript: Transcript) -> PreparedSession:
    """`check_transcript` normalizes it (ValueError if it cannot be stored), then the privacy
    filter runs, so nothing private ever reaches the event store, and what will be stored is
    proven to project: its rows are folded from the payload as stored (`session_rows`,
    which raises if the session projector could not fold it), and kept for the write
    (`known_rows`). No database access: call it before the lock (on either core)."""
    checked, notes = check_transcript(transcript)
    stored = filter_transcript(checked)
    content = stored.to_json()  # once, for the payload and its key
    payload = {"transcript": content}
    encoded = encode_payload(payload)
    return PreparedSession(
        transcript=stored,
        notes=tuple(notes),
        payload=payload,
        dedupe_key=_dedupe_key(stored.session_id, content),
        encoded=encoded,
        rows=session_rows(Transcript.from_json(encoded.stored["transcript"])),
    )


@dataclass(frozen=True)
class MergeResult(AppendResult):
    """An `AppendResult` that also says what merging into the stored session did."""

    counts: MergeCounts = field(default_factory=MergeCounts)


def merged_dedupe_key(transcript: Transcript, base_event_id: str) -> str:
    """The key of a merged version: its content and the version it was merged onto, so a
    session that returns to an earlier text is still a new version (and a retry of the
    same merge, which finds its own result stored, appends nothing)."""
    digest = ingest_dedupe_key(transcript).rsplit(":", 1)[1]
    return f"{SESSION_INGESTED}:{transcript.session_id}:{digest}:{base_event_id}"


def latest_session_ingest(conn: duckdb.DuckDBPyConnection, session_id: str) -> StoredEvent | None:
    """The newest `session_ingested` event of the session: the version merges start from."""
    return EventStore(conn).latest_of_session(SESSION_INGESTED, session_id)


def append_session(
    conn: duckdb.DuckDBPyConnection, prepared: PreparedSession, actor: str = "import"
) -> MergeResult:
    """Merge one prepared transcript into its stored session (`axiom.ingest.merge`) and
    record the union as a `session_ingested` event; nothing is appended when the
    transcript adds nothing. Call it inside the write transaction: the stored version is
    read there, so concurrent imports of one session never lose each other's messages.
    A session that was forgotten (`redacted` tombstone, see `axiom.forgetting`) is not
    restored: the tombstone is returned, nothing appended."""
    session_id = prepared.transcript.session_id
    store = EventStore(conn)
    tombstone = store.tombstone_for_session(session_id, REDACTED)
    if tombstone is not None:
        log.warning(
            "session %s was forgotten (%s): not restored",
            session_id,
            tombstone.payload.get("redaction_id"),
        )
        return MergeResult(tombstone, created=False)
    latest = latest_session_ingest(conn, session_id)
    if latest is not None and store.get_by_dedupe_key(prepared.dedupe_key) is not None:
        # This very transcript was recorded before (a file imported again, even after a
        # later version of its session): a no-op, as it always was.
        return MergeResult(latest, created=False)
    stored = Transcript.from_json(latest.payload["transcript"]) if latest else None
    merged, counts = merge_transcripts(stored, prepared.transcript)
    if latest is not None and merged is stored:
        return MergeResult(latest, created=False, counts=counts)
    if latest is None or merged is prepared.transcript:  # it holds the whole session
        payload, key, encoded = prepared.payload, prepared.dedupe_key, prepared.encoded
    else:
        session_rows(merged)  # both halves projected; prove the union does too
        payload, encoded = {"transcript": merged.to_json()}, None
        key = merged_dedupe_key(merged, latest.event_id)
    result = store.append(
        NewEvent(
            event_type=SESSION_INGESTED,
            payload=payload,
            dedupe_key=key,
            session_id=session_id,
            actor=actor,
            encoded=encoded,
        )
    )
    return MergeResult(result.event, result.created, counts)


def append_sessions(
    conn: duckdb.DuckDBPyConnection, prepared: Sequence[PreparedSession], actor: str = "import"
) -> list[MergeResult]:
    """`append_session` of each in order, in a few statements for the sessions Axiom has
    never seen (no stored version, not forgotten, once in `prepared`: a first import, the
    common case), which need nothing merged: their events go in one `append_many`, in
    their place among the others'."""
    store = EventStore(conn)
    ids = [p.transcript.session_id for p in prepared]
    seen = store.sessions_with((SESSION_INGESTED, REDACTED), ids) | store.tombstoned(REDACTED)
    once = {sid for sid, n in Counter(ids).items() if n == 1}
    results: list[MergeResult] = []
    queued: list[PreparedSession] = []

    def flush() -> None:
        events = [
            NewEvent(
                SESSION_INGESTED,
                p.payload,
                p.dedupe_key,
                p.transcript.session_id,
                actor,
                encoded=p.encoded,
            )
            for p in queued
        ]
        for p, r in zip(queued, store.append_many(events, spaced=True), strict=True):
            counts = merge_transcripts(None, p.transcript)[1]
            results.append(MergeResult(r.event, r.created, counts))
        queued.clear()

    for p in prepared:
        sid = p.transcript.session_id
        if sid in once and sid not in seen:
            queued.append(p)
            continue
        flush()
        results.append(append_session(conn, p, actor))
    flush()
    return results


@batch_work()
def ingest_transcripts(
    db: Database,
    transcripts: Iterable[Transcript | PreparedSession],
    actor: str = "import",
    project: bool = True,
    fork: bool = False,
    projectors: Sequence[Projector] = (),
    before_write: Callable[[list[PreparedSession]], None] | None = None,
) -> list[MergeResult]:
    """Append the transcripts; with `project`, also advance the session tables in the same
    transaction (the CLI does; Celery's ingest task leaves projection to the writer), and
    `projectors` with them (`_following`). `before_write` is given the prepared sessions
    just before the write lock is taken (the CLI starts analysing them:
    `axiom.pipeline.forked.AnalysisAhead`).

    Transcripts are prepared (`prepare_session`, which raises ValueError for one that cannot
    be stored, before anything is written) and their notes logged before the write lock is
    taken, with `fork` shared with a forked child (`axiom.forking`); a `PreparedSession` is
    appended as it is. Each is merged into its stored session (`append_session`): a
    transcript holding part of a session never drops the rest."""
    items = list(transcripts)
    fresh = [t for t in items if not isinstance(t, PreparedSession)]
    done = iter(map_shared(prepare_session, fresh, fork))
    prepared: list[PreparedSession] = []
    for item in items:
        if isinstance(item, PreparedSession):
            prepared.append(item)
            continue
        session = next(done)
        if isinstance(session, Failed):
            raise session.error
        for note in session.notes:
            log.warning("session %s: %s", session.transcript.session_id, note)
        prepared.append(session)

    def work(conn: duckdb.DuckDBPyConnection) -> list[MergeResult]:
        if not project:
            return append_sessions(conn, prepared, actor)
        rows = {p.encoded.checksum: p.rows for p in prepared}  # folded before the lock
        with appended() as events, known_rows(rows):  # what the followers apply, from memory
            follower = Follower(conn, _following(conn, projectors), events)
            follower.start()
            results = append_sessions(conn, prepared, actor)
            follower.settle()
        return results

    if before_write is not None:
        before_write(prepared)
    return write_projecting(db, work)


# A backlog this long is left to the pipeline's catch-up (in steps of short transactions)
# rather than taken into an import's transaction.
FOLLOW_BACKLOG = 150


def _following(conn: duckdb.DuckDBPyConnection, projectors: Sequence[Projector]) -> list[Projector]:
    """The projectors an ingest's transaction advances: the session projector, and
    `projectors` too (the CLI passes every one) unless some are `FOLLOW_BACKLOG` events
    behind. They apply the appended events from memory (`Follower`): the message citations
    and embedding jobs of the sessions are then derived here, where the transcripts are at
    hand, instead of the first build reading every one of them back."""
    sessions = SessionProjector()
    named = {p.name for p in projectors}
    following = list(projectors) if sessions.name in named else [sessions, *projectors]
    if len(following) == 1 or has_backlog(conn, following, FOLLOW_BACKLOG):
        return [sessions]
    return following


# Files are written several per transaction (AXIOM_IMPORT_GROUP_FILES): each transaction
# costs a connect and a checkpoint whatever its size, most of a small file's import when
# it had its own. Fewer files when they hold this many messages or characters of text
# (tool output makes some messages tens of kilobytes): the lock stays short.
IMPORT_GROUP_MESSAGES = 5_000
IMPORT_GROUP_CHARS = 8_000_000


@dataclass
class _ReadFile:
    """A file parsed and its sessions prepared (outside the lock), not yet written."""

    path: Path
    sessions: list[PreparedSession]
    messages: int  # in all its sessions: what the group's bounds count
    chars: int
    issues: list[InputIssue]  # found reading it, for the import's report


@batch_work()
def import_paths(
    db: Database,
    paths: Iterable[Path],
    fmt: str | None = None,
    on_file: Callable[[Path], None] | None = None,
    project: bool = True,
    within: Sequence[Path] | None = None,
    fork: bool = False,
    projectors: Sequence[Projector] = (),
    before_write: Callable[[list[PreparedSession]], None] | None = None,
) -> ImportReport:
    """Import the transcripts at `paths`; `within`: the import roots a path sent to the
    server was confined to (links inside its folders must not lead out of them).

    Files are parsed and prepared AXIOM_IMPORT_GROUP_FILES at a time (with `fork`, shared
    with a forked child: `axiom.forking`), then written several per transaction (up to that
    many files, `IMPORT_GROUP_MESSAGES` messages or `IMPORT_GROUP_CHARS` characters). A
    group whose write fails is written again one file per transaction, so a file that
    cannot be stored is reported on its own and the others still land. `on_file` is called
    once per file, after it is written or has failed. `project`, `projectors` and
    `before_write` (given each group's sessions) as in `ingest_transcripts`."""
    files, issues = discover(paths, within)
    report = ImportReport(issues=list(issues))
    group_files = Settings.from_env().import_group_files
    write = partial(
        ingest_transcripts,
        db,
        project=project,
        projectors=projectors,
        before_write=before_write,
    )
    group: list[_ReadFile] = []
    for batch in _batches(files, group_files):
        for path, read in zip(batch, map_shared(_Reader(fmt), batch, fork), strict=True):
            report.files += 1
            if isinstance(read, Failed) and isinstance(read.error, UnknownFormat):
                # a wrong --format: every later file would fail the same
                _write_group(write, group, report, on_file)  # (none read yet, in fact)
                raise read.error
            if isinstance(read, Failed):  # one file's surprise must not stop the others
                error = read.error
                if isinstance(error, _PrepareFailed):
                    report.issues += error.issues
                    error = error.cause
                _failed(report, path, error)
                if on_file:
                    on_file(path)
                continue
            report.issues += read.issues
            group.append(read)
            if len(group) >= group_files or _full(group):
                _write_group(write, group, report, on_file)
                group = []
    _write_group(write, group, report, on_file)
    return report


def _batches(files: list[Path], most: int) -> Iterator[list[Path]]:
    """`files` in runs read before any of them is written: at most `most` files, and
    fewer once they take `IMPORT_GROUP_CHARS` bytes on disk, so that no more is held in
    memory than a group of large files (at least one file each)."""
    batch: list[Path] = []
    size = 0
    for path in files:
        if batch and (len(batch) >= most or size >= IMPORT_GROUP_CHARS):
            yield batch
            batch, size = [], 0
        batch.append(path)
        size += _size_on_disk(path)
    if batch:
        yield batch


def _size_on_disk(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # reading it will say what is wrong
        return 0


def _full(group: list[_ReadFile]) -> bool:
    """True when the group holds `IMPORT_GROUP_MESSAGES` messages or `IMPORT_GROUP_CHARS`
    characters of text."""
    return (
        sum(read.messages for read in group) >= IMPORT_GROUP_MESSAGES
        or sum(read.chars for read in group) >= IMPORT_GROUP_CHARS
    )


def _failed(report: ImportReport, path: Path, exc: Exception) -> None:
    log.debug("import of %s failed", path, exc_info=True)
    reason = masked_excerpt(f"not imported: {type(exc).__name__}: {exc}", 500)
    report.issues.append(InputIssue(str(path), None, reason))


@dataclass(frozen=True)
class _Reader:
    """`_read_file` with the import's format: what `map_shared` maps over the files."""

    fmt: str | None

    def __call__(self, path: Path) -> _ReadFile:
        return _read_file(path, self.fmt)


class _PrepareFailed(Exception):  # noqa: N818 - carries the parse's issues, then fails
    """A file parsed, whose sessions could not be prepared: the issues its parse found
    still go into the report, then the failure (`import_paths`)."""

    def __init__(self, issues: list[InputIssue], cause: Exception) -> None:
        super().__init__(issues, cause)
        self.issues, self.cause = issues, cause


def _read_file(path: Path, fmt: str | None) -> _ReadFile:
    """Parse the file and prepare its sessions, with the issues found."""
    parsed = parse_file(path, fmt)
    issues = list(parsed.issues)
    prepared: list[PreparedSession] = []
    for transcript in parsed.transcripts:
        try:
            session = prepare_session(transcript)
        except ValueError as exc:
            reason = f"session {transcript.session_id!r} not imported: {exc}"
            issues.append(InputIssue(str(path), None, reason))
            continue
        except Exception as exc:
            raise _PrepareFailed(issues, exc) from exc
        sid = session.transcript.session_id
        issues += [InputIssue(str(path), None, f"session {sid}: {n}") for n in session.notes]
        prepared.append(session)
    messages = [m for s in prepared for m in s.transcript.messages]
    return _ReadFile(path, prepared, len(messages), sum(len(m.text) for m in messages), issues)


def _write_group(
    write: Callable[[list[PreparedSession]], list[MergeResult]],
    group: list[_ReadFile],
    report: ImportReport,
    on_file: Callable[[Path], None] | None,
) -> None:
    """The sessions of `group` in one transaction; if it fails, file by file."""
    sessions = [s for read in group for s in read.sessions]
    try:
        # Notes reported when read, so not logged again (`ingest_transcripts` logs the
        # notes only of the transcripts it prepares itself).
        results = write(sessions) if sessions else []
    except OutOfSpace:
        raise  # a full disk: every later file would fail the same
    except Exception as exc:
        if is_interrupt(exc):  # Ctrl-C during the write: stop, as between writes
            raise
        if len(group) == 1:
            _failed(report, group[0].path, exc)
            if on_file:
                on_file(group[0].path)
            return
        reason = masked_excerpt(f"{type(exc).__name__}: {exc}", 300)
        log.warning("writing %d files at once failed (%s): one by one", len(group), reason)
        for read in group:
            _write_group(write, [read], report, on_file)
        return
    _count(report, sessions, results)
    if on_file:
        for read in group:
            on_file(read.path)


def _count(
    report: ImportReport, sessions: list[PreparedSession], results: list[MergeResult]
) -> None:
    for session, result in zip(sessions, results, strict=True):
        report.session_ids.append(session.transcript.session_id)
        report.messages += len(session.transcript.messages)
        report.messages_added += result.counts.added
        report.messages_changed += result.counts.changed
        if not result.created:
            report.sessions_unchanged += 1
        elif result.counts.merged:
            report.sessions_merged += 1
        elif result.counts.extended:
            report.sessions_extended += 1
        else:
            report.sessions_new += 1
