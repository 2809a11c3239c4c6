"""Searches from several threads of one process (the web's shared SearchService) while a
writer keeps waiting for the database: every search finishes.

Regression (found by bench/soak.py): the service opened and closed its DuckDB read on its
one-thread pool. With a writer waiting at the turnstile, one search's lock request blocked
that thread while another search's release (and full-text query) waited in its queue
behind it: the web hung for good, and so did the writer."""

from __future__ import annotations

import threading
import time

from axiom.retrieval.search import SearchService
from axiom.store.db import Database

SECONDS = 4.0


def test_concurrent_searches_and_a_waiting_writer_never_deadlock(
    indexed: SearchService, db: Database
) -> None:
    stop = threading.Event()
    done = {"searches": 0, "writes": 0}
    failures: list[BaseException] = []

    def searching() -> None:
        try:
            while not stop.is_set():
                indexed.search("redis cache", mode="fts")
                done["searches"] += 1
        except BaseException as exc:  # reported below
            failures.append(exc)

    def writing() -> None:
        while not stop.is_set():
            with db.write() as conn:  # a writer queueing at the turnstile again and again
                conn.execute("SELECT 1")
            done["writes"] += 1

    threads = [threading.Thread(target=searching, daemon=True) for _ in range(3)]
    threads.append(threading.Thread(target=writing, daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(SECONDS)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)

    assert not [t for t in threads if t.is_alive()], f"deadlocked after {done}"
    assert failures == []
    assert done["searches"] > 0 and done["writes"] > 0
