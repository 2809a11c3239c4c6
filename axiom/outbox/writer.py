"""The single outbox writer: pending jobs → embeddings → LanceDB → done.

One batch of `drain()`:

1. claim (short write transaction): a conditional `UPDATE … SET status='processing',
   attempts=attempts+1 WHERE status='pending' AND job_id IN (oldest n) RETURNING job_id`;
   only the returned rows are ours, so a second claimant simply gets other rows or none;
2. load the items' current text (in the same transaction, through the owners' queries:
   entries, messages + sessions, tasks);
3. embed — outside every lock, so pages and imports never wait for the model;
4. upsert into LanceDB (merge_insert on `id`: a retried batch replaces, never duplicates);
5. mark done (`WHERE status='processing' AND job_id IN …`), in the write transaction that
   claims the next batch, or in the drain's last one, which also counts what is left. A job
   the projector re-queued meanwhile (its item changed) stays pending and is redone.

So a batch costs one DuckDB write unit, not four (claim, load, mark, count): each unit
opens the file and checkpoints it. A writer that dies between 4 and 5 leaves its
jobs `processing`; reconcile re-queues them and the redo replaces the same rows.

A job whose item no longer exists is marked failed ("item not found") and its vector, if
any, removed. An embedding or LanceDB error marks the whole batch failed with the error
text and ends the drain (the rest stays pending rather than failing the same way);
`reconcile()` re-queues failed jobs until they reach `max_attempts`, and puts jobs that a
dead writer left in `processing` back to pending.

Entries and tasks are claimed before messages: they are the memory units search ranks
first, and a big import should not hold them back.

The whole drain runs under the LanceDB writer lock (`LanceStore.writer_lock`), so two
drains — a Celery `writer` worker and a CLI run — never write LanceDB at once: the second
returns at once with `busy=True`. DuckDB is only ever held for the short steps 1, 2 and 5.

Index upkeep: FTS queries slow down ~15x over 10k unindexed rows (DESIGN §10), so the
writer calls `optimize()` whenever ~`optimize_every` (1000) rows were added since the last
one, and at the end of a drain creates the FTS index if missing and optimizes when new rows
or small fragments piled up. Not after every small batch: an optimize rewrites fragments.
Before each optimize and at the end of a drain it builds the vector index at 50,000 rows
and rebuilds it from scratch each time the table has doubled since the last build, since
optimize only appends delta segments to it and kNN slows with each (README, scale).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import duckdb

from axiom.entries.queries import entries_to_embed
from axiom.ingest.session_queries import messages_with_previous
from axiom.outbox.documents import (
    document_text_for_context,
    document_text_for_entry,
    document_text_for_message,
    document_text_for_task,
    embedding_text_for_context,
)
from axiom.store.db import Database, is_interrupt
from axiom.tasks.queries import tasks_to_embed
from axiom.vectors.config import context_rows_enabled, embedding_version_of
from axiom.vectors.embedder import Embedder, InContextEmbedder
from axiom.vectors.lance_store import (
    LanceStore,
    LanceStoreError,
    context_row_id,
    entry_row_id,
    message_row_id,
    task_row_id,
)

log = logging.getLogger(__name__)

ITEM_NOT_FOUND = "item not found"
MAX_ERROR_CHARS = 2000
SMALL_FRAGMENTS_BEFORE_COMPACTION = 32


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


@dataclass(frozen=True)
class Job:
    job_id: str
    item_kind: str
    item_id: str

    @property
    def row_id(self) -> str:
        return f"{self.item_kind}:{self.item_id}"


@dataclass
class BatchTiming:
    jobs: int
    embedded: int = 0
    claim_s: float = 0.0
    load_s: float = 0.0
    embed_s: float = 0.0
    upsert_s: float = 0.0
    mark_s: float = 0.0

    @property
    def total_s(self) -> float:
        return self.claim_s + self.load_s + self.embed_s + self.upsert_s + self.mark_s


@dataclass
class _Outcome:
    """A batch whose LanceDB write is over, waiting to be marked in `vector_outbox` (with
    the next claim, or by the drain's last write unit)."""

    timing: BatchTiming
    written: list[str]  # job ids whose rows were upserted (all of them when `error`)
    missing: list[str] = field(default_factory=list)  # job ids whose item is gone
    upserted: int = 0
    error: str | None = None  # set: the batch failed, mark `written` failed with it


@dataclass
class DrainReport:
    claimed: int = 0
    done: int = 0
    failed: int = 0
    missing: int = 0  # failed because the item no longer exists
    requeued: int = 0  # re-queued by the projector while being worked on; redone later
    rows_upserted: int = 0
    remaining: int = 0  # pending jobs left when the drain ended
    busy: bool = False  # another writer held the lock; nothing was done
    error: str | None = None
    fts_index_created: bool = False
    vector_index_created: bool = False  # built or rebuilt
    optimized: int = 0
    seconds: float = 0.0
    batches: list[BatchTiming] = field(default_factory=list)

    @property
    def embed_seconds(self) -> float:
        return sum(b.embed_s for b in self.batches)

    @property
    def texts_per_second(self) -> float:
        embedded = sum(b.embedded for b in self.batches)
        return embedded / self.embed_seconds if self.embed_seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["batches"] = len(self.batches)
        out["embed_seconds"] = round(self.embed_seconds, 3)
        out["texts_per_second"] = round(self.texts_per_second, 1)
        out["seconds"] = round(self.seconds, 3)
        return out


RECONCILE_STEPS = ("re-queued stuck and failed jobs", "compared with LanceDB")


@dataclass
class ReconcileReport:
    stuck_requeued: int = 0  # processing too long (a writer died) → pending
    stuck_failed: int = 0  # … and out of attempts → failed
    failed_requeued: int = 0  # failed with attempts left → pending
    lost_requeued: int = 0  # done, but the vector is missing from LanceDB → pending
    duplicates_repaired: int = 0  # ids stored more than once: rows removed, job → pending
    verified: bool = False  # the LanceDB comparison ran (needs the writer lock)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class OutboxConfigError(ValueError):
    """The embedder does not produce the vectors the store holds."""


class OutboxWriter:
    """Drains `vector_outbox` into one `LanceStore`. Run exactly one per machine at a time
    (the writer lock enforces it across processes)."""

    def __init__(
        self,
        db: Database,
        store: LanceStore,
        embedder: Embedder,
        batch_size: int = 64,
        *,
        optimize_every: int = 1000,
        vector_index_min_rows: int = 50_000,
        context_rows: bool | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        version = embedding_version_of(embedder)
        if version != store.embedding_version or embedder.dim != store.dim:
            raise OutboxConfigError(
                f"embedder {version} ({embedder.dim}-d) does not match the store's"
                f" {store.embedding_version} ({store.dim}-d)"
            )
        self.db = db
        self.store = store
        self.embedder = embedder
        self.batch_size = batch_size
        self.optimize_every = optimize_every
        self.vector_index_min_rows = vector_index_min_rows
        # A message job also writes its `context` row (AXIOM_CONTEXT_ROWS, default on).
        self.context_rows = context_rows_enabled() if context_rows is None else context_rows

    @property
    def embedding_version(self) -> str:
        return self.store.embedding_version

    # -- drain ---------------------------------------------------------------------------

    def drain(
        self,
        max_jobs: int | None = None,
        *,
        max_seconds: float | None = None,
        on_batch: Callable[[DrainReport], None] | None = None,
    ) -> DrainReport:
        """Process pending jobs until none are left, `max_jobs` were claimed, `max_seconds`
        passed, or a batch failed. Returns at once with `busy=True` if another writer runs.
        `on_batch(report)` after each batch's LanceDB write: `claimed` is current, the
        done/failed counts lag one batch (they are written with the next claim)."""
        report = DrainReport()
        started = time.perf_counter()
        with self.store.writer_lock(blocking=False) as mine:
            if not mine:
                report.busy = True
                return report
            since_optimize = self._unindexed_rows(report)
            outcome: _Outcome | None = None
            counted = False  # `report.remaining` set by the last claim or the close
            while max_jobs is None or report.claimed < max_jobs:
                if max_seconds is not None and time.perf_counter() - started >= max_seconds:
                    break
                limit = self.batch_size
                if max_jobs is not None:
                    limit = min(limit, max_jobs - report.claimed)
                claim = self._claim(limit, outcome, report)
                outcome = None
                if claim is None:
                    counted = True
                    break
                outcome = self._work(*claim, report)
                if on_batch is not None:
                    on_batch(report)
                since_optimize += outcome.upserted
                if outcome.error is not None:
                    break
                if since_optimize >= self.optimize_every:
                    # marked first: an index rebuild that fails or dies must not leave a
                    # written batch in `processing`
                    self._close(outcome, report)
                    outcome = None
                    if self._optimize(report):
                        since_optimize = 0
            if outcome is not None:
                self._close(outcome, report)
            elif not counted:
                report.remaining = self.pending_count()
            if report.rows_upserted:
                self._upkeep(report, since_optimize)
        report.seconds = time.perf_counter() - started
        return report

    def _claim(
        self, limit: int, previous: _Outcome | None, report: DrainReport
    ) -> tuple[list[Job], list[dict[str, Any]], list[Job]] | None:
        """One write unit: mark the previous batch, claim up to `limit` jobs and load their
        items' current text. None when nothing was pending (`report.remaining` is then set).

        Why one unit: every DuckDB unit opens the file and checkpoints it, and four
        units a batch (claim, load, mark, count) were a visible share of a drain (README, the
        writer's "Session 13 levers" table)."""
        t0 = time.perf_counter()
        with self.db.write() as conn:
            if previous is not None:
                self._settle(conn, previous, report)
            rows = conn.execute(
                "UPDATE vector_outbox SET status = 'processing',"
                " attempts = coalesce(attempts, 0) + 1, updated_at = ?"
                " WHERE status = 'pending' AND job_id IN ("
                "  SELECT job_id FROM vector_outbox"
                "  WHERE status = 'pending' AND embedding_version = ?"
                "  ORDER BY item_kind = 'message', created_at, job_id LIMIT ?)"
                " RETURNING job_id, item_kind, item_id",
                [_now(), self.embedding_version, limit],
            ).fetchall()
            jobs = [Job(*row) for row in rows]
            if not jobs:
                report.remaining = _pending(conn, self.embedding_version)
                return None
            t1 = time.perf_counter()
            loaded, missing = self._load_each_on_error(conn, jobs, report)
            load_s = time.perf_counter() - t1
        marks_s = previous.timing.mark_s if previous is not None else 0.0
        timing = BatchTiming(jobs=len(jobs), load_s=load_s)
        timing.claim_s = time.perf_counter() - t0 - load_s - marks_s  # the unit's rest
        report.batches.append(timing)
        report.claimed += len(jobs)
        return jobs, loaded, missing

    def _work(
        self, jobs: list[Job], rows: list[dict[str, Any]], missing: list[Job], report: DrainReport
    ) -> _Outcome:
        """Embed and upsert one claimed batch; what to mark comes back as an `_Outcome`."""
        timing = report.batches[-1]
        try:
            t0 = time.perf_counter()
            timing.embedded = _embed_rows(self.embedder, rows)
            timing.embed_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            stored = [r for r in rows if not r.get("embed_only")]
            upserted = self.store.upsert(stored) if stored else 0
            if missing:
                self.store.delete_ids([i for job in missing for i in _row_ids(job, True)])
            timing.upsert_s = time.perf_counter() - t0
        except Exception as exc:  # the model or LanceDB: fail the batch, keep the reason
            error = f"{exc.__class__.__name__}: {exc}"[:MAX_ERROR_CHARS]
            log.warning("outbox batch of %d failed: %s", len(jobs), error)
            report.error = error
            return _Outcome(timing, [j.job_id for j in jobs], error=error)
        report.rows_upserted += upserted
        found = {r["job_id"] for r in rows}
        return _Outcome(
            timing,
            [j.job_id for j in jobs if j.job_id in found],
            [j.job_id for j in missing],
            upserted=upserted,
        )

    def _close(self, outcome: _Outcome, report: DrainReport) -> None:
        """The last batch's marks and the pending count, in one write unit."""
        with self.db.write() as conn:
            self._settle(conn, outcome, report)
            report.remaining = _pending(conn, self.embedding_version)

    def _settle(self, conn: Any, outcome: _Outcome, report: DrainReport) -> None:
        """processing → done / failed for a batch whose LanceDB write is over. A job the
        projector re-queued meanwhile (its item changed) is no longer ours: left pending."""
        t0 = time.perf_counter()
        jobs = len(outcome.written) + len(outcome.missing)
        if outcome.error is not None:
            report.failed += _finish(conn, outcome.written, "failed", outcome.error)
        else:
            done = _finish(conn, outcome.written, "done", None)
            lost = _finish(conn, outcome.missing, "failed", ITEM_NOT_FOUND)
            report.done += done
            report.failed += lost
            report.missing += lost
            report.requeued += jobs - done - lost
        outcome.timing.mark_s = time.perf_counter() - t0

    def _load_each_on_error(
        self, conn: duckdb.DuckDBPyConnection, jobs: list[Job], report: DrainReport
    ) -> tuple[list[dict[str, Any]], list[Job]]:
        """`_load`, or, when an item's text cannot be built (a malformed row), each job on
        its own: the broken ones are failed with the reason in this same unit, so one bad
        item neither rolls back the claim nor stays first in the queue for every drain.
        A DuckDB error is not caught: the unit rolls back and the jobs stay pending."""
        try:
            return self._load(conn, jobs)
        except duckdb.Error:
            raise
        except Exception as exc:  # noqa: BLE001 - a loader's bug or bad data: find the job
            if is_interrupt(exc):  # Ctrl-C during the read: the unit rolls back, as above
                raise
            log.warning("outbox batch load failed; loading its %d jobs one by one", len(jobs))
        rows: list[dict[str, Any]] = []
        missing: list[Job] = []
        for job in jobs:
            try:
                one, gone = self._load(conn, [job])
            except duckdb.Error:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded on the job, as a failed batch is
                if is_interrupt(exc):
                    raise
                error = f"{exc.__class__.__name__}: {exc}"[:MAX_ERROR_CHARS]
                report.failed += _finish(conn, [job.job_id], "failed", error)
                continue
            rows += one
            missing += gone
        return rows, missing

    def _load(self, conn: Any, jobs: Sequence[Job]) -> tuple[list[dict[str, Any]], list[Job]]:
        """Rows to embed (text built from the items' current state) and jobs whose item is gone."""
        by_kind: dict[str, list[Job]] = {}
        for job in jobs:
            by_kind.setdefault(job.item_kind, []).append(job)
        rows: list[dict[str, Any]] = []
        for kind, group in by_kind.items():
            loader = _LOADERS.get(kind)
            if loader is not None:
                rows.extend(loader(conn, group))
        found = {r["job_id"] for r in rows}
        if not self.context_rows:
            # not stored; an in-context embedder still pools the message's own vector from
            # the context pass, so a message's vector means the same with the setting off
            keep = getattr(self.embedder, "in_context", False)
            rows = [{**r, "embed_only": True} if r["kind"] == "context" else r for r in rows]
            rows = [r for r in rows if keep or not r.get("embed_only")]
        return rows, [j for j in jobs if j.job_id not in found]

    # -- index upkeep ----------------------------------------------------------------------

    def _unindexed_rows(self, report: DrainReport) -> int:
        try:
            return self.store.unindexed_rows()
        except LanceStoreError as exc:
            report.error = str(exc)
            return 0

    def _optimize(self, report: DrainReport) -> bool:
        try:  # its own step: an index build that keeps failing must not stop the optimizes
            report.vector_index_created |= self._ensure_vector_index()
        except LanceStoreError as exc:
            log.warning("LanceDB vector index upkeep failed: %s", exc)
            report.error = str(exc)
        try:
            report.fts_index_created |= self.store.ensure_fts_index()
            self.store.optimize()
        except LanceStoreError as exc:  # the vectors are stored; only upkeep failed
            log.warning("LanceDB upkeep failed: %s", exc)
            report.error = str(exc)
            return False
        report.optimized += 1
        return True

    def _upkeep(self, report: DrainReport, since_optimize: int) -> None:
        try:
            created = self.store.ensure_fts_index()  # indexes every row it covers
            report.fts_index_created |= created
            fragments = self.store.small_fragments()
            if (not created and since_optimize >= self.optimize_every) or (
                fragments >= SMALL_FRAGMENTS_BEFORE_COMPACTION
            ):
                self.store.optimize()
                report.optimized += 1
            report.vector_index_created |= self._ensure_vector_index()
        except LanceStoreError as exc:
            log.warning("LanceDB upkeep failed: %s", exc)
            report.error = str(exc)

    def _ensure_vector_index(self) -> bool:
        """Build the vector index at `vector_index_min_rows`, rebuild it at each doubling
        (`LanceStore.ensure_vector_index`): checked before every optimize, so a long drain
        does not pile delta segments onto a small first index."""
        if self.embedder.dim <= 1:  # the constant vector of AXIOM_EMBEDDER=none
            return False
        return self.store.ensure_vector_index(self.vector_index_min_rows)

    # -- reconcile -------------------------------------------------------------------------

    def reconcile(
        self,
        max_attempts: int = 5,
        stuck_after_s: float = 300,
        on_step: Callable[[str], None] | None = None,
    ) -> ReconcileReport:
        """Put work a crash or an error left behind back in the queue; `on_step(name)` after
        each of its `RECONCILE_STEPS` (progress for `axiom reconcile`).

        * `processing` for longer than `stuck_after_s` (its writer died) → pending, or
          failed when it already used `max_attempts`;
        * `failed` with fewer than `max_attempts` attempts → pending (the error text stays
          until the job succeeds);
        * when no drain is running (the writer lock is free): `done` jobs whose vector is
          missing from LanceDB → pending, and ids stored twice → their rows removed and the
          job re-queued.
        """
        report = ReconcileReport()
        now = _now()
        cutoff = now - timedelta(seconds=stuck_after_s)
        version = self.embedding_version
        with self.db.write() as conn:
            report.stuck_failed = len(
                conn.execute(
                    "UPDATE vector_outbox SET status = 'failed', updated_at = ?,"
                    " error = 'the writer stopped while processing it ('"
                    " || CAST(attempts AS VARCHAR) || ' attempts)'"
                    " WHERE status = 'processing' AND embedding_version = ? AND updated_at <= ?"
                    " AND attempts >= ? RETURNING job_id",
                    [now, version, cutoff, max_attempts],
                ).fetchall()
            )
            report.stuck_requeued = len(
                conn.execute(
                    "UPDATE vector_outbox SET status = 'pending', updated_at = ?"
                    " WHERE status = 'processing' AND embedding_version = ? AND updated_at <= ?"
                    " RETURNING job_id",
                    [now, version, cutoff],
                ).fetchall()
            )
            report.failed_requeued = len(
                conn.execute(
                    "UPDATE vector_outbox SET status = 'pending', updated_at = ?"
                    " WHERE status = 'failed' AND embedding_version = ?"
                    " AND coalesce(attempts, 0) < ? RETURNING job_id",
                    [now, version, max_attempts],
                ).fetchall()
            )
        if on_step:
            on_step(RECONCILE_STEPS[0])
        with self.store.writer_lock(blocking=False) as mine:
            if mine:
                try:
                    self._verify(report)
                    report.verified = True
                except LanceStoreError as exc:
                    report.error = str(exc)
        if on_step:
            on_step(RECONCILE_STEPS[1])
        return report

    def _verify(self, report: ReconcileReport) -> None:
        counts = self.store.count_by_id()
        duplicates = sorted(i for i, n in counts.items() if n > 1)
        with self.db.read() as conn:
            done = conn.execute(
                "SELECT job_id, item_kind, item_id FROM vector_outbox"
                " WHERE status = 'done' AND embedding_version = ?",
                [self.embedding_version],
            ).fetchall()
        lost = [
            job
            for job, kind, item in done
            if any(i not in counts for i in _row_ids(Job(job, kind, item), self.context_rows))
        ]
        if duplicates:
            self.store.delete_ids(duplicates)
            wanted = set(duplicates)
            redo = [
                job
                for job, kind, item in done
                if wanted.intersection(_row_ids(Job(job, kind, item), True))
            ]
            report.duplicates_repaired = self._requeue_done(redo)
        report.lost_requeued = self._requeue_done(lost)

    def _requeue_done(self, job_ids: Sequence[str]) -> int:
        if not job_ids:
            return 0
        with self.db.write() as conn:
            return len(
                conn.execute(
                    "UPDATE vector_outbox SET status = 'pending', updated_at = ?"
                    " WHERE status = 'done' AND job_id IN (SELECT unnest(?)) RETURNING job_id",
                    [_now(), list(job_ids)],
                ).fetchall()
            )

    # -- queries ---------------------------------------------------------------------------

    def pending_count(self) -> int:
        with self.db.read() as conn:
            return _pending(conn, self.embedding_version)


def _pending(conn: Any, embedding_version: str) -> int:
    return conn.execute(
        "SELECT count(*) FROM vector_outbox WHERE status = 'pending' AND embedding_version = ?",
        [embedding_version],
    ).fetchone()[0]


def _finish(conn: Any, job_ids: Sequence[str], status: str, error: str | None) -> int:
    """processing → status for these jobs; returns how many were still ours."""
    if not job_ids:
        return 0
    rows = conn.execute(
        "UPDATE vector_outbox SET status = ?, error = ?, updated_at = ?"
        " WHERE status = 'processing' AND job_id IN (SELECT unnest(?)) RETURNING job_id",
        [status, error, _now(), list(job_ids)],
    ).fetchall()
    return len(rows)


def _embed_rows(embedder: Embedder, rows: list[dict[str, Any]]) -> int:
    """Set each row's vector; a text that occurs twice in the batch (a session's first
    message and its context row) is embedded once. Returns how many texts were embedded.

    With an embedder that pools a text's tail from the text's pass (`in_context`: torch
    e5), a message with its context row is one pass instead of two: the context text with
    the previous turn shortened (the row's `embed_text`) gives the context row's vector,
    and the message's own text at its end, its token states pooled, the message row's
    (README, "Session 15 levers")."""
    in_context = getattr(embedder, "in_context", False)
    pairs = _message_pairs(rows) if in_context else []
    tails = {id(own) for own, _ in pairs}

    def text(row: dict[str, Any]) -> str:
        return str(row.get("embed_text") or row["text"]) if in_context else row["text"]

    unique = list(dict.fromkeys(text(r) for r in rows if id(r) not in tails))
    if not unique:
        return 0
    tail_of = {text(ctx): own["text"] for own, ctx in pairs}
    if tail_of:
        in_context_embedder = cast(InContextEmbedder, embedder)
        vectors, tail_vectors = in_context_embedder.embed_in_context(
            unique, [tail_of.get(t) for t in unique]
        )
    else:
        vectors = tail_vectors = embedder.embed(unique, kind="document")
    if len(vectors) != len(unique) or len(tail_vectors) != len(unique):
        raise RuntimeError(f"embedder returned {len(vectors)} vectors for {len(unique)}")
    by_text = dict(zip(unique, vectors, strict=True))
    tail_by_text = dict(zip(unique, tail_vectors, strict=True))
    for row in rows:
        if id(row) not in tails:
            row["vector"] = by_text[text(row)]
    for own, ctx in pairs:
        own["vector"] = tail_by_text[text(ctx)]
    return len(unique)


def _message_pairs(rows: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(message row, its context row) for each message whose context row is in `rows`
    and ends with the message's own text. Two messages with the same context text (the
    same two turns twice) share its pass when their own texts are the same too; otherwise
    the second's own text is embedded alone (it cannot be both tails of one pass)."""
    own = {r["job_id"]: r for r in rows if r["kind"] == "message"}
    pairs = []
    tail_of: dict[str, str] = {}  # context text -> the own text pooled from its pass
    for ctx in rows:
        message = own.get(ctx["job_id"]) if ctx["kind"] == "context" else None
        key = str(ctx.get("embed_text") or ctx["text"])
        if message is None or not key.endswith(message["text"]):
            continue
        if tail_of.setdefault(key, message["text"]) == message["text"]:
            pairs.append((message, ctx))
    return pairs


# --- loaders: current item state → LanceDB row (without the vector) -------------------------


def _load_entries(conn: Any, jobs: Sequence[Job]) -> list[dict[str, Any]]:
    by_id = {job.item_id: job for job in jobs}
    found = entries_to_embed(conn, list(by_id))
    rows = []
    for entry_id, title, content_json, created_ts, session_id in found:
        content = json.loads(content_json).get("content") if content_json else ""
        rows.append(
            {
                "job_id": by_id[entry_id].job_id,
                "id": entry_row_id(entry_id),
                "kind": "entry",
                "entry_id": entry_id,
                "session_id": session_id,
                "message_index": None,
                "text": document_text_for_entry(title, content or ""),
                "ts": created_ts,
            }
        )
    return rows


def _load_messages(conn: Any, jobs: Sequence[Job]) -> list[dict[str, Any]]:
    keys: dict[tuple[str, int], Job] = {}
    for job in jobs:
        session_id, _, index = job.item_id.rpartition(":")
        if session_id and index.isdigit():
            keys[(session_id, int(index))] = job
    if not keys:
        return []
    found = messages_with_previous(conn, list(keys))
    rows = []
    for session_id, index, role, text, meta_json, ts, p_role, p_text, p_meta in found:
        if not text or not text.strip():
            continue  # nothing to embed: treated as not found
        meta = json.loads(meta_json) if meta_json else {}
        own = document_text_for_message(role, text, meta)
        previous = None
        if p_text and p_text.strip():
            previous = document_text_for_message(p_role, p_text, json.loads(p_meta or "{}"))
        row = {
            "job_id": keys[(session_id, index)].job_id,
            "id": message_row_id(session_id, index),
            "kind": "message",
            "entry_id": None,
            "session_id": session_id,
            "message_index": index,
            "text": own,
            "ts": ts,
        }
        context = {
            **row,
            "id": context_row_id(session_id, index),
            "kind": "context",
            "text": document_text_for_context(previous, own),
            "embed_text": embedding_text_for_context(previous, own),
        }
        rows += [row, context]
    return rows


def _load_tasks(conn: Any, jobs: Sequence[Job]) -> list[dict[str, Any]]:
    by_id = {job.item_id: job for job in jobs}
    found = tasks_to_embed(conn, list(by_id))
    return [
        {
            "job_id": by_id[task_id].job_id,
            "id": task_row_id(task_id),
            "kind": "task",
            "entry_id": None,
            "session_id": None,
            "message_index": None,
            "text": document_text_for_task(title),
            "ts": updated_at,
        }
        for task_id, title, updated_at in found
    ]


def _row_ids(job: Job, context_rows: bool) -> list[str]:
    """The LanceDB rows one job writes: a message also has its context row."""
    if job.item_kind == "message" and context_rows:
        return [job.row_id, f"context:{job.item_id}"]
    return [job.row_id]


_LOADERS: dict[str, Callable[[Any, Sequence[Job]], list[dict[str, Any]]]] = {
    "entry": _load_entries,
    "message": _load_messages,
    "task": _load_tasks,
}
