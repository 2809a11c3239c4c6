"""Pseudo-relevance feedback: the first hits' distinctive words lift the turns sharing them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from axiom.retrieval import feedback
from axiom.retrieval.candidates import (
    FEEDBACK_COLUMNS,
    Doc,
    SearchUnavailable,
    feedback_views,
    lexical_views,
    row_docs,
)
from axiom.retrieval.feedback import FEEDBACK_HITS, MIN_POOL, expansion_terms
from axiom.retrieval.results import SearchResult
from axiom.retrieval.scoring import Facts, Scored
from axiom.retrieval.search import SearchService
from axiom.store.db import Database
from axiom.vectors.lance_store import LanceStore
from axiom.vectors.lexical import DEFAULT_ANALYZER
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
QUESTION = "How do you relax?"


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
    found = chats.search(QUESTION, k=10, kinds=("message",))
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
        found = chats.search(QUESTION, k=10, mode=mode, fusion=fusion)
        assert "feedback" not in found.timings_ms
        assert all(h.breakdown["feedback"] == 0 for h in found.hits)


def _with_second_query_after(
    chats: SearchService, monkeypatch: pytest.MonkeyPatch, meanwhile: Callable[[], None]
) -> tuple[list[Any], SearchResult, int]:
    """The question's hits without feedback; then asked with feedback, `meanwhile` run
    (it may raise) just before the feedback query; and the full-text queries asked."""
    monkeypatch.setattr(feedback, "MIN_POOL", 10_000)  # no feedback: the first ranking
    plain = [h.summary for h in chats.search(QUESTION, k=10, kinds=("message",)).hits]
    monkeypatch.setattr(feedback, "MIN_POOL", 1)
    first_query = chats.candidates.lexical_rows
    calls: list[list[str]] = []

    def second_after(table: Any, terms: list[str], kinds: Any, **how: Any) -> Any:
        calls.append(terms)
        if len(calls) > 1:
            meanwhile()
        return first_query(table, terms, kinds, **how)

    monkeypatch.setattr(chats.candidates, "lexical_rows", second_after)
    return plain, chats.search(QUESTION, k=10, kinds=("message",)), len(calls)


def test_a_failed_feedback_query_leaves_the_first_ranking(
    chats: SearchService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second query is an extra: if it fails (a forget swapped the table between the
    two), the search answers with the ranking it had, not an error."""

    def fail() -> None:
        raise SearchUnavailable("the table was swapped")

    plain, found, asked = _with_second_query_after(chats, monkeypatch, fail)
    assert asked == 2  # the feedback query was asked, and failed
    assert [h.summary for h in found.hits] == plain
    assert all(h.breakdown["feedback"] == 0 for h in found.hits)


def test_the_feedback_rows_name_the_documents_step_1_found_by_their_address(
    chats: SearchService,
) -> None:
    """The feedback query reads only each row's kind and score (no id columns): a row
    step 1 returned names its document by its address, so the pool's candidates get the
    scores that reading their ids gives; any other row counts in its view's scale under
    its address alone."""
    table, kinds, per = chats.candidates.table(), ("message",), chats.per_source
    first, _ = chats.candidates.lexical_rows(table, ["relax"], kinds)
    dense = chats.candidates.dense_rows(table, chats.embed_query("relax"), kinds)
    terms = DEFAULT_ANALYZER("relax clarinet recital beach")
    full, _ = chats.candidates.lexical_rows(table, terms, kinds)
    lean, _ = chats.candidates.lexical_rows(table, terms, kinds, columns=FEEDBACK_COLUMNS)
    assert {key for row in lean for key in row} == {"kind", "_rowid", "_score"}
    read = lexical_views(full, kinds, {}, per)
    # Step 1 returned every row of this small store (the kNN takes them all).
    assert feedback_views(lean, kinds, row_docs(first + dense), per) == read
    # Only the rows the first full-text query returned: the others keep their scores.
    named = row_docs(first)
    partial = feedback_views(lean, kinds, named, per)
    for view in read:
        assert [s for _d, s in partial[view]] == [s for _d, s in read[view]]
        known = [(d, s) for d, s in partial[view] if not str(d).startswith("row:")]
        assert known == [(d, s) for d, s in read[view] if d in set(named.values())]
    assert any(str(d).startswith("row:") for d, _s in partial["lexical_own"])  # the recital


def test_a_table_changed_between_the_two_queries_leaves_the_first_ranking(
    chats: SearchService,
    store: LanceStore,
    embedder: HashEmbedder,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Row addresses hold within one table version: when the writer commits between step 1
    and the feedback query (a compaction may move rows), the feedback is left out rather
    than lifting whichever documents the addresses now name."""

    def writer_commits() -> None:
        text = "A task row written meanwhile."
        row = {"id": "task:t1", "kind": "task", "text": text}
        with store.writer_lock():
            store.upsert([{**row, "vector": embedder.embed([text])[0]}])
        time.sleep(1.1)  # the read handle looks for new versions once a second

    plain, found, asked = _with_second_query_after(chats, monkeypatch, writer_commits)
    assert asked == 2  # the feedback query ran, on a newer version
    assert [h.summary for h in found.hits] == plain
    assert all(h.breakdown["feedback"] == 0 for h in found.hits)
