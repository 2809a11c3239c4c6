"""Search keeps the whole store's ranking facts in memory while the store is unchanged
(`axiom.retrieval.rank_facts`): the same hits as reading DuckDB, no DuckDB read at all on an
idle store, and nothing of an older generation served or kept after a write."""

from __future__ import annotations

import threading
from dataclasses import asdict
from datetime import datetime
from typing import Any

from axiom.forgetting.forget import ForgetTarget, forget
from axiom.pipeline.approval import approve_entry
from axiom.projections import project_all
from axiom.retrieval.candidates import Doc
from axiom.retrieval.reads import ReadCache
from axiom.retrieval.search import SearchService
from axiom.store.event_types import ENTRY_STATUS_CHANGED
from axiom.store.events import EventStore, NewEvent
from tests.retrieval.test_read_cache import writer_holding_the_lock

QUERIES = [
    "redis cache listing",
    "deploy migration index failed",
    "배포 일정",
    "how long do cache entries live",
    "weather in Lisbon",
]


def twin(service: SearchService, facts_rows: int) -> SearchService:
    """Another service over the same files and model."""
    return SearchService(
        service.db, service.store, service.query_embedder.embedder(), facts_rows=facts_rows
    )


NOW = datetime(2026, 4, 1)  # one clock for both services: recency is part of the score


def hits(service: SearchService, query: str) -> list[dict[str, Any]]:
    return [asdict(h) for h in service.search(query, k=10, now=NOW).hits]


def loaded(service: SearchService) -> SearchService:
    """The service with the current generation's fact table in memory, as an idle store
    gets it: two searches in a row find the same generation and the loader reads it."""
    service.search("warm up", k=1)
    service.search("warm up again", k=1)
    service.rank_facts.wait()
    assert service.rank_facts.current(service.db.generation()) is not None
    return service


def test_the_fact_table_gives_the_same_hits_as_reading_duckdb(indexed: SearchService) -> None:
    entry = next(h for h in indexed.search("redis cache listing", k=5).hits if h.kind == "entry")
    with indexed.db.write() as conn:  # a contested entry: its conflicts are read too
        EventStore(conn).append(
            NewEvent(ENTRY_STATUS_CHANGED, {"entry_id": entry.entry_id, "to": "contested"})
        )
    project_all(indexed.db)
    plain, held = twin(indexed, 0), loaded(twin(indexed, 1_000))
    try:
        for query in QUERIES:
            assert hits(held, query) == hits(plain, query), query
        assert plain.rank_facts.current(plain.db.generation()) is None  # 0: never loaded
    finally:
        plain.close()
        held.close()


def test_an_idle_store_is_searched_without_reading_duckdb(indexed: SearchService) -> None:
    loaded(indexed)
    plain = twin(indexed, 0)
    expected = [h.id for h in plain.search(QUERIES[0], k=10, kinds=("entry",), now=NOW).hits]
    plain.close()
    indexed.reads = ReadCache()  # nothing read per id: only the fact table can serve
    found: list[list[str]] = []

    def search() -> None:
        result = indexed.search(QUERIES[0], k=10, kinds=("entry",), now=NOW)
        found.append([h.id for h in result.hits])

    with writer_holding_the_lock(indexed.db):  # any DuckDB read would wait for it
        worker = threading.Thread(target=search, daemon=True)
        worker.start()
        worker.join(20)
    assert found and found[0] == expected


def test_a_write_drops_the_fact_table_and_shows_at_once(indexed: SearchService) -> None:
    loaded(indexed)
    entry = next(h for h in indexed.search("redis cache listing", k=5).hits if h.kind == "entry")
    assert entry.stage != "certified" and entry.entry_id
    approve_entry(indexed.db, entry.entry_id, "tester")
    after = {h.id: h for h in indexed.search("redis cache listing", k=5).hits}
    assert after[entry.id].stage == "certified"
    assert indexed.rank_facts.current(indexed.db.generation()) is None  # reloaded only when idle


def test_forgotten_text_is_neither_served_nor_kept(indexed: SearchService) -> None:
    loaded(indexed)
    forget(indexed.db, ForgetTarget(session_id="cache"), "tester")
    after = indexed.search("redis cache listing", k=10).hits
    assert not any(h.session_id == "cache" for h in after)
    assert not any("Redis" in (h.summary or "") for h in after)
    loaded(indexed)  # the new generation's fact table: the session is gone from it
    facts = indexed.rank_facts.current(indexed.db.generation())
    assert facts is not None
    gone = [Doc(id="message:cache:1", kind="message", session_id="cache", message_index=1)]
    assert facts.facts(gone) == {}
    assert not any(h.session_id == "cache" for h in indexed.search("redis cache", k=10).hits)


def test_a_store_past_the_row_limit_keeps_the_per_id_reads(indexed: SearchService) -> None:
    small = twin(indexed, 1)
    try:
        first = hits(small, "redis cache listing")
        small.search("warm up", k=1)
        small.rank_facts.wait()
        assert small.rank_facts.current(small.db.generation()) is None
        assert hits(small, "redis cache listing") == first
    finally:
        small.close()
