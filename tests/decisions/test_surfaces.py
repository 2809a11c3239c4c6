"""The decision ledger's page and API read the same ledger the CLI writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from axiom.decisions.ledger import DecisionRefused, record_decision
from axiom.entries.queries import list_entries
from axiom.store.db import Database
from tests.conflicts.support import Said, run_sessions


def _two_decisions(db: Database, tmp_path: Path) -> tuple[str, str, str]:
    run_sessions(db, tmp_path, {"a": [Said("Use Redis for the cache of the search page")]})
    with db.read() as conn:
        (entry,) = list_entries(conn)
    assert entry.stage == "verified"
    with db.write() as conn:
        first = record_decision(conn, "Use Redis <for> caching", [entry.entry_id], "ana")
        second = record_decision(
            conn, "Use Redis 7", [entry.entry_id], "ana", supersedes=first.decision_id
        )
    return entry.entry_id, first.decision_id, second.decision_id


def test_the_page_lists_decisions_with_evidence_and_the_one_replaced(
    client, site: Database, tmp_path: Path
) -> None:
    entry_id, first, second = _two_decisions(site, tmp_path)
    page = client.get("/decisions/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Use Redis &lt;for&gt; caching" in html and "<for>" not in html
    assert f'id="{first}"' in html and f'id="{second}"' in html
    assert f'href="#{first}"' in html and f'href="#{second}"' not in html
    assert f'href="/entries/{entry_id}/"' in html


def test_the_page_says_when_there_are_no_decisions(client, site: Database) -> None:
    assert "No decisions recorded." in client.get("/decisions/").content.decode()


def test_the_api_lists_decisions_oldest_first(client, site: Database, tmp_path: Path) -> None:
    entry_id, first, second = _two_decisions(site, tmp_path)
    listed = client.get("/api/v1/decisions").json()
    assert [d["decision_id"] for d in listed] == [first, second]
    assert [d["supersedes"] for d in listed] == [None, first]
    assert listed[1]["evidence"] == [{"entry_id": entry_id, "stage": "verified"}]
    assert listed[0]["actor"] == "person:ana"


def test_a_decision_citing_an_unknown_entry_is_refused_with_the_reason(
    client, site: Database
) -> None:
    with site.write() as conn, pytest.raises(DecisionRefused, match="unknown entry 'ent_nope'"):
        record_decision(conn, "Drop the cache", ["ent_nope"], "ana")
    assert client.get("/api/v1/decisions").json() == []
