"""`rewrite_database` (run by `forget` and `compact`) swaps in a compact copy of the file:
a store of more than one row group must take writes afterwards as before."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from axiom.store.db import ROW_GROUP_ROWS, Database
from axiom.store.events import EventStore, NewEvent
from axiom.store.migrate import MIGRATIONS_DIR, migrate, migration_files
from axiom.store.rewrite import long_row_groups, rewrite_database


def _append(db: Database, start: int, count: int) -> None:
    with db.write() as conn:
        EventStore(conn).append_many(
            [
                NewEvent("note", {"n": n}, dedupe_key=f"note:{n}")
                for n in range(start, start + count)
            ]
        )


def test_a_rewritten_store_of_several_row_groups_takes_writes(tmp_path: Path) -> None:
    db = Database(tmp_path / "axiom.duckdb")
    migrate(db)
    many = ROW_GROUP_ROWS + 100  # the copy's last row group is a partial one
    _append(db, 0, many)
    rewrite_database(db)
    _append(
        db, many, 10
    )  # failed with an internal error ("Could not find node in column segment tree")
    _append(db, many + 10, ROW_GROUP_ROWS)  # and across a row group's end
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (
            many + 10 + ROW_GROUP_ROWS,
        )
        assert conn.execute("SELECT count(*) FROM event_dedup").fetchone() == (
            many + 10 + ROW_GROUP_ROWS,
        )


def test_rewriting_again_mends_a_store_copied_in_the_default_row_groups(tmp_path: Path) -> None:
    """A store rewritten before the fix refused every write; `axiom compact` (a rewrite)
    makes it writable again, every event kept."""
    db = Database(tmp_path / "axiom.duckdb")
    migrate(db)
    many = ROW_GROUP_ROWS + 100
    _append(db, 0, many)
    old = tmp_path / "old.duckdb"
    conn = duckdb.connect(":memory:")
    conn.execute(f"ATTACH '{db.path}' AS src (READ_ONLY)")
    conn.execute(f"ATTACH '{old}' AS dst")  # as `rewrite_database` copied before
    conn.execute("COPY FROM DATABASE src TO dst")
    conn.close()
    old.replace(db.path)
    with pytest.raises(duckdb.Error, match="segment tree"):
        _append(db, many, 10)
    rewrite_database(db)
    _append(db, many, 10)
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (many + 10,)


def _since_0012() -> list[str]:
    """The migrations `_old_store`'s store lacks."""
    return [p.name for p in migration_files() if p.name >= "0012"]


def _old_store(path: Path, events: int, in_wal: int = 0) -> None:
    """A store as Axiom's writers left it before session 22 (plain connections, DuckDB's
    122,880-row groups), at migration 0011; `in_wal` more events only in its WAL."""
    before = [p.name for p in migration_files() if p.name < "0012"]
    conn = duckdb.connect(str(path))
    for name in before:
        conn.execute((MIGRATIONS_DIR / name).read_text(encoding="utf-8"))
    conn.execute("CREATE TABLE schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
    conn.executemany("INSERT INTO schema_migrations (name) VALUES (?)", [[n] for n in before])
    insert = (
        "INSERT INTO events (event_id, seq, ts, event_type, actor, payload_json, checksum)"
        " SELECT 'ev_' || i, i, now(), 'note', 'test', '{}', 'c' FROM range(?, ?) t(i)"
    )
    conn.execute(insert, [0, events])
    conn.execute("CHECKPOINT")
    if in_wal:  # as a process killed before its checkpoint leaves it
        conn.execute("PRAGMA disable_checkpoint_on_shutdown")
        conn.execute("SET checkpoint_threshold = '1GB'")
        conn.execute(insert, [events, events + in_wal])
    conn.close()


@pytest.mark.parametrize("in_wal", [0, 10])
def test_migrate_mends_a_store_written_in_the_default_row_groups(
    tmp_path: Path, in_wal: int
) -> None:
    """A store written before Axiom attached its file with 2,048-row groups refused its
    first write: the migrations of a new version are followed by one rewrite (a WAL left
    behind included)."""
    path = tmp_path / "axiom.duckdb"
    _old_store(path, 3000, in_wal)
    assert path.with_name(path.name + ".wal").exists() == bool(in_wal)
    db = Database(path)
    with db.read() as conn:
        assert long_row_groups(conn) == ["events"]
    assert migrate(db) == _since_0012()
    with db.read() as conn:
        assert long_row_groups(conn) == []
    assert not path.with_name(path.name + ".wal").exists()
    _append(db, 3000 + in_wal, 10)
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (3010 + in_wal,)


def test_a_mend_that_fails_leaves_the_store_readable(tmp_path: Path, caplog) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "axiom.duckdb"
    _old_store(path, 3000)
    db = Database(path)
    (tmp_path / "axiom.duckdb.rewrite").mkdir()  # where the copy goes: it cannot be made
    (tmp_path / "axiom.duckdb.rewrite" / "x").write_text("")
    assert migrate(db) == _since_0012()
    assert "`axiom compact`" in caplog.text
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone() == (3000,)
