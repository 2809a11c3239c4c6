"""TaskMatcher: exact → full-text → vector, the score, and the strict-match rule."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from axiom.store.events import EventStore, NewEvent
from axiom.store.projection import rebuild, run_projector
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.matcher import (
    STRICT_SCORE,
    SUGGEST_MIN,
    TaskMatcher,
    comparison_form,
    recency_weight,
    similarity,
)
from axiom.tasks.projector import TaskProjector
from axiom.tasks.resolver import TaskMention, TaskResolver
from axiom.tasks.state import decide_create

PROJECT = "axiom"


def seed(conn, *titles: str, status: str = "pending", project: str = PROJECT) -> None:
    TaskResolver(conn, project).resolve(
        [
            TaskMention(f"seed-{project}-{i}-{t}", "s0", t, status, evidence_aligned=True)
            for i, t in enumerate(titles)
        ]
    )


def create_directly(conn, *titles: str) -> None:
    """Tasks created by events alone (no matching), so near-duplicates can coexist."""
    store = EventStore(conn)
    for title in titles:
        for event_type, payload in decide_create(
            tid(title), title, task_key(PROJECT, title), PROJECT, "pending"
        ):
            store.append(NewEvent(event_type, payload))
    run_projector(conn, TaskProjector())


def tid(title: str, project: str = PROJECT) -> str:
    return entity_id_for(task_key(project, title))


def test_similarity_is_high_for_small_edits_and_reordering() -> None:
    assert similarity("write the event migration", "write the events migration") > 0.97
    assert similarity("migration of the events", "events the of migration") == 1.0
    assert similarity("", "anything") == 0.0


def test_a_subset_of_words_is_capped_below_the_strict_threshold() -> None:
    score = similarity("fix bug", "fix bug in the login page")
    assert SUGGEST_MIN <= score <= 0.90 < STRICT_SCORE


def test_an_exact_key_hit_is_the_identity_and_strict(conn) -> None:
    seed(conn, "Write the events migration")
    result = TaskMatcher(conn, PROJECT).match("WRITE the events-migration!")
    assert result.identity is not None and result.identity.task_id == tid(
        "Write the events migration"
    )
    assert result.strict == result.identity
    assert result.reason == "exact_key"


def test_a_close_wording_is_a_strict_full_text_match(conn) -> None:
    seed(conn, "Write the events migration", "Build the importer")
    result = TaskMatcher(conn, PROJECT).match("Write the event migration")
    assert result.strict is not None
    assert result.strict.task_id == tid("Write the events migration")
    assert result.strict.method == "fulltext"
    assert result.strict.score >= STRICT_SCORE


def test_two_close_tasks_make_the_gap_too_small_for_a_strict_match(conn) -> None:
    create_directly(conn, "Write the events migration", "Write the event migrations")
    result = TaskMatcher(conn, PROJECT).match("Write the event migration")
    assert result.strict is None
    assert result.reason == "gap_too_small"
    suggestions = TaskMatcher(conn, PROJECT).suggest_candidates("Write the event migration", k=2)
    assert {c.task_id for c in suggestions} == {
        tid("Write the events migration"),
        tid("Write the event migrations"),
    }


def test_a_loose_match_is_only_a_suggestion(conn) -> None:
    seed(conn, "Fix bug")
    result = TaskMatcher(conn, PROJECT).match("Fix bug in the login page")
    assert result.strict is None and result.reason == "below_threshold"
    assert [c.task_id for c in result.candidates] == [tid("Fix bug")]


def test_a_cancelled_task_is_never_a_strict_match(conn) -> None:
    seed(conn, "Drop the legacy importer")
    TaskResolver(conn, PROJECT).resolve(
        [
            TaskMention(
                "e-cancel", "s1", "Drop the legacy importer", "cancelled", evidence_aligned=True
            )
        ]
    )
    matcher = TaskMatcher(conn, PROJECT)
    exact = matcher.match("Drop the legacy importer")
    assert exact.identity is not None and exact.strict is None
    assert exact.identity.task_status == "cancelled"
    fuzzy = matcher.match("Drop the legacy importers")
    assert fuzzy.strict is None and fuzzy.reason in {"ineligible", "below_threshold"}


def test_done_tasks_score_lower_than_open_ones(conn) -> None:
    seed(conn, "Ship the release")
    TaskResolver(conn, PROJECT).resolve(
        [
            TaskMention("d1", "s1", "Ship the release", "in_progress", evidence_aligned=True),
            TaskMention("d2", "s1", "Ship the release", "done", evidence_aligned=True),
        ]
    )
    [cand] = TaskMatcher(conn, PROJECT).candidates("Ship the release")[0]
    assert cand.factors["task_status"] == 0.95
    assert cand.score == pytest.approx(0.95 * cand.factors["recency"])


def test_recency_decays_with_a_90_day_half_life_towards_a_floor() -> None:
    now = datetime(2025, 6, 1)
    assert recency_weight(now, now) == 1.0
    assert recency_weight(now - timedelta(days=90), now) == pytest.approx(0.95)
    assert recency_weight(now - timedelta(days=3650), now) == pytest.approx(0.9, abs=1e-3)
    assert recency_weight(now + timedelta(days=5), now) == 1.0  # future: no bonus


def test_tasks_of_another_project_are_never_candidates(conn) -> None:
    seed(conn, "Write the events migration", project="other")
    assert TaskMatcher(conn, PROJECT).match("Write the events migration").candidates == ()


def test_the_vector_hook_adds_candidates_by_meaning(conn) -> None:
    seed(conn, "Publish the package to the internal index")
    target = tid("Publish the package to the internal index")
    calls = []

    def vectors(project: str, text: str, k: int) -> list[tuple[str, float]]:
        calls.append((project, text, k))
        return [(target, 0.99), ("tsk_unknown00000", 0.98)]

    matcher = TaskMatcher(conn, PROJECT, vector_search=vectors)
    result = matcher.match("Release the wheel")
    assert calls == [(PROJECT, "Release the wheel", 10)]
    assert result.strict is None  # vectors only suggest
    assert [c.task_id for c in result.candidates] == [target]  # the unknown id is dropped
    assert result.candidates[0].method == "vector"
    assert [c.task_id for c in matcher.suggest_candidates("Release the wheel")] == [target]


# --------------------------------------------------------------------------- rewordings


def task_ids(conn) -> list[str]:
    return [
        r[0]
        for r in conn.execute(
            "SELECT entity_id FROM entities WHERE entity_type = 'task' ORDER BY entity_id"
        ).fetchall()
    ]


def resolve_titles(conn, *titles: str) -> None:
    resolver = TaskResolver(conn, PROJECT)
    for i, title in enumerate(titles):
        resolver.resolve([TaskMention(f"e{i}", "s1", title, "pending", evidence_aligned=True)])


SAME_TASK = [
    ("Fix login redirect bug", "Fix the login redirect bug"),
    ("Upgrading the payment SDK", "Upgrade the payment SDK"),
    ("Add retries to the uploader", "Add retry to uploader"),
    ("Upgrade the 결제 SDK", "Upgrading 결제 SDK"),
]
DIFFERENT_TASKS = [
    ("Fix login redirect bug", "Fix logout redirect bug"),
    ("Fix the login redirect bug", "Fixing logout redirect bugs"),
    ("Write tests for login", "Write tests for logout"),
    ("로그인 리다이렉트 버그 수정", "로그아웃 리다이렉트 버그 수정"),
    ("로그인 버그 수정", "로그아웃 버그 수정"),
    ("Plan A", "Plan B"),
]


def test_comparison_form_strips_inflections_and_articles_only() -> None:
    assert comparison_form("upgrading the payment sdk") == comparison_form("upgrade payment sdk")
    assert comparison_form("fixed bugs") == comparison_form("fix bug")
    assert comparison_form("login") != comparison_form("logout")
    assert comparison_form("string") == "string"
    assert comparison_form("로그인 버그 수정") == "로그인 버그 수정"


@pytest.mark.parametrize(("first", "second"), SAME_TASK + [(b, a) for a, b in SAME_TASK])
def test_a_rewording_is_the_same_task(conn, first: str, second: str) -> None:
    resolve_titles(conn, first, second)
    [only] = task_ids(conn)
    assert only == tid(first)
    aliases = {
        r[0]
        for r in conn.execute(
            "SELECT canonical_key FROM entity_aliases WHERE entity_id = ?", [only]
        ).fetchall()
    }
    assert task_key(PROJECT, second) in aliases


@pytest.mark.parametrize(
    ("first", "second"), DIFFERENT_TASKS + [(b, a) for a, b in DIFFERENT_TASKS]
)
def test_a_different_task_is_not_merged(conn, first: str, second: str) -> None:
    resolve_titles(conn, first, second)
    assert task_ids(conn) == sorted({tid(first), tid(second)})
    assert len(task_ids(conn)) == 2


def test_tasks_keyed_before_articles_were_dropped_are_still_found(conn) -> None:
    """An event log written under the older rule: the key in task_created keeps "the"."""
    old_key = f"task:{PROJECT}:fix the login redirect bug"
    old_id = entity_id_for(old_key)
    store = EventStore(conn)
    for event_type, payload in decide_create(
        old_id, "Fix the login redirect bug", old_key, PROJECT, "pending"
    ):
        store.append(NewEvent(event_type, payload))
    run_projector(conn, TaskProjector())

    matcher = TaskMatcher(conn, PROJECT)
    exact = matcher.match("Fix the Login redirect bug!")
    assert exact.identity is not None and exact.identity.task_id == old_id
    assert exact.reason == "exact_key"
    reworded = matcher.match("Fix login redirect bug")
    assert reworded.strict is not None and reworded.strict.task_id == old_id

    resolve_titles(conn, "Fix the login redirect bug", "Fix login redirect bug")
    assert task_ids(conn) == [old_id]
    before = conn.execute(
        "SELECT entity_id, canonical_key, title, current_json FROM entities ORDER BY 1"
    ).fetchall()
    aliases_before = conn.execute("SELECT * FROM entity_aliases ORDER BY ALL").fetchall()
    rebuild(conn, [TaskProjector()])
    after = conn.execute(
        "SELECT entity_id, canonical_key, title, current_json FROM entities ORDER BY 1"
    ).fetchall()
    assert after == before
    assert conn.execute("SELECT * FROM entity_aliases ORDER BY ALL").fetchall() == aliases_before
    assert before[0][1] == old_key  # the stored key, not a recomputed one


def test_prose_may_name_a_task_by_part_of_its_title(conn) -> None:
    seed(conn, "Deploy ledgerly to the staging cluster", "Add rate limiting to the public API")
    said = "Deploying to staging"
    prose = TaskMatcher(conn, PROJECT).match(said, partial=True)
    assert prose.reason == "partial_title"
    assert prose.strict is not None
    assert prose.strict.task_id == tid("Deploy ledgerly to the staging cluster")
    # A TodoWrite title is a task's whole name: it never joins by part of one.
    assert TaskMatcher(conn, PROJECT).match(said).reason == "below_threshold"


@pytest.mark.parametrize(
    ("tasks", "said"),
    [
        (["Fix the login bug"], "Fix the login bug on mobile"),  # more than the task
        (["Fix bug in login", "Fix bug in logout"], "Fix bug"),  # part of two tasks
        (["Deploy ledgerly to the staging cluster"], "Deploy"),  # one word says too little
    ],
)
def test_prose_naming_more_than_a_task_or_part_of_two_is_no_match(
    conn, tasks: list[str], said: str
) -> None:
    seed(conn, *tasks)
    assert TaskMatcher(conn, PROJECT).match(said, partial=True).strict is None
