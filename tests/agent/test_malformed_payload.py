"""A hook whose stdin is not a JSON object refuses it: it says why on stderr and exits 1
(Claude Code's non-blocking error: the session goes on, the user sees the reason), and
nothing is posted or spooled."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from axiom.agent import spool
from tests.agent.support import child_env


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    ("stdin", "why"),
    [("not json", "not JSON"), ("[1, 2]", "not a JSON object"), ('"stop"', "not a JSON object")],
)
def test_it_refuses_a_malformed_payload_and_says_why(tmp_path: Path, stdin: str, why: str) -> None:
    env = child_env(AXIOM_DATA_DIR=str(tmp_path), AXIOM_PORT=str(_free_port()))
    done = subprocess.run(
        [sys.executable, "-m", "axiom.hooks.run", "stop"],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert "axiom hook stop: malformed payload" in done.stderr and why in done.stderr
    assert spool.pending(tmp_path) == []
