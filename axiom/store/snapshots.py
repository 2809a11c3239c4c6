"""Read snapshots: copies of the DuckDB file that writers publish, so pages need not wait.

While a writer holds the exclusive lock nobody can open the file, so a page waits for the
whole write unit. After a write unit the file is checkpointed and self-contained; a writer
that has been writing for a while copies it to `<file>.snap.<generation token>` (temp file,
fsync, atomic rename) under the *shared* lock, so readers keep reading the live file
meanwhile and no writer changes it mid-copy. A reader that would have to wait for a writer
(`Database.read`) opens the newest snapshot instead, if it is recent (`MAX_AGE_SECONDS`) and
holds every write this process committed (read-your-writes: the token starts with the
generation's sequence number, and each process remembers the last one it committed).

Only processes that serve people (the web process: `config/wsgi.py`) read snapshots
(`serve_reads`); workers and importers, which act on what they read, always read the live
file. When such a process
writes while its readers are being served snapshots (a hook import during an import), it
publishes before it releases the exclusive lock: under the shared lock another writer would
get in first, and its readers, who may not read a snapshot older than its write, would wait
for that writer after all.

Deleting: at most one snapshot is kept; a publisher unlinks the older ones, and a write
that does not publish unlinks one too old to be read (`drop_stale`). A reader that
already opened one keeps reading it (an unlinked file lives until its last descriptor
closes, milliseconds later); a reader that finds it gone falls back to the live file.
`delete_all` (run by `rewrite_database`, hence by `forget`, under the exclusive lock)
removes every snapshot and every half-written copy, so forgotten text leaves them too, and
`forget` holds publishing and reading (`hold`) until its tables are rebuilt.

Publishing is best effort: a failure (a full disk) is logged and the write stands.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

INFIX = ".snap."  # <file>.snap.<token>: a published snapshot
TEMP_INFIX = ".snap-tmp."  # <file>.snap-tmp.<pid>.<random>: a copy in progress
HOLD_INFIX = ".snap-hold."  # <file>.snap-hold.<name>: no snapshot is published or read
PUBLISH_AFTER_SECONDS = 1.0  # continuous writing before a snapshot is worth its copy
COPY_DUTY = 10  # publish at most every COPY_DUTY x the last copy's time (big files: rarely)
RUN_GAP_SECONDS = 2.0  # a longer pause between write units ends a run of writing
MAX_AGE_SECONDS = 5.0  # a reader uses a snapshot published at most this long ago

_state = threading.Lock()
_publishing = threading.Lock()  # one copy at a time per process (at most one snapshot)
_serving = False
_committed: dict[str, int] = {}  # db file -> sequence of the last unit this process committed
_clocks: dict[str, PublishClock] = {}


def serve_reads(on: bool = True) -> None:
    """Let `Database.read` in this process answer from snapshots (the web process does)."""
    global _serving
    _serving = on


def serving() -> bool:
    return _serving


def sequence(token: str) -> int:
    """The sequence number a generation token starts with (0 for none or an older format)."""
    head, dot, _ = token.partition(".")
    return int(head) if dot and head.isdigit() else 0


def note_committed(db_file: Path, token: str) -> None:
    """Record that this process committed the write unit `token` (read-your-writes)."""
    key = os.path.abspath(db_file)
    with _state:
        _committed[key] = max(_committed.get(key, 0), sequence(token))


def committed(db_file: Path) -> int:
    return _committed.get(os.path.abspath(db_file), 0)


def hold(db_file: Path, name: str) -> None:
    """Stop publishing and reading snapshots until `release(name)`: while `forget` has
    redacted the events but not yet rebuilt the tables and rewritten the file, a copy
    would still hold the forgotten text. A hold left by a crash stays until the
    unfinished forget is finished (`axiom.forgetting.forget.finish_pending`)."""
    db_file.with_name(db_file.name + HOLD_INFIX + name).touch()


def release(db_file: Path, name: str) -> None:
    db_file.with_name(db_file.name + HOLD_INFIX + name).unlink(missing_ok=True)


def held(db_file: Path) -> bool:
    prefix = db_file.name + HOLD_INFIX
    try:
        return any(e.name.startswith(prefix) for e in os.scandir(db_file.parent))
    except FileNotFoundError:
        return False


@dataclass(frozen=True)
class Snapshot:
    path: Path
    token: str
    published: float  # time.time() of the rename, from the file's mtime

    @property
    def sequence(self) -> int:
        return sequence(self.token)


def snapshots(db_file: Path) -> list[Snapshot]:
    """The published snapshots of `db_file`, newest first."""
    prefix = db_file.name + INFIX
    found = []
    try:
        entries = list(os.scandir(db_file.parent))
    except FileNotFoundError:
        return []
    for entry in entries:
        if entry.name.startswith(prefix):
            try:
                published = entry.stat().st_mtime
            except FileNotFoundError:
                continue
            found.append(Snapshot(Path(entry.path), entry.name[len(prefix) :], published))
    return sorted(found, key=lambda s: s.sequence, reverse=True)


def usable(db_file: Path, now: float | None = None) -> Snapshot | None:
    """The newest snapshot a reader of this process may use instead of waiting, or None."""
    now = time.time() if now is None else now
    if held(db_file):
        return None
    for snap in snapshots(db_file)[:1]:
        if snap.sequence >= committed(db_file) and now - snap.published <= MAX_AGE_SECONDS:
            return snap
    return None


class PublishClock:
    """When a process's writing has gone on long enough to be worth a snapshot: a run of
    write units with pauses under `RUN_GAP_SECONDS`, lasting `PUBLISH_AFTER_SECONDS` since
    it began or since the last publish. A single write (an approval) never publishes.
    Copies never take more than 1/`COPY_DUTY` of the time (a big file publishes rarely)."""

    def __init__(self) -> None:
        self.run_started = 0.0
        self.last_end = -RUN_GAP_SECONDS * 2
        self.last_publish = -math.inf
        self.copy_seconds = 0.0

    def unit_done(self, started: float, ended: float) -> bool:
        if started - self.last_end > RUN_GAP_SECONDS:
            self.run_started = started
        self.last_end = ended
        return ended - max(self.run_started, self.last_publish) >= PUBLISH_AFTER_SECONDS

    def copy_allowed(self, now: float) -> bool:
        return now - self.last_publish >= COPY_DUTY * self.copy_seconds

    def published(self, at: float, copy_seconds: float) -> None:
        self.last_publish, self.copy_seconds = at, copy_seconds


def _clock(db_file: Path) -> PublishClock:
    return _clocks.setdefault(os.path.abspath(db_file), PublishClock())


def publish_due(db_file: Path, started: float, ended: float) -> bool:
    """Whether the write unit run from `started` to `ended` (monotonic) should publish:
    after a run of writes, unless another writer published a moment ago."""
    with _state:
        clock = _clock(db_file)
        due = clock.unit_done(started, ended) and clock.copy_allowed(ended)
    newest = snapshots(db_file)[:1]
    return due and not (newest and time.time() - newest[0].published < PUBLISH_AFTER_SECONDS)


def needed_by_own_readers(db_file: Path, token: str, now: float) -> bool:
    """Whether this serving process's readers, being served snapshots, would wait after its
    write `token` (read-your-writes rules out the snapshot they have): publish at once."""
    if not _serving:
        return False
    newest = snapshots(db_file)[:1]
    if not newest or time.time() - newest[0].published > MAX_AGE_SECONDS:
        return False  # nobody is reading snapshots: no writer is busy
    with _state:
        return newest[0].sequence < sequence(token) and _clock(db_file).copy_allowed(now)


def copied(db_file: Path, at: float, seconds: float) -> None:
    """Record a publish that ended at `at` (monotonic) and how long its copy took."""
    with _state:
        _clock(db_file).published(at, seconds)


def publish(db_file: Path, token: str) -> Snapshot | None:
    """Copy `db_file` (checkpointed, the caller holding the shared lock) to the snapshot of
    `token`, then delete older snapshots. Best effort: a failure is logged, never raised."""
    with _publishing:
        return _publish(db_file, token)


def _publish(db_file: Path, token: str) -> Snapshot | None:
    wal = db_file.with_name(db_file.name + ".wal")
    current = snapshots(db_file)
    if wal.exists() or held(db_file) or (current and current[0].token == token):
        return None  # not self-contained, forget at work, or already published
    target = db_file.with_name(db_file.name + INFIX + token)
    temp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(
            prefix=f"{db_file.name}{TEMP_INFIX}{os.getpid()}.", dir=db_file.parent
        )
        os.close(fd)
        temp = Path(name)
        shutil.copyfile(db_file, temp)
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)  # a snapshot is never a half-written file, even after a crash
        finally:
            os.close(fd)
        os.replace(temp, target)
    except OSError as exc:
        if temp is not None:
            temp.unlink(missing_ok=True)
        log.warning("read snapshot of %s not published (%s); reads wait instead", db_file, exc)
        return None
    for old in current:
        old.path.unlink(missing_ok=True)  # a reader that has it open keeps reading it
    return Snapshot(target, token, target.stat().st_mtime)


def drop_stale(db_file: Path, now: float | None = None) -> int:
    """Unlink the snapshots too old for any reader (`MAX_AGE_SECONDS`), so a snapshot does
    not outlive the writing it was for by more than the next write, and the copies a
    killed publisher left half-written. Returns how many."""
    now = time.time() if now is None else now
    stale = [s.path for s in snapshots(db_file) if now - s.published > MAX_AGE_SECONDS]
    stale += _orphaned_copies(db_file)
    for path in stale:
        path.unlink(missing_ok=True)
    return len(stale)


def _orphaned_copies(db_file: Path) -> list[Path]:
    """Copies in progress whose publisher (the pid in the name) is gone."""
    prefix = db_file.name + TEMP_INFIX
    out = []
    for entry in os.scandir(db_file.parent):
        if entry.name.startswith(prefix):
            pid = entry.name[len(prefix) :].partition(".")[0]
            if pid.isdigit() and not _alive(int(pid)):
                out.append(Path(entry.path))
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def delete_all(db_file: Path) -> int:
    """Remove every snapshot and half-written copy of `db_file`; run under the exclusive
    lock (no publisher then runs). Returns how many files went."""
    removed = 0
    prefixes = (db_file.name + INFIX, db_file.name + TEMP_INFIX)
    for entry in os.scandir(db_file.parent):
        if entry.name.startswith(prefixes):
            Path(entry.path).unlink(missing_ok=True)
            removed += 1
    return removed
