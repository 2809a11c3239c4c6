"""REST API: entries, approval and citations."""

from __future__ import annotations

from pathlib import Path

import pytest

from axiom.ingest.importer import import_paths
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session


@pytest.fixture
def processed(site, sample_session: Path) -> str:
    (sid,) = import_paths(site, [sample_session]).session_ids
    process_session(site, sid, configured_pipeline())
    return sid


def test_entries_filter_by_stage(client, processed) -> None:
    verified = client.get("/api/v1/entries", {"stage": "verified"}).json()
    assert verified and {e["stage"] for e in verified} == {"verified"}
    assert {"entry_id", "type", "stage", "status", "title", "evidence"} <= set(verified[0])


def test_an_entry_opens_with_citations_that_open_the_exact_span(client, processed) -> None:
    entry = client.get("/api/v1/entries", {"stage": "verified"}).json()[0]
    detail = client.get(f"/api/v1/entries/{entry['entry_id']}").json()
    assert [h["type"] for h in detail["history"]][:1] == ["entry_created"]
    citation = client.get(f"/api/v1/citations/{detail['citations'][0]}").json()
    evidence = detail["evidence"][0]
    assert citation["quote"] == evidence["quote"]
    assert (citation["span_start"], citation["span_end"]) == (
        evidence["span_start"],
        evidence["span_end"],
    )
    assert citation["session_id"] == processed


def test_approval_certifies_a_verified_entry_and_is_audited(client, processed, api_auth) -> None:
    entry = client.get("/api/v1/entries", {"stage": "verified"}).json()[0]
    url = f"/api/v1/entries/{entry['entry_id']}/approve"
    response = client.post(
        url, {"approved_by": "ana", "note": "checked"}, content_type="application/json", **api_auth
    )
    assert response.status_code == 200 and response.json()["stage"] == "certified"
    history = client.get(f"/api/v1/entries/{entry['entry_id']}").json()["history"]
    types = [h["type"] for h in history]
    assert "entry_approved" in types and types[-1] == "entry_promoted"
    assert history[-1]["payload"]["reason"] == "approved by ana"


def test_approval_needs_a_name_and_an_existing_entry(client, processed, api_auth) -> None:
    entry = client.get("/api/v1/entries").json()[0]
    blank = client.post(
        f"/api/v1/entries/{entry['entry_id']}/approve",
        {"approved_by": " "},
        content_type="application/json",
        **api_auth,
    )
    missing = client.post(
        "/api/v1/entries/ent_nope/approve",
        {"approved_by": "ana"},
        content_type="application/json",
        **api_auth,
    )
    assert (blank.status_code, missing.status_code) == (422, 404)
    assert missing.json() == {"detail": "entry 'ent_nope' not found"}


def test_unknown_citations_and_entries_are_404_json(client, site) -> None:
    assert client.get("/api/v1/citations/mem:nothere").json() == {
        "detail": "citation 'mem:nothere' not found"
    }
    assert client.get("/api/v1/entries/ent_x").status_code == 404
