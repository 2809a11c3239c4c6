"""Pseudo-relevance feedback: the first hits' distinctive words lift the turns sharing them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from axiom.retrieval import feedback
from axiom.retrieval.candidates import Doc, SearchUnavailable
from axiom.retrieval.feedback import FEEDBACK_HITS, MIN_POOL, expansion_terms
from axiom.retrieval.scoring import Facts, Scored
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.retrieval.conftest import HashEmbedder, chat, serve

SESSIONS = [
    chat(
        "s1",
        "2023-05-08T13:56:00",
        [
            ("Melanie", "I relax by playing my clarinet every evening."),
            ("Caroline", "Work makes it hard to relax lately."),
            ("Melanie", "Do you relax on weekends?"),
            ("Caroline", "Relax, the exam will go fine."),
            ("Melanie", "I relax with a long walk."),
        ],
    ),
    chat(
        "s2",
        "2023-06-27T10:00:00",
        [
            ("Caroline", "Hello there."),
            ("Melanie", "The clarinet recital went great, everyone cheered."),
            ("Caroline", "The beach trip went great, everyone swam."),
        ],
    ),
]
RECITAL, BEACH = "The clarinet recital", "The beach trip"


@pytest.fixture
def chats(tmp_path: Path, db: Database, store: LanceStore, embedder: HashEmbedder) -> Iterator:
    yield from serve(tmp_path, db, store, embedder, SESSIONS)


def _scored(terms: str) -> Scored:
    doc = Doc(id=f"message:s:{terms}", kind="message", own_terms=terms)
    return Scored(hit=cast(Any, None), doc=doc, fact=Facts(), numbers=cast(Any, None))


def test_expansion_terms_are_the_top_hits_rare_words_not_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(feedback, "MIN_POOL", 10)
    top = [_scored("relax clarinet common ab"), _scored("relax clarinet recit common")]
    top += [_scored(f"filler{i}") for i in range(FEEDBACK_HITS - 2)]
    rest = [_scored("common"), _scored("beach")] + [_scored(f"other{i}") for i in range(5)]
    terms = expansion_terms(top + rest, {"relax"})
    assert "relax" not in terms  # asked already
    assert "ab" not in terms  # too short to say anything
    assert "common" not in terms  # in 3 of 12 candidates: more than COMMON_SHARE
    assert "beach" not in terms  # only below the top hits
    assert terms[0] == "clarinet"  # two top hits hold it
    assert terms[1:3] == ["recit", "filler0"]  # then the best-ranked hit's words first


def test_no_words_no_expansion() -> None:
    assert expansion_terms([], {"relax"}) == []
    assert expansion_terms([_scored("relax")] * MIN_POOL, {"relax"}) == []


def test_a_small_pool_asks_nothing_more() -> None:
    """In a small store the first hits are the answer: idf over a handful of candidates
    says nothing, and a question beside the answer rose above it."""
    pool = [_scored(f"relax word{i}") for i in range(MIN_POOL)]
    assert expansion_terms(pool, {"relax"})
    assert expansion_terms(pool[:-1], {"relax"}) == []


def test_a_turn_sharing_the_top_hits_words_is_lifted(
    chats: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feedback, "MIN_POOL", 1)  # the store is small: idf over 5 turns
    found = chats.search("How do you relax?", k=10, kinds=("message",))
    assert "feedback" in found.timings_ms  # one more full-text query
    texts = [h.summary for h in found.hits]
    recital = next(i for i, t in enumerate(texts) if RECITAL in str(t))
    beach = next(i for i, t in enumerate(texts) if BEACH in str(t))
    # Neither says "relax"; the recital shares "clarinet" with the top hit.
    assert recital < beach
    lift = {i: found.hits[i].breakdown["feedback"] for i in (recital, beach)}
    assert lift[recital] > lift[beach]


def test_only_the_hybrid_z_score_ranking_asks_again(chats: SearchService) -> None:
    for mode, fusion in (("fts", "zscore"), ("vector", "zscore"), ("hybrid", "rrf")):
        found = chats.search("How do you relax?", k=10, mode=mode, fusion=fusion)
        assert "feedback" not in found.timings_ms
        assert all(h.breakdown["feedback"] == 0 for h in found.hits)


def test_a_failed_feedback_query_leaves_the_first_ranking(
    chats: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second query is an extra: if it fails (a forget swapped the table between the
    two), the search answers with the ranking it had, not an error."""
    question = "How do you relax?"
    monkeypatch.setattr(feedback, "MIN_POOL", 10_000)  # no feedback: the first ranking
    plain = [h.summary for h in chats.search(question, k=10, kinds=("message",)).hits]
    monkeypatch.setattr(feedback, "MIN_POOL", 1)
    first_query = chats.candidates.lexical_rows
    calls: list[list[str]] = []

    def second_fails(table: Any, terms: list[str], kinds: Any, **how: Any) -> Any:
        calls.append(terms)
        if len(calls) > 1:
            raise SearchUnavailable("the table was swapped")
        return first_query(table, terms, kinds, **how)

    monkeypatch.setattr(chats.candidates, "lexical_rows", second_fails)
    found = chats.search(question, k=10, kinds=("message",))
    assert len(calls) == 2  # the feedback query was asked, and failed
    assert [h.summary for h in found.hits] == plain
    assert all(h.breakdown["feedback"] == 0 for h in found.hits)
