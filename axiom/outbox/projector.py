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
Timestamps come from the event, so the projection is a pure function of the events.

The name carries the embedding version: switching `AXIOM_EMBEDDER` starts a new projector
at offset 0, which queues every item again for the new vector space.
"""

from __future__ import annotations

import hashlib
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

OUTBOX_EVENT_TYPES = (SESSION_INGESTED, ENTRY_CREATED, TASK_CREATED, TASK_TITLE_CHANGED)

_ENQUEUE = (
    "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version, status,"
    " attempts, source_event_id, content_hash, created_at, updated_at)"
    " SELECT job_id, item_kind, item_id, embedding_version, 'pending', 0, source_event_id,"
    " content_hash, ts, ts FROM {source}"
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
        p: dict[str, Any] = event.payload
        items: list[tuple[str, str, str]]  # (kind, item_id, document text)
        if event.event_type == SESSION_INGESTED:
            transcript = Transcript.from_json(p["transcript"])
            sid = transcript.session_id
            items = [
                ("message", f"{sid}:{m.index}", document_text_for_message(m.role, m.text, m.meta))
                for m in transcript.messages
                if m.text.strip()
            ]
        elif event.event_type == ENTRY_CREATED:
            items = [
                ("entry", p["entry_id"], document_text_for_entry(p["title"], p.get("content", "")))
            ]
        elif event.event_type == TASK_CREATED:
            items = [("task", str(p["task_id"]), document_text_for_task(p["title"]))]
        elif event.event_type == TASK_TITLE_CHANGED:
            items = [("task", str(p["task_id"]), document_text_for_task(p["to"]))]
        else:
            return
        if items:
            self._enqueue(conn, event, items)

    def _enqueue(
        self, conn: duckdb.DuckDBPyConnection, event: StoredEvent, items: list[tuple[str, str, str]]
    ) -> None:
        version = self.embedding_version
        if len(items) == 1:
            kind, item_id, text = items[0]
            conn.execute(
                _ENQUEUE.format(
                    source="(SELECT ? AS job_id, ? AS item_kind, ? AS item_id,"
                    " ? AS embedding_version, ? AS source_event_id, ? AS content_hash,"
                    " CAST(? AS TIMESTAMP) AS ts)"
                ),
                [
                    job_id(kind, item_id, version),
                    kind,
                    item_id,
                    version,
                    event.event_id,
                    content_hash(text),
                    event.ts,
                ],
            )
            return
        n = len(items)
        incoming = pa.table(
            {
                "job_id": [job_id(k, i, version) for k, i, _ in items],
                "item_kind": [k for k, _, _ in items],
                "item_id": [i for _, i, _ in items],
                "embedding_version": [version] * n,
                "source_event_id": [event.event_id] * n,
                "content_hash": [content_hash(t) for _, _, t in items],
                "ts": pa.array([event.ts] * n, pa.timestamp("us")),
            }
        )
        conn.register("incoming_outbox_jobs", incoming)
        try:
            conn.execute(_ENQUEUE.format(source="incoming_outbox_jobs"))
        finally:
            conn.unregister("incoming_outbox_jobs")
