"""The believed-facts index finds exactly what comparing every pair finds, in the same order.

`BelievedFacts.contradictions` compares a new fact only with the believed facts it can
contradict (same canonical key or a subject of the same numbers and a close length, of the
other polarity or both with a value; every fact when it states a replacement). These tests
compare it with `contradictions` (every pair) on generated facts built from parts that hit
each branch: near-identical and numbered subjects, shared canonical keys, values, negations,
stated replacements, the same session.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from axiom.conflicts.commands import resolve
from axiom.conflicts.detector import (
    BelievedFacts,
    Contradiction,
    Fact,
    SessionFacts,
    contradictions,
    within_session,
)
from axiom.conflicts.queries import list_conflicts, open_conflict_pairs
from axiom.store.db import Database
from tests.conflicts.support import Said, run_sessions
from tests.conflicts.test_detection import KOREAN_SESSIONS

SUBJECTS = [
    None,
    "",
    "billing store",
    "Billing Store",
    "billing stores",
    "billing-store",
    "the billing store",
    "web1 port",
    "web2 port",
    "web1 ports",
    "Q3 budget",
    "업로드 최대 크기",
    "업로드 최대크기",
    "caroline",
    "carolin",
    "melanie's job",
    "x",
]
VALUES = [None, "", "postgres", "Postgres", "mysql", "5432", "6543", "postgres db", "NATS"]
KEYS = [None, "", "fact:billing store", "fact:web port", "decision:queue"]
TYPES = ["fact", "fact", "decision", "task"]
SESSIONS = [None, "s1", "s2", "s3"]
CLAIMS = [
    "uses postgres for the billing store",
    "is not using postgres for the billing store",
    "switched the billing store from postgres to mysql",
    "uses mysql instead of postgres",
    "no longer uses NATS",
    "replaced mysql with postgres",
    "likes the lake",
    "doesn't like the lake",
    "빌링 저장소를 postgres에서 mysql로 바꿨다",
    "더 이상 NATS를 쓰지 않는다",
    "the port is 5432",
    "the port isn't 6543",
]


def _subjects() -> st.SearchStrategy[str | None]:
    """The fixed subjects, and short strings of few letters: many pairs near the threshold."""
    return st.one_of(st.sampled_from(SUBJECTS), st.text(alphabet="ab 1É", min_size=0, max_size=12))


# Claims that state no replacement (no "switched", "instead of", "no longer", ...).
PLAIN_CLAIMS = [
    c
    for c in CLAIMS
    if not any(w in c for w in ("switch", "instead", "replac", "바꿨", "no longer", "더 이상"))
]


@st.composite
def _facts(draw: st.DrawFn, entry_id: str, plain: bool = False) -> Fact:
    """A generated fact; `plain`: one stating no replacement (what `SessionFacts` finds
    through its index rather than by comparing with every fact)."""
    subject = draw(_subjects())
    return Fact(
        entry_id,
        draw(st.sampled_from(SESSIONS)),
        draw(st.sampled_from(TYPES)),
        f"{subject or 'it'} {draw(st.sampled_from(PLAIN_CLAIMS if plain else CLAIMS))}",
        draw(st.sampled_from(["", "the billing store", "postgres and mysql"])),
        draw(st.sampled_from(KEYS)),
        subject,
        draw(st.sampled_from(VALUES)),
        None if plain else draw(st.sampled_from(VALUES)),
    )


@st.composite
def _stores(draw: st.DrawFn) -> tuple[list[Fact], list[Fact]]:
    """Believed facts, and new facts: some of them, and some not among them."""
    size = draw(st.integers(0, 30))
    believed = [draw(_facts(f"e{i}")) for i in range(size)]
    fresh = [draw(_facts(f"n{i}")) for i in range(draw(st.integers(1, 5)))]
    return believed, fresh + believed[:3]


@settings(max_examples=300, deadline=None)
@given(_stores())
def test_indexed_contradictions_equal_every_pair_compared(
    store: tuple[list[Fact], list[Fact]],
) -> None:
    """Indexed as read, and as the build adds each fact it compared (later ones are
    compared with it too)."""
    believed, new_facts = store
    index = BelievedFacts(believed)
    for new in new_facts:
        assert index.contradictions(new) == contradictions(new, believed)
    index, seen = BelievedFacts([]), []
    for new in [*believed, *new_facts]:
        assert index.contradictions(new) == contradictions(new, seen)
        index.add(new)
        seen.append(new)
    assert index.facts == seen


def _random_fact(rng: random.Random, entry_id: str) -> Fact:
    subject = rng.choice(SUBJECTS)
    return Fact(
        entry_id,
        rng.choice(SESSIONS),
        rng.choice(TYPES),
        f"{subject or 'it'} {rng.choice(CLAIMS)}",
        "",
        rng.choice(KEYS),
        subject,
        rng.choice(VALUES),
        rng.choice([None, None, None, "postgres"]),
    )


def test_the_generated_facts_exercise_every_kind_of_conflict() -> None:
    """The comparison above is not vacuous: such facts do conflict, in every way, and for a
    new fact stating no replacement the index compares far fewer pairs than there are."""
    rng = random.Random(15)
    kinds: Counter[str] = Counter()
    compared = pairs = 0
    for _ in range(40):
        believed = [_random_fact(rng, f"e{i}") for i in range(40)]
        index = BelievedFacts(believed)
        for new in [_random_fact(rng, f"n{i}") for i in range(10)]:
            found = index.contradictions(new)
            assert found == contradictions(new, believed)
            kinds.update(c.conflict_type for c in found)
            if new.replaced_value() is None:  # else compared with every fact
                compared += len(index.candidates(new))
                pairs += len(believed)
    assert {"changed_value", "negation", "replacement"} <= set(kinds), kinds
    assert compared < pairs / 2


def test_a_build_reads_the_open_conflicts_as_listed(db: Database, tmp_path: Path) -> None:
    """`open_conflict_pairs` (what a build reads) is `list_conflicts(..., "open")`'s pairs,
    in its order, before and after a resolution."""
    script = {
        **KOREAN_SESSIONS,
        "ko3": [Said("업로드 최대 크기는 80MB이다", "fact", "업로드 최대 크기", "80MB")],
    }
    run_sessions(db, tmp_path, script)
    for resolved in (0, 1):
        with db.read() as conn:
            listed = [(c.older_id, c.newer_id) for c in list_conflicts(conn, "open")]
            assert open_conflict_pairs(conn) == listed
        assert len(listed) == 4 - resolved
        with db.read() as conn:
            first = list_conflicts(conn, "open")[0].conflict_id
        resolve(db, first, "keep_both", "tester")


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_session_facts_pair_a_fact_with_every_fact_it_contradicts_or_is_contradicted_by(
    data: st.DataObject,
) -> None:
    """`SessionFacts.pairs` (a build's within-session comparison) finds, in the same order,
    the contradictions comparing every pair finds, whichever fact of a pair was said later."""
    size = data.draw(st.integers(0, 30))
    facts = [
        data.draw(st.one_of(_facts(f"e{i}"), _facts(f"e{i}", plain=True))) for i in range(size)
    ]
    said = {f.entry_id: data.draw(st.integers(0, 5)) for f in facts}  # where each was quoted
    index, seen = SessionFacts(), []

    def found(fact: Fact, others: list[Fact]) -> list[Contradiction]:
        out = []
        for other in others:
            ahead = said[fact.entry_id] >= said[other.entry_id]
            later, earlier = (fact, other) if ahead else (other, fact)
            if (c := within_session(later, earlier)) is not None:
                out.append(c)
        return out

    for fact in facts:
        pairs = index.pairs(fact)
        assert [f for f in seen if f in pairs] == pairs  # a subset, in the order added
        assert found(fact, pairs) == found(fact, seen)
        index.add(fact)
        seen.append(fact)
    assert index.facts == seen


def test_plain_facts_state_no_replacement_and_do_conflict() -> None:
    """The test above reaches the index: facts stating no replacement, which conflict."""
    rng = random.Random(21)
    kinds: Counter[str] = Counter()
    for n in range(400):
        a, b = (
            Fact(f"{n}:{i}", "s", "fact", f"{s} {rng.choice(PLAIN_CLAIMS)}", "", None, s, v, None)
            for i, (s, v) in enumerate(
                (rng.choice(SUBJECTS[2:6]), rng.choice(VALUES)) for _ in range(2)
            )
        )
        assert not a.replaced_value() and not b.replaced_value()
        if (c := within_session(a, b)) is not None:
            kinds[c.conflict_type] += 1
    assert kinds["changed_value"] > 0 and kinds["negation"] > 0
