"""Every rule pattern the extractor skips by a word test (`axiom.ingest.words`) holds one of
its words wherever it matches: the test can only skip sentences the pattern would not
match. Each pattern is tried on sentences it is written for, also upper-cased and with
the characters re.IGNORECASE matches to ASCII letters (ı, ſ, K)."""

from __future__ import annotations

import re

import pytest

from axiom.extract import facts, rules, task_text
from axiom.ingest.words import fold, has_any

SENTENCES = [
    "Decision: we ship on Fridays.",
    "We decided to use Postgres for the payments service.",
    "Finally I've decided against the rewrite.",
    "Let's go with Redis for the queue.",
    "We'll stick with pytest.",
    "I'll use ruff instead of flake8 from now on.",
    "We chose DuckDB. We picked uv. We opted for Django. I agreed to the plan.",
    "We went with the smaller model.",
    "We settled on weekly releases.",
    "We've switched from Jenkins to GitHub Actions.",
    "배포는 금요일에 하지 않기로 결정했습니다.",
    "캐시는 Redis로 가자.",
    "우리는 MySQL 대신 PostgreSQL을 쓰기로 했어요.",
    "TODO: write the migration guide",
    "The next step is to add retries.",
    "We still need to update the docs.",
    "할 일: 문서 업데이트",
    "할 일은 테스트 작성",
    "다음 단계는: 배포 스크립트 정리",
    "The deploy is blocked by OPS-77.",
    "I'm waiting on the security review.",
    "I'm working on the retry logic.",
    "I'm fixing the login bug now.",
    "We're cleaning up the old fixtures.",
    "The export is done.",
    "The release is still blocked.",
    "The deploy is now unblocked.",
    "Done: the schema migration",
    "The API uses FastAPI.",
    "The worker runs on Kubernetes.",
    "The cache is stored in Redis.",
    "My name is Ann.",
    "I've just moved to Lisbon.",
    "I live in Berlin.",
    "I'm originally from Porto.",
    "I work as a nurse.",
    "I work at Acme.",
    "I'm 34 years old.",
    "I'm happily married.",
    "My favorite band is Muse.",
    "I'm now a team lead.",
    "My sister lives in Oslo.",
    "My brother works at the bakery.",
    "I have two kids.",
    "I've got three dogs.",
    "Take a look at this painting.",
    "Here's a pic from the beach.",
    "This is my garden.",
    "That photo is from last night.",
    "We just made these!",
    "The rate limit was changed from 100 to 200.",
    "The port went from 8080 to 9090.",
    "We moved the queue over to Kafka.",
    "The service now uses gRPC.",
    "The build failed again.",
    "It raised an exception.",
    "Fixed it by pinning the version.",
    "The fix was a missing import.",
    "That fixed it, the tests now pass.",
    "Family time is so important to me.",
    "Painting is my passion.",
]


def _variants(text: str) -> list[str]:
    return [
        text,
        text.upper(),
        text.replace("i", "ı").replace("s", "ſ"),
        text.replace("I", "İ").replace("k", "\u212a").replace("K", "\u212a"),
        text.replace("'", "’"),
    ]


GATES: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = [
    *((f"decision {n}", p, w) for n, (p, w) in enumerate(rules._DECISION)),
    *((f"task {n}", p, w) for n, (p, w) in enumerate(rules._TASK_WHAT)),
    *((f"attribute {what}", p, w) for p, what, w in facts._ATTRIBUTES),
    ("blocked", rules._TASK_BLOCKED, rules._BLOCKED_WORDS),
    ("project verb", rules._FACT_VERB, rules._FACT_VERB_WORDS),
    ("error prose", rules._ERROR_PROSE, rules._ERROR_PROSE_WORDS),
    ("fix", rules._FIX, rules._FIX_WORDS),
    ("i am now", facts._I_AM_NOW, ("now",)),
    ("their attribute", facts._THEIR_ATTRIBUTE, ("my",)),
    ("have count", facts._HAVE_COUNT, facts._HAVE_WORDS),
    ("shows", facts._SHOWS, facts._SHOWS_WORDS),
    ("changed", facts._CHANGED, facts._CHANGED_WORDS),
    ("went from", facts._WENT_FROM, ("from",)),
    ("moved to", facts._MOVED_TO, facts._MOVED_WORDS),
    ("now uses", facts._NOW_USES, facts._NOW_USES_WORDS),
    ("working on", task_text._WORKING_ON, ("ing",)),
    *((f"status {n}", p, task_text._STATUS_WORDS) for n, (p, _) in enumerate(task_text._STATUS_EN)),
]


@pytest.mark.parametrize(("name", "pattern", "words"), GATES, ids=[g[0] for g in GATES])
def test_it_skips_a_pattern_only_where_it_cannot_match(
    name: str, pattern: re.Pattern[str], words: tuple[str, ...]
) -> None:
    matched = 0
    for sentence in SENTENCES:
        for text in _variants(sentence):
            if pattern.search(text):
                matched += 1
                assert has_any(fold(text), words), (name, text)
    assert matched, f"no sentence here matches {name}: add one"


def test_matters_to_me_is_skipped_only_where_it_cannot_match() -> None:
    matched = 0
    for sentence in SENTENCES:
        for text in _variants(sentence):
            if facts._MATTERS_TO_ME.search(text):
                matched += 1
                assert facts._may_matter(fold(text)), text
    assert matched


def test_the_union_words_hold_every_rule_words() -> None:
    for _, words in rules._DECISION:
        assert set(words) <= set(rules._DECISION_WORDS)
    for _, words in rules._TASK_WHAT:
        assert set(words) <= set(rules._TASK_WORDS)
    for _, _, words in facts._ATTRIBUTES:
        assert set(words) <= set(facts._ATTRIBUTE_WORDS)


def test_every_work_verb_has_ing() -> None:
    """`working_on` is skipped for clauses without "ing"."""
    for verb in [*task_text._CODE_VERBS, *task_text._GENERAL_VERBS, "working on"]:
        assert "ing" in verb


@pytest.mark.parametrize("sentence", SENTENCES)
def test_clause_breaks_only_where_a_separator_may_be(sentence: str) -> None:
    for text in _variants(sentence):
        for extra in ("; then", ", so we", " - and", ", and then"):
            joined = text + extra + " more"
            if task_text._CLAUSE_BREAK.search(joined):
                assert task_text._may_break(joined)


def test_reference_gates_find_part_of_every_reference() -> None:
    text = (
        "See https://example.com/a, owner/repo#12, #45, OPS-77, src/app/main.py, "
        "./scripts/run, notes.md and ~/dev/x"
    )
    for kind, pattern, part in rules._REFERENCE_PATTERNS:
        found = list(pattern.finditer(text))
        assert found, kind
        for m in found:
            assert part.search(m.group()), (kind, m.group())
