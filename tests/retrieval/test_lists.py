"""List questions: the turns an entry candidate cites are lifted by it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.retrieval.lists import CITED_BOOST, asks_for_list, candidate_kinds
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.retrieval.conftest import HashEmbedder, chat, serve

SESSIONS = [
    chat(
        "s1",
        "2023-05-08T13:56:00",
        [
            ("Caroline", "Melanie, which books have you read this year? Any good books read?"),
            ("Melanie", "I'm reading Becoming by Michelle Obama, it is so inspiring."),
            ("Caroline", "The support group meeting gave me a lot of courage."),
        ],
    ),
    chat(
        "s2",
        "2023-06-27T10:00:00",
        [
            ("Melanie", "I finished Charlotte's Web with the kids, we all cried."),
            ("Caroline", "Books about friendship are the best, I read those all the time."),
            ("Melanie", "I signed up for a pottery class, clay is so calming."),
        ],
    ),
]


@pytest.fixture
def friends(
    tmp_path: Path, db: Database, store: LanceStore, embedder: HashEmbedder
) -> Iterator[SearchService]:
    yield from serve(tmp_path, db, store, embedder, SESSIONS)


def test_list_questions_by_their_form() -> None:
    assert asks_for_list("What books has Melanie read?")
    assert asks_for_list("Which cities has Jon visited?")
    assert asks_for_list("What activities does Melanie partake in?")
    assert asks_for_list("What kind of books does Caroline have in her library?")
    assert asks_for_list("Where has Melanie camped?")
    assert not asks_for_list("What did Caroline research?")
    assert not asks_for_list("Which song motivates Caroline to be courageous?")
    assert not asks_for_list("How long has Melanie been practicing art?")
    assert not asks_for_list("What is Caroline's relationship status?")
    assert candidate_kinds("What books has Melanie read?", ("message",)) == ("message", "entry")
    assert candidate_kinds("What did Caroline research?", ("message",)) == ("message",)
    both = ("entry", "message")
    assert candidate_kinds("What books has Melanie read?", both) == both


def _messages(service: SearchService, query: str) -> dict[tuple[str, int], tuple[float, float]]:
    """(session, index) -> (score, cited lift) of every message hit of a message search.
    Full-text: there the lift is added to the score as it is (the hybrid ranking weighs it
    in the cue blend, `tests/retrieval/test_cue_blend.py`)."""
    found = service.search(query, k=10, mode="fts", kinds=("message",))
    assert {h.kind for h in found.hits} == {"message"}
    return {
        (str(h.session_id), int(h.message_index or 0)): (h.score, h.breakdown["cited_lift"])
        for h in found.hits
    }


def test_a_list_question_lifts_the_turns_its_entries_cite(friends: SearchService) -> None:
    query = "What books has Melanie read?"
    hits = _messages(friends, query)
    entries = friends.search(query, k=10, mode="fts", kinds=("entry", "message")).hits
    reading = next(h for h in entries if h.kind == "entry" and "Becoming" in h.summary)
    answer, asked = hits[("s1", 1)], hits[("s1", 0)]  # Melanie's answer; Caroline's question
    assert answer[1] == pytest.approx(CITED_BOOST * reading.score, abs=1e-3)
    assert asked[1] == 0.0  # a question is no memory: no entry cites it
    # In the default (hybrid) ranking the answer comes above the question that repeats
    # the query's words.
    ranked = friends.search(query, k=10, kinds=("message",)).hits
    order = [(str(h.session_id), h.message_index) for h in ranked]
    assert order.index(("s1", 1)) < order.index(("s1", 0))


def test_other_questions_draw_no_entries_and_lift_nothing(friends: SearchService) -> None:
    for query in ("What did Melanie read?", "books Melanie read"):
        found = friends.search(query, k=10, kinds=("message",))
        assert found.candidates <= sum(len(s.messages) for s in SESSIONS)
        assert all(h.breakdown["cited_lift"] == 0.0 for h in found.hits)
    listed = friends.search("What books has Melanie read?", k=10, kinds=("message",))
    assert listed.candidates > sum(len(s.messages) for s in SESSIONS)
