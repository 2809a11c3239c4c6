"""Invariants of fact extraction on arbitrary text: it never raises, every quote is a
substring of its message, and matching stays fast on adversarial input."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from axiom.extract.facts import find_decision_fields, find_fact
from axiom.extract.rules import RuleExtractor
from axiom.ingest.transcript import Message, Transcript

WORDS = st.sampled_from(
    [
        "I",
        "I'm",
        "we",
        "my",
        "our",
        "the",
        "is",
        "now",
        "was",
        "changed",
        "from",
        "to",
        "instead",
        "of",
        "no",
        "longer",
        "uses",
        "switched",
        "rate",
        "limit",
        "100",
        "per",
        "minute",
        "Postgres",
        "저는",
        "이제",
        "에서",
        "로",
        "바꿨어요",
        "입니다",
        "더",
        "이상",
        "를",
        "사용하지",
        "않습니다",
        ",",
        ".",
        "?",
        "!",
        "-",
        ";",
        ":",
        "'",
        '"',
        "my",
        "sister",
        "lives",
        "in",
        "went",
        "started",
        "love",
    ]
)
TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(WORDS, max_size=60).map(" ".join),
)


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_find_fact_never_raises_and_its_span_is_inside_the_sentence(text: str) -> None:
    found = find_fact(text, "Dana")
    find_decision_fields(text)
    if found is not None:
        assert 0 <= found.start <= found.end <= len(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_every_quote_is_a_substring_of_its_message(texts: list[str]) -> None:
    t = Transcript(
        "h",
        "demo",
        "locomo",
        tuple(Message(i, "user", x, meta={"speaker": "Dana"}) for i, x in enumerate(texts)),
    )
    result = RuleExtractor().extract(t)
    for entry in result.entries:
        for ev in entry.evidence:
            assert ev.quote and ev.quote in t.messages[ev.message_index].text


def test_matching_stays_fast_on_adversarial_sentences() -> None:
    sentences = [
        "I " * 1000,
        "the " * 600 + "is now",
        "a " * 900 + "instead of " + "b " * 900,
        "from " * 700 + "to " * 700,
        "my " * 1000 + "lives in",
        "가" * 1500 + "에서 " + "나" * 400 + "로 바꿨어요",
        "저는 " * 600 + "더 이상",
    ]
    started = time.perf_counter()
    for sentence in sentences:
        find_fact(sentence[:2000], "Dana")
        find_decision_fields(sentence[:2000])
    assert time.perf_counter() - started < 5.0  # catastrophic backtracking takes minutes
