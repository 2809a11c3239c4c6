"""The DuckDB file grows with what it holds, not with how many write units wrote it.

Axiom opens the file for one write unit at a time (`axiom.store.db`). DuckDB 1.4.4 gave
every indexed table a fresh row group, at least one 256 KB block, on each open + insert +
close, and never merged them: a three-minute soak (~370 write units) left a 475 MB file
(duckdb/duckdb#21316, fixed in 1.4.5), and every read snapshot copied all of it.
"""

from __future__ import annotations

from pathlib import Path

from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import Database
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
