"""`python -m axiom up` end to end: every process starts, the sample arrives through the
queue, the page answers on 127.0.0.1, a killed broker is started again and the queue works
through it with no other process restarted, and SIGTERM leaves no process behind."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from axiom.ingest.session_queries import get_session
from axiom.store.db import Database
from tests.faults.support import write_sessions

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_ID = "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def sessions_present(path: Path, session_id: str) -> bool:
    with Database(path).read() as conn:
        return get_session(conn, session_id) is not None


def test_it_runs_everything_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "AXIOM_DATA_DIR": str(tmp_path / "data"), "AXIOM_PORT": str(port)}
    env.pop("AXIOM_BROKER_URL", None)
    launcher = subprocess.Popen(
        [sys.executable, "-m", "axiom", "up"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert launcher.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = launcher.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if "Axiom is running at" in line or line.startswith("error"):
                break
        output = "\n".join(lines)
        assert f"Axiom is running at http://127.0.0.1:{port}/" in output, output

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            assert response.status == 200
        with Database(tmp_path / "data" / "axiom.duckdb").read() as conn:
            assert get_session(conn, SAMPLE_ID) is not None
        pids = [int(p) for p in re.findall(r"\(pid (\d+)\)", output)]
        names = re.findall(r"started (\w+) \(pid", output)
        assert names == ["writer", "worker", "beat", "web"]
        assert len(pids) == 5  # the four children and the broker

        os.kill(pids[0], signal.SIGKILL)  # the broker
        warning = launcher.stdout.readline()
        assert warning.startswith("warning: the broker exited (code -9); started it again")
        assert "send any import that was running again" in warning
        pids += [int(p) for p in re.findall(r"\(pid (\d+)\)", warning)]
        (session,) = write_sessions(tmp_path / "more", 1)
        url = re.search(r" at (redis\+socket://\S+)", output)
        assert url is not None
        sent = subprocess.run(
            [sys.executable, "-m", "celery", "-A", "config.celery", "call", "axiom.ingest_path",
             "--args", f'["{tmp_path / "more"}"]'],
            cwd=ROOT, env={**env, "AXIOM_BROKER_URL": url[1]}, capture_output=True, timeout=60,
        )  # fmt: skip
        assert sent.returncode == 0, sent.stderr
        deadline = time.monotonic() + 60  # the worker reconnects by itself
        while not sessions_present(tmp_path / "data" / "axiom.duckdb", session):
            assert time.monotonic() < deadline, "the queue did not work after the restart"
            time.sleep(0.5)
    finally:
        launcher.send_signal(signal.SIGTERM)
        rest, _ = launcher.communicate(timeout=90)

    assert launcher.returncode == 0, rest
    assert rest.rstrip().endswith("stopped")
    assert [pid for pid in pids if alive(pid)] == []
