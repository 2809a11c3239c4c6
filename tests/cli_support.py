"""`python -m axiom …` in a child process, as a user runs it: the tests that need the real
entry point (exit codes, stderr, a fresh interpreter) call `run_cli`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(
    data_dir: Path, *args: str, timeout: float = 120, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI with only `AXIOM_DATA_DIR`, a minimal PATH and `env` in its environment."""
    return subprocess.run(
        [sys.executable, "-m", "axiom", *args],
        cwd=ROOT,
        env={"AXIOM_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin", **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
