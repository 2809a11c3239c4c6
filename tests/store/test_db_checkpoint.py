"""Write units close without DuckDB's checkpoint-on-close: the WAL is folded into the file
past a size threshold, after a quiet spell or at exit, and a writer killed before that
loses nothing. Every write unit stamps a new generation token."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from axiom.store import db as db_module
from axiom.store.db import Database

ROOT = Path(__file__).resolve().parents[2]

# Writes, says so, then waits to be killed: its WAL is never checkpointed.
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

# Writes once and exits normally: the exit hook checkpoints.
EXITING_WRITER = textwrap.dedent(
    """
    import sys
    from axiom.store.db import Database

    with Database(sys.argv[1]).write() as conn:
        conn.execute("INSERT INTO probe VALUES (7, 'at exit')")
    """
)


@pytest.fixture
def probe_db(tmp_path: Path) -> Database:
    db = Database(tmp_path / "ckpt.duckdb")
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (id INTEGER, text VARCHAR)")
    db.checkpoint()
    return db


def run_child(script: str, db: Database) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, str(db.path)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
    )


def rows(db: Database) -> list[tuple[int, str]]:
    with db.read() as conn:
        return conn.execute("SELECT id, text FROM probe ORDER BY id").fetchall()


def test_a_small_write_leaves_its_wal_for_later(probe_db: Database) -> None:
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (1, 'small')")
    assert 0 < probe_db.wal_bytes() <= probe_db.checkpoint_wal_bytes
    assert rows(probe_db) == [(1, "small")]  # a read-only opener replays it


def test_a_wal_past_the_threshold_is_checkpointed_by_the_write(probe_db: Database) -> None:
    probe_db.checkpoint_wal_bytes = 1024
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe SELECT i, repeat('x', 100) FROM range(2000) t(i)")
    assert probe_db.wal_bytes() == 0
    assert len(rows(probe_db)) == 2000


def test_a_quiet_writer_checkpoints_on_its_own(
    probe_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_module, "LAZY_CHECKPOINT_SECONDS", 0.2)
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (1, 'later')")
    assert probe_db.wal_bytes() > 0
    deadline = time.monotonic() + 10
    while probe_db.wal_bytes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert probe_db.wal_bytes() == 0
    assert rows(probe_db) == [(1, "later")]


def test_a_writer_process_checkpoints_when_it_exits(probe_db: Database) -> None:
    child = run_child(EXITING_WRITER, probe_db)
    assert child.wait(timeout=60) == 0
    assert probe_db.wal_bytes() == 0
    assert rows(probe_db) == [(7, "at exit")]


def test_a_writer_killed_before_its_checkpoint_loses_nothing(probe_db: Database) -> None:
    child = run_child(KILLED_WRITER, probe_db)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "written"
    assert probe_db.wal_bytes() > 0  # committed, not checkpointed
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert rows(probe_db) == [(42, "survives kill -9")]  # a reader replays the WAL
    with probe_db.write() as conn:  # and a writer builds on it
        conn.execute("INSERT INTO probe VALUES (43, 'next')")
    probe_db.checkpoint()
    assert probe_db.wal_bytes() == 0
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


def test_a_schema_change_never_stays_in_the_wal(probe_db: Database) -> None:
    """DuckDB 1.4.4 cannot replay `ALTER TABLE ... ADD COLUMN` from a WAL: migrations ask
    for the checkpoint, and the file opens afterwards."""
    with probe_db.write(checkpoint=True) as conn:
        conn.execute("ALTER TABLE probe ADD COLUMN extra VARCHAR DEFAULT 'd'")
    assert probe_db.wal_bytes() == 0
    with probe_db.read() as conn:
        assert conn.execute("SELECT count(*) FROM probe WHERE extra = 'd'").fetchone() == (0,)
