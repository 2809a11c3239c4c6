"""Soak: a writer process imports sessions while readers render pages, on one real file.

The roles live in `bench/soak_db.py` (also runnable on its own); here the writer runs as a
subprocess and this test process reads. Figures go to stdout (`pytest -s`) and to
`soak.json` in the test's tmp dir. `AXIOM_SOAK_SECONDS` shortens or lengthens the run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from axiom.store.db import Database

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("AXIOM_SOAK_SECONDS", "20"))


def load_soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_db", ROOT / "bench" / "soak_db.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_role(role: str, db: Database, seconds: float, out: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "soak_db.py"), role, str(db.path), str(seconds), str(out)],
        env=env,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_it_serves_pages_without_errors_while_a_writer_imports(
    db: Database, tmp_path: Path
) -> None:
    soak = load_soak()
    writer = run_role("write", db, SECONDS, tmp_path / "writer.json")

    reader = soak.read_loop(db.path, SECONDS)  # this process reads for the same time

    assert writer.wait(timeout=SECONDS + 60) == 0
    written = json.loads((tmp_path / "writer.json").read_text())
    report = {"seconds": SECONDS, "machine": soak.machine(), "writer": written, "readers": [reader]}
    (tmp_path / "soak.json").write_text(json.dumps(report, indent=2))
    print(
        f"\nsoak {SECONDS:.0f}s: {written['sessions_written']} sessions written,"
        f" write ms {written['latency_ms']}; {reader['pages']} pages read,"
        f" read ms {reader['latency_ms']} -> {tmp_path / 'soak.json'}"
    )

    assert written["error_count"] == 0, written["errors"]
    assert reader["error_count"] == 0, reader["errors"]
    assert reader["last_total"] > reader["first_total"]  # the reads saw the imports land
    assert written["sessions_written"] >= 5  # the writer was not starved
    with db.read() as conn:
        sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert sessions == written["sessions_written"]


def test_it_lets_the_writer_in_while_two_readers_read_continuously(
    db: Database, tmp_path: Path
) -> None:
    seconds = min(SECONDS, 10.0)
    procs = [run_role("write", db, seconds, tmp_path / "writer.json")]
    procs += [run_role("read", db, seconds, tmp_path / f"reader-{i}.json") for i in range(2)]

    assert [p.wait(timeout=seconds + 60) for p in procs] == [0, 0, 0]
    written = json.loads((tmp_path / "writer.json").read_text())
    readers = [json.loads((tmp_path / f"reader-{i}.json").read_text()) for i in range(2)]
    print(f"\n2 busy readers, {seconds:.0f}s: writer {written}; readers {readers}")

    assert written["error_count"] == 0
    assert [r["error_count"] for r in readers] == [0, 0]
    # the turnstile in axiom/store/db.py gives a waiting writer priority over new readers
    assert written["sessions_written"] >= 5, written
