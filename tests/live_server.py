"""`manage.py runserver` in a child process on a free port, for tests that need real HTTP
from outside the Django test client (schemathesis, Chromium)."""

from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(url: str, proc: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"runserver exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except urllib.error.HTTPError as error:
            if error.code == 401:  # up, and asking for AXIOM_AUTH_TOKEN
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    raise RuntimeError(f"runserver did not answer {url} within {timeout}s:\n{log.read_text()}")


@contextmanager
def runserver(data_dir: Path, log: Path, **env_extra: str) -> Iterator[str]:
    """Serve the site over `data_dir` (DEBUG off, static files on); yields the base URL."""
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
        _wait_until_up(f"{base}/api/v1/health", proc, log, timeout=60)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
