"""TaskProjector rows, the effective-blocker view, explicit commands and read queries."""

from __future__ import annotations

import json

import pytest

from axiom.projections import all_projectors
from axiom.store.events import EventStore, NewEvent
from axiom.store.projection import rebuild, run_projector
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.commands import TaskCommandError, rename_task, resolve_condition
from axiom.tasks.projector import TaskProjector
from axiom.tasks.queries import (
    find_task_id,
    get_task,
    list_blocked_tasks,
    list_resolved_conditions,
    list_tasks,
    list_tasks_with_only_suggested_blockers,
    list_tasks_with_placeholder_blocker,
)
from axiom.tasks.resolver import TaskMention, TaskResolver
from axiom.tasks.state import TaskState, decide_create, decide_status, fold

PROJECT = "axiom"


def tid(title: str) -> str:
    return entity_id_for(task_key(PROJECT, title))


def say(conn, entry: str, title: str, status: str | None = None, *blockers: str, aligned=True):
    return TaskResolver(conn, PROJECT).resolve(
        [TaskMention(entry, "s1", title, status, blocked_by=blockers, evidence_aligned=aligned)]
    )


def condition_of(conn, task_id: str) -> str:
    return conn.execute(
        "SELECT dst_id FROM edges WHERE src_id = ? AND rel_type = 'blocked_by'", [task_id]
    ).fetchone()[0]


def test_the_task_projector_is_registered() -> None:
    assert any(isinstance(p, TaskProjector) for p in all_projectors())


def test_task_state_round_trips_through_the_projected_json(conn) -> None:
    say(conn, "e1", "Ship", "blocked", "OPS-1", "waiting on QA")
    say(conn, "e2", "Ship", "blocked", "OPS-2", aligned=False)
    row = conn.execute(
        "SELECT current_json FROM entities WHERE entity_id = ?", [tid("Ship")]
    ).fetchone()
    state = TaskState.from_json(json.loads(row[0]))
    events = conn.execute(
        "SELECT event_type, payload_json FROM events WHERE event_type LIKE 'task_%'"
        " AND event_type NOT IN ('task_mentioned', 'task_input_rejected') ORDER BY seq"
    ).fetchall()
    assert state == fold((t, json.loads(p)) for t, p in events)
    assert len(state.blockers) == 2 and len(state.suggested_blockers) == 1


def test_the_projector_skips_an_event_it_cannot_apply_and_goes_on(conn) -> None:
    store = EventStore(conn)
    ghost = decide_status(
        TaskState("tsk_000000000000", "Ghost", "task:axiom:ghost", PROJECT, "pending"),
        "in_progress",
    )
    store.append(NewEvent(*ghost[0]))
    store.append(
        NewEvent(*decide_create(tid("Real"), "Real", task_key(PROJECT, "Real"), PROJECT)[0])
    )
    assert run_projector(conn, TaskProjector()) == 2
    assert [t.task_id for t in list_tasks(conn)] == [tid("Real")]


def test_resolutions_are_expanded_transitively_in_the_effective_view(conn) -> None:
    say(conn, "e1", "Ship", "blocked", "waiting on the vendor")
    say(conn, "e2", "Ask legal", "blocked", "waiting on contract")
    vendor = condition_of(conn, tid("Ship"))
    contract = condition_of(conn, tid("Ask legal"))
    say(conn, "e3", "Sign the contract", "in_progress")

    resolve_condition(conn, vendor, contract, reason="same thing")
    resolve_condition(conn, contract, tid("Sign the contract"), reason="it is a task now")

    [blocked] = [b for b in list_blocked_tasks(conn) if b.task.task_id == tid("Ship")]
    [effective] = blocked.blockers
    assert (effective.entity_id, effective.kind, effective.via_resolution) == (
        tid("Sign the contract"),
        "task",
        True,
    )
    assert effective.declared_id == vendor
    resolved = {r.condition_id: r for r in list_resolved_conditions(conn)}
    assert resolved[vendor].target_id == contract
    assert resolved[vendor].blocking == (tid("Ship"),)
    assert resolved[contract].target_title == "Sign the contract"


def test_resolve_condition_refuses_unknown_ids_self_and_cycles(conn) -> None:
    say(conn, "e1", "Ship", "blocked", "waiting on the vendor")
    say(conn, "e2", "Ask legal", "blocked", "waiting on contract")
    vendor = condition_of(conn, tid("Ship"))
    contract = condition_of(conn, tid("Ask legal"))
    before = conn.execute("SELECT count(*) FROM events").fetchone()[0]

    with pytest.raises(TaskCommandError, match="unknown condition"):
        resolve_condition(conn, "cnd_nope", contract)
    with pytest.raises(TaskCommandError, match="unknown entity"):
        resolve_condition(conn, vendor, "tsk_nope")
    with pytest.raises(TaskCommandError, match="itself"):
        resolve_condition(conn, vendor, vendor)
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == before

    resolve_condition(conn, vendor, contract)
    with pytest.raises(TaskCommandError, match="cycle"):
        resolve_condition(conn, contract, vendor)


