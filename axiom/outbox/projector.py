"""OutboxProjector: queues an embedding job for every item that should have a vector.

Folds

* `session_ingested` → one job per message with text: item_kind `message`, item_id
  `<session_id>:<index>` (messages with blank text, e.g. pure tool calls, are skipped:
  there is nothing to embed);
* `entry_created` → item_kind `entry`, item_id the entry id;
* `task_created` / `task_title_changed` → item_kind `task`, item_id the task id;

into `vector_outbox` rows `status='pending'` for one embedding version. Job ids are
deterministic (`job_<sha1(kind:item_id:version)[:16]>`), so an item has exactly one job per
embedding version and re-enqueueing is `ON CONFLICT (job_id)`.

Why `tables = ()`: the outbox is a work queue, and its `status` column is the writer's
record of what LanceDB holds — not something events can reproduce. A rebuild must not
reset `done` jobs (that would re-embed everything and forget failures); it forgets this
projector's offset and replays, and replay only adds jobs that are missing. A rebuild
therefore leaves `vector_outbox` identical.

Content changes. Each job remembers the event that last set its content
(`source_event_id`) and a hash of the document text (`content_hash`). On conflict the row
is re-queued (pending, attempts 0, no error) only when the incoming event is *newer* than
`source_event_id` *and* the text differs — a renamed task, a re-imported message whose
text changed. Otherwise the insert does nothing, which keeps replay a no-op: every event a
rebuild replays is either older than the stored `source_event_id` or carries the same
text. A re-import of a grown session re-queues none of the messages it already had.

A task's title change only re-queues the job its `task_created` queued; it never creates
one. So when forgetting removes a task (its creating event redacted, its job deleted), a
rename that was kept (a person's, another session's) queues nothing on replay, instead of
a job the writer would fail as "item not found".
Timestamps come from the event, so the projection is a pure function of the events.

The name carries the embedding version: switching `AXIOM_EMBEDDER` starts a new projector
at offset 0, which queues every item again for the new vector space.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import duckdb
import pyarrow as pa

from axiom.ingest.transcript import Transcript
from axiom.outbox.documents import (
    document_text_for_entry,
    document_text_for_message,
    document_text_for_task,
)
from axiom.store.event_types import (
    ENTRY_CREATED,
    SESSION_INGESTED,
    TASK_CREATED,
    TASK_TITLE_CHANGED,
)
from axiom.store.events import StoredEvent
from axiom.store.projection import Reject, fold_each, raise_error

OUTBOX_EVENT_TYPES = (SESSION_INGESTED, ENTRY_CREATED, TASK_CREATED, TASK_TITLE_CHANGED)
# job id, kind, item id, source event id, content hash, ts, requeue only
_Job = tuple[str, str, str, str, str, datetime, bool]

_ENQUEUE = (
    "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version, status,"
    " attempts, source_event_id, content_hash, created_at, updated_at)"
    " SELECT job_id, item_kind, item_id, embedding_version, 'pending', 0, source_event_id,"
    " content_hash, ts, ts FROM {source} AS incoming"
    " WHERE NOT incoming.requeue_only OR EXISTS (SELECT 1 FROM vector_outbox AS known"
    " WHERE known.job_id = incoming.job_id)"
    " ON CONFLICT (job_id) DO UPDATE SET status = 'pending', attempts = 0, error = NULL,"
    " source_event_id = excluded.source_event_id, content_hash = excluded.content_hash,"
    " updated_at = excluded.updated_at"
    " WHERE excluded.source_event_id > coalesce(vector_outbox.source_event_id, '')"
    " AND excluded.content_hash IS DISTINCT FROM vector_outbox.content_hash"
)


def job_id(item_kind: str, item_id: str, embedding_version: str) -> str:
    digest = hashlib.sha1(f"{item_kind}:{item_id}:{embedding_version}".encode()).hexdigest()
    return f"job_{digest[:16]}"


def content_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class OutboxProjector:
    event_types = OUTBOX_EVENT_TYPES
    tables: tuple[str, ...] = ()  # never cleared by a rebuild: see the module docstring

    def __init__(self, embedding_version: str) -> None:
        self.embedding_version = embedding_version
        self.name = f"vector_outbox:{embedding_version}"

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        self.apply_many(conn, [event], raise_error)

    def apply_many(
        self, conn: duckdb.DuckDBPyConnection, events: Sequence[StoredEvent], reject: Reject
    ) -> None:
        """Every job of `events`, in order, in one insert per run of distinct jobs (an
        insert cannot update one row twice; a later event's job for the same item goes in
        the next insert, so it meets the row the earlier one left, as one by one)."""
        jobs: list[_Job] = []

        def step(event: StoredEvent) -> None:
            requeue_only = event.event_type == TASK_TITLE_CHANGED
            jobs.extend(
                (job_id(kind, item_id, self.embedding_version), kind, item_id, event.event_id,
                 content_hash(text), event.ts, requeue_only)
                for kind, item_id, text in _items(event)
            )  # fmt: skip

        fold_each(events, step, reject)
        run: dict[str, _Job] = {}
        for job in jobs:
            if job[0] in run:
                self._enqueue(conn, list(run.values()))
                run = {}
            run[job[0]] = job
        self._enqueue(conn, list(run.values()))

    def _enqueue(
        self,
        conn: duckdb.DuckDBPyConnection,
        jobs: list[_Job],
    ) -> None:
        """One insert of `jobs` (job id, kind, item id, source event, content hash, ts,
        requeue only: no row unless the job exists)."""
        if not jobs:
            return
        incoming = pa.table(
            {
                "job_id": [j[0] for j in jobs],
                "item_kind": [j[1] for j in jobs],
                "item_id": [j[2] for j in jobs],
                "embedding_version": [self.embedding_version] * len(jobs),
                "source_event_id": [j[3] for j in jobs],
                "content_hash": [j[4] for j in jobs],
                "ts": pa.array([j[5] for j in jobs], pa.timestamp("us")),
                "requeue_only": pa.array([j[6] for j in jobs], pa.bool_()),
            }
        )
        conn.register("incoming_outbox_jobs", incoming)
        try:
            conn.execute(_ENQUEUE.format(source="incoming_outbox_jobs"))
        finally:
            conn.unregister("incoming_outbox_jobs")


_FORGOTTEN_JOBS = (
    "FROM vector_outbox WHERE (item_kind IN ('entry', 'task')"
    " AND list_contains(?::VARCHAR[], item_id))"
    " OR (item_kind = 'message' AND EXISTS (SELECT 1 FROM unnest(?::VARCHAR[]) AS s(sid)"
    " WHERE starts_with(vector_outbox.item_id, s.sid || ':')))"
)


def forget_jobs(
    conn: duckdb.DuckDBPyConnection, session_ids: Sequence[str], item_ids: Sequence[str]
) -> int:
    """Delete the jobs of forgotten items (`axiom.forgetting`): every message of
    `session_ids`, and the entries and tasks `item_ids`. Their events are redacted, so no
    replay queues them again; left in place, `reconcile` would find their vectors missing
    and re-queue them, and the next drain would fail them as "item not found". Returns how
    many went (counted first: DuckDB's `DELETE … RETURNING` on this indexed table returns
    no rows)."""
    params = [list(item_ids), list(session_ids)]
    count = conn.execute(f"SELECT count(*) {_FORGOTTEN_JOBS}", params).fetchone()[0]
    conn.execute(f"DELETE {_FORGOTTEN_JOBS}", params)
    return count


def _items(event: StoredEvent) -> list[tuple[str, str, str]]:
    """(kind, item id, document text) of each item the event gives content to."""
    p: dict[str, Any] = event.payload
    if event.event_type == SESSION_INGESTED:
        transcript = Transcript.from_json(p["transcript"])
        sid = transcript.session_id
        return [
            ("message", f"{sid}:{m.index}", document_text_for_message(m.role, m.text, m.meta))
            for m in transcript.messages
            if m.text.strip()
        ]
    if event.event_type == ENTRY_CREATED:
        return [("entry", p["entry_id"], document_text_for_entry(p["title"], p.get("content", "")))]
    if event.event_type == TASK_CREATED:
        return [("task", str(p["task_id"]), document_text_for_task(p["title"]))]
    if event.event_type == TASK_TITLE_CHANGED:
        return [("task", str(p["task_id"]), document_text_for_task(p["to"]))]
    return []
