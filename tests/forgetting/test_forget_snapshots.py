"""Read snapshots are copies of the DuckDB file: `forget` (through `rewrite_database`)
deletes every one, so no snapshot keeps the forgotten text."""

from __future__ import annotations

import os
from pathlib import Path

from axiom.config import AxiomConfig
from axiom.forgetting.forget import ForgetTarget, commit, finish
from axiom.store import snapshots
from axiom.store.db import Database
from axiom.store.rewrite import rewrite_database
from tests.cli_support import run_cli
from tests.conflicts.support import run_sessions
from tests.forgetting.test_forget import KEPT, SECRET, TOKEN, _hits


def test_forget_deletes_every_snapshot_and_leaves_none_holding_the_text(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    Database(db.path, use_snapshots=True).publish_snapshot()  # unless the writes just did
    (snap,) = snapshots.snapshots(db.path)
    assert snap.path.name in _hits(data_dir, TOKEN)  # the copy holds the text too

    done = run_cli(data_dir, "forget", "--session", "secret", "--yes", "--json")

    assert done.returncode == 0, done.stderr
    assert _hits(data_dir, TOKEN) == []
    assert [p.name for p in data_dir.iterdir() if ".snap" in p.name] == []


def test_the_forget_commit_already_deletes_every_snapshot(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    Database(db.path, use_snapshots=True).publish_snapshot()  # unless the writes just did
    assert snapshots.snapshots(db.path)
    config = AxiomConfig(data_dir=data_dir)

    report, work = commit(db, ForgetTarget(session_id="secret"), "test", config)

    assert snapshots.snapshots(db.path) == []  # before the rebuild and the rewrite
    # Until `finish` has rebuilt the tables and rewritten the file, another writer (an
    # import going on) publishes nothing and no reader is sent to a snapshot.
    other = Database(db.path, use_snapshots=True)
    with other.write() as conn:
        conn.execute("SELECT 1")
    assert other.publish_snapshot() is None and snapshots.snapshots(db.path) == []
    finish(db, config, work, report)
    assert not snapshots.held(db.path)
    assert other.publish_snapshot() is not None  # publishing resumes


def test_a_rewrite_deletes_snapshots_and_half_written_copies(db: Database) -> None:
    snap = Database(db.path, use_snapshots=True).publish_snapshot()
    assert snap is not None
    leftover = db.path.with_name(db.path.name + snapshots.TEMP_INFIX + "12345")
    leftover.write_bytes(b"a copy cut short")

    rewrite_database(db)

    assert snapshots.snapshots(db.path) == []
    assert not leftover.exists() and not snap.path.exists()


def test_a_copy_left_by_a_killed_publisher_is_dropped_by_the_next_write(db: Database) -> None:
    dead = db.path.with_name(f"{db.path.name}{snapshots.TEMP_INFIX}999999999.abc")
    mine = db.path.with_name(f"{db.path.name}{snapshots.TEMP_INFIX}{os.getpid()}.abc")
    dead.write_bytes(b"a copy cut short")
    mine.write_bytes(b"a copy in progress")
    with db.write() as conn:
        conn.execute("SELECT 1")
    assert not dead.exists() and mine.exists()  # a live publisher's copy is left alone
    mine.unlink()
