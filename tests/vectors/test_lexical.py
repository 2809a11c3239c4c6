"""The analyzer and BM25, in memory and served by LanceDB, for English and Korean."""

from __future__ import annotations

from pathlib import Path

import lancedb
import pyarrow as pa
import pytest

from axiom.vectors.lexical import BM25, Analyzer, LanceLexicalIndex, char_ngrams, porter_stem

KOREAN_DOCS = [
    "어제 회의에서 배포 일정을 결정했습니다",  # decided the deploy schedule at yesterday's meeting
    "점심으로 김치찌개를 먹었다",  # had kimchi stew for lunch
    "The deploy is blocked by the failing migration",
    "Redis를 브로커로 쓰기로 했다",  # decided to use Redis as the broker
]


def test_korean_inflected_words_match_their_stem() -> None:
    index = BM25(KOREAN_DOCS)
    # "결정" (decision) is inside "결정했습니다" (decided); "회의" (meeting) inside "회의에서".
    assert index.search("결정", 1)[0][0] == 0
    assert index.search("회의 결정", 1)[0][0] == 0
    assert index.search("김치찌개 먹고 싶다", 1)[0][0] == 1
    assert index.search("레디스 말고 Redis", 1)[0][0] == 3


def test_korean_runs_become_2_and_3_character_ngrams() -> None:
    assert char_ngrams("결정했다") == ["결정", "정했", "했다", "결정했", "정했다"]
    assert char_ngrams("것") == ["것"]
    assert Analyzer()("Redis를") == ["redi", "를"]


def test_english_words_meet_on_their_porter_stem() -> None:
    index = BM25(["She painted a sunrise last year", "We went hiking in the mountains"])
    assert index.search("paintings of sunrises", 1)[0][0] == 0
    assert index.search("hike", 1)[0][0] == 1
    for word, stem in [
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("relational", "relat"),
        ("hopping", "hop"),
        ("generalization", "gener"),
        ("happy", "happi"),
    ]:
        assert porter_stem(word) == stem


def test_stop_words_and_apostrophes_are_dropped() -> None:
    assert Analyzer()("When did Caroline's friends go to the museum?") == [
        "carolin",
        "friend",
        "go",
        "museum",
    ]
    assert BM25(["the cat"]).scores("what is the").tolist() == [0.0]


def test_bm25_prefers_rarer_terms_and_shorter_documents() -> None:
    index = BM25(["kiwi mango pear plum fig", "kiwi apple", "apple pear", "apple"])
    # Same term frequency: the shorter document wins.
    assert [doc for doc, _ in index.search("kiwi", 10)] == [1, 0]
    # "mango" is rarer than "apple", so the mango document outranks the apple ones.
    assert index.search("apple mango", 1)[0][0] == 0
    assert index.search("nothing here", 5) == []


def test_bm25_grows_by_adding_documents() -> None:
    index = BM25()
    assert index.scores("x").shape == (0,)
    index.add(["alpha beta"])
    index.add(["gamma"])
    assert len(index) == 2
    assert index.search("gamma")[0][0] == 1


def test_bm25_refuses_bad_parameters() -> None:
    with pytest.raises(ValueError):
        BM25(b=1.5)


def test_lancedb_serves_the_same_bm25_ranking(tmp_path: Path) -> None:
    docs = [*KOREAN_DOCS, "The migration failed again after the deploy", "deploy deploy deploy"]
    lex = LanceLexicalIndex()
    table = lancedb.connect(tmp_path).create_table(
        "docs",
        data=pa.table(
            {"doc": list(range(len(docs))), lex.column: [lex.terms_for(d) for d in docs]}
        ),
    )
    lex.create(table)
    memory = BM25(docs)
    for query in ["결정", "배포 회의", "deploy blocked migration", "Redis"]:
        served = [row["doc"] for row in lex.search(table, query, 3, columns=["doc"])]
        expected = [doc for doc, _ in memory.search(query, 3)]
        assert served == expected, query
    assert lex.search(table, "the of and", 3) == []
