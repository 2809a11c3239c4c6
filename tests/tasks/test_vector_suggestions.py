"""Vector candidates only suggest: never strict, never a veto of a full-text match, and the
precomputed lookup covers every text the resolver asks about. Real DuckDB; the vectors are
hand-made (tests/pipeline/test_task_vectors.py runs the real model and LanceDB)."""

from __future__ import annotations

import json

import pytest

from axiom.tasks.matcher import (
    BASE_WEIGHT,
    STRICT_SCORE,
    SUGGEST_MIN,
    TaskMatcher,
    precomputed_search,
)
from axiom.tasks.resolver import TaskMention, TaskResolver, matcher_texts
from tests.tasks.test_matcher import PROJECT, seed, tid


def test_a_vector_only_candidate_with_cosine_one_is_not_strict(conn) -> None:  # noqa: ANN001
    seed(conn, "Speed up the CI pipeline")
    target = tid("Speed up the CI pipeline")
    matcher = TaskMatcher(conn, PROJECT, vector_search=lambda p, t, k: [(target, 1.0)])

    result = matcher.match("Make continuous integration faster")

    assert BASE_WEIGHT["vector"] < STRICT_SCORE
    assert result.strict is None and result.identity is None
    top = result.candidates[0]
    assert (top.task_id, top.method, top.similarity) == (target, "vector", 1.0)
    assert SUGGEST_MIN <= top.score <= BASE_WEIGHT["vector"] < STRICT_SCORE
    # The reason is the one full text alone gives: vectors never change the decision.
    plain = TaskMatcher(conn, PROJECT).match("Make continuous integration faster")
    assert result.reason == plain.reason


def test_a_vector_candidate_does_not_veto_a_strict_full_text_match(conn) -> None:  # noqa: ANN001
    seed(conn, "Write the events migration for the orders table", "Write the release notes")
    target = tid("Write the events migration for the orders table")
    other = tid("Write the release notes")
    text = "Write events migration for orders tables later"
    plain = TaskMatcher(conn, PROJECT).match(text)
    assert plain.strict is not None and plain.strict.task_id == target
    assert STRICT_SCORE <= plain.strict.score < BASE_WEIGHT["vector"] + 0.03

    # A neighbour at cosine 1.0 scores 0.90, within the strict gap (0.03) of the full-text
    # top; vector candidates take no part in the decision, so the match stands.
    with_vectors = TaskMatcher(conn, PROJECT, vector_search=lambda p, t, k: [(other, 1.0)]).match(
        text
    )

    assert with_vectors.strict is not None and with_vectors.strict.task_id == target
    assert with_vectors.strict.method == "fulltext"
    assert with_vectors.reason == "strict_threshold"
    assert [(c.task_id, c.method) for c in with_vectors.candidates] == [
        (target, "fulltext"),
        (other, "vector"),
    ]


def test_a_task_found_by_full_text_and_vector_keeps_its_best_score(conn) -> None:  # noqa: ANN001
    seed(conn, "Write the events migration")
    target = tid("Write the events migration")

    def at(cosine: float):  # noqa: ANN202
        return TaskMatcher(conn, PROJECT, vector_search=lambda p, t, k: [(target, cosine)])

    strong = at(0.5).match("Write the event migrations")  # full text 1.0 beats 0.45
    assert (strong.candidates[0].method, strong.candidates[0].similarity) == ("fulltext", 1.0)
    assert strong.strict is not None and strong.strict.method == "fulltext"
    weak = at(0.95).match("Draft a schema change for events")  # vector beats weak full text
    assert (weak.candidates[0].method, weak.candidates[0].similarity) == ("vector", 0.95)
    assert weak.strict is None


def test_blocker_texts_are_never_resolved_to_a_task_by_vectors(conn) -> None:  # noqa: ANN001
    seed(conn, "Finish the design review")
    target = tid("Finish the design review")
    resolver = TaskResolver(conn, PROJECT, vector_search=lambda p, t, k: [(target, 1.0)])
    resolver.resolve(
        [
            TaskMention(
                "e1",
                "s1",
                "Ship the app",
                "blocked",
                blocked_by=("legal sign-off",),
                evidence_aligned=True,
            )
        ]
    )
    (current,) = conn.execute(
        "SELECT current_json FROM entities WHERE entity_id = ?", [tid("Ship the app")]
    ).fetchone()
    data = json.loads(current)
    assert [b["kind"] for b in data["blockers"]] == ["condition"]
    assert target not in current  # neither a blocker nor a suggested one
    (cond,) = conn.execute(
        "SELECT current_json FROM entities WHERE entity_id = ?", [data["blockers"][0]["entity_id"]]
    ).fetchone()
    candidates = json.loads(cond)["candidates"]  # the task is only a suggestion there
    assert [(c["task_id"], c["method"]) for c in candidates] == [(target, "vector")]


def test_the_precomputed_texts_cover_every_text_the_resolver_asks_about(conn) -> None:  # noqa: ANN001
    seed(conn, "Finish the design review", "Write the events migration")
    mentions = [
        TaskMention("e1", "s1", "  Ship   the   app ", "blocked", blocked_by=
                    ("blocked by the design review", "waiting on legal sign-off",
                     "https://github.com/o/r/issues/3", "tsk_0123456789ab", "", "???"),
                    evidence_aligned=True),
        TaskMention("e2", "s1", "Write the event migration", "in_progress", blocked_by=
                    ("depends on Ship the app",), evidence_aligned=False),
        TaskMention("e3", "s1", "   ", "pending"),
    ]  # fmt: skip
    texts = matcher_texts(mentions)
    asked: list[str] = []
    lookup = precomputed_search(PROJECT, {t: [] for t in texts})

    def hook(project: str, text: str, k: int) -> list[tuple[str, float]]:
        asked.append(text)
        return list(lookup(project, text, k))

    TaskResolver(conn, PROJECT, vector_search=hook).resolve(mentions)

    assert set(asked) <= set(texts)
    assert {"Ship the app", "design review", "legal sign-off", "tsk_0123456789ab"} <= set(asked)
    assert "Write the event migration" in asked


def test_the_precomputed_lookup_answers_only_its_project_and_texts() -> None:
    search = precomputed_search("Axiom", {"Ship the app": [("tsk_a", 0.9), ("tsk_b", 0.8)]})
    assert list(search("axiom", "Ship the app", 1)) == [("tsk_a", 0.9)]
    assert list(search("axiom", "Ship the app", 10)) == [("tsk_a", 0.9), ("tsk_b", 0.8)]
    assert list(search("axiom", "Something else", 10)) == []
    assert list(search("other", "Ship the app", 10)) == []


@pytest.mark.parametrize("cosine", [0.0, 0.5, 0.9, 1.0, 1.5])
def test_no_cosine_makes_a_vector_candidate_strict(conn, cosine: float) -> None:  # noqa: ANN001
    seed(conn, "Tune the cache")
    target = tid("Tune the cache")
    result = TaskMatcher(conn, PROJECT, vector_search=lambda p, t, k: [(target, cosine)]).match(
        "Make lookups quicker"
    )
    assert result.strict is None
    assert all(c.score < STRICT_SCORE for c in result.candidates)
