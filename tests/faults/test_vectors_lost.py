"""The LanceDB directory deleted or corrupted: the message says what a person must do, and
`python -m axiom reconcile` + `outbox drain` rebuild every vector from DuckDB, once each."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.faults.support import assert_recovered, count, run_axiom, write_sessions

pytestmark = pytest.mark.slow
SESSIONS, MESSAGES = 3, 4
VERSION, TABLE = "none@full-text-only", "memories_none_full_text_only"


def drained(data_dir: Path, db: Database) -> dict[str, int]:
    """Drain the outbox and return LanceDB's rows per id, after checking the queue is empty."""
    code, out, err = run_axiom(data_dir, "outbox", "drain", "--quiet")
    assert code == 0, err
    left = count(db, "SELECT count(*) FROM vector_outbox WHERE status <> 'done'")
    assert left == 0, out + err
    return LanceStore(data_dir / "lancedb", VERSION, 1).count_by_id()


@pytest.fixture
def embedded(tmp_path: Path, data_dir: Path, db: Database) -> dict[str, int]:
    ids = write_sessions(tmp_path / "src", SESSIONS, MESSAGES)
    code, _, err = run_axiom(data_dir, "import", str(tmp_path / "src"), "--no-process")
    assert code == 0, err
    rows = drained(data_dir, db)
    assert len(rows) == SESSIONS * MESSAGES * 2 and set(rows.values()) == {1}  # + context rows
    assert_recovered(db, ids, MESSAGES)
    return rows


def reconcile_and_drain(data_dir: Path, db: Database, before: dict[str, int]) -> None:
    code, out, err = run_axiom(data_dir, "reconcile")
    assert code == 0, err
    assert json.loads(out)["lost_requeued"] == SESSIONS * MESSAGES
    assert drained(data_dir, db) == before  # every vector back, none twice


def test_a_deleted_vector_dir_is_rebuilt_by_reconcile(
    data_dir: Path, db: Database, embedded: dict[str, int]
) -> None:
    shutil.rmtree(data_dir / "lancedb")
    reconcile_and_drain(data_dir, db, embedded)


def test_a_corrupted_vector_table_says_what_to_do_and_is_rebuilt(
    tmp_path: Path, data_dir: Path, db: Database, embedded: dict[str, int]
) -> None:
    table = data_dir / "lancedb" / f"{TABLE}.lance"
    for path in table.rglob("*"):
        if path.is_file():
            path.write_bytes(b"\0garbage")

    status_code, status, _ = run_axiom(data_dir, "outbox", "status")
    code, _, err = run_axiom(data_dir, "search", "--mode", "fts", "PostgreSQL")
    reconcile_code, _, _ = run_axiom(data_dir, "reconcile")

    assert status_code == 0 and reconcile_code == 1
    rows = json.loads(status)["lancedb_rows"]
    for message in (rows, err):
        assert f"{table} cannot be read" in message
        assert "Move it aside; `python -m axiom reconcile`" in message
    assert "Traceback" not in err
    table.rename(tmp_path / "aside.lance")  # what the message asks a person to do
    reconcile_and_drain(data_dir, db, embedded)
