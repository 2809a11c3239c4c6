"""A small hand-written Korean set: the same kinds of statements as in English (changes,
values, attributes, first-person events, decisions, denials) become entries with subject
and value, and greetings and questions do not."""

from __future__ import annotations

import pytest

from axiom.extract.facts import find_fact
from axiom.extract.rules import RuleExtractor
from axiom.extract.types import ExtractedEntry, FactFields
from axiom.ingest.transcript import Message, Transcript

KOREAN = [
    # (sentence, expected fields; None: a personal fact whose subject is the speaker)
    (
        "주문 서비스 캐시를 Memcached에서 Redis로 바꿨습니다.",
        FactFields("주문 서비스 캐시", "Redis", "Memcached"),
    ),
    ("로그인 시도 제한은 이제 5회입니다.", FactFields("로그인 시도 제한", "5회")),
    ("배치 작업 주기는 30분입니다.", FactFields("배치 작업 주기", "30분")),
    (
        "알림 서버는 더 이상 RabbitMQ를 사용하지 않습니다.",
        FactFields("알림 서버", None, "RabbitMQ", negated=True),
    ),
    (
        "업로드 한도가 파일당 10MB에서 25MB로 늘었어요.",
        FactFields("업로드 한도", "25MB", "파일당 10MB"),
    ),
    ("이제 세션 저장소는 Valkey입니다.", FactFields("세션 저장소", "Valkey")),
    (
        "빌드 서버를 Jenkins 대신 Buildkite로 쓰기로 했어요.",
        FactFields("빌드 서버", "Buildkite", "Jenkins"),
    ),
    ("제 이름은 지훈입니다.", FactFields("Jihun's name", "지훈")),
    ("저는 부산에 살아요.", FactFields("Jihun's home", "부산")),
    ("작년에 대전으로 이사했어요.", FactFields("Jihun's home", "대전")),
    ("저는 지난달에 수영을 배우기 시작했어요.", None),
    ("제 동생이 요즘 카페를 운영하고 있어요.", None),
]


def _korean_transcript(*texts: str) -> Transcript:
    return Transcript(
        "ko-1",
        "demo",
        "json",
        tuple(Message(i, "user", t, meta={"speaker": "Jihun"}) for i, t in enumerate(texts)),
    )


@pytest.mark.parametrize(("sentence", "expected"), KOREAN)
def test_korean_statements_get_subject_and_value(
    sentence: str, expected: FactFields | None
) -> None:
    found = find_fact(sentence, "Jihun")
    assert found is not None, sentence
    if expected is None:
        assert found.fields.subject == "Jihun"
    else:
        assert found.fields == expected


def _only(entries: tuple[ExtractedEntry, ...], kind: str) -> ExtractedEntry:
    (entry,) = [e for e in entries if e.type == kind]
    return entry


def test_the_korean_set_becomes_entries_with_exact_quotes() -> None:
    texts = [sentence for sentence, _ in KOREAN]
    t = _korean_transcript(*texts)
    entries = RuleExtractor().extract(t).entries
    quoted = {e.evidence[0].message_index for e in entries}
    assert quoted == set(range(len(texts)))
    for entry in entries:
        assert entry.evidence[0].quote in t.messages[entry.evidence[0].message_index].text
    change = next(e for e in entries if e.previous_value == "Memcached")
    assert (change.subject, change.value) == ("주문 서비스 캐시", "Redis")


def test_a_korean_decision_names_its_subject_and_choice() -> None:
    t = _korean_transcript("검색 인덱스에는 OpenSearch를 쓰기로 했어요.")
    decision = _only(RuleExtractor().extract(t).entries, "decision")
    assert (decision.subject, decision.value) == ("검색 인덱스", "OpenSearch")


@pytest.mark.parametrize("sentence", ["안녕하세요!", "주말 잘 보냈어요?", "고마워요, 정말 좋네요!"])
def test_korean_greetings_and_questions_are_not_memories(sentence: str) -> None:
    assert RuleExtractor().extract(_korean_transcript(sentence)).entries == ()
