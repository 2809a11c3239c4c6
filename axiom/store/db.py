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

**Checkpoints.** DuckDB checkpoints the WAL into the file when a read-write connection
closes, which cost a write unit ~100 ms at load 12 whatever its size. Writers here close
without it and checkpoint only when the WAL has grown past `CHECKPOINT_WAL_BYTES`, or once
the process has written nothing for `LAZY_CHECKPOINT_SECONDS` (and at exit), so the store a
reader finds at rest has no WAL. The WAL is durable (fsynced at commit): a writer killed
before its checkpoint loses nothing, the next opener replays it. The threshold is small
because every read-only opener replays the whole WAL, measured at load 12 on a 2 MB file:
open + query 52 ms without WAL, 80 ms with 74 KB, 162 ms with 263 KB, 925 ms with 4 MB.

**Generation.** Every writer stamps `<file>.gen` with a fresh token as soon as it holds the
exclusive lock, before it changes anything. A token read under the shared lock therefore
names exactly the data that read sees, and a reader that finds the same token later knows
nothing changed since (the search caches in `axiom.retrieval.reads` rely on it).
"""

from __future__ import annotations

import atexit
import fcntl
import itertools
import logging
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

log = logging.getLogger(__name__)
_UNIQUE = itertools.count()


CHECKPOINT_WAL_BYTES = 64 * 1024
LAZY_CHECKPOINT_SECONDS = 2.0


class DatabaseMissing(RuntimeError):
    """Raised when a reader arrives before anything created and migrated the database."""


class Database:
    """A DuckDB file plus the lock that serialises writers against everyone else."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.turnstile_path = self.path.with_name(self.path.name + ".turnstile")
        self.wal_path = self.path.with_name(self.path.name + ".wal")
        self.generation_path = self.path.with_name(self.path.name + ".gen")
        self.lock_wait_ms = 0.0  # cumulative time spent waiting for the lock (observability)
        self.checkpoint_wal_bytes = CHECKPOINT_WAL_BYTES
        self._lazy = _LazyCheckpoint(self)

    @contextmanager
    def _locked(self, mode: int) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        turnstile = os.open(self.turnstile_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            started = time.perf_counter()
            fcntl.flock(turnstile, fcntl.LOCK_EX)
            try:
                fcntl.flock(fd, mode)
            finally:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
            self.lock_wait_ms += (time.perf_counter() - started) * 1000
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            os.close(turnstile)

    @contextmanager
    def read(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only connection for one unit of work; many readers may hold one at once."""
        with self._locked(fcntl.LOCK_SH):
            if not self.path.exists():
                raise DatabaseMissing(
                    f"{self.path} does not exist yet: run `python -m axiom migrate`"
                )
            conn = duckdb.connect(str(self.path), read_only=True)
            try:
                yield conn
            finally:
                conn.close()

    def generation(self) -> str:
        """The token of the last write unit ("" before the first); read it under `read()`
        to name the data that read sees."""
        try:
            return self.generation_path.read_text(encoding="ascii")
        except FileNotFoundError:
            return ""

    def _bump_generation(self) -> None:
        token = f"{time.time_ns()}-{os.getpid()}-{next(_UNIQUE)}"
        fresh = self.generation_path.with_name(self.generation_path.name + f".{os.getpid()}")
        fresh.write_text(token, encoding="ascii")
        os.replace(fresh, self.generation_path)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The exclusive lock with no connection: for replacing the file itself
        (`axiom.store.rewrite`)."""
        with self._locked(fcntl.LOCK_EX):
            self._bump_generation()
            yield

    @contextmanager
    def write(self, *, checkpoint: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-write connection inside one transaction, committed on success; the WAL
        is checkpointed when it has grown past `checkpoint_wal_bytes`, else later.

        Pass `checkpoint=True` for schema changes: DuckDB 1.4.4 cannot replay a WAL that
        holds `ALTER TABLE ... ADD COLUMN` ("Failure while replaying WAL file"), so DDL
        must never be left in the WAL."""
        with self._locked(fcntl.LOCK_EX):
            self._bump_generation()
            conn = duckdb.connect(str(self.path))
            try:
                conn.execute("PRAGMA disable_checkpoint_on_shutdown")
                conn.execute("BEGIN TRANSACTION")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
                if checkpoint or self.wal_bytes() > self.checkpoint_wal_bytes:
                    _checkpoint(conn, self.path)
            finally:
                conn.close()
        self._lazy.schedule()

    def wal_bytes(self) -> int:
        """Size of the WAL not yet checkpointed into the file (0 when there is none)."""
        try:
            return self.wal_path.stat().st_size
        except FileNotFoundError:
            return 0

    def checkpoint(self) -> None:
        """Fold the WAL into the file so read-only openers have nothing to replay."""
        if not self.path.exists():  # removed meanwhile (a test's data dir): nothing to fold
            return
        with self._locked(fcntl.LOCK_EX):
            if self.wal_bytes() and self.path.exists():
                duckdb.connect(str(self.path)).close()  # checkpoints on close


def _checkpoint(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    """CHECKPOINT after a commit; a failure leaves the WAL (durable) for a later one."""
    try:
        conn.execute("CHECKPOINT")
    except duckdb.Error:
        log.warning("checkpoint of %s failed; the WAL stays until the next", path, exc_info=True)


class _LazyCheckpoint:
    """Checkpoints a WAL left below the threshold once its process has been quiet for
    `LAZY_CHECKPOINT_SECONDS`, and at interpreter exit, so the WAL never outlives a burst.

    The timer's thread is a daemon (a pending timer must not delay exit), so the exit hook
    also waits for a checkpoint already running on it: a daemon thread stopped inside
    DuckDB at interpreter shutdown aborts the process."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._timer: threading.Timer | None = None
        self._guard = threading.Lock()
        self._busy = threading.Lock()

    def schedule(self) -> None:
        if not self.db.wal_bytes():
            return
        with self._guard:
            if self._timer is not None:
                self._timer.cancel()
            else:
                atexit.register(self.at_exit)
            self._timer = threading.Timer(LAZY_CHECKPOINT_SECONDS, self.run)
            self._timer.daemon = True
            self._timer.start()

    def at_exit(self) -> None:
        self.run()
        with self._busy:  # a checkpoint running on the timer's thread ends first
            pass

    def run(self) -> None:
        with self._guard:
            timer, self._timer = self._timer, None
            if timer is None:
                return
            timer.cancel()
            atexit.unregister(self.at_exit)
            self._busy.acquire()
        try:
            self.db.checkpoint()
        except Exception:  # noqa: BLE001 - the WAL stays durable; the next writer retries
            log.warning("lazy checkpoint of %s failed", self.db.path, exc_info=True)
        finally:
            self._busy.release()
