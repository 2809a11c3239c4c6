"""Every write unit stamps a new generation token (the search read cache relies on it), and
a writer killed after its commit loses nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from axiom.store.db import Database

ROOT = Path(__file__).resolve().parents[2]

# Writes, says so, then waits to be killed.
KILLED_WRITER = textwrap.dedent(
    """
    import sys, time
    from axiom.store.db import Database

    db = Database(sys.argv[1])
    with db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (42, 'survives kill -9')")
    print("written", flush=True)
    time.sleep(60)
    """
)


@pytest.fixture
def probe_db(tmp_path: Path) -> Database:
    db = Database(tmp_path / "gen.duckdb")
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (id INTEGER, text VARCHAR)")
    return db


def rows(db: Database) -> list[tuple[int, str]]:
    with db.read() as conn:
        return conn.execute("SELECT id, text FROM probe ORDER BY id").fetchall()


def test_a_writer_killed_after_its_commit_loses_nothing(probe_db: Database) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(probe_db.path)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "written"
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert rows(probe_db) == [(42, "survives kill -9")]
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (43, 'next')")
    assert rows(probe_db) == [(42, "survives kill -9"), (43, "next")]


def test_each_write_unit_stamps_a_new_generation(probe_db: Database) -> None:
    seen = {probe_db.generation()}
    with probe_db.read():
        assert probe_db.generation() in seen  # reads change nothing
    for value in range(3):
        with probe_db.write() as conn:
            conn.execute("INSERT INTO probe VALUES (?, 'g')", [value])
        seen.add(probe_db.generation())
    with probe_db.exclusive():
        pass
    seen.add(probe_db.generation())
    assert len(seen) == 5 and "" not in seen


def test_a_failed_write_still_moves_the_generation_on(probe_db: Database) -> None:
    before = probe_db.generation()
    with pytest.raises(RuntimeError), probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (1, 'rolled back')")
        raise RuntimeError("boom")
    assert probe_db.generation() != before  # harmless: a cache reads again
    assert rows(probe_db) == []
