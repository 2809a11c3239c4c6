"""kill -9 in the middle of the work, then the same work again: nothing lost, nothing twice.

The writer (the `writer` queue's worker: projections and the vector outbox) is killed the
same way in tests/queue/test_writer_process.py (mid-projection, whole worker and pool
child) and tests/outbox/test_crash.py (mid-drain, then `reconcile`)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from axiom.store.db import Database
from tests.faults.support import (
    assert_processed,
    assert_recovered,
    axiom,
    count,
    run_axiom,
    write_sessions,
)

pytestmark = pytest.mark.slow
SESSIONS, MESSAGES = 6, 4
BUILDS = "SELECT count(*) FROM events WHERE event_type = 'build_finished'"
INGESTS = "SELECT count(*) FROM events WHERE event_type = 'session_ingested'"


def kill_when(process: subprocess.Popen[bytes], ready: Callable[[], bool], pgid: bool = False) -> None:  # fmt: skip
    """SIGKILL `process` (its whole group with `pgid`) as soon as `ready()` holds."""
    deadline = time.monotonic() + 120
    while not ready():
        assert process.poll() is None, "the process finished before it could be killed"
        assert time.monotonic() < deadline, "never reached the point to kill at"
        time.sleep(0.02)
    if pgid:
        os.killpg(process.pid, signal.SIGKILL)
    else:
        process.kill()
    process.wait(timeout=30)


def test_an_importer_killed_mid_pipeline_finishes_when_run_again(
    tmp_path: Path, data_dir: Path, db: Database
) -> None:
    ids = write_sessions(tmp_path / "src", SESSIONS, MESSAGES)
    # One build per write transaction, so that there is a moment to kill at in between
    # (with the default budget these small sessions are written in one transaction).
    one_build = {"AXIOM_WRITE_BUDGET_MS": "0"}
    importer = axiom(data_dir, "import", str(tmp_path / "src"), "--quiet", settings=one_build)

    # Killed once every session is stored and the pipeline is part-way through them.
    kill_when(importer, lambda: 0 < count(db, BUILDS) < SESSIONS)
    assert count(db, INGESTS) == SESSIONS and count(db, BUILDS) < SESSIONS

    code, out, err = run_axiom(data_dir, "import", str(tmp_path / "src"), "--quiet")
    assert code == 0, err
    assert f"0 new session(s), {SESSIONS} unchanged" in out
    assert_recovered(db, ids, MESSAGES)
    assert_processed(db, ids)


def test_an_importer_killed_mid_ingest_stores_each_session_whole_or_not_at_all(
    tmp_path: Path, data_dir: Path, db: Database
) -> None:
    ids = write_sessions(tmp_path / "src", SESSIONS, MESSAGES)
    # One file per write transaction, so that there is a moment to kill at in between
    # (by default these small files are written in one transaction).
    one_file = {"AXIOM_IMPORT_GROUP_FILES": "1"}
    importer = axiom(
        data_dir, "import", str(tmp_path / "src"), "--quiet", "--no-process", settings=one_file
    )

    kill_when(importer, lambda: 0 < count(db, INGESTS) < SESSIONS // 2)
    partial = count(db, "SELECT count(*) FROM messages")
    assert partial == count(db, INGESTS) * MESSAGES  # no half-stored session

    code, _, err = run_axiom(data_dir, "import", str(tmp_path / "src"), "--quiet")
    assert code == 0, err
    assert_recovered(db, ids, MESSAGES)
    assert_processed(db, ids)


def test_a_worker_killed_mid_pipeline_is_redelivered_and_applies_its_work_once(
    tmp_path: Path,
    data_dir: Path,
    db: Database,
    celery_app: Celery,
    celery_process: Callable[..., subprocess.Popen[bytes]],
    wait_for: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The `default` worker (ingest and the memory pipeline) SIGKILLed whole, pool and all;
    a new one gets the unacknowledged task back (3 s visibility timeout in this test's app)
    and finishes every session."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    ids = write_sessions(tmp_path / "src", SESSIONS, MESSAGES)
    args = ("worker", "-Q", "default", "--concurrency", "1", "--without-mingle", "--without-gossip")  # fmt: skip
    writer = ("worker", "-Q", "writer", "--concurrency", "1", "-n", "writer@%h")
    celery_process(*writer, "--without-mingle", "--without-gossip")
    first = celery_process(*args, "-n", "default1@%h", app="redelivery_celery_app")

    celery_app.send_task("axiom.ingest_path", args=[str(tmp_path / "src")])
    kill_when(first, lambda: 0 < count(db, BUILDS) < SESSIONS - 2, pgid=True)
    celery_process(*args, "-n", "default2@%h", app="redelivery_celery_app")

    wait_for(lambda: count(db, BUILDS) >= SESSIONS, timeout=600)
    celery_app.send_task("axiom.project").get(timeout=60)
    assert_recovered(db, ids, MESSAGES)
    assert_processed(db, ids)
