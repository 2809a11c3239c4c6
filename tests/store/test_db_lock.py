"""Two processes never collide on the DuckDB file: whoever arrives while the other holds
the lock waits for it instead of failing with "Conflicting lock is held"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from axiom.store.db import Database

ROOT = Path(__file__).resolve().parents[2]
HOLD_SECONDS = 1.0

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from axiom.store.db import Database

    db, mode = Database(sys.argv[1]), sys.argv[2]
    print("waiting", flush=True)
    started = time.perf_counter()
    if mode == "read":
        with db.read() as conn:
            value = conn.execute("SELECT count(*) FROM probe").fetchone()[0]
    else:
        with db.write() as conn:
            conn.execute("INSERT INTO probe VALUES (2)")
            value = conn.execute("SELECT count(*) FROM probe").fetchone()[0]
    print(json.dumps({"waited_s": time.perf_counter() - started, "value": value}), flush=True)
    """
)


@pytest.fixture
def probe_db(tmp_path: Path) -> Database:
    db = Database(tmp_path / "lock.duckdb")
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (id INTEGER)")
    return db


def start_child(db: Database, mode: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db.path), mode],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "waiting"  # it is at the lock now
    return child


def finish(child: subprocess.Popen[str]) -> dict[str, float]:
    out, err = child.communicate(timeout=30)
    assert child.returncode == 0, err
    return json.loads(out)


def test_it_makes_a_reader_wait_while_a_writer_holds_the_file(probe_db: Database) -> None:
    with probe_db.write() as conn:
        child = start_child(probe_db, "read")
        time.sleep(HOLD_SECONDS)
        conn.execute("INSERT INTO probe VALUES (1)")

    result = finish(child)

    assert result["waited_s"] >= HOLD_SECONDS * 0.8
    assert result["value"] == 1  # it read after the commit, never a half-written state


def test_it_makes_a_writer_wait_while_a_reader_holds_the_file(probe_db: Database) -> None:
    with probe_db.read() as conn:
        child = start_child(probe_db, "write")
        time.sleep(HOLD_SECONDS)
        assert conn.execute("SELECT count(*) FROM probe").fetchone()[0] == 0

    result = finish(child)

    assert result["waited_s"] >= HOLD_SECONDS * 0.8
    assert result["value"] == 1


def test_it_lets_readers_in_together(probe_db: Database) -> None:
    with probe_db.read():
        child = start_child(probe_db, "read")
        result = finish(child)  # would time out if the second reader had to wait for us

    assert result["waited_s"] < HOLD_SECONDS


def test_it_would_conflict_without_the_lock(probe_db: Database) -> None:
    """Why the lock exists: DuckDB itself refuses a second process outright."""
    opener = "import duckdb, sys; duckdb.connect(sys.argv[1], read_only=True)"
    with duckdb.connect(str(probe_db.path)):
        bare = subprocess.run(
            [sys.executable, "-c", opener, str(probe_db.path)],
            capture_output=True,
            text=True,
            timeout=30,
        )

    assert bare.returncode != 0
    assert "lock" in bare.stderr.lower()