def test_rename_keeps_the_old_wording_as_an_alias(conn) -> None:
    say(conn, "e1", "Write docs", "pending")
    [changed] = rename_task(conn, tid("Write docs"), "Write the user guide", reason="clearer")
    assert changed.payload["to"] == "Write the user guide"
    assert rename_task(conn, tid("Write docs"), "write the USER guide") == []

    events = say(conn, "e2", "write the user guide", "in_progress")
    assert events[-1].payload["task_id"] == tid("Write docs")
    assert [t.title for t in list_tasks(conn)] == ["Write the user guide"]
    with pytest.raises(TaskCommandError):
        rename_task(conn, "tsk_nope", "x")


def test_list_tasks_filters_by_status_and_rejects_unknown_ones(conn) -> None:
    say(conn, "e1", "A", "pending")
    say(conn, "e2", "B", "in_progress")
    say(conn, "e3", "C", "blocked")
    assert [t.title for t in list_tasks(conn, status="in_progress")] == ["B"]
    assert {t.title for t in list_tasks(conn)} == {"A", "B", "C"}
    with pytest.raises(ValueError, match="unknown task status"):
        list_tasks(conn, status="sleeping")


def test_find_task_id_takes_a_unique_prefix_and_nothing_else(conn) -> None:
    say(conn, "e1", "Ship", "pending")
    full = tid("Ship")
    assert find_task_id(conn, full) == full
    assert find_task_id(conn, full[:8]) == full
    assert find_task_id(conn, full[:4]) is None
    assert find_task_id(conn, "tsk_ffffffffffff") is None
    assert find_task_id(conn, "") is None
    assert get_task(conn, "nope") is None


def test_review_lists_for_suggested_only_and_placeholder_blockers(conn) -> None:
    say(conn, "e1", "Ship", "pending", "OPS-1", aligned=False)
    say(conn, "e2", "Deploy", "blocked")
    assert [t.title for t in list_tasks_with_only_suggested_blockers(conn)] == ["Ship"]
    assert [t.title for t in list_tasks_with_placeholder_blocker(conn)] == ["Deploy"]


def test_task_detail_has_blockers_evidence_blocking_and_the_whole_history(conn) -> None:
    say(conn, "e1", "Rotate the certificate", "in_progress")
    say(conn, "e2", "Deploy", "blocked", "rotate the certificate", "PLAT-142")
    say(conn, "e3", "Deploy", "blocked", "OPS-7", aligned=False)

    detail = get_task(conn, tid("Deploy"))
    assert detail is not None
    assert {b.title for b in detail.blockers} == {"Rotate the certificate", "PLAT-142"}
    assert {b.title for b in detail.suggested_blockers} == {"OPS-7"}
    cert = get_task(conn, tid("Rotate the certificate"))
    assert [t.task_id for t in cert.blocking] == [tid("Deploy")]

    say(conn, "e4", "Deploy", "in_progress")  # unblocked: its blockers are cleared
    detail = get_task(conn, tid("Deploy"))
    assert detail.blockers == () and detail.effective_blockers == ()
    assert {b.title for b in detail.suggested_blockers} == {"OPS-7"}
    assert [e.entry_id for e in detail.evidence] == ["e2", "e3", "e4"]
    assert [h.event_type for h in detail.history] == [
        "task_created",
        "task_blockers_set",
        "task_mentioned",
        "task_blockers_set",
        "task_mentioned",
        "task_status_changed",
        "task_blockers_set",
        "task_mentioned",
    ]
    assert "blocked -> in_progress" in detail.history[5].summary()
    assert get_task(conn, tid("Rotate the certificate")).blocking == ()
    assert json.dumps(detail.to_json())  # JSON-ready


def test_rebuilding_twice_gives_the_same_rows(conn) -> None:
    say(conn, "e1", "Ship", "blocked", "OPS-1", "waiting on QA")
    say(conn, "e2", "QA", "pending")
    tables = ("entities", "entity_aliases", "edges")

    def rows():
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}

    before = rows()
    rebuild(conn, [TaskProjector()])
    rebuild(conn, [TaskProjector()])
    assert rows() == before
