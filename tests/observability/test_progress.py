"""Progress of the long commands: on a terminal (stderr a pseudo-TTY from the `pty` module)
each draws a bar; with `--quiet`, or with stderr a pipe, nothing is written to stderr."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import ROOT
from tests.conftest import SAMPLE_SESSION

pytestmark = pytest.mark.slow  # some twenty fresh interpreters, each running a command

CONVERSATION = {
    "sample_id": "progress-test",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:00 pm on 3 March, 2024",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I moved to Porto in January."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "We adopted a greyhound called Pip."},
        ],
        "session_1_observation": {
            "Ana": [["Ana moved to Porto in January.", "D1:1"]],
            "Ben": [["Ben adopted a greyhound named Pip.", "D1:2"]],
        },
    },
    "qa": [
        {"question": "Where did Ana move?", "answer": "Porto", "evidence": ["D1:1"], "category": 1}
    ],
}

# (label, arguments): every command the progress rule covers.
COMMANDS = [
    ("import", ["import", str(SAMPLE_SESSION)]),
    ("process", ["process"]),
    ("rebuild", ["rebuild"]),
    ("outbox drain", ["outbox", "drain"]),
    ("reconcile", ["reconcile"]),
    ("eval extraction", ["eval", "extraction", "{conv}"]),
    ("eval locomo", ["eval", "locomo", "{conv}"]),
]


def _env(data_dir: Path) -> dict[str, str]:
    return {
        "AXIOM_DATA_DIR": str(data_dir),
        "AXIOM_EMBEDDER": "none",
        "PATH": "/usr/bin:/bin",
        "COLUMNS": "100",
    }


def _run(data_dir: Path, args: list[str], tty: bool) -> tuple[int, str]:
    """Run `python -m axiom ARGS` with stderr on a pseudo-terminal (or a pipe): (exit, stderr)."""
    if not tty:
        done = subprocess.run(
            [sys.executable, "-m", "axiom", *args], cwd=ROOT, env=_env(data_dir),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=180,
        )  # fmt: skip
        return done.returncode, done.stderr
    master, slave = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "axiom", *args], cwd=ROOT, env=_env(data_dir),
        stdout=subprocess.DEVNULL, stderr=slave,
    )  # fmt: skip
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return child.wait(timeout=180), b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A data dir holding one imported session (so every command has work), and a LoCoMo file."""
    base = tmp_path_factory.mktemp("progress")
    conv = base / "conv.json"
    conv.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    data = base / "data"
    data.mkdir()
    assert _run(data, ["import", str(SAMPLE_SESSION), "--quiet"], tty=False)[0] == 0
    return data, conv


def _args(args: list[str], conv: Path) -> list[str]:
    return [a.replace("{conv}", str(conv)) for a in args]


@pytest.mark.parametrize(("label", "args"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_terminal_shows_progress(store: tuple[Path, Path], label: str, args: list[str]) -> None:
    code, err = _run(store[0], _args(args, store[1]), tty=True)
    assert code == 0, err
    assert "/s]" in err, err  # a drawn bar: "… [00:01<00:00, 2.2session/s]"


@pytest.mark.parametrize(("label", "args"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_quiet_or_a_pipe_writes_nothing_to_stderr(
    store: tuple[Path, Path], label: str, args: list[str]
) -> None:
    args = _args(args, store[1])
    assert _run(store[0], [*args, "--quiet"], tty=True)[1] == ""
    assert _run(store[0], args, tty=False)[1] == ""
