"""REST API: health, sessions, errors as JSON, and offline OpenAPI docs."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from axiom.ingest.importer import import_paths, ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from config import stores

SAMPLE_ID = "7f3c9a2e-5b1d-4c8e-9a6f-2d4e8b1c0a57"


@pytest.fixture
def sample(site, sample_session: Path) -> str:
    import_paths(site, [sample_session])
    return SAMPLE_ID


def add_sessions(database, count: int) -> None:
    start = datetime(2025, 1, 1)
    ingest_transcripts(
        database,
        [
            Transcript(
                session_id=f"s-{n:03d}",
                project="p",
                source="json",
                messages=(Message(index=0, role="user", text="hi"),),
                started_at=(start + timedelta(hours=n)).isoformat(),
            )
            for n in range(count)
        ],
    )


def test_health_reports_counts(client, sample, data_dir):
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert (body["events"], body["sessions"], body["messages"]) == (1, 1, 12)
    assert "data_dir" not in body and str(data_dir) not in response.content.decode()
    assert body["data_dir_ok"] is True
    assert body["lock_wait_ms"] >= 0


def test_a_missing_database_is_a_503(client, site):
    database = stores.get_database()
    database.path.unlink()
    response = client.get("/api/v1/health")
    assert response.status_code == 503
    assert "does not exist" in response.json()["detail"]


def test_sessions_are_paged_newest_first(client, site):
    add_sessions(site, 7)
    first = client.get("/api/v1/sessions", {"per_page": 3}).json()
    assert [s["session_id"] for s in first["items"]] == ["s-006", "s-005", "s-004"]
    assert (first["page"], first["per_page"], first["total"], first["has_next"]) == (1, 3, 7, True)
    last = client.get("/api/v1/sessions", {"page": 3, "per_page": 3}).json()
    assert [s["session_id"] for s in last["items"]] == ["s-000"]
    assert last["has_next"] is False


def test_sessions_take_limit_and_offset_like_entries(client, site):
    add_sessions(site, 7)
    window = client.get("/api/v1/sessions", {"limit": 3, "offset": 2}).json()
    assert [s["session_id"] for s in window["items"]] == ["s-004", "s-003", "s-002"]
    assert (window["limit"], window["offset"], window["total"], window["has_next"]) == (
        3,
        2,
        7,
        True,
    )
    assert (window["page"], window["per_page"]) == (1, 3)  # the page the window starts in
    tail = client.get("/api/v1/sessions", {"limit": 3, "offset": 5}).json()
    assert [s["session_id"] for s in tail["items"]] == ["s-001", "s-000"]
    assert tail["has_next"] is False
    only_offset = client.get("/api/v1/sessions", {"offset": 6}).json()
    assert [s["session_id"] for s in only_offset["items"]] == ["s-000"]
    assert only_offset["limit"] == 25
    paged = client.get("/api/v1/sessions", {"page": 2, "per_page": 3}).json()
    assert (paged["limit"], paged["offset"]) == (3, 3)  # both forms describe every answer
    mixed = client.get("/api/v1/sessions", {"limit": 2, "per_page": 5, "page": 2}).json()
    assert (mixed["limit"], mixed["offset"]) == (2, 2)  # limit wins, page counts in limits
    both = client.get("/api/v1/sessions", {"offset": 1, "page": 3, "per_page": 2}).json()
    assert [s["session_id"] for s in both["items"]] == ["s-005", "s-004"]  # offset wins


@pytest.mark.parametrize(
    "query",
    [
        {"per_page": 0},
        {"per_page": 1000},
        {"page": 0},
        {"limit": 0},
        {"limit": 1000},
        {"offset": -1},
        {"offset": 10**30},
    ],
)
def test_bad_paging_is_a_422(client, site, query):
    assert client.get("/api/v1/sessions", query).status_code == 422


def test_session_detail_has_the_messages(client, sample):
    response = client.get(f"/api/v1/sessions/{sample}")
    assert response.status_code == 200
    body = response.json()
    assert body["title"] == "Event store on DuckDB, importer and first blocked task"
    assert body["started_at"] == "2026-11-20T09:00:00Z"
    assert body["message_count"] == len(body["messages"]) == 12
    assert [m["index"] for m in body["messages"]] == list(range(12))
    bash = body["messages"][5]["tool_calls"][0]
    assert bash["name"] == "Bash"
    assert bash["input"]["command"] == "python -m axiom migrate"
    assert body["messages"][6]["meta"]["tool_results"][0]["is_error"] is True
    assert "<script>" in body["messages"][11]["text"]  # JSON carries the text as it is


def test_an_unknown_session_is_a_json_404(client, site):
    response = client.get("/api/v1/sessions/nope")
    assert response.status_code == 404
    assert response.json() == {"detail": "session 'nope' not found"}


def test_openapi_lists_the_paths(client, site):
    schema = client.get("/api/openapi.json").json()
    assert schema["info"]["title"] == "Axiom"
    assert {"/api/v1/health", "/api/v1/sessions", "/api/v1/sessions/{session_id}"} <= set(
        schema["paths"]
    )


def test_the_docs_page_loads_only_local_files(client, site):
    response = client.get("/api/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert not re.search(r"(https?:)?//", html), "the docs page must not reference other hosts"
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    static = [a for a in assets if a.startswith("/static/")]
    assert len(static) == 4  # swagger css + js, its init script, the icon
    assert "/static/axiom/favicon.svg" in static
    for url in static:
        assert finders.find(url.removeprefix("/static/")), f"{url} is not a static file"
    assert '"url": "/api/openapi.json"' in html
