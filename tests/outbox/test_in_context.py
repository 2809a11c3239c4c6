"""With e5 in torch, a message and its context row cost one model pass (late chunking):
the context row's vector from the context text with the previous turn shortened, the
message's own vector pooled from its own tokens in that pass — the same vectors whatever
the batch, and full-text search still reads the whole previous turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from axiom.ingest.importer import ingest_transcripts
from axiom.outbox.documents import embedding_text_for_context
from axiom.outbox.writer import OutboxWriter
from axiom.projections import project_all
from axiom.store.db import Database
from axiom.store.migrate import migrate
from axiom.vectors.config import configured_embedding_version, embedding_version_of, shared_embedder
from axiom.vectors.embedder import E5Embedder
from axiom.vectors.lance_store import LanceStore
from tests.outbox.support import session

PREVIOUS = (
    "we went over the lancedb index, the deploy checklist, the cache sizes and the redis"
    " timeout for most of the afternoon"
)
TEXTS = (PREVIOUS, "배포 일정은 금요일로 결정했습니다", "ok then friday it is")


@pytest.fixture
def e5(monkeypatch: pytest.MonkeyPatch) -> E5Embedder:
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    monkeypatch.setenv("AXIOM_CONTEXT_ROWS", "1")
    embedder = shared_embedder("e5")
    assert isinstance(embedder, E5Embedder) and embedder.in_context
    assert embedding_version_of(embedder) == configured_embedding_version()
    return embedder


def _drain(
    db: Database, path: Path, e5: E5Embedder, batch_size: int, context_rows: bool = True
) -> dict[str, Any]:
    ingest_transcripts(db, [session("s", *TEXTS)])
    project_all(db)
    store = LanceStore(path, embedding_version_of(e5), e5.dim)
    writer = OutboxWriter(db, store, e5, batch_size=batch_size, context_rows=context_rows)
    report = writer.drain()
    assert report.done == 3 and report.rows_upserted == (6 if context_rows else 3)
    rows = store.open_table_for_read().to_arrow().to_pylist()
    return {"rows": {r["id"]: r for r in rows}, "report": report}


def test_a_message_and_its_context_row_are_one_pass(
    db: Database, data_dir: Path, e5: E5Embedder
) -> None:
    drained = _drain(db, data_dir / "lancedb", e5, batch_size=16)
    rows = drained["rows"]

    assert sum(b.embedded for b in drained["report"].batches) == 3  # one text a message
    own, context = rows["message:s:1"], rows["context:s:1"]
    assert context["text"] == f"user: {PREVIOUS}\n{own['text']}"  # full text for search
    short = embedding_text_for_context(f"user: {PREVIOUS}", own["text"])
    assert short == f"user: {' '.join(PREVIOUS.split()[-20:])}\n{own['text']}"
    full, tail = e5.embed_in_context([short], [own["text"]])
    assert float(np.dot(context["vector"], full[0])) > 0.9999
    assert float(np.dot(own["vector"], tail[0])) > 0.9999
    alone = e5.embed([own["text"]])[0]
    assert float(np.dot(own["vector"], alone)) < 0.99  # pooled in context, not alone
    query = e5.embed(["배포 일정이 언제로 정해졌나요?"], kind="query")[0]
    messages = [rows[f"message:s:{i}"]["vector"] for i in range(3)]
    assert int(np.argmax(np.array(messages) @ query)) == 1  # Korean still found


def test_a_message_gets_the_same_vectors_in_any_batch(
    tmp_path: Path, data_dir: Path, db: Database, e5: E5Embedder
) -> None:
    together = _drain(db, data_dir / "lancedb", e5, batch_size=16)["rows"]
    other = Database(tmp_path / "other.duckdb")
    migrate(other)
    one_by_one = _drain(other, tmp_path / "lancedb-2", e5, batch_size=1)["rows"]

    assert together.keys() == one_by_one.keys()
    for row_id, row in together.items():
        assert float(np.dot(row["vector"], one_by_one[row_id]["vector"])) > 0.9999, row_id


def test_without_context_rows_a_message_vector_means_the_same(
    tmp_path: Path, data_dir: Path, db: Database, e5: E5Embedder
) -> None:
    """AXIOM_CONTEXT_ROWS=0 stores no context row, but the own vector is still pooled from
    the context pass: one version, one meaning, whatever the setting."""
    with_rows = _drain(db, data_dir / "lancedb", e5, batch_size=16)["rows"]
    other = Database(tmp_path / "other.duckdb")
    migrate(other)
    without = _drain(other, tmp_path / "lancedb-2", e5, 16, context_rows=False)["rows"]

    assert sorted(without) == [f"message:s:{i}" for i in range(3)]
    for row_id, row in without.items():
        assert float(np.dot(row["vector"], with_rows[row_id]["vector"])) > 0.9999, row_id
