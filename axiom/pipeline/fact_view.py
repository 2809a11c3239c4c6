"""What the builds of one write transaction read of `conflict_facts` and `conflicts`: the
tables as the transaction found them, plus the events its builds appended folded in memory
the way `axiom.conflicts.projector` folds them into the tables.

Reading the tables instead meant running the conflict projector before every build and
reading every believed fact of a type again in every build, a cost that grew with the
store. Here each type's believed facts are read once per transaction and their index
(`BelievedFacts`) grows with the facts later builds add; a change in the middle of the
order (a fact no longer believed, or believed again) rebuilds it from memory.

`absorb` must see every event the transaction appended, in order, before a build reads.
Folding an event twice changes nothing (each sets a status or adds a row keyed by id),
so the tables may also have been advanced over some of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from operator import itemgetter

import duckdb

from axiom.conflicts.detector import COMPARED_TYPES, BelievedFacts, Fact
from axiom.conflicts.projector import conflict_row, fact_row, resolution_fields
from axiom.conflicts.queries import (
    believed_facts_dated,
    fact_statuses,
    facts_dated,
    open_conflicts_dated,
)
from axiom.store.event_types import (
    CONFLICT_DETECTED,
    CONFLICT_RESOLVED,
    ENTRY_CREATED,
    ENTRY_STATUS_CHANGED,
)
from axiom.store.events import StoredEvent, is_redacted

BELIEVED = frozenset(("active", "contested"))  # the statuses `believed_facts` reads
Place = tuple[datetime, str]  # (created_ts, entry_id): a fact's place in believed order


class _Believed:
    """The believed facts of one type and their index, in (created_ts, entry_id) order."""

    def __init__(self, dated: list[tuple[Place, Fact]]) -> None:
        self.members: dict[str, tuple[Place, Fact]] = {f.entry_id: (p, f) for p, f in dated}
        self._index: BelievedFacts | None = None

    def put(self, place: Place, fact: Fact) -> None:
        if fact.entry_id in self.members:
            return
        self.members[fact.entry_id] = (place, fact)
        index = self._index
        if index is not None and (not index.facts or place > self._last):
            index.add(fact)  # after every fact it holds: the order stays
            self._last = place
        else:
            self._index = None

    def drop(self, entry_id: str) -> None:
        if self.members.pop(entry_id, None) is not None:
            self._index = None

    def index(self) -> BelievedFacts:
        if self._index is None:
            ordered = sorted(self.members.values(), key=itemgetter(0))
            self._index = BelievedFacts([f for _, f in ordered])
            self._last = ordered[-1][0] if ordered else (datetime.min, "")
        return self._index


class FactView:
    """`believed_facts`, `fact_statuses` and `open_conflict_pairs` as of the events absorbed
    so far (see the module docstring)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self.conn = conn
        self._created: dict[str, tuple[Place, Fact]] = {}  # facts the transaction created
        self._status: dict[str, str] = {}  # entry id -> the last status the events set
        self._read: dict[str, tuple[Place, Fact]] = {}  # stored facts read by id
        self._unread: set[str] = set()  # stored entries made believed again, not read yet
        self._types: dict[str, _Believed] = {}  # loaded on first use
        self._open: dict[str, tuple[datetime, str, str]] | None = None  # stored, on first use
        self._detected: dict[str, tuple[datetime, str, str]] = {}
        self._resolved: set[str] = set()

    def absorb(self, events: Iterable[StoredEvent]) -> None:
        """Fold `events` (the transaction's next ones, in order) into what the view shows."""
        touched: dict[str, None] = {}  # facts created or given a status, in order
        for event in events:
            if is_redacted(event.payload):
                continue  # the projector passes it over too
            try:
                self._fold(event, touched)
            except (KeyError, TypeError, ValueError):
                continue  # a poison event changes no row: the projector records it
        # Each fact placed once, by its last status: a fact created and superseded by the
        # same build never enters (and so never reorders) an index.
        now_believed: list[tuple[Place, Fact]] = []
        for entry_id in touched:
            known = self._created.get(entry_id) or self._read.get(entry_id)
            if self._status.get(entry_id, "active") not in BELIEVED:
                for believed in self._types.values():
                    believed.drop(entry_id)
            elif known is not None:
                now_believed.append(known)
            elif not any(entry_id in b.members for b in self._types.values()):
                self._unread.add(entry_id)  # believed again: its row is read when needed
        for place, fact in sorted(now_believed, key=itemgetter(0)):
            believed = self._types.get(fact.entry_type)
            if believed is not None:
                believed.put(place, fact)

    def _fold(self, event: StoredEvent, touched: dict[str, None]) -> None:
        p = event.payload
        if event.event_type == ENTRY_CREATED:
            if p["entry_type"] in COMPARED_TYPES and p["entry_id"] not in self._created:
                fact = Fact(*fact_row(event, p)[:10])  # the first row stands, as stored
                self._created[fact.entry_id] = ((event.ts, fact.entry_id), fact)
                self._status.pop(fact.entry_id, None)  # one set before: of no fact
                touched[fact.entry_id] = None
        elif event.event_type == ENTRY_STATUS_CHANGED:
            entry_id, to = p["entry_id"], p["to"]
            self._status[entry_id] = to
            touched[entry_id] = None
        elif event.event_type == CONFLICT_DETECTED:
            row = conflict_row(event, p)
            self._detected[row[0]] = (event.ts, row[1], row[2])
            self._resolved.discard(row[0])
        elif event.event_type == CONFLICT_RESOLVED:
            resolution_fields(event, p)  # refuses a choice the projector refuses
            self._resolved.add(p["conflict_id"])

    def believed(self, entry_type: str) -> BelievedFacts:
        """What `believed_facts(conn, entry_type)` would read after the events absorbed,
        indexed. The index is the transaction's own, changed by the next `absorb`: read it
        within one build."""
        self._read_unread()
        believed = self._types.get(entry_type)
        if believed is None:
            believed = self._types[entry_type] = self._load(entry_type)
        return believed.index()

    def _load(self, entry_type: str) -> _Believed:
        stored = believed_facts_dated(self.conn, entry_type)
        kept = [(p, f) for p, f in stored if self._status.get(f.entry_id, "active") in BELIEVED]
        more = [
            (p, f)
            for p, f in [*self._created.values(), *self._read.values()]
            if f.entry_type == entry_type and self._status.get(f.entry_id, "active") in BELIEVED
        ]
        return _Believed(kept + more)

    def _read_unread(self) -> None:
        if not self._unread:
            return
        found = facts_dated(self.conn, sorted(self._unread))
        self._unread.clear()
        for place, fact in found.values():
            self._read[fact.entry_id] = (place, fact)
            if self._status.get(fact.entry_id) in BELIEVED:
                believed = self._types.get(fact.entry_type)
                if believed is not None:
                    believed.put(place, fact)

    def statuses(self, entry_ids: list[str]) -> dict[str, str]:
        """What `fact_statuses(conn, entry_ids)` would read after the events absorbed."""
        unknown = [i for i in entry_ids if i not in self._created]
        stored = fact_statuses(self.conn, unknown) if unknown else {}
        out = {i: self._status.get(i, "active") for i in entry_ids if i in self._created}
        out.update({i: self._status.get(i, s) for i, s in stored.items()})
        return out

    def open_pairs(self) -> list[tuple[str, str]]:
        """What `open_conflict_pairs(conn)` would read after the events absorbed."""
        if self._open is None:
            self._open = open_conflicts_dated(self.conn)
        current = {**self._open, **self._detected}
        for conflict_id in self._resolved:
            current.pop(conflict_id, None)
        ordered = sorted(current.items())  # conflict id, then newest detected first
        ordered.sort(key=lambda item: item[1][0], reverse=True)
        return [(older, newer) for _, (_, older, newer) in ordered]
