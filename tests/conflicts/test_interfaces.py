"""The conflicts CLI and API over the same ledger."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.entries.queries import list_entries
from axiom.outbox.service import configured_writer
from axiom.store.db import Database
from tests.cli_support import run_cli
from tests.conflicts.support import Said, run_sessions

OLD = Said("Nightly backups go to the eu-west bucket", "fact", "backup bucket", "eu-west")
NEW = Said("Nightly backups go to the us-east bucket now", "fact", "backup bucket", "us-east")


def _statuses(db: Database) -> dict[str, str]:
    with db.read() as conn:
        return {e.title: e.status for e in list_entries(conn)}


def test_the_cli_lists_and_resolves_conflicts(db: Database, data_dir: Path, tmp_path: Path) -> None:
    run_sessions(db, tmp_path, {"a": [OLD], "b": [NEW]})
    listed = run_cli(data_dir, "conflicts", "--json")
    assert listed.returncode == 0, listed.stderr
    (conflict,) = json.loads(listed.stdout)
    assert conflict["status"] == "open" and conflict["subject"] == "backup bucket"
    assert conflict["conflict_type"] == "changed_value" and len(conflict["entry_ids"]) == 2

    done = run_cli(
        data_dir, "conflicts", "resolve", conflict["conflict_id"], "--keep-newer", "--note", "moved"
    )
    assert done.returncode == 0, done.stderr
    assert _statuses(db) == {OLD.text: "superseded", NEW.text: "active"}
    again = run_cli(data_dir, "conflicts", "resolve", conflict["conflict_id"], "--reject-both")
    assert again.returncode == 1 and "already resolved" in again.stderr
    assert json.loads(run_cli(data_dir, "conflicts", "--status", "open", "--json").stdout) == []
    (resolved,) = json.loads(
        run_cli(data_dir, "conflicts", "--status", "resolved", "--json").stdout
    )
    assert resolved["resolution"] == "keep_newer" and resolved["note"] == "moved"


def test_the_api_lists_and_resolves_conflicts(client, site: Database, tmp_path: Path) -> None:
    run_sessions(site, tmp_path, {"a": [OLD], "b": [NEW]})
    (conflict,) = client.get("/api/v1/conflicts", {"status": "open"}).json()
    url = f"/api/v1/conflicts/{conflict['conflict_id']}/resolve"
    bad = client.post(url, {"choice": "keep_all"}, content_type="application/json")
    assert bad.status_code == 422
    missing = client.post(
        "/api/v1/conflicts/cf_nope/resolve",
        {"choice": "keep_both"},
        content_type="application/json",
    )
    assert missing.status_code == 404
    done = client.post(
        url, {"choice": "reject_both", "note": "both stale"}, content_type="application/json"
    )
    assert done.status_code == 200 and done.json()["resolution"] == "reject_both"
    assert set(_statuses(site).values()) == {"deprecated"}


def test_search_hits_of_a_contested_entry_name_the_other(
    client, site: Database, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("AXIOM_EMBEDDER", "none")  # full text only: no model to load
    run_sessions(site, tmp_path, {"a": [OLD], "b": [NEW]})
    assert configured_writer(site).drain().error is None
    with site.read() as conn:
        ids = {e.title: e.entry_id for e in list_entries(conn)}
    found = client.get("/api/v1/search", {"q": "nightly backups bucket", "mode": "fts"}).json()
    named = {h["entry_id"]: h["conflicts_with"] for h in found["hits"] if h["kind"] == "entry"}
    assert named == {ids[OLD.text]: [ids[NEW.text]], ids[NEW.text]: [ids[OLD.text]]}
    page = client.get("/search/", {"q": "nightly backups bucket", "mode": "fts"}).content.decode()
    assert "conflicts with" in page and f"/entries/{ids[NEW.text]}/" in page
