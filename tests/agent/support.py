"""Real-shaped Claude Code material for the agent tests: a fake HOME with a projects folder
holding the bundled sample transcript, and hook payloads shaped like Claude Code's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = next((ROOT / "axiom" / "samples" / "claude_code").rglob("*.jsonl"))
SAMPLE_CWD = "/home/dev/axiom"
SAMPLE_SESSION = SAMPLE.stem


def fake_home(tmp_path: Path) -> Path:
    """HOME with ~/.claude/projects/<folder>/<session>.jsonl, as Claude Code leaves it."""
    home = tmp_path / "home"
    folder = home / ".claude" / "projects" / SAMPLE.parent.name
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE, folder / SAMPLE.name)
    return home


def payload(event: str, transcript: Path, **extra: Any) -> dict[str, Any]:
    base = {
        "session_id": SAMPLE_SESSION,
        "transcript_path": str(transcript),
        "cwd": SAMPLE_CWD,
        "hook_event_name": event,
        "permission_mode": "default",
    }
    extra_by_event: dict[str, dict[str, Any]] = {
        "SessionStart": {"source": "startup"},
        "UserPromptSubmit": {"prompt": "which database do we use for the event store?"},
        "PostToolUse": {
            "tool_name": "Bash",
            "tool_input": {"command": "ls"},
            "tool_response": {"stdout": "README.md", "stderr": "", "interrupted": False},
        },
        "Stop": {"stop_hook_active": False},
        "SessionEnd": {"reason": "prompt_input_exit"},
    }
    return {**base, **extra_by_event[event], **extra}


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def run_shell(command: str, stdin: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, shell=True, input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


def run_axiom(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "axiom", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )


def dumps(obj: Any) -> str:
    return json.dumps(obj)
