"""`Database.reuse_write_engine`: a long run's write units attach the file to one DuckDB
instance in turn. Between units the file is detached: checkpointed, and open to other
processes, whose writes the next unit sees; a failed unit or a forked child changes
nothing of that."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from axiom.store.db import _INHERITED, Database, _WriteEngine

ROOT = Path(__file__).resolve().parents[2]

OTHER_PROCESS = textwrap.dedent(
    """
    import json, sys
    from axiom.store.db import Database

    db = Database(sys.argv[1])
    with db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (?)", [int(sys.argv[2])])
    with db.read() as conn:
        print(json.dumps(sorted(r[0] for r in conn.execute("SELECT id FROM probe").fetchall())))
    """
)


@pytest.fixture
def db(tmp_path: Path) -> Database:
    database = Database(tmp_path / "engine.duckdb")
    database.reuse_write_engine()
    with database.write() as conn:
        conn.execute("CREATE TABLE probe (id INTEGER PRIMARY KEY)")
    return database


def _in_other_process(db: Database, value: int) -> list[int]:
    """Write `value` from another process, then what it reads back."""
    out = subprocess.run(
        [sys.executable, "-c", OTHER_PROCESS, str(db.path), str(value)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


def _ids(db: Database) -> list[int]:
    with db.read() as conn:
        return sorted(r[0] for r in conn.execute("SELECT id FROM probe").fetchall())


def test_units_take_turns_with_other_processes_on_the_file(db: Database) -> None:
    with db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (1)")
    assert not Path(f"{db.path}.wal").exists()  # detached: checkpointed
    assert _in_other_process(db, 2) == [1, 2]  # the file is free between units
    with db.write() as conn:  # the next unit sees the other process's row
        assert conn.execute("SELECT count(*) FROM probe").fetchone() == (2,)
        conn.execute("INSERT INTO probe VALUES (3)")
    assert _in_other_process(db, 4) == [1, 2, 3, 4]


def test_the_kept_instance_leaves_the_other_core_to_the_run_s_analysis(db: Database) -> None:
    with db.write() as conn:
        assert conn.execute("SELECT current_setting('threads')").fetchone() == (1,)


def test_a_failed_unit_rolls_back_and_the_next_one_works(db: Database) -> None:
    with pytest.raises(RuntimeError, match="boom"), db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (1)")
        raise RuntimeError("boom")
    with pytest.raises(Exception, match="(?i)constraint"), db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (2)")
        conn.execute("INSERT INTO probe VALUES (2)")  # the key again: DuckDB refuses
    with db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (3)")
    assert _ids(db) == [3]
    assert _in_other_process(db, 4) == [3, 4]


class _CtrlCBeforeRollback:
    """The kept connection, but a second Ctrl-C arrives as the unit starts its rollback:
    the transaction is still open when the unit ends."""

    def __init__(self, conn: duckdb.DuckDBPyConnection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: object) -> object:
        if sql == "ROLLBACK":
            raise KeyboardInterrupt
        return self._conn.execute(sql, *args)


def test_a_unit_left_open_frees_the_file_at_once(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    attach = _WriteEngine.attach
    monkeypatch.setattr(_WriteEngine, "attach", lambda self: _CtrlCBeforeRollback(attach(self)))
    with pytest.raises(KeyboardInterrupt), db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (1)")
        raise KeyboardInterrupt
    monkeypatch.setattr(_WriteEngine, "attach", attach)
    assert _in_other_process(db, 3) == [3]  # no "Conflicting lock is held", no row 1
    with db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (4)")
    assert _ids(db) == [3, 4]


def _child_writes(path: str) -> None:
    """In a forked child: a unit through the parent's `Database` (and its engine), which
    must not use the parent's instance (exit 3 if it did)."""
    db = CHILD_DB[path]
    inherited = PARENT_CONN[path]
    with db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (20)")
        mine = conn is not inherited
    os._exit(0 if mine and any(c is inherited for c in _INHERITED) else 3)


CHILD_DB: dict[str, Database] = {}
PARENT_CONN: dict[str, object] = {}  # the connection the parent's units were given


def test_a_forked_child_writes_through_an_instance_of_its_own(db: Database) -> None:
    with db.write() as conn:  # the parent's instance exists when the child is forked
        conn.execute("INSERT INTO probe VALUES (10)")
        PARENT_CONN[str(db.path)] = conn
    CHILD_DB[str(db.path)] = db
    child = multiprocessing.get_context("fork").Process(target=_child_writes, args=(str(db.path),))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    with db.write() as conn:  # the parent's instance still serves the parent
        conn.execute("INSERT INTO probe VALUES (30)")
    assert _ids(db) == [10, 20, 30]


@pytest.mark.parametrize("kept", [True, False])
def test_a_commit_whose_checkpoint_fails_is_not_written_by_a_later_unit(
    tmp_path: Path, kept: bool
) -> None:
    """Writers checkpoint at the commit (`WRITE_CONFIG`). When that checkpoint fails (a
    full disk; here DuckDB's own abort switch), the commit raises and the file keeps what
    it had, but the instance would still hold the rows as committed, and its next commit
    would write them: the unit's instance is discarded, so the next unit starts clean."""
    db = Database(tmp_path / "engine.duckdb")
    if kept:
        db.reuse_write_engine()
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (id INTEGER PRIMARY KEY)")
    with pytest.raises(duckdb.Error, match="checkpoint"), db.write() as conn:
        conn.execute("SET debug_checkpoint_abort = 'before_header'")
        conn.execute("INSERT INTO probe VALUES (1)")
    with db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (2)")
    assert _ids(db) == [2]
