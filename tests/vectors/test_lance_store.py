"""The LanceDB table's row ids: a search reads the one `id` column for a row's keys."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from axiom.vectors.lance_store import (
    LanceStore,
    context_row_id,
    entry_row_id,
    message_row_id,
    row_id_parts,
    task_row_id,
)

KEYS = ("kind", "entry_id", "session_id", "message_index")


def test_a_rows_id_says_its_kind_and_keys(tmp_path: Path) -> None:
    """What `row_id_parts` reads from each stored id is what the key columns hold (a
    session id may itself hold colons; an entry's row says its session only in its
    column, which the search no longer reads)."""
    store = LanceStore(tmp_path / "lancedb", "test/1", 4)
    vector = np.ones(4, dtype=np.float32) / 2
    rows = [
        {"id": entry_row_id("e1"), "kind": "entry", "entry_id": "e1", "session_id": "s:1"},
        {
            "id": message_row_id("s:1", 3),
            "kind": "message",
            "session_id": "s:1",
            "message_index": 3,
        },
        {
            "id": context_row_id("s:1", 3),
            "kind": "context",
            "session_id": "s:1",
            "message_index": 3,
        },
        {"id": task_row_id("t:1"), "kind": "task"},
    ]
    with store.writer_lock():
        store.upsert([{**row, "text": f"row {i}", "vector": vector} for i, row in enumerate(rows)])
    stored = store.open_table_for_read().to_arrow().to_pylist()
    assert len(stored) == len(rows)
    for row in stored:
        keys = {k: row[k] for k in KEYS if row[k] is not None}
        if row["kind"] == "entry":
            assert keys.pop("session_id") == "s:1"
        assert row_id_parts(row["id"]) == keys
