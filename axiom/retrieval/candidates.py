"""Step 1 of a search: candidate rows from the LanceDB table, split into four views.

Each modality is one LanceDB query (`2 x per_source` rows: own rows and context rows); its
rows are split by `kind` into an *own* view (the document's own row) and a *context* view
(the message with the turn before it; an entry's own row stands in both). See
`axiom.retrieval.search` for the views and what each is for.

Every row also brings its `_rowid` (its address in the table version read, free to ask):
the feedback query (`axiom.retrieval.feedback`) fetches only `kind`, `_rowid` and
`_score`, and learns which document a row stands for from the rows step 1 returned
(`row_docs`), instead of reading the id columns of 200 rows a second time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from axiom.retrieval.query import SEARCHABLE_KINDS, SearchUnavailable
from axiom.vectors.lance_store import LanceStore, LanceStoreError, row_id_parts, run_async

if TYPE_CHECKING:
    from lancedb.table import AsyncTable

PER_SOURCE = 100
# What a candidate row brings back: its `id` (split into kind and keys by `row_id_parts`:
# one column read instead of four; an entry's row no longer says its session, which the
# ranking takes from DuckDB) and time; not its text (the hit's text comes from DuckDB).
# Each column is a random read per candidate row, a cost that grows with the table
# (README, "Scale curve").
ROW_COLUMNS = ["id", "ts"]

# The feedback query's rows: the row's kind for the view it counts in, nothing else read.
FEEDBACK_COLUMNS = ["kind"]

Row = dict[str, Any]  # one LanceDB result row, as LanceDB returns it
View = list[tuple[Hashable, float]]  # (document id, score), best first


@dataclass
class Doc:
    """What the candidate lists told about one document."""

    id: str
    kind: str
    entry_id: str | None = None
    session_id: str | None = None
    message_index: int | None = None
    ts: datetime | None = None
    own_terms: str | None = None
    raw: dict[str, float] = field(default_factory=dict)  # view -> BM25 score or cosine
    ranks: dict[str, int] = field(default_factory=dict)


def doc_id_of(row: Row) -> str | None:
    """The document a LanceDB row stands for (a context row stands for its message)."""
    kind = row.get("kind")
    if kind == "entry":
        return f"entry:{row['entry_id']}"
    if kind in ("message", "context"):
        return f"message:{row['session_id']}:{row['message_index']}"
    return None


def row_docs(rows: list[Row]) -> dict[int, str]:
    """Row address -> the document it stands for, over step 1's rows (`doc_id_of`)."""
    found: dict[int, str] = {}
    for row in rows:
        doc_id = doc_id_of(row)
        if doc_id is not None and row.get("_rowid") is not None:
            found[int(row["_rowid"])] = doc_id
    return found


def split_views(
    rows: list[Row],
    kinds: Sequence[str],
    score: Callable[[Row], float],
    views: tuple[str, str],
    docs: dict[str, Doc],
    per_source: int,
    doc_of: Callable[[Row], str | None] = doc_id_of,
) -> dict[str, View]:
    """One modality's rows (best first) -> its own and context views (`views`), top
    `per_source` each; `doc_of` names the document a row stands for."""
    own_view, ctx_view = views
    own: View = []
    ctx: View = []
    for row in rows:
        kind = row.get("kind")
        doc_kind = "message" if kind == "context" else kind
        if doc_kind not in kinds:
            continue
        doc_id = doc_of(row)
        if doc_id is None:
            continue
        value = score(row)
        doc = docs.get(doc_id)
        if doc is None:
            doc = docs[doc_id] = Doc(
                id=doc_id,
                kind=str(doc_kind),
                entry_id=row.get("entry_id") if doc_kind == "entry" else None,
                session_id=row.get("session_id"),
                message_index=row.get("message_index") if doc_kind == "message" else None,
            )
        if kind != "context":
            doc.ts = row.get("ts") or doc.ts
            doc.own_terms = row.get("lex_terms", doc.own_terms)
            if len(own) < per_source and own_view not in doc.ranks:
                own.append((doc_id, value))
                doc.raw[own_view] = value
                doc.ranks[own_view] = len(own)
        elif doc.ts is None:
            doc.ts = row.get("ts")
        # An entry has no context row: its own row stands in the context view too.
        if kind in ("context", "entry") and len(ctx) < per_source and ctx_view not in doc.ranks:
            ctx.append((doc_id, value))
            doc.raw[ctx_view] = value
            doc.ranks[ctx_view] = len(ctx)
    return {own_view: own, ctx_view: ctx}


def lexical_views(
    rows: list[Row], kinds: Sequence[str], docs: dict[str, Doc], per_source: int
) -> dict[str, View]:
    return split_views(rows, kinds, _bm25, ("lexical_own", "lexical_ctx"), docs, per_source)


def feedback_views(
    rows: list[Row], kinds: Sequence[str], docs_by_row: dict[int, str], per_source: int
) -> dict[str, View]:
    """The feedback query's rows (`kind`, `_rowid`, `_score`) -> the two lexical views,
    split as `lexical_views` splits step 1's. A row step 1 returned stands for its
    document (`docs_by_row`); any other row for itself (`row:<address>`): it counts in
    its view's scale and ranks, and no candidate is named so (the feedback moves only the
    pool's candidates)."""
    return split_views(
        rows,
        kinds,
        _bm25,
        ("lexical_own", "lexical_ctx"),
        {},
        per_source,
        lambda r: docs_by_row.get(int(r["_rowid"])) or f"row:{r['_rowid']}",
    )


