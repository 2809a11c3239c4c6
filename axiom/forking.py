"""A map over a list shared with a forked child process, so that CPU work in Python (an
import's privacy filter, the rule extractor) uses the machine's second core.

`SharedMap(fn, items)` forks the child at once; it applies `fn` from the front of the list.
When the caller asks for the results, it applies `fn` from the back until the two meet
(each item is claimed under a lock both share), so whatever head start the child had
while the caller did something else (wrote the chunk before) is never waited for, and a
list nothing came before is done by both halves at once. The child writes each result to
an anonymous in-memory file, which the caller reads once the child has ended; an item the
child claimed but did not finish (it was killed) is done by the caller.

The child runs niced (`CHILD_NICENESS`), so the processes serving pages and search keep the
core first, and stops once its parent is gone. `fn` must not touch the store (the child
shares no connection) and must return something `pickle` can carry. Forking is used only
where it is safe: from a process that is not a daemon (a Celery pool process cannot have
children), and by the commands that choose to (`AXIOM_ANALYSIS_CHILD`).
"""

from __future__ import annotations

import io
import logging
import multiprocessing
import os
import pickle
import signal
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Generic, TypeVar

CHILD_NICENESS = 10  # below the processes serving pages, which share the machine's cores
LOCK_CHECK_S = 1.0  # how often a wait for the claims' lock checks the other process lives
# LanceDB, once loaded (task vectors), warns at every fork that a child using it could
# deadlock: a child here never does.
LANCEDB_FORK_WARNING = "lancedb fork support is experimental"

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger("axiom.forking")


def can_fork() -> bool:
    """Whether this process may fork a sharing child (POSIX, not a daemon)."""
    return hasattr(os, "fork") and not multiprocessing.current_process().daemon


@dataclass(frozen=True)
class Failed:
    """What `fn` raised for an item (in either process), in its place among the results."""

    error: Exception


def map_shared(fn: Callable[[T], R], items: Sequence[T], fork: bool) -> list[R | Failed]:
    """`fn` over `items`, each result or `Failed`, in order: shared with a forked child
    (`SharedMap`) when `fork`, there are two or more and this process may fork, else all
    in this one."""
    if fork and len(items) > 1 and can_fork():
        shared = SharedMap(fn, items)
        try:
            return shared.results()
        finally:
            shared.close()
    return [_applied(fn, item) for item in items]


def _applied(fn: Callable[[T], R], item: T) -> R | Failed:
    try:
        return fn(item)
    except Exception as exc:  # noqa: BLE001 - the caller decides, in order
        return Failed(exc)


class SharedMap(Generic[T, R]):
    """`fn` over `items`, shared with a child forked now (see the module)."""

    def __init__(self, fn: Callable[[T], R], items: Sequence[T]) -> None:
        self.fn, self.items = fn, items
        context = multiprocessing.get_context("fork")
        self._ends = context.Array("i", [0, len(items)])  # next front claim, back end
        self._parent = os.getpid()
        self._out = _scratch_file()
        self._child = context.Process(target=self._front, name="axiom-share", daemon=True)
        self._started = False
        self._lock_dead = False  # the claims lock is held by a child that died
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", LANCEDB_FORK_WARNING, RuntimeWarning)
            try:
                self._child.start()
                self._started = True
            except OSError as exc:  # no fork to be had (memory, process limits): all here
                log.warning("could not fork a sharing child (%s); one process does it all", exc)

    def results(self) -> list[R | Failed]:
        """Each item's result (or `Failed`), in order; the child has ended by then."""
        mine: dict[int, R | Failed] = {}
        while (index := self._claim(back=True)) is not None:
            mine[index] = self._apply(index)
        if self._started:
            self._child.join()
        if self._child.exitcode:
            log.warning("sharing child exited with %s; its items are done here",
                        self._child.exitcode)  # fmt: skip
        theirs = self._read()
        out: list[R | Failed] = []
        for index in range(len(self.items)):
            if index in mine:
                out.append(mine[index])
            elif index in theirs:
                out.append(theirs[index])
            else:  # claimed by a child that did not finish it
                out.append(self._apply(index))
        return out

    def close(self) -> None:
        """Stop the child if it still runs (the caller gave up: an error, Ctrl-C)."""
        if self._started:
            if self._child.is_alive():
                self._child.terminate()
            self._child.join()
        self._out.close()

    def _apply(self, index: int) -> R | Failed:
        return _applied(self.fn, self.items[index])

    def _front(self) -> None:
        """In the child: from the front while items are left unclaimed and the parent
        lives (killed, it can no longer want them: `_claim`)."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        os.nice(CHILD_NICENESS)
        while (index := self._claim(back=False)) is not None:
            result = self._apply(index)
            try:
                data = pickle.dumps((index, result), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:  # noqa: BLE001 - cannot travel: the parent does it again
                continue
            self._out.write(len(data).to_bytes(8, "little") + data)
            self._out.flush()

    def _claim(self, back: bool) -> int | None:
        """The next unclaimed item from the back (parent) or the front (child). A lock
        whose holder died with it (killed) is not waited for: the parent takes every item
        left, the child stops."""
        if self._lock_dead:
            return self._take(back)
        lock = self._ends.get_lock()
        while not lock.acquire(timeout=LOCK_CHECK_S):
            if back and not self._child.is_alive():
                self._lock_dead = True  # the child died holding it: no one else claims
                return self._take(back)
            if not back and os.getppid() != self._parent:
                return None
        try:
            if not back and os.getppid() != self._parent:  # gone: it can no longer want it
                return None
            return self._take(back)
        finally:
            lock.release()

    def _take(self, back: bool) -> int | None:
        """Claim from the raw array: the caller holds its lock, or its holder is dead (the
        array's own accessors would wait for that lock)."""
        ends = self._ends.get_obj()
        front, end = ends[0], ends[1]
        if front >= end:
            return None
        if back:
            ends[1] = end - 1
            return end - 1
        ends[0] = front + 1
        return front

    def _read(self) -> dict[int, R | Failed]:
        """The results the child wrote (one that cannot be read back is done again; a
        record cut short by a kill ends them)."""
        self._out.seek(0)
        found: dict[int, R | Failed] = {}
        while len(head := self._out.read(8)) == 8:
            data = self._out.read(int.from_bytes(head, "little"))
            try:
                index, result = pickle.loads(data)
            except Exception:  # noqa: BLE001 - cut short, or an error that cannot be rebuilt
                continue
            found[index] = result
        return found


def _scratch_file() -> IO[bytes]:
    """An anonymous file both processes share: in memory where the system offers it (the
    results hold transcript text), else an unlinked temporary file."""
    if hasattr(os, "memfd_create"):
        return io.open(os.memfd_create("axiom-share"), "w+b")  # noqa: UP020 - an fd
    return tempfile.TemporaryFile()
