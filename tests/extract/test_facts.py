"""Stated facts: subject, value and changes, in sentences written for these tests (not from
any data set), through `find_fact` and through the whole rule extractor."""

from __future__ import annotations

import pytest

from axiom.extract.facts import find_decision_fields, find_fact, is_question
from axiom.extract.rules import RuleExtractor
from axiom.extract.types import FactFields
from axiom.ingest.transcript import Message, Transcript


def fields(sentence: str, speaker: str = "Dana") -> FactFields | None:
    found = find_fact(sentence, speaker)
    return found.fields if found else None


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "Last week we migrated the search index from Elasticsearch to OpenSearch.",
            FactFields("search index", "OpenSearch", "Elasticsearch"),
        ),
        (
            "The upload size limit was raised from 10 MB to 25 MB.",
            FactFields("upload size limit", "25 MB", "10 MB"),
        ),
        ("The session timeout is now 45 minutes.", FactFields("session timeout", "45 minutes")),
        ("The default region is eu-west-1.", None),  # lower-case value: no stated value rule
        ("Our staging port is 8443.", FactFields("staging port", "8443")),
        (
            "The nightly export no longer uses FTP.",
            FactFields("nightly export", None, "FTP", negated=True),
        ),
        (
            "We're serving images from Cloudflare instead of S3 for the public site.",
            FactFields("public site", "Cloudflare", "S3"),
        ),
        # one spelling ("favorite") for the subject, whatever the sentence wrote
        ("My favourite food is kimchi stew.", FactFields("Dana's favorite food", "kimchi stew")),
        ("I moved to Lisbon in March.", FactFields("Dana's home", "Lisbon in March")),
        ("I'm 34 years old.", FactFields("Dana's age", "34")),
        (
            "My cousin works at a bakery in Leeds.",
            FactFields("Dana's cousin's employer", "a bakery in Leeds"),
        ),
        ("I'm now part of the city orchestra.", FactFields("Dana", "part of the city orchestra")),
        ("We moved the audit log to ClickHouse.", FactFields("audit log", "ClickHouse")),
        ("The scheduler now runs on Nomad.", FactFields("scheduler", "Nomad")),
        (
            "We replaced Sentry with Honeycomb in the tracing pipeline.",
            FactFields("tracing pipeline", "Honeycomb", "Sentry"),
        ),
        # the port a service listens on, however the sentence says it (trial 15's project)
        ("The API should listen on port 8080.", FactFields("API port", "8080")),
        (
            "Change of plan: the API now listens on port 9090, 8080 clashes with Keycloak.",
            FactFields("API port", "9090"),
        ),
        ("The admin dashboard runs on port 3000.", FactFields("admin dashboard port", "3000")),
        ("It listens on port 80.", None),  # a pronoun names nothing
    ],
)
def test_it_states_subject_value_and_previous_value(
    sentence: str, expected: FactFields | None
) -> None:
    found = fields(sentence)
    if expected is None:
        assert found is None or found.value is None
    else:
        assert found == expected


@pytest.mark.parametrize(
    "sentence",
    [
        "I started learning the cello in January.",
        "We adopted a rescue greyhound called Pip.",
        "I've been volunteering at the food bank on Saturdays.",
        "My sister just opened a flower shop downtown.",
        "I'm planning a trip to Patagonia next spring.",
        "I want to run a half marathon this year.",
    ],
)
def test_first_person_statements_are_facts_about_the_speaker(sentence: str) -> None:
    found = find_fact(sentence, "Dana")
    assert found is not None and found.type == "fact"
    assert found.fields.subject is not None and found.fields.subject.startswith("Dana")


@pytest.mark.parametrize(
    "sentence",
    [
        "How was your weekend?",
        "Did you finish the painting?",
        "Hi Sam, good to see you!",
        "Thanks so much, that means a lot!",
        "I'm so happy for you!",
        "I think so too.",
        "I love that for you.",
        "Wow, that looks amazing!",
        "Taking time for yourself is so important.",
        "We got this!",
    ],
)
def test_questions_greetings_and_small_talk_are_not_memories(sentence: str) -> None:
    assert find_fact(sentence, "Dana") is None


def test_a_tag_question_still_states_its_fact() -> None:
    assert not is_question("I opened my own pottery studio last month - pretty cool, right?")
    assert is_question("What did you think of the show?")
    assert find_fact("I opened my own pottery studio last month - pretty cool, right?", "Dana")


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "We decided to use Postgres for the billing ledger.",
            FactFields("billing ledger", "Postgres"),
        ),
        (
            "We switched from Jenkins to GitHub Actions for CI.",
            FactFields("CI", "GitHub Actions", "Jenkins"),
        ),
        (
            "Let's go with Redis Streams for the job queue.",
            FactFields("job queue", "Redis Streams"),
        ),
    ],
)
def test_decisions_name_what_was_decided_and_the_choice(
    sentence: str, expected: FactFields
) -> None:
    assert find_decision_fields(sentence) == expected


def _transcript(*texts: str, sid: str = "s1") -> Transcript:
    return Transcript(
        sid,
        "demo",
        "json",
        tuple(Message(i, "user", t, meta={"speaker": "Dana"}) for i, t in enumerate(texts)),
    )


def test_the_extractor_keeps_old_and_new_value_of_a_change_with_an_exact_quote() -> None:
    t = _transcript(
        "Quick update. The upload size limit was raised from 10 MB to 25 MB. Nothing else."
    )
    (entry,) = [e for e in RuleExtractor().extract(t).entries if e.value]
    assert (entry.subject, entry.value, entry.previous_value) == (
        "upload size limit",
        "25 MB",
        "10 MB",
    )
    assert entry.evidence[0].quote in t.messages[0].text
    assert "raised from 10 MB to 25 MB" in entry.evidence[0].quote


def test_the_same_subject_and_value_is_kept_once_per_session() -> None:
    t = _transcript(
        "The session timeout is now 45 minutes.",
        "As I said, the session timeout is now 45 minutes.",
    )
    entries = [e for e in RuleExtractor().extract(t).entries if e.subject == "session timeout"]
    assert len(entries) == 1


def test_a_decision_entry_carries_its_subject_and_value() -> None:
    t = _transcript("After the review we decided to use Postgres for the billing ledger.")
    (decision,) = [e for e in RuleExtractor().extract(t).entries if e.type == "decision"]
    assert (decision.subject, decision.value) == ("billing ledger", "Postgres")
