"""How much a search cannot see yet: outbox items the writer has not embedded.

A person who searches right after an import should be told that results may be missing,
not left to think the memory lacks them. The count is a DuckDB read, so it is taken at
most once per `REFRESH_SECONDS` and only when a write happened since the last one; an idle
store costs a search nothing here.
"""

from __future__ import annotations

import logging
import threading
import time

import duckdb

from axiom.outbox.queries import count_unindexed
from axiom.store.db import Database

REFRESH_SECONDS = 2.0
log = logging.getLogger(__name__)


class IndexBacklog:
    """The unindexed count of one embedding version, refreshed lazily; thread-safe."""

    def __init__(
        self, db: Database, embedding_version: str, refresh_s: float = REFRESH_SECONDS
    ) -> None:
        self.db, self.embedding_version, self.refresh_s = db, embedding_version, refresh_s
        self._lock = threading.Lock()
        self._seen: tuple[str, float, int] | None = None  # generation, when, count

    def count(self) -> int:
        """Items not searchable yet, as of the last refresh (0 before the store exists)."""
        live, now = self.db.generation(), time.monotonic()
        with self._lock:
            seen = self._seen
            if seen and (seen[0] == live or now - seen[1] < self.refresh_s):
                return seen[2]
        if not self.db.path.exists():
            return 0
        try:
            with self.db.read() as conn:  # a snapshot read names its own, older generation
                generation = self.db.generation()
                found = count_unindexed(conn, self.embedding_version)
        except duckdb.Error:  # the notice is a courtesy: the search itself went fine
            log.warning("unindexed count not read", exc_info=True)
            return seen[2] if seen else 0
        with self._lock:
            self._seen = (generation, now, found)
        return found
