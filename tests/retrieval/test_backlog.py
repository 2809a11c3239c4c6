"""A search says how many items it cannot find yet (outbox jobs not embedded), and the
count follows the writer without a read per search."""

from __future__ import annotations

from pathlib import Path

import duckdb

from axiom.ingest.importer import ingest_transcripts
from axiom.outbox.projector import OutboxProjector
from axiom.outbox.writer import OutboxWriter
from axiom.retrieval.backlog import IndexBacklog
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.store.projection import run_projector
from axiom.vectors.lance_store import LanceStore

from .conftest import CACHE_SESSION, DEPLOY_SESSION, HashEmbedder, transcript


def test_a_search_counts_the_items_the_writer_has_not_embedded(
    indexed: SearchService, db: Database, store: LanceStore, embedder: HashEmbedder
) -> None:
    indexed.backlog.refresh_s = 0.0  # read after every write (the service waits 2 s)
    assert indexed.search("Redis cache").unindexed == 0
    assert indexed.search("Redis cache").unindexed_notice() is None

    ingest_transcripts(db, [transcript("later", DEPLOY_SESSION[:2], "2026-04-01T09:00:00")])
    with db.write() as conn:
        run_projector(conn, OutboxProjector(store.embedding_version))
    waiting = indexed.search("deploy migration")
    assert waiting.unindexed == 2  # the two new messages
    assert "2 item(s) are not searchable yet" in waiting.unindexed_notice()
    assert waiting.to_json()["unindexed"] == 2

    OutboxWriter(db, store, embedder, batch_size=32).drain()
    assert indexed.search("deploy migration").unindexed == 0


def test_the_count_is_read_again_only_after_a_write(tmp_path: Path, db: Database) -> None:
    ingest_transcripts(db, [transcript("s", CACHE_SESSION)])
    with db.write() as conn:
        run_projector(conn, OutboxProjector("v1"))
    backlog = IndexBacklog(db, "v1", refresh_s=0.0)
    assert backlog.count() == len(CACHE_SESSION)
    # Behind Axiom's back (no write unit, so no new generation): the count is not re-read.
    with duckdb.connect(str(db.path)) as conn:
        conn.execute("UPDATE vector_outbox SET status = 'done' WHERE item_kind = 'message'")
    assert backlog.count() == len(CACHE_SESSION)

    with db.write() as conn:  # any write unit: the next count reads the table
        conn.execute("UPDATE vector_outbox SET status = 'pending' WHERE item_id = 'none'")
    assert backlog.count() == 0
    assert IndexBacklog(db, "another-version").count() == 0


def test_no_store_yet_means_nothing_waiting(tmp_path: Path) -> None:
    assert IndexBacklog(Database(tmp_path / "absent.duckdb"), "v1").count() == 0
