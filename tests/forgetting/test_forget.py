"""After `forget`, no byte of the forgotten session is left in the data directory."""

from __future__ import annotations

import json
from pathlib import Path

from django.test import Client
from django.urls import reverse

from axiom.entries.queries import list_entries
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.session_queries import get_session
from axiom.ingest.transcript import Message, Transcript
from axiom.outbox.projector import OutboxProjector
from axiom.outbox.writer import OutboxWriter
from axiom.store.db import Database
from axiom.store.projection import run_projector
from axiom.vectors.config import embedding_version_of
from axiom.vectors.lance_store import LanceStore
from tests.cli_support import run_cli
from tests.conflicts.support import Said, run_sessions
from tests.retrieval.conftest import HashEmbedder

TOKEN = "qorvexplintaz"  # appears only in the session to forget
SECRET = Said(f"Deploy keys for the {TOKEN} cluster rotate every 30 days", "fact")
KEPT = Said("The staging cluster deploys from the main branch", "fact")


def _hits(directory: Path, needle: str) -> list[str]:
    raw = needle.encode("utf-8")
    return [
        str(p.relative_to(directory))
        for p in sorted(directory.rglob("*"))
        if p.is_file() and raw in p.read_bytes()
    ]


def _embed(db: Database, data_dir: Path) -> LanceStore:
    embedder = HashEmbedder()
    store = LanceStore(data_dir / "lancedb", embedding_version_of(embedder), embedder.dim)
    with db.write() as conn:
        run_projector(conn, OutboxProjector(store.embedding_version))
    assert OutboxWriter(db, store, embedder, batch_size=32).drain().remaining == 0
    return store


def test_forgetting_a_session_leaves_no_byte_of_it_on_disk(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    store = _embed(db, data_dir)
    (data_dir / "logs").mkdir()
    (data_dir / "logs" / "worker.log").write_text(
        f"INFO start\nWARNING session secret: quote {SECRET.text}\nINFO done\n"
    )
    assert _hits(data_dir, TOKEN)  # it is there to begin with

    done = run_cli(data_dir, "forget", "--session", "secret", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    # the zero-grace compaction is deliberate: LanceDB's warning about it is not shown
    assert "UserWarning" not in done.stderr and "cleanup_older_than" not in done.stderr
    report = json.loads(done.stdout)
    assert report["session_ids"] == ["secret"] and report["vector_rows_deleted"] >= 2
    assert "will not restore" in report["note"]
    assert _hits(data_dir, TOKEN) == []
    assert (data_dir / "logs" / "worker.log").read_text() == "INFO start\nINFO done\n"

    # What was not forgotten is intact, and the event log says what happened, not what.
    with db.read() as conn:
        assert [e.title for e in list_entries(conn)] == [KEPT.text]
        assert get_session(conn, "secret") is None
    assert store.count_by_id().keys() >= {"message:kept:0"}
    assert not any(k.startswith("message:secret") for k in store.count_by_id())
    for args in (("stats", "--json"), ("conflicts", "--status", "all", "--json")):
        out = run_cli(data_dir, *args)
        assert out.returncode == 0 and TOKEN not in out.stdout + out.stderr

    # A tombstone: importing the same session again does not restore it.
    transcript = Transcript("secret", "demo", "json", (Message(0, "user", SECRET.text),))
    (result,) = ingest_transcripts(db, [transcript])
    assert not result.created
    with db.read() as conn:
        assert get_session(conn, "secret") is None


def test_forgetting_asks_before_it_acts(db: Database, data_dir: Path, tmp_path: Path) -> None:
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET]})
    refused = run_cli(data_dir, "forget", "--session", "secret")
    assert refused.returncode == 1 and "--yes" in refused.stderr
    with db.read() as conn:
        assert get_session(conn, "secret") is not None
    unknown = run_cli(data_dir, "forget", "--session", "nope", "--yes")
    assert unknown.returncode == 1 and "unknown session" in unknown.stderr


def test_forgetting_one_entry_keeps_its_session(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path / "idris", {"mixed": [SECRET, KEPT]})
    with db.read() as conn:
        ids = {e.title: e.entry_id for e in list_entries(conn)}
    done = run_cli(data_dir, "forget", "--entry", ids[SECRET.text], "--yes")
    assert done.returncode == 0, done.stderr
    with db.read() as conn:
        assert [e.title for e in list_entries(conn)] == [KEPT.text]
        assert get_session(conn, "mixed") is not None


def test_the_api_and_the_confirmation_page_forget(
    client, site: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(site, tmp_path / "idris", {"secret": [SECRET], "other": [KEPT]})
    page = client.get(reverse("viewer-session", args=["secret"])).content.decode()
    assert "/forget/?session=secret" in page
    strict = Client(enforce_csrf_checks=True)
    confirm = strict.get(reverse("viewer-forget"), {"session": "secret"}).content.decode()
    assert 'name="confirm"' in confirm and TOKEN not in confirm
    assert (
        strict.post(reverse("viewer-forget"), {"session": "secret", "confirm": "yes"}).status_code
        == 403
    )
    with site.read() as conn:
        assert get_session(conn, "secret") is not None

    bad = client.post("/api/v1/forget", {"session_id": "nope"}, content_type="application/json")
    assert bad.status_code == 404
    for body in ({}, {"session_id": "secret", "entry_id": "x"}, {"before": "not a date"}):
        refused = client.post("/api/v1/forget", body, content_type="application/json")
        assert refused.status_code == 422, body
    done = client.post("/api/v1/forget", {"session_id": "secret"}, content_type="application/json")
    assert done.status_code == 200 and done.json()["session_ids"] == ["secret"]
    assert TOKEN not in done.content.decode()
    for url in ("/api/v1/sessions", "/api/v1/entries", "/api/v1/conflicts"):
        assert TOKEN not in client.get(url).content.decode()
    assert _hits(data_dir, TOKEN) == []
