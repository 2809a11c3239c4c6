"""Cross-process access discipline for the one DuckDB file.

DuckDB lets only one process hold a file read-write, and while it does no other process can
open the file at all, not even read-only. Axiom therefore never keeps a connection open
between units of work. Every unit takes an advisory `flock` on `<file>.lock` first:

* readers take a *shared* lock and open the file `read_only=True` (many readers at once);
* writers take an *exclusive* lock, open read-write, run one transaction and close.

Shared locks alone would let a steady stream of overlapping readers starve a writer, so
everyone first passes a turnstile (`<file>.turnstile`, held exclusively only for the
moment it takes to get the main lock). A waiting writer keeps the turnstile while it
waits, so new readers queue behind it and the writer gets in as soon as the current
readers finish.

The lock is taken before DuckDB is touched, so nobody ever sees "Conflicting lock is held":
a page that arrives while the writer commits simply waits the few milliseconds the commit
takes. Writers must keep their critical sections short (append + project, never embed or
call a model while holding the lock).

**Generation.** Every writer stamps `<file>.gen` with a fresh token as soon as it holds the
exclusive lock, before it changes anything. A token read under the shared lock therefore
names exactly the data that read sees, and a reader that finds the same token later knows
nothing changed since (the search caches in `axiom.retrieval.reads` rely on it).

**Snapshots.** A writer that has been writing for a while then publishes a copy of the
checkpointed file under the shared lock, and in the processes that serve pages a reader that
would have to wait for a writer reads the newest such copy instead, when it is recent and
holds this process's own writes (`axiom.store.snapshots`). `read(fresh=True)` always reads
the live file; `lookup` re-reads a row a snapshot lacks from it, so a missing row is never
answered from an old copy.

**A long run of writes** (`axiom import`, `axiom process`: `reuse_write_engine`) attaches
the file to one in-memory DuckDB instance, unit after unit, instead of creating an
instance for each: creating one costs more than a small unit's work. Each unit still
detaches the file at its end (checkpointed, its lock released), so between units no
process holds it.

Writers leave the file checkpointed: every commit checkpoints (`WRITE_CONFIG`), so the
detach or close that follows has nothing left to write. Skipping the checkpoint
(checkpointing later) halved the writer's lock holds in a loaded run but left a WAL that
every read-only opener replays, and reads in the same process then missed committed rows
(tests/pipeline/test_retry.py); correctness first, so it is not done (README, "DuckDB
access discipline").
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TypeVar

import duckdb

from axiom.settings import read_snapshots
from axiom.store import snapshots

T = TypeVar("T")

_UNIQUE = itertools.count()

log = logging.getLogger(__name__)


class DatabaseMissing(RuntimeError):
    """Raised when a reader arrives before anything created and migrated the database."""


class OutOfSpace(OSError):
    """The disk holding the database is full. DuckDB rolls the failed transaction back
    whole, so nothing of it is stored; the person running Axiom must free space, then run
    the same work again (imports and tasks skip what is already stored)."""


NO_SPACE = "No space left on device"

# A write connection's options. At a checkpoint, a column an UPDATE touched is compressed
# again over its whole row group (a table's first 122,880 rows), and trying FSST on that
# many strings made a one-row update cost as much as a whole build: FSST is left out
# (README, "Session 20"). Strings still get dictionary compression.
# A checkpoint threshold below any write's size makes DuckDB checkpoint at COMMIT instead
# of writing the transaction to the WAL and checkpointing it again on close: the data is
# written once (README, "Session 25"). A commit whose checkpoint fails raises and leaves
# the file as it was, but the instance still holds the rows as committed, and its next
# commit would write them: so an instance whose commit failed is never used again
# (`Database.write` closes or discards it; tests/store/test_write_engine.py).
WRITE_CONFIG = {"disabled_compression_methods": "fsst", "checkpoint_threshold": "1KB"}

# Rows per row group of what a writer appends. A checkpoint writes a table's last row
# group again whole once rows were added to it, and with DuckDB's default
# (122,880 rows) that group held a whole store's events until it filled: every write
# unit's close took longer as the store grew (README, "Session 22"). Small groups bound
# it; the option is given when the file is attached (DuckDB 1.4 keeps no default in the
# file), so every write connection attaches the file with it.
ROW_GROUP_ROWS = 2048


def is_interrupt(exc: BaseException) -> bool:
    """Whether `exc` is Ctrl-C: a KeyboardInterrupt, or the error DuckDB raises for the query
    it stopped on SIGINT (a RuntimeError caused by the KeyboardInterrupt) or on
    `interrupt()`. Handlers that record or retry a failure let it through."""
    return isinstance(exc, KeyboardInterrupt | duckdb.InterruptException) or (
        isinstance(exc, RuntimeError) and isinstance(exc.__cause__, KeyboardInterrupt)
    )


def out_of_space(path: Path, exc: BaseException) -> OutOfSpace:
    """The error to raise for `exc`, a DuckDB failure to write `path` for want of space."""
    return OutOfSpace(
        errno.ENOSPC,
        f"the disk holding {path.parent} is full ({NO_SPACE}); the write in progress was"
        " rolled back. Free some space, then run the same command again: what is already"
        " stored is skipped",
    )


class Database:
    """A DuckDB file plus the lock that serialises writers against everyone else."""

    def __init__(self, path: Path | str, *, use_snapshots: bool | None = None) -> None:
        self.path = Path(path)
        # AXIOM_READ_SNAPSHOTS unless told: publish after long writes, serve waiting reads
        self.use_snapshots = read_snapshots(os.environ) if use_snapshots is None else use_snapshots
        self._reading = threading.local()  # the snapshot token a thread's read sees
        self._publish_first = False  # `publish_before_writing`: the next write publishes first
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.turnstile_path = self.path.with_name(self.path.name + ".turnstile")
        self.generation_path = self.path.with_name(self.path.name + ".gen")
        self.lock_wait_ms = 0.0  # cumulative time spent waiting for the lock (observability)
        self._engine: _WriteEngine | None = None  # `reuse_write_engine`

    @contextmanager
    def _locked(self, mode: int, wait: bool = True) -> Iterator[bool]:
        """Hold the lock in `mode` (passing the turnstile); with `wait=False`, yield False at
        once, holding nothing, when a writer holds the lock or waits for it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        turnstile = os.open(self.turnstile_path, os.O_RDWR | os.O_CREAT, 0o644)
        held = False
        try:
            started = time.perf_counter()
            held = _flock(turnstile, fcntl.LOCK_EX, wait)
            if held:
                try:
                    held = _flock(fd, mode, wait)
                finally:
                    fcntl.flock(turnstile, fcntl.LOCK_UN)
            self.lock_wait_ms += (time.perf_counter() - started) * 1000
            yield held
        finally:
            if held:
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            os.close(turnstile)

    @contextmanager
    def read(self, fresh: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection for one unit of work; many readers may hold one at once.
        In a process serving snapshots, a read that would wait for a writer gets the newest
        usable snapshot instead, unless `fresh` (see the module docstring)."""
        with ExitStack() as stack:
            snap, conn = None, None
            if fresh or not (self.use_snapshots and snapshots.serving()):
                stack.enter_context(self._locked(fcntl.LOCK_SH))
            elif not stack.enter_context(self._locked(fcntl.LOCK_SH, wait=False)):
                snap = snapshots.usable(self.path)
                conn = _connect_snapshot(snap.path) if snap else None
                if conn is None:  # none usable, or deleted since it was listed: wait
                    snap = None
                    stack.enter_context(self._locked(fcntl.LOCK_SH))
            if conn is None:
                conn = self._connect_live()
            previous = getattr(self._reading, "token", None)
            self._reading.token = snap.token if snap else None
            try:
                yield conn
            finally:
                self._reading.token = previous
                conn.close()

    def _connect_live(self) -> duckdb.DuckDBPyConnection:
        if not self.path.exists():
            raise DatabaseMissing(f"{self.path} does not exist yet: run `python -m axiom migrate`")
        return duckdb.connect(str(self.path), read_only=True)

    def lookup(self, find: Callable[[duckdb.DuckDBPyConnection], T | None]) -> T | None:
        """`find` in one read unit; a None (the row is missing) from a snapshot is looked up
        again in the live file, so a missing row is never answered from an old copy (a 404
        for a row the snapshot predates)."""
        with self.read() as conn:
            found, stale = find(conn), self._reading.token is not None
        if found is None and stale:
            with self.read(fresh=True) as conn:
                found = find(conn)
        return found

    def generation(self) -> str:
        """The token of the last write unit ("" before the first); read it under `read()`
        to name the data that read sees (a snapshot read sees its snapshot's token)."""
        token = getattr(self._reading, "token", None)
        return self._live_generation() if token is None else token

    def _live_generation(self) -> str:
        try:
            return self.generation_path.read_text(encoding="ascii")
        except FileNotFoundError:
            return ""

    def _bump_generation(self) -> str:
        """Stamp a fresh token, `<sequence>.<unique>`: the sequence orders write units (for
        read-your-writes on snapshots), the rest makes it unique."""
        number = snapshots.sequence(self._live_generation()) + 1
        token = f"{number}.{time.time_ns()}-{os.getpid()}-{next(_UNIQUE)}"
        fresh = self.generation_path.with_name(self.generation_path.name + f".{os.getpid()}")
        try:
            fresh.write_text(token, encoding="ascii")
        except OSError as exc:  # before DuckDB is touched: nothing to roll back
            fresh.unlink(missing_ok=True)
            if exc.errno == errno.ENOSPC:
                raise out_of_space(self.path, exc) from exc
            raise
        os.replace(fresh, self.generation_path)
        return token

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The exclusive lock with no connection: for replacing the file itself
        (`axiom.store.rewrite`)."""
        with self._locked(fcntl.LOCK_EX):
            token = self._bump_generation()
            yield
        snapshots.note_committed(self.path, token)

    @contextmanager
    def write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-write connection inside one transaction, committed on success; then,
        after a long enough run of writes, a read snapshot is published."""
        if self._publish_first:
            self._publish_first = False
            self.publish_snapshot()
        started = time.monotonic()
        with self._locked(fcntl.LOCK_EX):
            token = self._bump_generation()
            engine, conn, committed = self._engine, None, False
            try:
                try:
                    conn = engine.attach() if engine else connect_write(self.path)
                    conn.execute("BEGIN TRANSACTION")
                    try:
                        yield conn
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
                    committed = True
                finally:
                    if engine is None:
                        if conn is not None:
                            conn.close()
                    elif committed:
                        engine.detach()
                    else:  # closing the instance rolls back whatever is open, and frees the file
                        engine.discard()
            except duckdb.Error as exc:
                if NO_SPACE in str(exc):
                    raise out_of_space(self.path, exc) from exc
                raise
            if self.use_snapshots and snapshots.needed_by_own_readers(
                self.path, token, time.monotonic()
            ):
                self._publish(token)  # before another writer gets in (see the README)
        snapshots.note_committed(self.path, token)
        if self.use_snapshots and snapshots.publish_due(self.path, started, time.monotonic()):
            self.publish_snapshot()
        else:
            snapshots.drop_stale(self.path)

    def reuse_write_engine(self) -> None:
        """Before a long run of writes in this process (`axiom import`, `axiom process`),
        have its units attach the file to one DuckDB instance kept for them (see the module
        docstring), not create one each."""
        if self._engine is None:
            self._engine = _WriteEngine(self.path)

    def publish_before_writing(self) -> None:
        """Before a long run of writes (`axiom import`, `axiom process`), have the next
        write unit publish the file as it stands before it takes the lock: a writer
        publishes only once it has written for a while, so until then a page would wait
        for its first write units (README, "Session 20"). Published then, not now, the
        snapshot is fresh when the writing starts (an LLM-extracted chunk can take longer
        to analyse than a reader may use a snapshot), and a run that writes nothing copies
        nothing."""
        self._publish_first = self.use_snapshots

    def publish_snapshot(self) -> snapshots.Snapshot | None:
        """Copy the file to a read snapshot under the shared lock (readers go on reading the
        live file meanwhile); best effort, None when nothing was published."""
        with self._locked(fcntl.LOCK_SH):
            if not self.path.exists():
                return None
            return self._publish(self._live_generation())

    def _publish(self, token: str) -> snapshots.Snapshot | None:
        """Copy the file (checkpointed, the caller holding the lock) as snapshot `token`."""
        started = time.monotonic()
        published = snapshots.publish(self.path, token)
        if published is not None:  # only a real copy moves the clock and its duty
            ended = time.monotonic()
            snapshots.copied(self.path, ended, ended - started)
        return published


def connect_write(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-write connection to `path` whose appends go in `ROW_GROUP_ROWS`-row groups
    (the file attached to an in-memory database, and made the default)."""
    conn = write_instance(path)
    try:
        _attach(conn, path)
    except BaseException:
        conn.close()
        raise
    return conn


def write_instance(path: Path, spill: str = "", **options: object) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB instance with the writers' options (and `options`), spilling
    next to `path` (where a plain connection to the file spills, not the working
    directory's `.tmp`); `spill` ends the folder's name (a kept instance's own: DuckDB
    deletes the folder when the instance goes, which for a kept one is outside the write
    lock)."""
    config = {**WRITE_CONFIG, "temp_directory": f"{path}.tmp{spill}", **options}
    return duckdb.connect(":memory:", config=config)


def _attach(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    where = str(path).replace("'", "''")
    conn.execute(f"ATTACH '{where}' AS store (ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
    conn.execute("USE store")


# Instances a forked child inherited: their threads stayed in the parent, so the child
# neither uses nor closes them (a close would wait for those threads).
_INHERITED: list[duckdb.DuckDBPyConnection] = []


class _WriteEngine:
    """The in-memory instance one `Database`'s write units attach the file to in turn
    (`Database.reuse_write_engine`). Its units never overlap (the write lock), so one
    connection serves them all; after a failure to detach it is made again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pid = os.getpid()
        self._conn: duckdb.DuckDBPyConnection | None = None

    def attach(self) -> duckdb.DuckDBPyConnection:
        """The instance's connection with the file attached and made the default."""
        if self._pid != os.getpid():  # forked since: the parent's instance is not ours
            if self._conn is not None:
                _INHERITED.append(self._conn)
            self._conn, self._pid = None, os.getpid()
        if self._conn is None:
            # One thread: the run's analysis child works on the other core (`axiom
            # import`, `axiom process`), and a unit's statements are small.
            self._conn = write_instance(self.path, f".{self._pid}", threads=1)
        try:
            _attach(self._conn, self.path)
        except BaseException:
            self.discard()
            raise
        return self._conn

    def detach(self) -> None:
        """After a committed unit: detach the file (checkpointed by the commit), releasing
        its lock for other processes."""
        conn = self._conn
        if conn is None:
            return
        try:
            conn.execute("USE memory")
            conn.execute("DETACH store")
        except BaseException:
            self.discard()  # the next unit starts from a new instance
            raise

    def discard(self) -> None:
        """Close the instance (rolling back a transaction left open and freeing the file):
        after a unit that did not commit, whatever state it left (a commit whose
        checkpoint failed leaves its rows committed in the instance alone); the next unit
        makes a new one."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except duckdb.Error:
                log.warning("could not close a write instance", exc_info=True)


def _flock(fd: int, mode: int, wait: bool) -> bool:
    try:
        fcntl.flock(fd, mode if wait else mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _connect_snapshot(path: Path) -> duckdb.DuckDBPyConnection | None:
    try:
        return duckdb.connect(str(path), read_only=True)
    except duckdb.Error:  # unlinked by a publisher or `forget` since it was listed
        return None
