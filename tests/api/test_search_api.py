"""REST API: GET /api/v1/search (+ budget), /search/timeline and /search/details."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.ingest.importer import import_paths
from axiom.outbox.service import configured_writer
from axiom.pipeline.factory import configured_pipeline
from axiom.pipeline.process import process_session
from config import stores


@pytest.fixture
def searchable(site, sample_session: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The sample Claude Code session, processed and embedded with the default model."""
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    (sid,) = import_paths(site, [sample_session]).session_ids
    process_session(site, sid, configured_pipeline())
    assert configured_writer(site).drain().remaining == 0
    stores.reset()
    yield sid
    stores.reset()


def test_search_returns_hits_with_breakdowns_tiers_and_citations(client, searchable) -> None:
    response = client.get("/api/v1/search", {"q": "publish blocked", "k": 5})
    assert response.status_code == 200
    data = response.json()
    assert data["mode"] == "hybrid" and data["k"] == 5 and 0 < len(data["hits"]) <= 5
    assert data["unindexed"] == 0  # everything is embedded: nothing to announce
    for hit in data["hits"]:
        assert hit["kind"] in ("entry", "message")
        assert hit["tier"] in ("high", "suggested", "none")
        # the core's one rule: a tier shown unless the memory is set aside
        set_aside = hit["status"] in ("deprecated", "superseded")
        assert hit["relevance"] == ("none" if set_aside else hit["tier"])
        assert {"views", "stage_weight", "status_penalty", "recency", "match"} <= set(
            hit["breakdown"]
        )
        cited = client.get(f"/api/v1/citations/{hit['citation']}")
        assert cited.status_code == 200 and cited.json()["session_id"] == searchable
    assert "disclosure" not in data


@pytest.mark.parametrize("mode", ["fts", "vector"])
def test_modes(client, searchable, mode: str) -> None:
    data = client.get("/api/v1/search", {"q": "publish blocked", "mode": mode}).json()
    assert data["mode"] == mode and data["hits"]


def test_a_budget_adds_the_layers_that_fit(client, searchable) -> None:
    small = client.get("/api/v1/search", {"q": "publish", "k": 5, "budget": 60}).json()
    large = client.get("/api/v1/search", {"q": "publish", "k": 5, "budget": 50_000}).json()
    assert small["disclosure"]["used_tokens"] <= 60 and small["disclosure"]["omitted"]
    items = large["disclosure"]["items"]
    assert items and items[0]["layers"] == [1, 2, 3] and "detail" in items[0]


def test_timeline_and_details_of_one_hit(client, searchable) -> None:
    hit = client.get("/api/v1/search", {"q": "publish", "k": 1}).json()["hits"][0]
    line = client.get("/api/v1/search/timeline", {"id": hit["id"]})
    detail = client.get("/api/v1/search/details", {"id": hit["id"]})
    assert line.status_code == 200 and any(m["hit"] for m in line.json()["messages"])
    assert detail.status_code == 200 and detail.json()["kind"] == hit["kind"]
    assert client.get("/api/v1/search/details", {"id": "entry:ent_nope"}).status_code == 404
    bogus = client.get("/api/v1/search/details", {"id": "bogus"})
    assert bogus.status_code == 404 and "not a search hit id" in bogus.json()["detail"]


def test_bad_queries_are_422_with_a_reason(client, searchable) -> None:
    empty = client.get("/api/v1/search", {"q": "   "})
    assert empty.status_code == 422  # the schema asks for a non-blank q
    assert client.get("/api/v1/search").status_code == 422
    assert client.get("/api/v1/search", {"q": "x", "k": 0}).status_code == 422
    assert client.get("/api/v1/search", {"q": "x", "mode": "magic"}).status_code == 422
    long = client.get("/api/v1/search", {"q": "publish " * 1250})
    assert long.status_code == 200 and "only the first" in long.json()["warnings"][0]


def test_no_index_yet_is_503_saying_what_to_run(client, site, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("AXIOM_EMBEDDER", "e5")
    stores.reset()
    response = client.get("/api/v1/search", {"q": "anything"})
    stores.reset()
    assert response.status_code == 503
    assert "outbox drain" in response.json()["detail"]
    assert str(site.path.parent) not in response.json()["detail"]  # no server path


def test_an_unknown_model_is_503(client, site, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("AXIOM_EMBEDDER", "gpt-embed-9")
    stores.reset()
    response = client.get("/api/v1/search", {"q": "anything"})
    stores.reset()
    assert response.status_code == 503 and "gpt-embed-9" in response.json()["detail"]
