"""The broker (redis-server, started as `axiom up` starts it) stopped in the middle of an
import sent from the import page, then started again on the same socket.

Real processes: the broker, the `default` and `writer` Celery workers, beat and the web
(`runserver`); none of them but the broker is restarted. The broker keeps nothing on disk,
so the pipeline task it held is gone: the worker says so and what to do (send the same
import again), the import page answers 503 with the same advice while the broker is down,
and once it is back the same import, sent again through the web, finishes every session
once; beat's periodic project and drain catch the derived tables and the vectors up."""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from axiom.service.broker import Broker
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.faults.support import assert_processed, assert_recovered, count, write_sessions
from tests.live_server import runserver

pytestmark = pytest.mark.slow
SESSIONS, MESSAGES = 10, 4
BUILDS = "SELECT count(*) FROM events WHERE event_type = 'build_finished'"
INGESTS = "SELECT count(*) FROM events WHERE event_type = 'session_ingested'"
PENDING = "SELECT count(*) FROM vector_outbox WHERE status <> 'done'"
TASK_LINE = re.compile(r"Task axiom\.process_sessions\[([0-9a-f-]+)\] (received|succeeded)")
REMAINING = re.compile(r"Task axiom\.process_sessions\[[0-9a-f-]+\] succeeded .*'remaining': (\d+)")
LOST = "wait for the memory pipeline: send the same import again once the broker is back"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 302 itself is the answer under test


class ImportPage:
    """The import page over real HTTP, as a browser without JavaScript uses it."""

    def __init__(self, base: str) -> None:
        self.base = base
        cookies = urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        self.opener = urllib.request.build_opener(cookies, _NoRedirect())

    def post(self, path: Path) -> tuple[int, str]:
        """The status and body (or redirect target) of importing `path`."""
        form = self.opener.open(f"{self.base}/import/", timeout=30).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        assert token is not None
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token[1], "path": str(path)})
        request = urllib.request.Request(f"{self.base}/import/", data=body.encode())
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as answer:
            return answer.code, answer.headers.get("Location") or answer.read().decode()


def log_since(log: Path, offset: int) -> str:
    with log.open("rb") as text:
        text.seek(offset)
        return text.read().decode(errors="replace")


def pipeline_task_running(log: Path, offset: int) -> bool:
    """True once the worker's log, past `offset`, shows a `process_sessions` task received
    and not finished, with sessions after its own left to queue."""
    open_tasks: set[str] = set()
    for task_id, what in TASK_LINE.findall(log_since(log, offset)):
        (open_tasks.add if what == "received" else open_tasks.discard)(task_id)
    remaining = REMAINING.findall(log_since(log, 0))
    assert not remaining or int(remaining[-1]) >= 2, "too few sessions left to stop mid-chain"
    return bool(open_tasks)


def wait_mid_pipeline(db: Database, log: Path, built: int, wait_for: Callable[..., Any]) -> None:
    """Until a session past the `built` ones is stored and the next one is being processed
    (its task started after that, so it is not about to end)."""
    wait_for(lambda: count(db, BUILDS) > built, timeout=120)
    offset = log.stat().st_size
    wait_for(lambda: pipeline_task_running(log, offset), timeout=60, every=0.01)


@pytest.fixture
def processes(
    tmp_path: Path,
    data_dir: Path,
    db: Database,
    broker: Broker,
    celery_process: Callable[..., subprocess.Popen[bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[ImportPage, list[subprocess.Popen[bytes]]]]:
    """Writer, worker, beat (project and drain every second) and the web, on `broker`."""
    monkeypatch.setenv("AXIOM_PROJECT_EVERY_SECONDS", "1")
    monkeypatch.setenv("AXIOM_DRAIN_EVERY_SECONDS", "1")
    flags = ("--without-mingle", "--without-gossip", "--loglevel", "INFO")
    children = [
        celery_process("worker", "-Q", "writer", "--concurrency", "1", "-n", "writer@%h", *flags),
        celery_process(
            "worker", "-Q", "default", "--concurrency", "1", "-n", "default@%h", *flags
        ),  # fmt: skip
        celery_process("beat", "--schedule", str(tmp_path / "beat-schedule"), "--loglevel", "INFO"),
    ]
    roots = tmp_path / "roots"
    roots.mkdir()
    with runserver(
        data_dir,
        tmp_path / "web.log",
        AXIOM_BROKER_URL=broker.url,
        AXIOM_IMPORT_ROOTS=str(roots),
        AXIOM_EMBEDDER="none",
    ) as base:
        yield ImportPage(base), children


def stop_children(children: list[subprocess.Popen[bytes]]) -> None:
    for child in children:
        os.killpg(child.pid, signal.SIGTERM)
    for child in children:
        child.wait(timeout=60)


def test_a_broker_stopped_and_killed_mid_import_loses_nothing_once_the_import_is_sent_again(
    tmp_path: Path,
    data_dir: Path,
    db: Database,
    broker: Broker,
    processes: tuple[ImportPage, list[subprocess.Popen[bytes]]],
    wait_for: Callable[..., Any],
) -> None:
    page, children = processes
    worker_log, beat_log = tmp_path / "celery-1.log", tmp_path / "celery-2.log"
    source = tmp_path / "roots" / "src"
    ids = write_sessions(source, SESSIONS, MESSAGES)

    built = 0
    for stopped, stop in enumerate((signal.SIGTERM, signal.SIGKILL)):
        status, where = page.post(source)
        assert status == 302 and where.startswith("/import/"), (status, where)
        wait_mid_pipeline(db, worker_log, built, wait_for)
        broker.process.send_signal(stop)
        broker.process.wait(timeout=30)

        status, body = page.post(source)  # the web, while the broker is down
        assert status == 503 and "The queue does not answer" in body
        assert "nothing was sent to the worker" in body and "python -m axiom up" in body
        wait_for(lambda n=stopped: worker_log.read_text().count(LOST) > n, timeout=60)
        built = count(db, BUILDS)
        assert built < SESSIONS  # the rest of the chain died with the broker
        broker.restart()  # same socket; nothing else is restarted
        restarted = beat_log.stat().st_size

    status, where = page.post(source)  # "send the same import again"
    assert status == 302, (status, where)
    wait_for(lambda: count(db, BUILDS) == SESSIONS, timeout=180)
    wait_for(lambda: count(db, PENDING) == 0, timeout=60)
    due = "Sending due task drain-vector-outbox"
    wait_for(lambda: due in log_since(beat_log, restarted), timeout=30)  # beat goes on
    stop_children(children)

    log = worker_log.read_text()
    assert log.count("Cannot connect to redis+socket://") >= 2  # it kept trying, and said so
    assert log.count("Connected to redis+socket://") >= 3  # at start and after each restart
    assert count(db, INGESTS) == SESSIONS
    assert "Traceback" not in (tmp_path / "web.log").read_text()
    vectors = LanceStore(data_dir / "lancedb", "none@full-text-only", 1).count_by_id()
    assert vectors and set(vectors.values()) == {1}  # every item once
    assert_recovered(db, ids, MESSAGES)
    assert_processed(db, ids)
