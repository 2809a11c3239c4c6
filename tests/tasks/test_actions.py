"""A person's task actions (`axiom.tasks.actions`): mark done, cancel, link a blocker.

Each asserts the events appended, then the projection; the last one checks that a rebuild
from the event log gives the same rows as the incremental projection.
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from axiom.store.db import Database
from axiom.store.projection import rebuild
from axiom.tasks.actions import act_on_task, link_blocker
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.commands import TaskCommandError, UnknownEntity
from axiom.tasks.projector import TaskProjector
from axiom.tasks.queries import get_task
from axiom.tasks.resolver import TaskMention, TaskResolver

PROJECT = "axiom"
TABLES = ("entities", "entity_aliases", "edges")


def tid(title: str) -> str:
    return entity_id_for(task_key(PROJECT, title))


@pytest.fixture
def tasks(db: Database) -> Database:
    with db.write() as conn:
        TaskResolver(conn, PROJECT).resolve(
            [
                TaskMention("e1", "s1", "Publish the package", "pending"),
                TaskMention("e2", "s1", "Rotate the signing key", "in_progress"),
            ]
        )
    return db


def appended(db: Database, after: int) -> list[tuple[str, dict, str]]:
    """The events after the first `after`, in append order."""
    with db.read() as conn:
        rows = conn.execute(
            "SELECT event_type, payload_json, actor FROM events ORDER BY seq OFFSET ?", [after]
        ).fetchall()
    return [(t, json.loads(p), a) for t, p, a in rows]


def count(db: Database) -> int:
    with db.read() as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


def test_it_marks_a_pending_task_done_through_in_progress(tasks: Database):
    before = count(tasks)
    result = act_on_task(tasks, tid("Publish the package"), "done", note="shipped", actor="ana")
    assert result.status == "done"
    events = appended(tasks, before)
    assert [(t, p["from"], p["to"], p["source"], a) for t, p, a in events] == [
        ("task_status_changed", "pending", "in_progress", "person", "ana"),
        ("task_status_changed", "in_progress", "done", "person", "ana"),
    ]
    assert events[1][1]["reason"] == "shipped"
    assert act_on_task(tasks, tid("Publish the package"), "done").events == ()  # idempotent


def test_a_person_can_cancel_a_done_task(tasks: Database):
    act_on_task(tasks, tid("Publish the package"), "done")
    result = act_on_task(tasks, tid("Publish the package"), "cancel")
    assert result.status == "cancelled"
    with tasks.read() as conn:
        assert get_task(conn, tid("Publish the package")).task.status == "cancelled"


def test_linking_a_ticket_blocks_the_task_on_an_artifact(tasks: Database):
    before = count(tasks)
    result = link_blocker(tasks, tid("Publish the package"), "PLAT-142", actor="ana")
    assert result.status == "blocked"
    types = [t for t, _, _ in appended(tasks, before)]
    assert types == ["artifact_declared", "task_blockers_set", "task_status_changed"]
    with tasks.read() as conn:
        detail = get_task(conn, tid("Publish the package"))
    assert [(b.kind, b.title) for b in detail.blockers] == [("artifact", "PLAT-142")]


def test_linking_another_task_by_title_and_text_adds_blockers(tasks: Database):
    link_blocker(tasks, tid("Publish the package"), "Rotate the signing key")
    link_blocker(tasks, tid("Publish the package"), "waiting on legal review")
    with tasks.read() as conn:
        detail = get_task(conn, tid("Publish the package"))
    kinds = sorted(b.kind for b in detail.blockers)
    assert kinds == ["condition", "task"]


def test_bad_requests_append_nothing(tasks: Database):
    before = count(tasks)
    with pytest.raises(UnknownEntity):
        act_on_task(tasks, "tsk_nope", "done")
    with pytest.raises(TaskCommandError):
        act_on_task(tasks, tid("Publish the package"), "explode")
    with pytest.raises(TaskCommandError):
        link_blocker(tasks, tid("Publish the package"), "   ")
    with pytest.raises(TaskCommandError, match="self_reference"):
        link_blocker(tasks, tid("Publish the package"), tid("Publish the package"))
    assert count(tasks) == before


def test_actions_survive_a_rebuild(tasks: Database, table_rows):
    link_blocker(tasks, tid("Publish the package"), "PLAT-142")
    act_on_task(tasks, tid("Rotate the signing key"), "done")
    act_on_task(tasks, tid("Publish the package"), "cancel")
    incremental = table_rows(tasks, *TABLES)
    with tasks.write() as conn:
        rebuild(conn, [TaskProjector()])
    assert table_rows(tasks, *TABLES) == incremental
    with tasks.read() as conn:
        assert get_task(conn, tid("Publish the package")).task.status == "cancelled"
        assert get_task(conn, tid("Rotate the signing key")).task.status == "done"


def test_a_late_imported_older_list_does_not_replace_a_persons_blockers(tasks: Database):
    """A person links PLAT-142; a transcript said before that (2025), imported after,
    names OPS-7: the person's list stands, OPS-7 is only suggested."""
    task = _after_a_person_blocked_it(tasks, None, ("OPS-7",))
    assert [b.raw_text for b in task.blockers] == ["PLAT-142"]
    assert [b.raw_text for b in task.suggested_blockers] == ["OPS-7"]


def test_a_late_imported_older_status_does_not_undo_a_persons_block(tasks: Database):
    """A person blocks the task on PLAT-142; a transcript said before that (2025) starting
    it, imported after, is stale: the person's status and blocker stand."""
    task = _after_a_person_blocked_it(tasks, "in_progress", ())
    assert task.task.status == "blocked"
    assert [b.raw_text for b in task.blockers] == ["PLAT-142"]


def _after_a_person_blocked_it(db: Database, status: str | None, blocked_by: tuple[str, ...]):
    """ "Publish the package" after a person links PLAT-142, then a mention said in 2025
    (`status`, `blocked_by`) is resolved."""
    link_blocker(db, tid("Publish the package"), "PLAT-142", actor="ana")
    older = TaskMention(
        "e3", "s0", "Publish the package", status, blocked_by=blocked_by, evidence_aligned=True,
        observed_at=datetime(2025, 1, 1),
    )  # fmt: skip
    with db.write() as conn:
        TaskResolver(conn, PROJECT).resolve([older])
    with db.read() as conn:
        return get_task(conn, tid("Publish the package"))
