"""The DuckDB file grows with what it holds, not with how many write units wrote it.

Axiom opens the file for one write unit at a time (`axiom.store.db`). DuckDB 1.4.4 gave
every indexed table a fresh row group, at least one 256 KB block, on each open + insert +
close, and never merged them: a three-minute soak (~370 write units) left a 475 MB file
(duckdb/duckdb#21316, fixed in 1.4.5), and every read snapshot copied all of it.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import ROW_GROUP_ROWS, Database
from axiom.store.migrate import migrate

UNITS = 40
BLOCK = 256 * 1024


def transcript(n: int) -> Transcript:
    messages = tuple(
        Message(
            index=i,
            role="user" if i % 2 == 0 else "assistant",
            text=f"session {n} turn {i}: the retry budget of the importer stays at three.",
            timestamp=f"2025-10-01T10:{n % 60:02d}:{i:02d}Z",
            uuid=f"growth-{n}-{i}",
        )
        for i in range(10)
    )
    return Transcript(session_id=f"growth-{n}", project="p", source="json", messages=messages)


def row_groups(db: Database, table: str) -> int:
    with db.read() as conn:
        sql = f"SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('{table}')"
        return int(conn.execute(sql).fetchone()[0])


def test_one_write_unit_per_session_does_not_add_a_row_group_each(tmp_path: Path) -> None:
    db = Database(tmp_path / "axiom.duckdb")
    migrate(db)
    for n in range(UNITS):
        (result,) = ingest_transcripts(db, [transcript(n)])
        assert result.created
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == UNITS * 10
    for table in ("messages", "sessions", "events"):
        assert row_groups(db, table) < UNITS // 4, table
    # 1.4.4 left >= 3 tables x 40 units x one 256 KB block; the content is a few KB
    assert db.path.stat().st_size < UNITS * BLOCK


def group_sizes(db: Database, table: str) -> list[int]:
    """Rows in each row group of `table` (its first column's data segments), in order."""
    sql = (
        f"SELECT row_group_id, sum(count) FROM pragma_storage_info('{table}')"
        " WHERE column_id = 0 AND segment_type <> 'VALIDITY' GROUP BY ALL ORDER BY 1"
    )
    with db.read() as conn:
        return [int(n) for _, n in conn.execute(sql).fetchall()]


def test_appends_go_in_small_row_groups_even_to_a_file_with_a_large_one(tmp_path: Path) -> None:
    """The checkpoint on close writes a table's last row group again whole when rows were
    added to it: appends go in groups of at most `ROW_GROUP_ROWS` rows, also in a file
    written before, whose last group holds more (DuckDB's default size)."""
    path = tmp_path / "axiom.duckdb"
    big = 3 * ROW_GROUP_ROWS
    plain = duckdb.connect(str(path))  # as a store written before session 22
    plain.execute("CREATE TABLE t (n INTEGER, text VARCHAR)")
    plain.execute(f"INSERT INTO t SELECT i, 'old ' || i FROM range({big}) r(i)")
    plain.close()
    db = Database(path)
    assert group_sizes(db, "t") == [big]
    for unit in range(4):
        with db.write() as conn:
            conn.execute(
                f"INSERT INTO t SELECT i, 'new ' || i FROM range({unit * 1000}, {unit * 1000 + 1000}) r(i)"
            )
    sizes = group_sizes(db, "t")
    assert sizes[0] == big and sum(sizes) == big + 4000
    assert max(sizes[1:]) <= ROW_GROUP_ROWS
    with db.read() as conn:
        assert conn.execute(
            "SELECT count(*), count(DISTINCT n) FROM t WHERE text LIKE 'new %'"
        ).fetchone() == (4000, 4000)
    assert not path.with_name(path.name + ".wal").exists()  # checkpointed on close, as before
