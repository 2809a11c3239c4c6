"""A chunk's analysis shared with a forked child process, so that the rule extractor, the
aligner and the validator use the machine's second core (`axiom.pipeline.batch`).

The child is forked when the chunk is looked up, before the chunk ahead of it is written,
and analyses the chunk's sessions from the front while the parent writes. When the parent
wants the builds, it analyses from the back until the two meet (each session is claimed
under a lock shared by both), so the child's head start is never waited for and a chunk
with nothing ahead of it is analysed by both halves at once. The child writes each build
to an anonymous in-memory file, which the parent reads once the child has ended; a session
the child claimed but did not finish (it was killed) is analysed by the parent.

The child runs niced (`CHILD_NICENESS`), so the processes that serve pages and search
during an import keep the core first. It never opens the store (the ingests it reads came
with the fork) and never looks task vectors up (the embedding model stays in the parent:
`add_task_vectors`). Forking is used only where it is safe: from a process that is not a
daemon (a Celery pool process cannot have children), and only for extractors that run on
the CPU (an LLM extractor's chunks are analysed ahead on a thread instead).
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
from typing import IO

from axiom.pipeline.process import AnalysedBuild, Pipeline, add_task_vectors, analyse_ingest
from axiom.store.db import Database
from axiom.store.events import StoredEvent

CHILD_NICENESS = 10  # below the processes serving pages, which share the machine's cores
LANCEDB_FORK_WARNING = "lancedb fork support is experimental"

log = logging.getLogger("axiom.pipeline")


def can_fork() -> bool:
    """Whether this process may fork an analysing child (POSIX, not a daemon)."""
    return hasattr(os, "fork") and not multiprocessing.current_process().daemon


class ForkedAnalysis:
    """The analysis of `ingests`, shared with a child forked now (see the module)."""

    def __init__(self, db: Database, pipeline: Pipeline, ingests: list[StoredEvent]) -> None:
        self.db, self.pipeline, self.ingests = db, pipeline, ingests
        context = multiprocessing.get_context("fork")
        self._ends = context.Array("i", [0, len(ingests)])  # next front claim, back end
        self._parent = os.getpid()
        self._out = _scratch_file()
        self._child = context.Process(target=self._front, name="axiom-analyse", daemon=True)
        with warnings.catch_warnings():
            # LanceDB (loaded for task vectors) warns that a child using it could deadlock:
            # this one never does (task vectors are looked up in the parent).
            warnings.filterwarnings("ignore", LANCEDB_FORK_WARNING, RuntimeWarning)
            self._child.start()

    def builds(self) -> list[AnalysedBuild]:
        """Every ingest's build, in order, with task vectors added here."""
        mine: dict[int, AnalysedBuild] = {}
        while (index := self._claim(back=True)) is not None:
            mine[index] = analyse_ingest(None, self.ingests[index], self.pipeline)
        self._child.join()
        if self._child.exitcode:
            log.warning("analysis child exited with %s; its sessions are analysed here",
                        self._child.exitcode)  # fmt: skip
        theirs = self._read()
        out = []
        for index, ingest in enumerate(self.ingests):
            build = mine.get(index) or theirs.get(index)
            if build is None:  # claimed by a child that did not finish it
                build = analyse_ingest(None, ingest, self.pipeline)
            out.append(add_task_vectors(self.db, build))
        return out

    def close(self) -> None:
        """Stop the child if it still runs (the parent gave up: an error, Ctrl-C)."""
        if self._child.is_alive():
            self._child.terminate()
        self._child.join()
        self._out.close()

    def _front(self) -> None:
        """In the child: analyse from the front while sessions are left unclaimed, and the
        parent lives (killed, it can no longer want them)."""
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        os.nice(CHILD_NICENESS)
        while os.getppid() == self._parent and (index := self._claim(back=False)) is not None:
            build = analyse_ingest(None, self.ingests[index], self.pipeline)
            parts = (index, build.report, build.timer, build.outcome, build.analysed)
            pickle.dump(parts, self._out, protocol=pickle.HIGHEST_PROTOCOL)
            self._out.flush()

    def _claim(self, back: bool) -> int | None:
        """The next unclaimed session from the back (parent) or the front (child)."""
        with self._ends.get_lock():
            front, end = self._ends[0], self._ends[1]
            if front >= end:
                return None
            if back:
                self._ends[1] = end - 1
                return end - 1
            self._ends[0] = front + 1
            return front

    def _read(self) -> dict[int, AnalysedBuild]:
        """The builds the child wrote, up to the first it did not finish writing."""
        self._out.seek(0)
        found: dict[int, AnalysedBuild] = {}
        while True:
            try:
                index, report, timer, outcome, analysed = pickle.load(self._out)
            except (EOFError, pickle.UnpicklingError, ValueError):
                return found
            ingest = self.ingests[index]
            found[index] = AnalysedBuild(self.pipeline, ingest, report, timer, outcome, analysed)


def _scratch_file() -> IO[bytes]:
    """An anonymous file both processes share: in memory where the system offers it (the
    builds hold transcript text), else an unlinked temporary file."""
    if hasattr(os, "memfd_create"):
        return io.open(os.memfd_create("axiom-analysis"), "w+b")  # noqa: UP020 - an fd
    return tempfile.TemporaryFile()
