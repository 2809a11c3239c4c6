"""A live Axiom web service for the agent tests: `manage.py runserver 127.0.0.1:<free port>
--noreload` on a tmp data dir, as `axiom up` runs the web, stopped (its process group)
when the test ends."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.agent.support import ROOT

START_TIMEOUT = 120.0  # seconds: runserver under a loaded machine
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def post_json(url: str, body: dict[str, Any], token: str = "", timeout: float = 120) -> dict:
    """POST with a long timeout (the test's own calls, not the hook's)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    with _OPENER.open(request, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


@contextmanager
def live_service(data_dir: Path, log: Path, **env_extra: str) -> Iterator[str]:
    """Yield the base URL of a running service on `data_dir`."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXIOM_")}
    env.update(
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
        AXIOM_DATA_DIR=str(data_dir),
        AXIOM_DEBUG="0",
        DJANGO_SETTINGS_MODULE="config.settings",
        **env_extra,
    )
    argv = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    with open(log, "wb") as out:
        server = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(base, server, log)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def _wait_until_up(base: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"runserver exited {server.returncode}:\n{log.read_text()}")
        try:
            with _OPENER.open(base + "/api/v1/health", timeout=5):
                return
        except urllib.error.HTTPError:
            return  # it answered (401 when a token is required)
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    raise AssertionError(f"runserver did not answer in {START_TIMEOUT} s:\n{log.read_text()}")
