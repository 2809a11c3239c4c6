"""Ingest → pipeline → drain through a real broker and worker: vectors appear in LanceDB."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from axiom.outbox.service import configured_store
from axiom.store.migrate import open_database
from tests.outbox.support import by_status, jobs

pytestmark = pytest.mark.slow


def test_an_ingested_session_ends_up_embedded_in_lancedb(
    celery_app: Celery, worker: object, sample_session: Path, wait_for: Callable[..., Any]
) -> None:
    celery_app.send_task("axiom.ingest_path", args=[str(sample_session)]).get(timeout=30)
    db = open_database()
    store = configured_store()

    # ingest_path chains process_session, which chains drain_outbox on the writer queue.
    wait_for(lambda: by_status(db).get("done", 0) > 0 and set(by_status(db)) == {"done"}, 120)

    queued = jobs(db)
    kinds = {kind for kind, _, _ in queued}
    assert {"message", "entry"} <= kinds
    counts = store.count_by_id()
    assert set(counts) == {f"{kind}:{item}" for kind, item, _ in queued}
    assert set(counts.values()) == {1}
    # A second drain and a reconcile through the broker change nothing.
    again = celery_app.send_task("axiom.drain_outbox").get(timeout=60)
    checked = celery_app.send_task("axiom.reconcile_outbox").get(timeout=60)
    assert again["claimed"] == 0 and not again["busy"]
    assert checked["verified"] and checked["lost_requeued"] == 0
    assert store.count_by_id() == counts
