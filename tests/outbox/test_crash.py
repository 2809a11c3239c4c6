"""A writer SIGKILLed mid-drain: reconcile + drain finish the work with no duplicate row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from axiom.ingest.importer import ingest_transcripts
from axiom.outbox.writer import OutboxWriter
from axiom.projections import project_all
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.outbox.support import by_status, session

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def _done_and_claimed(db: Database) -> bool:
    counts = by_status(db)
    return counts.get("done", 0) > 0 and counts.get("processing", 0) > 0


def test_a_writer_killed_mid_drain_leaves_nothing_reconcile_cannot_finish(
    db: Database, data_dir: Path, writer: OutboxWriter, store: LanceStore
) -> None:
    sessions = [
        session(f"s{i}", *(f"session {i}, turn {j}: the writer was killed" for j in range(50)))
        for i in range(8)
    ]
    ingest_transcripts(db, sessions)
    project_all(db)
    total = 8 * 50
    env = {**os.environ, "AXIOM_DATA_DIR": str(data_dir), "AXIOM_EMBEDDER": "minilm"}
    process = subprocess.Popen(
        [sys.executable, "-m", "axiom", "outbox", "drain", "--quiet", "--batch-size", "16"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        # Kill once a batch is in LanceDB and the next one is claimed (so it dies holding it).
        while not _done_and_claimed(db):
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, "the drain never finished a batch"
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    killed_at = by_status(db)
    assert killed_at["done"] < total and killed_at["processing"] > 0  # it died mid-batch
    stats = writer.reconcile(stuck_after_s=0)
    assert stats.stuck_requeued == killed_at["processing"]
    report = writer.drain()

    assert by_status(db) == {"done": total}
    assert report.done == total - killed_at["done"]
    counts = store.count_by_id()
    assert len(counts) == total and set(counts.values()) == {1}
