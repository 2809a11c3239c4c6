"""What search reads from DuckDB, through the owners of each table: the current stage,
status and time of every candidate, the details of the few shown, their citations.

Stage and status come from DuckDB at query time (LanceDB's copy would be stale after a
promotion); a candidate missing here is stale (deleted or not yet projected) and dropped.

`ReadCache` keeps what was read, per document id, for as long as the database's generation
token (`Database.generation`, which every write unit changes before it touches anything) is
the one the values were read under: a search over an unchanged store reads DuckDB only for
ids it has not seen yet, and none at all when every candidate was seen. Any write (an
approval, a forget, an import) changes the token, and the next search drops the whole
cache before it serves anything: forgotten text is never served, nor kept.

Once the store has stayed unchanged between two searches, the entries' part of these reads
comes from the generation's `RankFacts` (`axiom.retrieval.rank_facts`) instead: every id, not
only those seen before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import duckdb

from axiom.conflicts.queries import open_partners
from axiom.entries.queries import entry_headlines, entry_rank_facts
from axiom.evidence.citations import first_citations, message_citations
from axiom.ingest.session_queries import message_texts, message_times, session_starts
from axiom.retrieval.candidates import Doc
from axiom.retrieval.rank_facts import RankFacts, apply_headline, entry_facts
from axiom.retrieval.scoring import Facts, MessageKey, Scored
from axiom.store.db import Database

CACHE_LIMIT = 200_000  # ids per map; past it the cache starts over (~100 MB at worst)


def read_facts(conn: duckdb.DuckDBPyConnection, docs: list[Doc]) -> dict[str, Facts]:
    """Current stage, status and time of every candidate still in DuckDB, by document id.

    An entry's time is its session's start (when it was said), else its creation; a
    message's its own timestamp, else its session's start.
    """
    entry_ids = [d.entry_id for d in docs if d.kind == "entry" and d.entry_id]
    keys = [
        (d.session_id, int(d.message_index))
        for d in docs
        if d.kind == "message" and d.session_id is not None and d.message_index is not None
    ]
    out: dict[str, Facts] = {}
    entries = entry_rank_facts(conn, entry_ids)
    starts = session_starts(conn, [e.session_id for e in entries if e.session_id])
    for e in entries:
        out[f"entry:{e.entry_id}"] = entry_facts(
            e.stage, e.status, e.session_id, e.created_ts, starts
        )
    for (sid, idx), ts in message_times(conn, keys).items():
        out[f"message:{sid}:{idx}"] = Facts(ts=ts)
    return out


def read_details(conn: duckdb.DuckDBPyConnection, items: list[Scored]) -> None:
    """Title, type and evidence of entries; role, text and meta of messages."""
    entries = {i.hit.entry_id: i for i in items if i.hit.kind == "entry" and i.hit.entry_id}
    messages: dict[MessageKey, Scored] = {
        (str(i.hit.session_id), int(i.hit.message_index or 0)): i
        for i in items
        if i.hit.kind == "message"
    }
    for head in entry_headlines(conn, list(entries)):
        apply_headline(entries[head.entry_id].fact, head)
    for key, message in message_texts(conn, list(messages)).items():
        fact = messages[key].fact
        fact.role, fact.text, fact.meta = message.role, message.text, message.meta


def attach_citations(conn: duckdb.DuckDBPyConnection, items: list[Scored]) -> None:
    """An entry's first evidence citation; an entry none of whose quotes aligned gets
    the message citation of its first evidence message; a message its own."""
    entry_ids = [i.hit.entry_id for i in items if i.hit.kind == "entry" and i.hit.entry_id]
    by_entry = first_citations(conn, entry_ids)
    wanted: dict[str, MessageKey] = {}
    for i in items:
        if i.hit.kind == "message":
            wanted[i.hit.id] = (str(i.hit.session_id), int(i.hit.message_index or 0))
        elif i.hit.entry_id not in by_entry and i.fact.evidence:
            wanted[i.hit.id] = i.fact.evidence[0]
    by_message = message_citations(conn, list(wanted.values()))
    for i in items:
        if i.hit.kind == "entry" and i.hit.entry_id in by_entry:
            i.hit.citation = by_entry[i.hit.entry_id]
        elif i.hit.id in wanted:
            i.hit.citation = by_message.get(wanted[i.hit.id])


def attach_conflicts(conn: duckdb.DuckDBPyConnection, items: list[Scored]) -> None:
    """A contested entry's hit names the entries it is in an open conflict with."""
    entry_ids = [i.hit.entry_id for i in items if i.hit.status == "contested" and i.hit.entry_id]
    if not entry_ids:
        return
    partners = open_partners(conn, entry_ids)
    for i in items:
        i.hit.conflicts_with = partners.get(i.hit.entry_id or "", [])


