"""`config.stores`: `reset` (run by `forget` inside a request) never closes a search service
under a request still using it; the start-up warm-up is reported by health."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from axiom.store.db import Database
from config import stores

ROOT = Path(__file__).resolve().parents[2]


def _refuses_work(service: object) -> bool:
    try:
        service._pool.submit(int).result()  # type: ignore[attr-defined]
    except RuntimeError:  # "cannot schedule new futures after shutdown"
        return True
    return False


def test_reset_waits_for_the_request_holding_the_service(site: Database) -> None:
    with stores.search_service() as held:
        stores.reset()  # another request forgets something meanwhile
        assert not _refuses_work(held)
        with stores.search_service() as fresh:  # later requests get a new service
            assert fresh is not held
    assert _refuses_work(held)  # closed once returned
    assert not _refuses_work(fresh)  # the current one stays open
    stores.reset()
    assert _refuses_work(fresh)  # idle: closed at once


def test_health_says_warm_once_the_warm_up_has_run(site: Database, client, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(stores, "_warmed", threading.Event())  # as a freshly started web
    assert client.get("/api/v1/health").json()["warm"] is False
    stores.warm_in_background().join(timeout=120)
    assert client.get("/api/v1/health").json()["warm"] is True
    stores.reset()  # forget resets the handles: the process stays warm
    assert client.get("/api/v1/health").json()["warm"] is True


SERVING_AFTER = """
import os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
import django
django.setup()
from django.core.checks import run_checks
run_checks()  # what Celery's Django fixup runs in a worker: imports the URLconf
import config.urls
from axiom.store import snapshots
before = snapshots.serving()
if sys.argv[1] == "wsgi":
    import config.wsgi
print(before, snapshots.serving(), flush=True)
# What is asked is answered; skip the interpreter's teardown, where a native library's
# thread pool once aborted the process under load ("terminate called without an active
# exception"), which has nothing to do with which reads serve snapshots.
os._exit(0)
"""


def test_only_the_wsgi_entry_point_serves_reads_from_snapshots(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A worker loads the same Django project (views, API, `config.stores`) but acts on what
    it reads, so it must read the live file; the web process serves snapshots."""
    env = {**os.environ, "AXIOM_DATA_DIR": str(tmp_path), "AXIOM_EMBEDDER": "none"}
    for entry, expected in (("worker", "False False"), ("wsgi", "False True")):
        done = subprocess.run(
            [sys.executable, "-c", SERVING_AFTER, entry],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.split("\n")[0] == expected
