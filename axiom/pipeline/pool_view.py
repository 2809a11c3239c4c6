"""The corroboration pools the builds of one write transaction read: `corroboration_pool`
over `entries` as the transaction found the table, plus the entry events its builds
appended, folded in memory the way `axiom.entries.projector` folds them (an entry is
created raw and active; a promotion or demotion sets its stage, a status change its
status).

One pool per entry type serves every session (`SessionPool`; a build leaves its own
session out when it matches). It is read and indexed once per transaction and changed in
place, where reading and indexing it again in every build cost a share of each build that
grew with the store. `absorb` must see every event the transaction appended, in order,
before a build reads; folding an event twice changes nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import duckdb

from axiom.entries.projector import created_row
from axiom.entries.queries import POOL_STAGES, corroboration_members, pool_fields
from axiom.graduation.corroboration import MemoryWords, SessionPool
from axiom.store.event_types import (
    ENTRY_CREATED,
    ENTRY_DEMOTED,
    ENTRY_PROMOTED,
    ENTRY_STATUS_CHANGED,
)
from axiom.store.events import StoredEvent, is_redacted

POOL_STATUSES = ("active", "contested")  # a build's pool: contested ones it may settle
_ENTRY_EVENTS = (ENTRY_CREATED, ENTRY_PROMOTED, ENTRY_DEMOTED, ENTRY_STATUS_CHANGED)
TYPE, SESSION, STAGE, STATUS, TITLE, KEY = range(6)  # positions in a followed entry's row

# The words of a title are the same whenever asked, and `MemoryWords` is immutable.
memory_words: Callable[[str, str], MemoryWords] = functools.lru_cache(maxsize=1 << 16)(
    MemoryWords.of
)


def _member(row: list[str | None]) -> bool:
    return row[STAGE] in POOL_STAGES and row[STATUS] in POOL_STATUSES


class PoolView:
    """Each type's corroboration pool as of the events absorbed (see the module docstring)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self.conn = conn
        # Entries the events touched: [type, session, stage, status, title, canonical key].
        self._rows: dict[str, list[str | None]] = {}
        self._pools: dict[str, SessionPool] = {}  # loaded on first use

    def absorb(self, events: Iterable[StoredEvent]) -> None:
        """Fold `events` (the transaction's next ones, in order) into the rows and pools."""
        mine = [
            e
            for e in events
            if e.event_type in _ENTRY_EVENTS
            and not is_redacted(e.payload)  # the projector passes those over too
            and isinstance(e.payload.get("entry_id"), str)
        ]
        created = {e.payload["entry_id"] for e in mine if e.event_type == ENTRY_CREATED}
        unknown = {e.payload["entry_id"] for e in mine} - created - self._rows.keys()
        if unknown:  # stored entries the events change: their rows, in one read
            for r in pool_fields(self.conn, sorted(unknown)):
                self._rows[r[0]] = list(r[1:])
        touched: dict[str, None] = {}
        for event in mine:
            try:
                if self._fold(event):
                    touched[event.payload["entry_id"]] = None
            except (KeyError, TypeError, ValueError):
                continue  # a poison event changes no row: the projector records it
        for eid in touched:
            row = self._rows[eid]
            pool = self._pools.get(row[TYPE])
            if pool is not None:
                self._place(pool, eid, row)

    def _fold(self, event: StoredEvent) -> bool:
        """The event's change to its entry's row, as `axiom.entries.projector` makes it;
        False when it names no entry."""
        p = event.payload
        if event.event_type == ENTRY_CREATED:
            row = created_row(event, p)  # refuses what the projector refuses
            if p["entry_id"] not in self._rows:  # the first row stands, as stored
                self._rows[p["entry_id"]] = [row[2], row[10], row[5], row[6], row[3], row[9]]
            return True
        to, row = p["to"], self._rows.get(p["entry_id"])
        if row is None:
            return False  # no such entry: the projector skips the event too
        row[STATUS if event.event_type == ENTRY_STATUS_CHANGED else STAGE] = to
        return True

    def pool(self, entry_type: str) -> SessionPool:
        """The type's pool for every session (`SessionPool.matching` leaves one out)."""
        pool = self._pools.get(entry_type)
        if pool is None:
            pool = self._pools[entry_type] = SessionPool()
            for eid, session, stage, title, key in corroboration_members(
                self.conn, entry_type, POOL_STATUSES
            ):
                if eid not in self._rows:  # else as the events left it, below
                    pool.put((eid, session, stage), key, memory_words(entry_type, title))
            for eid, row in self._rows.items():
                if row[TYPE] == entry_type:
                    self._place(pool, eid, row)
        return pool

    @staticmethod
    def _place(pool: SessionPool, eid: str, row: list[str | None]) -> None:
        if _member(row):
            pool.put((eid, row[SESSION], row[STAGE]), row[KEY], memory_words(row[TYPE], row[TITLE]))
        else:
            pool.discard(eid)