@dataclass
class _Maps:
    """One generation's reads by document id; None marks an id DuckDB does not have."""

    facts: dict[str, Facts | None] = field(default_factory=dict)
    details: dict[str, Facts] = field(default_factory=dict)
    citations: dict[str, str | None] = field(default_factory=dict)


class ReadCache:
    """What searches read from DuckDB, kept while the database's generation is unchanged
    (one per `SearchService`, shared by its threads)."""

    def __init__(self, limit: int = CACHE_LIMIT) -> None:
        self.limit = limit
        self._lock = threading.Lock()
        self._generation: str | None = None
        self._maps = _Maps()

    def maps(self, generation: str) -> _Maps:
        """The maps valid for `generation`; empty ones (the old dropped) if it moved on."""
        with self._lock:
            if generation != self._generation:
                self._generation, self._maps = None, _Maps()
            return self._maps

    def keep(self, generation: str, update: Callable[[_Maps], None]) -> None:
        """Record reads made under `generation` (read while the shared lock was held)."""
        with self._lock:
            maps = self._maps
            if (
                generation != self._generation
                or max(len(maps.facts), len(maps.details), len(maps.citations)) > self.limit
            ):
                self._generation, self._maps = generation, _Maps()
            update(self._maps)


class CachedRead:
    """One search's reads: from the generation's `RankFacts` when one is loaded, from the
    cache where it holds the id, else through one DuckDB connection, awaited only when
    some id is missing (`connect`)."""

    def __init__(
        self,
        cache: ReadCache,
        db: Database,
        connect: Callable[[], duckdb.DuckDBPyConnection],
        rank_facts: RankFacts | None = None,
    ) -> None:
        self.cache, self.db, self._connect, self.rank_facts = cache, db, connect, rank_facts
        self.maps = cache.maps(db.generation())  # unlocked: only decides what may be served
        self._conn: duckdb.DuckDBPyConnection | None = None
        self._generation = ""

    @property
    def touched(self) -> bool:
        """Whether this search read DuckDB at all."""
        return self._conn is not None

    def conn(self) -> duckdb.DuckDBPyConnection:
        if self._conn is None:
            self._conn = self._connect()
            self._generation = self.db.generation()  # under the read's shared lock
        return self._conn

    def facts(self, docs: list[Doc]) -> dict[str, Facts]:
        """`read_facts`, from the fact table, else from the cache for the ids it holds."""
        if self.rank_facts is not None:
            return self.rank_facts.facts(docs)
        known = self.maps.facts
        missing = [d for d in docs if d.id not in known]
        out = {d.id: replace(f) for d in docs if (f := known.get(d.id)) is not None}
        if missing:
            found = read_facts(self.conn(), missing)
            out.update(found)
            fresh = {d.id: found.get(d.id) for d in missing}
            self.cache.keep(self._generation, lambda m: m.facts.update(_copies(fresh)))
        return out

    def details(self, items: list[Scored]) -> None:
        """`read_details`, from the fact table (entries), else from the cache for the ids it
        holds."""
        if self.rank_facts is not None:
            items = self.rank_facts.details(items)
        known = self.maps.details
        missing = [i for i in items if i.hit.id not in known]
        for i in items:
            if (cached := known.get(i.hit.id)) is not None:
                _copy_details(cached, i.fact)
        if missing:
            read_details(self.conn(), missing)
            fresh = {i.hit.id: replace(i.fact) for i in missing}
            self.cache.keep(self._generation, lambda m: m.details.update(fresh))

    def citations(self, items: list[Scored]) -> None:
        """`attach_citations`, from the fact table (entries), else from the cache for the ids
        it holds."""
        if self.rank_facts is not None:
            items = self.rank_facts.citations(items)
        known = self.maps.citations
        missing = [i for i in items if i.hit.id not in known]
        for i in items:
            if i.hit.id in known:
                i.hit.citation = known[i.hit.id]
        if missing:
            attach_citations(self.conn(), missing)
            fresh = {i.hit.id: i.hit.citation for i in missing}
            self.cache.keep(self._generation, lambda m: m.citations.update(fresh))

    def conflicts(self, items: list[Scored]) -> None:
        """`attach_conflicts`, from the fact table, else read now (never cached)."""
        if not any(item.hit.status == "contested" for item in items):
            return
        if self.rank_facts is not None:
            self.rank_facts.conflicts(items)
        else:
            attach_conflicts(self.conn(), items)


def _copies(facts: dict[str, Facts | None]) -> dict[str, Facts | None]:
    return {key: None if f is None else replace(f) for key, f in facts.items()}


def _copy_details(source: Facts, target: Facts) -> None:
    target.entry_type, target.title, target.evidence = (
        source.entry_type,
        source.title,
        source.evidence,
    )
    target.role, target.text, target.meta = source.role, source.text, source.meta
