"""`manage.py runserver` in a child process on a free port, for tests that need real HTTP
from outside the Django test client (schemathesis, Chromium)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from axiom.store.db import Database
from axiom.store.migrate import migrate

ROOT = Path(__file__).resolve().parents[1]


def migrated_store(root: Path) -> tuple[Path, Database]:
    """`root/data` holding a migrated DuckDB file: the data dir a served test site starts from."""
    data = root / "data"
    database = Database(data / "axiom.duckdb")
    migrate(database)
    return data, database


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(
    url: str, proc: subprocess.Popen, log: Path, timeout: float, warm: bool = False
) -> None:
    """Until `url` (the health endpoint) answers; with `warm`, until it also reports the
    start-up warm-up done (the benchmarks measure the steady state, not the model load)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"runserver exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200 and (not warm or json.load(response)["warm"]):
                    return
        except urllib.error.HTTPError as error:
            if error.code == 401:  # up, and asking for AXIOM_AUTH_TOKEN
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"runserver did not answer {url} within {timeout}s:\n{log.read_text()}")


@contextmanager
def runserver(data_dir: Path, log: Path, warm: bool = False, **env_extra: str) -> Iterator[str]:
    """Serve the site over `data_dir` (DEBUG off, static files on); yields the base URL,
    with `warm` only once the server's warm-up (pages, query model) has finished."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AXIOM_")}
    env.update({"AXIOM_DATA_DIR": str(data_dir), "AXIOM_DEBUG": "0", "PYTHONUNBUFFERED": "1"})
    env.update(env_extra)
    port = free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}"]
            + ["--noreload", "--insecure"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(f"{base}/api/v1/health", proc, log, timeout=180 if warm else 60, warm=warm)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
