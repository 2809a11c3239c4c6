"""The question's cues in the rerank: who it names, and whether it asks when."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.retrieval.search import SearchService
from axiom.retrieval.subjects import (
    SUBJECT_BOOST,
    TIME_BOOST,
    asks_something,
    asks_when,
    name_spans,
    named_subjects,
    places_in_time,
    subject_key,
)
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from tests.retrieval.conftest import HashEmbedder, chat, serve


def test_names_are_capitalized_words_that_do_not_open_a_sentence() -> None:
    assert named_subjects("What did Caroline research?") == {"caroline"}
    assert named_subjects("What do Melanie's kids like?") == {"melanie"}
    assert named_subjects("Where did Jon go? Did Gina come along") == {"jon", "gina"}
    assert named_subjects("Why did I pick Redis? I forgot") == {"redis"}
    assert named_subjects("what did i say about the cache") == frozenset()
    assert named_subjects("배포는 언제 했나요?") == frozenset()
    assert subject_key("Melanie’s kids") == "melanie"


def test_name_spans_cover_the_name_with_its_possessive() -> None:
    query = "What do Melanie's kids and Jon like?"
    assert [(query[s:e], name) for s, e, name in name_spans(query)] == [
        ("Melanie's", "melanie"),
        ("Jon", "jon"),
    ]


def test_turns_that_ask_a_question() -> None:
    assert asks_something("Wow! What did you paint? [image: a photo of a lake]")
    assert asks_something("그거 어디서 샀어？")
    assert not asks_something("I painted a sunset. [image: a photo of a sunset]")
    assert not asks_something(None)
    assert asks_something('She asked "Why not?" and left.')
    assert asks_something("Really?! That's great")
    assert asks_something("元気ですか？はい")  # CJK: no space after the question mark
    for code in (
        "See https://x.io/search?q=lance for it.",
        "Use `user?.name` there.",
        "Then read user?.name instead.",
        "```sql\nSELECT * FROM t WHERE id = ?\n```",
    ):
        assert not asks_something(code), code


def test_when_questions_and_time_expressions() -> None:
    assert asks_when("When did Melanie paint a sunrise?")
    assert asks_when("How long has Caroline had her friends?")
    assert asks_when("배포는 언제 했나요?")
    assert not asks_when("What did Caroline research?")
    assert places_in_time("I went camping last weekend")
    assert places_in_time("We painted it in 2022.")
    assert places_in_time("어제 다녀왔어요")
    assert not places_in_time("I love painting sunsets")


FILLER = [
    ("Melanie", "I signed up for a pottery class, clay is so calming."),
    ("Caroline", "I'm researching adoption agencies for my family."),
    ("Melanie", "My daughter's birthday party had a dinosaur theme."),
    ("Caroline", "The support group meeting gave me a lot of courage."),
]
SESSIONS = [
    chat(
        "s1",
        "2023-05-08T13:56:00",
        [
            *FILLER,
            ("Caroline", "Where have you camped? I camped by the lake, camping there is the best."),
            ("Melanie", "We camped at the beach with the kids, it was lovely."),
        ],
    ),
    chat(
        "s2",
        "2023-06-27T10:00:00",
        [
            *FILLER,
            ("Melanie", "Took the kids camping in the mountains last weekend!"),
            ("Caroline", "I camped in the mountains once, camping there was wonderful."),
        ],
    ),
]


@pytest.fixture
def friends(
    tmp_path: Path, db: Database, store: LanceStore, embedder: HashEmbedder
) -> Iterator[SearchService]:
    yield from serve(tmp_path, db, store, embedder, SESSIONS)


def _top(service: SearchService, query: str, k: int = 3) -> list[tuple[str, str]]:
    """(session, speaker) of the top k message hits."""
    hits = service.search(query, k=k, kinds=("message",)).hits
    return [(str(h.session_id), h.meta["speaker"]) for h in hits]


def test_naming_a_person_brings_their_turn_of_another_session_into_the_top(
    friends: SearchService,
) -> None:
    # Lower-case, the name is not recognized as one: Caroline's two camping turns, which
    # repeat the query's words, outrank what Melanie said in the second session.
    assert ("s2", "Melanie") not in _top(friends, "where has melanie camped")
    named = _top(friends, "Where has Melanie camped?")
    assert {("s1", "Melanie"), ("s2", "Melanie")} <= set(named)
    for hit in friends.search("Where has Melanie camped?", k=4, kinds=("message",)).hits:
        boost = hit.breakdown["subject_boost"]
        assert boost == (1 + SUBJECT_BOOST if hit.meta["speaker"] == "Melanie" else 1.0)


def test_a_when_question_lifts_the_turn_that_says_when(friends: SearchService) -> None:
    hits = friends.search("When did Melanie go camping with the kids?", k=4, kinds=("message",))
    boosts = {(h.session_id, h.message_index): h.breakdown["time_boost"] for h in hits.hits}
    assert boosts[("s2", 4)] == 1 + TIME_BOOST  # Melanie: "... last weekend!"
    assert boosts[("s1", 5)] == 1.0  # Melanie: "We camped at the beach with the kids"
    other = friends.search("Where did Melanie go camping with the kids?", k=4, kinds=("message",))
    assert all(h.breakdown["time_boost"] == 1.0 for h in other.hits)


def test_a_question_without_names_or_when_is_ranked_as_before(friends: SearchService) -> None:
    found = friends.search("camping in the mountains", k=4, kinds=("message",))
    assert all(h.breakdown["subject_boost"] == 1.0 for h in found.hits)
    assert all(h.breakdown["time_boost"] == 1.0 for h in found.hits)
