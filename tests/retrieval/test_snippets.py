"""Snippets: a window around the first matched word, matched words as their own pieces."""

from __future__ import annotations

from axiom.retrieval.snippets import _word_terms, forget_words, snippet
from axiom.vectors.lexical import DEFAULT_ANALYZER


def terms(query: str) -> set[str]:
    return set(DEFAULT_ANALYZER(query))


def test_matched_words_are_marked_through_stems() -> None:
    pieces = snippet("We were painting the shed.", terms("paint"), DEFAULT_ANALYZER)
    assert pieces == [("We were ", False), ("painting", True), (" the shed.", False)]


def test_a_long_text_is_cut_around_the_first_match() -> None:
    text = "filler " * 200 + "the needle is here " + "tail " * 200
    pieces = snippet(text, terms("needle"), DEFAULT_ANALYZER, width=80)
    joined = "".join(p for p, _ in pieces)
    assert pieces[0] == ("…", False) and pieces[-1] == ("…", False)
    assert ("needle", True) in pieces and len(joined) <= 84


def test_korean_words_match_through_ngrams() -> None:
    pieces = snippet("오늘 배포했습니다 끝", terms("배포"), DEFAULT_ANALYZER)
    assert ("배포했습니다", True) in pieces


def test_no_match_gives_the_start_of_the_text() -> None:
    assert snippet("alpha beta", terms("gamma"), DEFAULT_ANALYZER) == [("alpha beta", False)]


def test_forgetting_drops_the_words_kept_from_snippets() -> None:
    snippet("the zebracorn vault opened", {"vault"}, DEFAULT_ANALYZER)
    assert _word_terms.cache_info().currsize > 0
    forget_words()
    assert _word_terms.cache_info().currsize == 0
