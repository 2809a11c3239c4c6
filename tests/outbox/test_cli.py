"""`python -m axiom outbox drain|status` and `python -m axiom reconcile`."""

from __future__ import annotations

import json

import pytest

from axiom.cli.main import main
from axiom.ingest.importer import ingest_transcripts
from axiom.store.db import Database
from tests.outbox.support import by_status, session


def test_drain_embeds_what_was_imported_without_projection(
    db: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    ingest_transcripts(db, [session("s1", "one", "two", "three")], project=False)

    assert main(["outbox", "drain", "--max", "2", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(["outbox", "drain"]) == 0
    second = capsys.readouterr().out

    assert (first["done"], first["remaining"]) == (2, 1)
    assert second.startswith("1 done, 0 failed (0 item(s) gone), 0 pending; 1 row(s) written")
    assert by_status(db) == {"done": 3}
    assert main(["stats", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["outbox_by_status"] == {"done": 3, "failed": 0, "pending": 0, "processing": 0}
    assert main(["outbox", "status"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["lancedb_rows"] == 3 and status["jobs"]["done"] == 3


def test_reconcile_requeues_failed_jobs(db: Database, capsys: pytest.CaptureFixture[str]) -> None:
    ingest_transcripts(db, [session("s1", "one")])
    main(["outbox", "drain", "--json"])
    with db.write() as conn:
        conn.execute("UPDATE vector_outbox SET status = 'failed', error = 'boom'")
    capsys.readouterr()

    assert main(["reconcile"]) == 0

    report = json.loads(capsys.readouterr().out)
    assert report["failed_requeued"] == 1 and report["verified"]
    assert by_status(db) == {"pending": 1}


def test_drain_reports_no_embedding_rate_when_no_model_embeds(
    db: Database, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """AXIOM_EMBEDDER=none writes constant vectors at memory speed: not a model's rate."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")
    ingest_transcripts(db, [session("s1", "one", "two")], project=False)
    assert main(["outbox", "drain"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("2 done, 0 failed (0 item(s) gone), 0 pending; 2 row(s) written")
    assert "texts/s" not in line and "no embedding model" in line
