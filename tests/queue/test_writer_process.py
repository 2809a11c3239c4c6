"""The writer as a real, separate `celery worker -Q writer --concurrency 1` process."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

import pytest
from celery import Celery

from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import Database
from axiom.store.migrate import open_database

pytestmark = pytest.mark.slow

WRITER_ARGS = ("worker", "-Q", "writer", "--concurrency", "1", "--without-mingle", "--without-gossip", "--loglevel", "INFO")  # fmt: skip


def transcripts(prefix: str, n: int, messages: int = 5) -> list[Transcript]:
    return [
        Transcript(
            session_id=f"{prefix}-{i}",
            project="writer-test",
            source="json",
            messages=tuple(
                Message(
                    index=j, role="user" if j % 2 == 0 else "assistant", text=f"{prefix} {i}.{j}"
                )
                for j in range(messages)
            ),
        )
        for i in range(n)
    ]


def append_unprojected(db: Database, batch: list[Transcript]) -> None:
    ingest_transcripts(db, batch, project=False)


def nothing_new(projected: dict[str, int]) -> bool:
    """True when `axiom.project` found no event left to apply, in any projector."""
    return "sessions" in projected and not any(projected.values())


def active_task_ids(app: Celery) -> set[str]:
    replies = app.control.inspect(timeout=0.5).active() or {}
    return {task["id"] for tasks in replies.values() for task in tasks}


def test_it_projects_jobs_in_a_separate_writer_process(
    celery_app: Celery,
    celery_process: Callable[..., subprocess.Popen[bytes]],
    counts: Callable[[Database], dict[str, int]],
) -> None:
    db = open_database()
    append_unprojected(db, transcripts("a", 3))
    celery_process(*WRITER_ARGS, "-n", "writer@%h")

    first = celery_app.send_task("axiom.project").get(timeout=30)
    later = [celery_app.send_task("axiom.project").get(timeout=30) for _ in range(3)]

    assert first["sessions"] == 3
    assert [nothing_new(r) for r in later] == [True] * 3
    assert counts(db) == {"events": 3, "sessions": 3, "messages": 15}
    stats = celery_app.control.inspect(timeout=2).stats() or {}
    queues = celery_app.control.inspect(timeout=2).active_queues() or {}
    assert [s["pool"]["max-concurrency"] for s in stats.values()] == [1]
    assert [[q["name"] for q in qs] for qs in queues.values()] == [["writer"]]


def test_it_applies_a_task_once_when_its_worker_was_killed_mid_run(
    celery_app: Celery,
    celery_process: Callable[..., subprocess.Popen[bytes]],
    counts: Callable[[Database], dict[str, int]],
    wait_for: Callable[..., Any],
) -> None:
    db = open_database()
    append_unprojected(db, transcripts("b", 2))
    first = celery_process(*WRITER_ARGS, "-n", "writer1@%h", app="redelivery_celery_app")

    # Holding the write lock parks the task inside the worker, before its transaction.
    with db.write():
        job = celery_app.send_task("axiom.project")
        wait_for(lambda: job.id in active_task_ids(celery_app), timeout=20)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    killed_at = time.monotonic()

    celery_process(*WRITER_ARGS, "-n", "writer2@%h", app="redelivery_celery_app")
    redelivered = job.get(timeout=30)
    print(f"\nredelivered {time.monotonic() - killed_at:.1f} s after the SIGKILL")

    assert redelivered["sessions"] == 2
    assert nothing_new(celery_app.send_task("axiom.project").get(timeout=30))
    assert counts(db) == {"events": 2, "sessions": 2, "messages": 10}


def test_it_reruns_a_task_at_once_when_only_the_pool_child_is_killed(
    celery_app: Celery,
    celery_process: Callable[..., subprocess.Popen[bytes]],
    counts: Callable[[Database], dict[str, int]],
    wait_for: Callable[..., Any],
) -> None:
    """The production settings (acks_late + reject_on_worker_lost): the worker's main
    process sees its child die and puts the task back itself, no visibility timeout."""
    db = open_database()
    append_unprojected(db, transcripts("c", 2))
    celery_process(*WRITER_ARGS, "-n", "writer@%h")

    with db.write():
        job = celery_app.send_task("axiom.project")
        killed = wait_for(lambda: child_running(celery_app, job.id), timeout=20)
        os.kill(killed, signal.SIGKILL)
        # The main process notices, requeues the task, and a fresh child picks it up.
        wait_for(lambda: child_running(celery_app, job.id) not in (0, killed), timeout=20)

    assert job.get(timeout=30)["sessions"] == 2
    assert counts(db) == {"events": 2, "sessions": 2, "messages": 10}


def child_running(app: Celery, task_id: str) -> int:
    """The pid of the pool child running `task_id`, or 0."""
    replies = app.control.inspect(timeout=0.5).active() or {}
    pids = [t["worker_pid"] for tasks in replies.values() for t in tasks if t["id"] == task_id]
    return pids[0] if pids else 0
