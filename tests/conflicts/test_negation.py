"""A negation conflicts only when it denies the claim the other memory makes.

Two memories about the same subject (a person, a service) usually say different things;
one carrying a "not" somewhere must not contradict all the others. Found on
conversational transcripts, where every remark of a speaker has that speaker as subject.
"""

from __future__ import annotations

from pathlib import Path

from axiom.conflicts.detector import Fact, claim_words, contradiction
from axiom.conflicts.queries import list_conflicts
from axiom.store.db import Database
from tests.conflicts.support import Said, run_sessions


def _fact(entry_id: str, title: str, subject: str | None, value: str | None = None) -> Fact:
    return Fact(entry_id, f"s-{entry_id}", "fact", title, subject=subject, value=value)


def test_a_negated_remark_about_a_person_does_not_contradict_unrelated_remarks() -> None:
    older = _fact("a", "Priya: I repaired the old rowing boat last weekend", "Priya")
    newer = _fact("b", "Priya: Honestly the winter hasn't been kind to my garden", "Priya")
    assert contradiction(newer, older) is None
    assert contradiction(older, newer) is None


def test_a_negation_in_another_clause_does_not_deny_a_shared_wish() -> None:
    older = _fact("a", "Tomas: I want the bakery to thrive", "Tomas")
    newer = _fact(
        "b", "Tomas: Baking at dawn isn't glamorous, but I want the bakery to thrive", "Tomas"
    )
    assert contradiction(newer, older) is None


def test_denying_the_same_claim_still_conflicts() -> None:
    older = _fact("a", "The nightly backup job copies the photo archive", "nightly backup job")
    newer = _fact(
        "b", "The nightly backup job no longer copies the photo archive", "nightly backup job"
    )
    found = contradiction(newer, older)
    assert found is not None and found.conflict_type == "negation"


def test_a_korean_denial_of_the_same_claim_conflicts_and_an_unrelated_one_does_not() -> None:
    older = _fact("a", "정산 배치는 매주 월요일에 돈다", "정산 배치")
    denied = _fact("b", "정산 배치는 더 이상 월요일에 돌지 않는다", "정산 배치")
    unrelated = _fact("c", "정산 배치는 로그를 남기지 않는다", "정산 배치")
    found = contradiction(denied, older)
    assert found is not None and found.conflict_type == "negation"
    assert contradiction(unrelated, older) is None


def test_the_same_value_denied_conflicts_whatever_the_wording() -> None:
    older = _fact("a", "Sessions are cached in Memcached", "session cache", "Memcached")
    newer = _fact(
        "b", "We do not keep the session cache in Memcached", "session cache", "Memcached"
    )
    found = contradiction(newer, older)
    assert found is not None and found.conflict_type == "negation"


def test_claim_words_leave_out_the_subject_and_the_negation() -> None:
    fact = _fact("a", "Priya: I don't paint anymore", "Priya")
    assert claim_words(fact) == {"paint"}


def test_speaker_remarks_across_sessions_open_no_conflict(db: Database, tmp_path: Path) -> None:
    run_sessions(
        db,
        tmp_path,
        {
            "june": [
                Said("Oskar: I joined a climbing gym near the harbour", "fact", "Oskar"),
                Said("Oskar: The new job keeps me busy most evenings", "fact", "Oskar"),
            ],
            "july": [
                Said("Oskar: It wasn't easy, but the first marathon felt great", "fact", "Oskar"),
                Said("Oskar: I never skip leg day", "fact", "Oskar"),
            ],
        },
    )
    with db.read() as conn:
        assert list_conflicts(conn, "all") == []
