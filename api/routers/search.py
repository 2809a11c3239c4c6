"""Search with progressive disclosure: `/search` (layer 1, or all layers under a token
budget), `/search/timeline` (layer 2) and `/search/details` (layer 3) for one hit."""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from api.errors import NotFound
from api.schemas import NOT_BLANK, responses
from axiom.retrieval.disclosure import MAX_BUDGET, details, disclose, parse_hit_id, timeline
from axiom.retrieval.query import MAX_K
from config.stores import get_database, search_service

router = Router(tags=["search"])


class SearchParams(Schema):
    q: str = Field(
        ..., pattern=NOT_BLANK, description="what to look for, not blank (cut at 2,000 characters)"
    )
    k: int = Field(10, ge=1, le=MAX_K, description="hits to return")
    mode: Literal["hybrid", "fts", "vector"] = "hybrid"
    budget: int | None = Field(
        None,
        ge=1,
        le=MAX_BUDGET,
        description="token budget: adds `disclosure` with the layers that fit",
    )


class HitParams(Schema):
    id: str = Field(..., description="a hit id: entry:<id> or message:<session>:<index>")


@router.get("/search", response=responses(dict[str, Any]))
def search(request: HttpRequest, params: Query[SearchParams]) -> dict:
    """Hybrid search over memory entries and messages: each hit has its score breakdown,
    a confidence tier (high / suggested / none) and a citation id."""
    with search_service() as service:
        result = service.search(params.q, k=params.k, mode=params.mode)
        data = result.to_json()
        if params.budget is not None:
            data["disclosure"] = disclose(service.db, result, params.budget).to_json()
    return data


def _hit_id(raw: str) -> str:
    """`raw` if it can name a hit; otherwise 404 — like a well-formed id that names none
    (any string is a valid `id` in the schema, so a malformed one is not a 422)."""
    try:
        parse_hit_id(raw)
    except ValueError as exc:
        raise NotFound(str(exc)) from exc
    return raw


@router.get("/search/timeline", response=responses(dict[str, Any], 404))
def search_timeline(request: HttpRequest, params: Query[HitParams]) -> dict:
    """Layer 2: the messages around a hit in its session."""
    hit_id = _hit_id(params.id)
    found = get_database().lookup(lambda conn: timeline(conn, hit_id))
    if found is None:
        raise NotFound(f"no timeline for {hit_id!r}")
    return found


@router.get("/search/details", response=responses(dict[str, Any], 404))
def search_details(request: HttpRequest, params: Query[HitParams]) -> dict:
    """Layer 3: an entry with its evidence and citations, or a whole message."""
    hit_id = _hit_id(params.id)
    found = get_database().lookup(lambda conn: details(conn, hit_id))
    if found is None:
        raise NotFound(f"{hit_id!r} not found")
    return found
