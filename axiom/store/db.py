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

Writers close with DuckDB's own checkpoint-on-close. Skipping it (checkpointing later)
halved the writer's lock holds in a loaded run but left a WAL that every read-only opener
replays, and reads in the same process then missed committed rows (tests/pipeline/
test_retry.py); correctness first, so it is not done (README, "DuckDB access discipline").
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

_UNIQUE = itertools.count()


class DatabaseMissing(RuntimeError):
    """Raised when a reader arrives before anything created and migrated the database."""


class OutOfSpace(OSError):
    """The disk holding the database is full. DuckDB rolls the failed transaction back
    whole, so nothing of it is stored; the person running Axiom must free space, then run
    the same work again (imports and tasks skip what is already stored)."""


NO_SPACE = "No space left on device"


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

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.turnstile_path = self.path.with_name(self.path.name + ".turnstile")
        self.generation_path = self.path.with_name(self.path.name + ".gen")
        self.lock_wait_ms = 0.0  # cumulative time spent waiting for the lock (observability)

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
        try:
            fresh.write_text(token, encoding="ascii")
        except OSError as exc:  # before DuckDB is touched: nothing to roll back
            fresh.unlink(missing_ok=True)
            if exc.errno == errno.ENOSPC:
                raise out_of_space(self.path, exc) from exc
            raise
        os.replace(fresh, self.generation_path)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """The exclusive lock with no connection: for replacing the file itself
        (`axiom.store.rewrite`)."""
        with self._locked(fcntl.LOCK_EX):
            self._bump_generation()
            yield

    @contextmanager
    def write(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-write connection inside one transaction, committed on success."""
        with self._locked(fcntl.LOCK_EX):
            self._bump_generation()
            try:
                conn = duckdb.connect(str(self.path))
                try:
                    conn.execute("BEGIN TRANSACTION")
                    try:
                        yield conn
                    except BaseException:
                        conn.execute("ROLLBACK")
                        raise
                    conn.execute("COMMIT")
                finally:
                    conn.close()
            except duckdb.Error as exc:
                if NO_SPACE in str(exc):
                    raise out_of_space(self.path, exc) from exc
                raise
