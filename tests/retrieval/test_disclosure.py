"""Progressive disclosure: index lines, timelines and details chosen under a token budget."""

from __future__ import annotations

import pytest

from axiom.retrieval.disclosure import (
    details,
    disclose,
    estimate_tokens,
    index_item,
    parse_hit_id,
    timeline,
    tokens_of,
)
from axiom.retrieval.query import QueryError
from axiom.retrieval.search import SearchService


def test_tokens_are_a_quarter_of_the_characters() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert tokens_of({"a": 1}) == estimate_tokens('{"a":1}')


def test_hit_ids_parse_with_colons_in_session_ids() -> None:
    assert parse_hit_id("entry:ent_1") == ("entry", "ent_1", None, None)
    assert parse_hit_id("message:conv-26:session_1:7") == ("message", None, "conv-26:session_1", 7)
    for bad in ("task:1", "message:abc", "message::3", "entry:", "nonsense"):
        with pytest.raises(ValueError):
            parse_hit_id(bad)


def test_a_small_budget_gives_only_the_index_lines_that_fit(indexed: SearchService) -> None:
    result = indexed.search("redis cache", k=5)
    one_line = tokens_of(index_item(result.hits[0]))
    pack = disclose(indexed.db, result, one_line + 5)
    assert [i.id for i in pack.items] == [result.hits[0].id]
    assert pack.items[0].layers == [1]
    assert pack.omitted == [h.id for h in result.hits[1:]]
    assert pack.used <= pack.budget


def test_a_large_budget_adds_details_then_timelines(indexed: SearchService) -> None:
    result = indexed.search("redis cache decision", k=3)
    pack = disclose(indexed.db, result, 20_000)
    assert not pack.omitted and pack.used <= 20_000
    assert all(item.layers == [1, 2, 3] for item in pack.items)
    entry = next(i for i in pack.items if i.id.startswith("entry:"))
    assert entry.detail["kind"] == "entry" and entry.detail["evidence"]
    assert entry.detail["evidence"][0]["citation"] in entry.detail["citations"]
    assert entry.timeline["anchor_index"] == entry.detail["evidence"][0]["message_index"]
    data = pack.to_json()
    assert data["used_tokens"] == pack.used and len(data["items"]) == 3
    assert sum(i["tokens"] for i in data["items"]) == pack.used
    text = pack.render()
    assert "timeline of cache" in text and "evidence message" in text


def test_a_middle_budget_prefers_details_of_the_best_hits(indexed: SearchService) -> None:
    result = indexed.search("redis cache decision", k=3)
    index_cost = sum(tokens_of(index_item(h)) for h in result.hits)
    with indexed.db.read() as conn:
        top_detail = tokens_of(details(conn, result.hits[0].id))
    pack = disclose(indexed.db, result, index_cost + top_detail)
    assert pack.items[0].layers == [1, 3]
    assert all(item.timeline is None for item in pack.items)


def test_the_timeline_is_the_neighbourhood_of_a_message(indexed: SearchService) -> None:
    with indexed.db.read() as conn:
        line = timeline(conn, "message:cache:3", before=1, after=1)
        missing = timeline(conn, "message:cache:99")
        gone = details(conn, "entry:ent_nope")
    assert [m["index"] for m in line["messages"]] == [2, 3, 4]
    assert [m["hit"] for m in line["messages"]] == [False, True, False]
    assert all(m["citation"] for m in line["messages"])
    assert line["session_title"] == "session cache"
    assert missing is None and gone is None


def test_message_details_are_the_whole_message_with_its_citation(indexed: SearchService) -> None:
    with indexed.db.read() as conn:
        detail = details(conn, "message:ko:1")
        short = details(conn, "message:ko:1", max_chars=10)
    assert detail["text"].startswith("다음 주 화요일에 배포하기로 결정했습니다")
    assert detail["citation"].startswith("mem:") and detail["truncated"] is False
    assert detail["speaker"] == "assistant"
    assert len(short["text"]) == 10 and short["truncated"] is True


def test_a_budget_must_be_positive(indexed: SearchService) -> None:
    result = indexed.search("redis", k=1)
    for bad in (0, -5, 10**9):
        with pytest.raises(QueryError, match="budget"):
            disclose(indexed.db, result, bad)
