"""The hook command stays light: on the POST-or-spool path it imports the standard library
and Axiom's handoff/spool/privacy modules only; with the service down, a context event
reads the store with DuckDB but never loads numpy, pandas, LanceDB, Django or a model.
(Wall time depends on the machine's load; bench/bench_hooks.py measures it. Which modules
load does not, so that is what this test pins.)"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from axiom.config import AxiomConfig
from axiom.store.migrate import open_database
from tests.agent.support import ROOT, SAMPLE, child_env, payload

HEAVY = (
    "duckdb",
    "numpy",
    "pandas",
    "pyarrow",
    "lancedb",
    "django",
    "torch",
    "sentence_transformers",
)
STORE_READ_FORBIDDEN = tuple(m for m in HEAVY if m != "duckdb")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _imported(
    event: str, body: dict, data_dir: Path
) -> tuple[set[str], subprocess.CompletedProcess]:
    """Top-level names of the modules `python -m axiom.hooks.run` actually loaded."""
    env = child_env(AXIOM_DATA_DIR=str(data_dir), AXIOM_PORT=str(_free_port()))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "axiom.hooks.run", event],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            module = line.rsplit("|", 1)[1].strip()
            self_us = line.split("|")[0].split(":")[1].strip()
            if self_us.isdigit() and int(self_us) > 100:  # a failed (blocked) import is ~5 us
                names.add(module.split(".")[0])
    return names, done


def test_the_post_or_spool_path_imports_no_heavy_module(tmp_path: Path) -> None:
    for event, name in (
        ("Stop", "stop"),
        ("PostToolUse", "post-tool-use"),
        ("SessionEnd", "session-end"),
    ):
        names, done = _imported(name, payload(event, SAMPLE), tmp_path / "data")
        assert done.returncode == 0, done.stderr
        assert not names & set(HEAVY), (event, sorted(names & set(HEAVY)))
    assert len(list((tmp_path / "data" / "spool").glob("*.json"))) == 3


def test_a_context_event_with_the_service_down_reads_the_store_without_numpy(
    tmp_path: Path,
) -> None:
    open_database(AxiomConfig(tmp_path / "data"))
    for event, name in (
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "user-prompt-submit"),
    ):
        names, done = _imported(name, payload(event, SAMPLE), tmp_path / "data")
        assert done.returncode == 0, done.stderr
        assert "duckdb" in names  # it did read the store
        assert not names & set(STORE_READ_FORBIDDEN), (event, sorted(names & set(HEAVY)))
        assert "axiom hook" not in done.stderr
