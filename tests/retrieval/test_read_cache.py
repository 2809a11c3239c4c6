"""Search keeps what it read from DuckDB while the store is unchanged, and drops it the
moment any write lands: an approval shows at once, forgotten text is never served."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from axiom.forgetting.forget import ForgetTarget, forget
from axiom.pipeline.approval import approve_entry
from axiom.retrieval.search import SearchService
from axiom.store.db import Database

QUERY = "redis cache listing"


@contextmanager
def writer_holding_the_lock(db: Database) -> Iterator[None]:
    """The exclusive flock a writer holds, taken without writing anything."""
    fd = os.open(db.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def search_in_thread(
    service: SearchService, timeout: float
) -> tuple[list[str] | None, threading.Thread]:
    """Hit ids of QUERY, or None if the search did not finish within `timeout`; and its
    thread, to wait for."""
    out: list[list[str]] = []
    worker = threading.Thread(
        target=lambda: out.append([h.id for h in service.search(QUERY, k=5).hits]), daemon=True
    )
    worker.start()
    worker.join(timeout)
    return (out[0] if out else None), worker


def test_an_unchanged_store_is_searched_from_the_cache(indexed: SearchService) -> None:
    first = indexed.search(QUERY, k=5)
    assert first.hits
    with writer_holding_the_lock(indexed.db):  # any DuckDB read would wait for it
        again, _ = search_in_thread(indexed, timeout=20)
    assert again == [h.id for h in first.hits]


def test_a_changed_store_is_read_again(indexed: SearchService) -> None:
    # Without read snapshots (tests/store/test_snapshots.py covers them: a web process may
    # be answered from one while a writer works), a read after a write waits for DuckDB.
    indexed.db.use_snapshots = False
    indexed.search(QUERY, k=5)
    with indexed.db.write() as conn:
        conn.execute("SELECT 1")  # a write unit that changes nothing still moves the token
    with writer_holding_the_lock(indexed.db):
        waiting, worker = search_in_thread(indexed, timeout=2)
        assert waiting is None  # it waits for DuckDB now
    worker.join(30)
    assert not worker.is_alive()


def test_an_approval_shows_in_the_next_search(indexed: SearchService) -> None:
    entry = next(h for h in indexed.search(QUERY, k=5).hits if h.kind == "entry")
    assert entry.stage != "certified" and entry.entry_id
    approve_entry(indexed.db, entry.entry_id, "tester")
    after = {h.id: h for h in indexed.search(QUERY, k=5).hits}
    assert after[entry.id].stage == "certified"


def test_forgotten_text_is_never_served_from_the_cache(indexed: SearchService) -> None:
    before = indexed.search(QUERY, k=10).hits
    assert any(h.session_id == "cache" for h in before)
    assert any("Redis" in (h.summary or "") for h in before)
    forget(indexed.db, ForgetTarget(session_id="cache"), "tester")
    after = indexed.search(QUERY, k=10).hits
    assert not any(h.session_id == "cache" for h in after)
    assert not any("Redis" in (h.summary or "") for h in after)
    kept = indexed.reads.maps(indexed.db.generation())
    cached = [*kept.facts, *kept.details, *kept.citations]
    assert not any(":cache:" in key for key in cached)
    assert not any(f is not None and f.session_id == "cache" for f in kept.facts.values())
