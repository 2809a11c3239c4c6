"""Corroboration: the same memory restated in other words counts, different facts do not."""

from __future__ import annotations

import pytest

from axiom.extract.types import normalize_title
from axiom.graduation.corroboration import MemoryIndex, MemoryWords, overlap, same_memory


def words(title: str, entry_type: str = "fact") -> MemoryWords:
    return MemoryWords.of(entry_type, title)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Jon: I'm passionate about dancing and it brings me so much joy and fulfillment",
            "Jon: Dancing brings me joy and it was nice to be reminded why I'm passionate about it",
        ),
        (
            "Caroline: Next month I'm having an LGBTQ art show with my paintings - can't wait",
            "Caroline: I'm putting together an LGBTQ art show next month and I'm gonna show my"
            " paintings",
        ),
        (
            "The event store uses DuckDB with JSON columns",
            "Our event store uses DuckDB JSON columns",
        ),
    ],
)
def test_restatements_are_the_same_memory(a: str, b: str) -> None:
    assert same_memory(words(a), words(b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # a short title is a subset of many others: token_set_ratio would say 100
        ("Melanie: Yeah, I love to", "Melanie: I love how art lets us get our emotions out"),
        # shares "putting together ... show", says something else
        (
            "Caroline: I'm putting together an LGBTQ art show next month and I'm gonna show my"
            " paintings",
            "Caroline: We're putting together a talent show for the kids next month",
        ),
        # the same class, a different fact; time words do not count
        (
            "Melanie: I just signed up for a pottery class yesterday",
            "Melanie: Yeah, I made it in pottery class yesterday",
        ),
        ("The event store uses DuckDB", "The search index uses LanceDB"),
    ],
)
def test_different_facts_are_not(a: str, b: str) -> None:
    assert not same_memory(words(a), words(b))


def test_type_and_speaker_must_match() -> None:
    title = "Jon: I'm passionate about dancing and it brings me joy"
    assert overlap(words(title), words(title)) == 1.0
    assert overlap(words(title), words(title, "decision")) == 0.0
    assert overlap(words(title), words(title.replace("Jon:", "Gina:"))) == 0.0


TITLES = [
    "Jon: I'm passionate about dancing and it brings me so much joy and fulfillment",
    "Jon: Dancing brings me joy and it was nice to be reminded why I'm passionate about it",
    "Jon: I'm passionate about dancing",
    "Gina: Dancing brings me joy and I'm passionate about it",
    "Caroline: Next month I'm having an LGBTQ art show with my paintings - can't wait",
    "Caroline: I'm putting together an LGBTQ art show next month and I'm gonna show my paintings",
    "Caroline: We're putting together a talent show for the kids next month",
    "Melanie: Yeah, I love to",
    "Melanie: I love how art lets us get our emotions out",
    "The event store uses DuckDB with JSON columns",
    "Our event store uses DuckDB JSON columns",
    "The event store uses DuckDB",
    "the event store uses duckdb",
    "The search index uses LanceDB",
]


def test_the_index_finds_what_comparing_with_every_title_finds() -> None:
    pool = [(n, normalize_title(t), words(t)) for n, t in enumerate(TITLES)]
    index = MemoryIndex(pool)
    for title in TITLES:
        key, mine = normalize_title(title), words(title)
        expected = [n for n, k, other in pool if k == key or same_memory(mine, other)]
        assert index.matching(key, mine) == expected
    assert index.matching(normalize_title(TITLES[0]), words(TITLES[0])) == [0, 1]  # restated
    assert index.matching(normalize_title(TITLES[11]), words(TITLES[11])) == [9, 10, 11, 12]
    assert index.matching("nothing like it", words("Nothing like it")) == []