def _bm25(row: Row) -> float:
    return float(row["_score"])


def dense_views(
    rows: list[Row], kinds: Sequence[str], docs: dict[str, Doc], per_source: int
) -> dict[str, View]:
    return split_views(
        rows,
        kinds,
        lambda r: 1.0 - float(r["_distance"]),
        ("dense_own", "dense_ctx"),
        docs,
        per_source,
    )


def kind_filter(kinds: Sequence[str]) -> str | None:
    """The LanceDB `where` for `kinds`; None for every searchable kind."""
    if set(kinds) == set(SEARCHABLE_KINDS):
        return None  # everything but tasks: cheaper to drop the few task rows afterwards
    row_kinds = set(kinds) | ({"context"} if "message" in kinds else set())
    if "entry" in kinds:
        row_kinds.add("entry")
    return "kind IN (" + ", ".join(f"'{kd}'" for kd in sorted(row_kinds)) + ")"


class CandidateSource:
    """The LanceDB table of one store, opened once and reopened after a read fails (the
    writer may have rebuilt it); safe to share between threads. Queried through LanceDB's
    async handle: one hop to its event loop per query, not the sync builders' five or six
    (`LanceStore.open_async_table_for_read`)."""

    def __init__(self, store: LanceStore, per_source: int = PER_SOURCE, nprobes: int = 32) -> None:
        self.store = store
        self.per_source = per_source
        self.nprobes = nprobes
        self._table: AsyncTable | None = None
        self._lock = threading.Lock()

    def table(self) -> AsyncTable:
        with self._lock:
            if self._table is None:
                self._table = self._open_table()
            return self._table

    def _open_table(self) -> AsyncTable:
        try:
            return self.store.open_async_table_for_read()
        except LanceStoreError as exc:
            raise SearchUnavailable(f"search index unavailable: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - anything LanceDB raises on a bad directory
            raise SearchUnavailable(
                f"search index unavailable: cannot open {self.store.table_path}:"
                f" {exc.__class__.__name__}: {exc}"
            ) from exc

    def lexical_rows(
        self,
        table: AsyncTable,
        terms: list[str],
        kinds: Sequence[str],
        columns: Sequence[str] = (*ROW_COLUMNS, "lex_terms"),
    ) -> tuple[list[Row], float]:
        """BM25 rows for `terms` (own and context rows, with `columns` and `_rowid`), and
        the milliseconds it took. The feedback query asks `FEEDBACK_COLUMNS`: each column
        is a random read per row, and it needs only which rows and their scores."""
        # lancedb is heavy to import: loaded on the first full-text query, not with the module.
        from lancedb.query import MatchQuery

        t0 = time.perf_counter()
        query = table.query().nearest_to_text(
            MatchQuery(" ".join(terms), self.store.lexical.column)
        )
        rows = self._run(query, kinds, [*columns, "_score"])
        return rows, elapsed_ms(t0)

    def dense_rows(self, table: AsyncTable, vector: np.ndarray, kinds: Sequence[str]) -> list[Row]:
        """Nearest rows to `vector` by cosine (own and context rows)."""
        query = (
            table.query()
            .nearest_to(np.asarray(vector, dtype=np.float32))
            .column("vector")
            .distance_type("cosine")
            .nprobes(self.nprobes)
        )
        return self._run(query, kinds, [*ROW_COLUMNS, "_distance"])

    def version(self, table: AsyncTable) -> int | None:
        """The table version the handle reads (None when it cannot say)."""
        try:
            return int(run_async(table.version()))
        except Exception:  # noqa: BLE001 - then the caller does without
            return None

    def _run(self, query: Any, kinds: Sequence[str], columns: list[str]) -> list[Row]:
        """`query`'s top `2 x per_source` rows of `kinds` (a prefilter), with `columns`
        and `_rowid`, the kind and keys of their `id` added (`_keyed`)."""
        where = kind_filter(kinds)
        if where:
            query = query.where(where)  # the async API filters before the search
        query = query.with_row_id().limit(2 * self.per_source).select(columns)
        try:
            return _keyed(run_async(query.to_list()))
        except Exception as exc:  # noqa: BLE001 - LanceDB raises many kinds on bad files
            with self._lock:
                self._table = None  # reopen next time (the writer may have rebuilt it)
            raise SearchUnavailable(
                f"search index unreadable ({self.store.table_path}):"
                f" {exc.__class__.__name__}: {exc}. If it is corrupt, move it aside and run"
                " `python -m axiom reconcile` so the writer rebuilds it."
            ) from exc


def _keyed(rows: list[Row]) -> list[Row]:
    """`rows` with the kind and keys their `id` holds (rows read without it unchanged)."""
    for row in rows:
        if "id" in row:
            row.update(row_id_parts(str(row["id"])))
    return rows


def elapsed_ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0
