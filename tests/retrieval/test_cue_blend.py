"""The cue blend: the hybrid z-score ranking is one linear score over views and cues."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.retrieval.cue_blend import (
    CITED_WEIGHT,
    QUESTION_WEIGHT,
    SUBJECT_WEIGHT,
    TIME_WEIGHT,
    VIEW_WEIGHTS,
    blends,
)
from axiom.retrieval.lists import CITED_BOOST
from axiom.retrieval.query import MODE_VIEWS
from axiom.retrieval.search import SearchService
from axiom.retrieval.subjects import SUBJECT_BOOST
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.retrieval.conftest import HashEmbedder, serve
from tests.retrieval.test_lists import SESSIONS  # Caroline and Melanie talk about books


@pytest.fixture
def friends(tmp_path: Path, db: Database, store: LanceStore, embedder: HashEmbedder) -> Iterator:
    yield from serve(tmp_path, db, store, embedder, SESSIONS)


def test_only_the_hybrid_z_score_ranking_blends() -> None:
    assert blends(MODE_VIEWS["hybrid"], "zscore")
    assert not blends(MODE_VIEWS["hybrid"], "rrf")
    assert not blends(MODE_VIEWS["fts"], "zscore")
    assert not blends(MODE_VIEWS["vector"], "zscore")


def _linear(breakdown: dict) -> float:
    """The linear score from a hit's breakdown (see `axiom.retrieval.cue_blend`), with
    the feedback query's part (`axiom.retrieval.feedback`)."""
    views = sum(VIEW_WEIGHTS[n] * v["normalized"] for n, v in breakdown["views"].items())
    subject = SUBJECT_WEIGHT * (breakdown["subject_boost"] > 1)
    when = TIME_WEIGHT * (breakdown["time_boost"] > 1)
    cited = CITED_WEIGHT * breakdown["cited_lift"] / CITED_BOOST
    asks = QUESTION_WEIGHT * breakdown["asks"]
    return views + subject + when + cited - asks + breakdown["feedback"]


@pytest.mark.parametrize(
    "query", ["What books has Melanie read?", "When did Melanie read a book?", "books"]
)
def test_hybrid_hits_rank_by_their_linear_score(friends: SearchService, query: str) -> None:
    hits = friends.search(query, k=10, kinds=("message",)).hits
    assert len(hits) == sum(len(s.messages) for s in SESSIONS)
    blended = [h.breakdown["cue_blend"] for h in hits]
    assert blended == sorted(blended, reverse=True)  # messages: one stage, one status
    for hit in hits:
        assert hit.breakdown["cue_blend"] == pytest.approx(
            _linear(hit.breakdown), abs=1e-2
        )  # rounded
    assert hits[0].score == pytest.approx(hits[0].breakdown["recency"] * 0.9, abs=1e-3)


def test_a_named_persons_turns_rank_above_the_others(friends: SearchService) -> None:
    hits = friends.search("What has Melanie read?", k=10, kinds=("message",)).hits
    speakers = [h.meta["speaker"] for h in hits]
    # Caroline's turns say "books" and "read" too; Melanie's are ranked first all the same,
    # but for one that shares no word with the question ("I finished Charlotte's Web with
    # the kids"): the dense query leaves the name out (`axiom.retrieval.dense_query`), so a
    # turn of Caroline's about reading, lifted by her entry, may pass it.
    assert speakers[:2] == ["Melanie"] * 2
    assert speakers.index("Caroline") >= 2 and speakers.count("Melanie") == 3
    for hit in hits:
        boosted = hit.breakdown["subject_boost"] == 1 + SUBJECT_BOOST
        assert boosted == (hit.meta["speaker"] == "Melanie")


def test_a_turn_that_asks_a_question_is_marked_where_the_cues_read_the_texts(
    friends: SearchService,
) -> None:
    named = friends.search("What has Melanie read?", k=10, kinds=("message",)).hits
    asking = {h.summary for h in named if h.breakdown["asks"]}
    assert asking == {
        "Caroline: Melanie, which books have you read this year? Any good books read?"
    }
    # A question that names no one and does not ask when reads no text: nothing is marked.
    plain = friends.search("books read", k=10, kinds=("message",)).hits
    assert not any(h.breakdown["asks"] for h in plain)


def test_other_modes_rank_as_before(friends: SearchService) -> None:
    for mode, fusion in (("fts", "zscore"), ("vector", "zscore"), ("hybrid", "rrf")):
        found = friends.search("What has Melanie read?", k=10, mode=mode, fusion=fusion)
        assert all(h.breakdown["cue_blend"] is None for h in found.hits)
