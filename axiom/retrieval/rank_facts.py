"""An idle store's search facts in memory, so a search on an unchanged store reads no DuckDB.

`ReadCache` (`axiom.retrieval.reads`) saves the DuckDB read only for ids seen before; a new
query's candidates are mostly unseen, and the read (a join of the ids against each whole
table) was the largest step of a search after the query embedding. A `RankFacts` holds
what rerank, the tier and the citations need of *every* entry (stage, status, session,
creation time, type, title, evidence, first citation), every message's time, the session
starts and the open conflicts, read in one go under one generation token
(`Database.generation`). Entries sit in Arrow columns found by a sorted key array, not in
Python objects, so the memory is a few dozen bytes per row plus the titles and evidence
(README, "Measured: speed", for the figures at 100k and the extrapolation to 1M).

Messages' role, text, meta and citations are not held (the text is most of a store's
bytes): a message hit still reads those through `ReadCache`.

When it is loaded: a search that finds the same generation as the search before it (the
store was idle between them) asks a loader thread for the fact table and goes on with the
per-id reads; the searches after it use the facts. No search waits for a load. A write
changes the token, and the next search drops the fact table before it serves anything, so
a promotion shows at once and forgotten text is neither served nor kept.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa

from axiom.conflicts.queries import all_open_partners
from axiom.entries.queries import EntryHeadline, entry_headline, entry_search_table
from axiom.evidence.citations import first_citation_table
from axiom.ingest.session_queries import all_session_starts, message_time_table
from axiom.retrieval.candidates import Doc
from axiom.retrieval.scoring import Facts, MessageKey, Scored
from axiom.store.db import Database

log = logging.getLogger(__name__)

RANK_FACTS_MAX_ROWS = 2_000_000  # entries + messages; a larger store keeps the per-id reads


class RankFacts:
    """One generation's search facts: entries and message times in sorted Arrow columns."""

    def __init__(
        self,
        generation: str,
        entries: pa.Table,
        citations: pa.Table,
        messages: pa.Table,
        starts: dict[str, Any],
        partners: dict[str, list[str]],
    ) -> None:
        self.generation = generation
        joined = entries.join(citations, "entry_id", join_type="left outer")
        self._entry_keys, order = _sorted_keys(joined["entry_id"])
        self._entries = joined.take(order)
        self._message_keys, order = _sorted_keys(messages["key"])
        self._message_ts = messages["ts"].take(order)
        self._starts = starts
        self._partners = partners
        self.rows = len(self._entry_keys) + len(self._message_keys)
        self.nbytes = (
            self._entries.nbytes
            + self._message_ts.nbytes
            + self._entry_keys.nbytes
            + self._message_keys.nbytes
        )

    def facts(self, docs: Sequence[Doc]) -> dict[str, Facts]:
        """`reads.read_facts` from memory: a document missing here is stale."""
        out: dict[str, Facts] = {}
        rows = self._entry_rows([d.entry_id for d in docs if d.kind == "entry" and d.entry_id])
        for entry_id, row in rows.items():
            out[f"entry:{entry_id}"] = entry_facts(
                row["stage"], row["status"], row["session_id"], row["created_ts"], self._starts
            )
        keys = [
            f"{d.session_id}:{int(d.message_index)}"
            for d in docs
            if d.kind == "message" and d.session_id is not None and d.message_index is not None
        ]
        at = _positions(self._message_keys, keys)
        times = self._message_ts.take(list(at.values())).to_pylist() if at else []
        for key, ts in zip(at, times, strict=True):
            out[f"message:{key}"] = Facts(ts=ts)
        return out

    def details(self, items: Sequence[Scored]) -> list[Scored]:
        """Type, title and evidence of the entries among `items`; returns the others."""
        entries = [i for i in items if i.hit.kind == "entry" and i.hit.entry_id]
        rows = self._entry_rows([str(i.hit.entry_id) for i in entries])
        for item in entries:
            row = rows.get(str(item.hit.entry_id))
            if row is not None:
                head = entry_headline(
                    row["entry_id"], row["entry_type"], row["title"], row["evidence_json"]
                )
                apply_headline(item.fact, head)
        return [i for i in items if not (i.hit.kind == "entry" and i.hit.entry_id)]

    def citations(self, items: Sequence[Scored]) -> list[Scored]:
        """The first citation of the entries among `items` that have one; returns the
        others (messages, and entries none of whose quotes aligned)."""
        rows = self._entry_rows([str(i.hit.entry_id) for i in items if i.hit.kind == "entry"])
        rest = []
        for item in items:
            row = rows.get(str(item.hit.entry_id)) if item.hit.kind == "entry" else None
            if row is not None and row["citation_id"] is not None:
                item.hit.citation = row["citation_id"]
            else:
                rest.append(item)
        return rest

    def conflicts(self, items: Sequence[Scored]) -> None:
        """`reads.attach_conflicts` from memory."""
        for item in items:
            contested = item.hit.status == "contested"
            partners = self._partners.get(item.hit.entry_id or "", []) if contested else []
            item.hit.conflicts_with = list(partners)

    def _entry_rows(self, entry_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        at = _positions(self._entry_keys, entry_ids)
        if not at:
            return {}
        return dict(zip(at, self._entries.take(list(at.values())).to_pylist(), strict=True))


def load_rank_facts(
    db: Database, max_rows: int = RANK_FACTS_MAX_ROWS
) -> tuple[str, RankFacts | None]:
    """The generation of the store now and its fact table (None past `max_rows` rows)."""
    with db.read() as conn:
        generation = db.generation()  # under the shared lock: names exactly this data
        entries = entry_search_table(conn)
        messages = message_time_table(conn) if entries.num_rows <= max_rows else None
        if messages is None or entries.num_rows + messages.num_rows > max_rows:
            return generation, None
        citations = first_citation_table(conn)
        starts, partners = all_session_starts(conn), all_open_partners(conn)
    return generation, RankFacts(generation, entries, citations, messages, starts, partners)


class RankFactsLoader:
    """The current generation's fact table of one database, loaded in the background once two
    searches in a row found the store unchanged; safe to share between threads."""

    def __init__(self, db: Database, max_rows: int = RANK_FACTS_MAX_ROWS) -> None:
        self.db, self.max_rows = db, max_rows
        self._lock = threading.Lock()
        self._facts: RankFacts | None = None
        self._last_seen: str | None = None
        self._skipped: str | None = None  # a generation too big to hold
        self._loading: Future[RankFacts | None] | None = None
        self._loader: ThreadPoolExecutor | None = None

    def current(self, generation: str) -> RankFacts | None:
        """The fact table of `generation` if it is loaded; any other one is dropped first."""
        if self.max_rows <= 0:
            return None
        with self._lock:
            if self._facts is not None and self._facts.generation == generation:
                return self._facts
            self._facts = None  # an older generation's: never served, not kept
            idle = self._last_seen == generation and self._skipped != generation
            if idle and self._loading is None:
                if self._loader is None:
                    self._loader = ThreadPoolExecutor(1, thread_name_prefix="axiom-rank-facts")
                self._loading = self._loader.submit(self._load_quietly)
            self._last_seen = generation
            return None

    def load(self) -> RankFacts | None:
        """Load the fact table of the store as it is now, in this thread, and keep it."""
        generation, facts = load_rank_facts(self.db, self.max_rows)
        with self._lock:
            if facts is None:
                self._skipped = generation
            elif facts.generation == self.db.generation():  # no write since: keep it
                self._facts = facts
        return facts

    def wait(self) -> None:
        """Wait for a load in progress (tests and benchmarks; searches never wait)."""
        loading = self._loading
        if loading is not None:
            loading.result()

    def close(self) -> None:
        if self._loader is not None:
            self._loader.shutdown(wait=False)

    def _load_quietly(self) -> RankFacts | None:
        try:
            return self.load()
        except Exception:  # noqa: BLE001 - searches go on with the per-id reads
            log.warning("search fact table not loaded", exc_info=True)
            return None
        finally:
            with self._lock:
                self._loading = None


def entry_facts(
    stage: str, status: str | None, session_id: str | None, created: Any, starts: dict[str, Any]
) -> Facts:
    """An entry's ranking facts; its time is its session's start (when it was said), else
    its creation."""
    return Facts(
        stage=stage,
        status=status or "active",
        session_id=session_id,
        ts=starts.get(session_id or "") or created,
    )


def apply_headline(fact: Facts, head: EntryHeadline) -> None:
    """An entry's type, title and evidence messages onto its facts."""
    fact.entry_type, fact.title = head.entry_type, head.title
    fact.evidence = evidence_keys(head.evidence, fact.session_id)


def evidence_keys(
    evidence: list[dict[str, Any]] | None, session_id: str | None
) -> tuple[MessageKey, ...]:
    """(session_id, message_index) of each evidence item, in evidence order."""
    out = []
    for ev in evidence or ():
        if isinstance(ev, dict) and isinstance(ev.get("message_index"), int):
            out.append((str(ev.get("session_id") or session_id), ev["message_index"]))
    return tuple(dict.fromkeys(out))


def _sorted_keys(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """The column's values as sorted UTF-8 bytes, and the order that sorts the column."""
    keys = np.array([str(v).encode() for v in column.to_pylist()], dtype=bytes)
    order = np.argsort(keys, kind="stable")
    return keys[order], order


def _positions(keys: np.ndarray, wanted: Sequence[str]) -> dict[str, int]:
    """wanted key -> its row, for the keys present."""
    if not wanted or not len(keys):
        return {}
    probe = [w.encode() for w in wanted]
    at = np.searchsorted(keys, np.array(probe, dtype=bytes)).tolist()
    n = len(keys)
    return {w: i for w, p, i in zip(wanted, probe, at, strict=True) if i < n and keys[i] == p}
