"""TaskResolver: one entity per task across sessions, blockers, bad input, idempotency."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest

import axiom.tasks.resolver as resolver_module
from axiom.store.db import Database
from axiom.store.event_types import (
    ARTIFACT_DECLARED,
    CONDITION_DECLARED,
    CONDITION_RESOLVED_TO,
    TASK_BLOCKERS_SET,
    TASK_CREATED,
    TASK_INPUT_REJECTED,
    TASK_MENTIONED,
    TASK_PRIORITY_CHANGED,
    TASK_STATUS_CHANGED,
    TASK_TRANSITION_REJECTED,
)
from axiom.store.migrate import migrate
from axiom.store.projection import rebuild
from axiom.tasks.as_of import get_task_as_of, list_tasks_as_of
from axiom.tasks.canonical import entity_id_for, placeholder_condition_key, task_key
from axiom.tasks.commands import rename_task, resolve_condition
from axiom.tasks.projector import TaskProjector
from axiom.tasks.resolver import TaskMention, TaskResolver, load_task_state

PROJECT = "/home/dev/axiom"
T0 = datetime(2025, 3, 1, 9, 0)


def mention(
    entry_id: str,
    title: object,
    status: str | None = None,
    *,
    session: str = "s1",
    priority: str | None = None,
    blocked_by: tuple = (),
    aligned: bool = True,
    source: str = "text",
    at: datetime | None = None,
) -> TaskMention:
    return TaskMention(
        entry_id=entry_id,
        session_id=session,
        title=title,  # type: ignore[arg-type]
        status=status,
        priority=priority,
        blocked_by=blocked_by,
        evidence_aligned=aligned,
        source=source,
        observed_at=at,
    )


def types(events) -> list[str]:
    return [e.event_type for e in events]


def tasks(conn: duckdb.DuckDBPyConnection) -> list[tuple]:
    return conn.execute(
        "SELECT entity_id, title, json_extract_string(current_json, '$.status')"
        " FROM entities WHERE entity_type = 'task' ORDER BY entity_id"
    ).fetchall()


def edges(conn: duckdb.DuckDBPyConnection, rel: str, src: str | None = None) -> list[tuple]:
    sql = "SELECT src_id, dst_id FROM edges WHERE rel_type = ?"
    params = [rel]
    if src is not None:
        sql += " AND src_id = ?"
        params.append(src)
    return conn.execute(sql + " ORDER BY src_id, dst_id", params).fetchall()


def snapshot(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    return {
        table: conn.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
        for table in ("entities", "entity_aliases", "edges")
    }


# --------------------------------------------------------------------------- one entity


def test_it_resolves_one_task_worded_three_ways_in_three_sessions_to_one_entity(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Write the events migration", "pending", session="s1", at=T0)])
    resolver.resolve(
        [
            mention(
                "e2",
                "write the  events migration.",
                "in_progress",
                session="s2",
                at=T0 + timedelta(1),
            )
        ]
    )
    resolver.resolve(
        [
            mention(
                "e3", "WRITE THE EVENTS MIGRATION", "completed", session="s3", at=T0 + timedelta(2)
            )
        ]
    )

    tid = entity_id_for(task_key(PROJECT, "Write the events migration"))
    assert tasks(conn) == [(tid, "Write the events migration", "done")]
    assert edges(conn, "evidence_of") == [("e1", tid), ("e2", tid), ("e3", tid)]
    assert conn.execute(
        "SELECT count(*) FROM entity_aliases WHERE entity_type = 'task'"
    ).fetchone() == (1,)
    state, data = load_task_state(conn, tid)
    assert data["mention_count"] == 3
    moves = conn.execute(
        "SELECT json_extract_string(payload_json, '$.from'), json_extract_string(payload_json, '$.to')"
        " FROM events WHERE event_type = ? ORDER BY seq",
        [TASK_STATUS_CHANGED],
    ).fetchall()
    assert moves == [("pending", "in_progress"), ("in_progress", "done")]


def test_it_matches_a_slightly_different_wording_strictly_and_records_the_alias(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Write the events migration", "pending", at=T0)])
    events = resolver.resolve([mention("e2", "Write the event migration", "in_progress", at=T0)])

    tid = entity_id_for(task_key(PROJECT, "Write the events migration"))
    assert len(tasks(conn)) == 1
    receipt = next(e for e in events if e.event_type == TASK_MENTIONED)
    assert receipt.payload["match"]["method"] == "fulltext"
    assert receipt.payload["match"]["reason"] == "strict_threshold"
    assert receipt.payload["alias_key"] == task_key(PROJECT, "Write the event migration")
    alias = conn.execute(
        "SELECT entity_id, is_primary FROM entity_aliases WHERE canonical_key = ?",
        [task_key(PROJECT, "Write the event migration")],
    ).fetchone()
    assert alias == (tid, False)
    # the alias is now an exact hit
    third = resolver.resolve([mention("e3", "write the EVENT migration", None)])
    assert (
        next(e for e in third if e.event_type == TASK_MENTIONED).payload["match"]["method"]
        == "exact"
    )


def test_it_creates_a_separate_task_for_a_loose_match_and_keeps_the_candidate(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Fix the login bug", "pending")])
    events = resolver.resolve([mention("e2", "Fix the login bug on mobile", "pending")])

    assert len(tasks(conn)) == 2
    receipt = next(e for e in events if e.event_type == TASK_MENTIONED)
    assert receipt.payload["match"]["method"] == "new"
    assert [c["title"] for c in receipt.payload["candidates"]] == ["Fix the login bug"]


def test_tasks_of_different_projects_are_different_entities(conn) -> None:
    TaskResolver(conn, "alpha").resolve([mention("e1", "Ship it", "pending")])
    TaskResolver(conn, "beta").resolve([mention("e2", "Ship it", "pending")])
    assert len(tasks(conn)) == 2


# --------------------------------------------------------------------------- blockers


def test_it_turns_blockers_into_artifact_condition_and_placeholder(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    events = resolver.resolve(
        [
            mention("e1", "Publish the package", "blocked", blocked_by=("PLAT-142",)),
            mention(
                "e2", "Publish the docs", "blocked", blocked_by=("waiting on the design review",)
            ),
            mention("e3", "Deploy to staging", "blocked"),
        ]
    )

    artifact = entity_id_for("art:jira:PLAT-142")
    condition = conn.execute(
        "SELECT entity_id, title, canonical_key FROM entities WHERE entity_type = 'condition'"
        " AND NOT coalesce(json_extract(current_json, '$.auto_placeholder')::BOOLEAN, FALSE)"
    ).fetchall()
    assert condition == [
        (entity_id_for("cond:axiom:design review"), "the design review", "cond:axiom:design review")
    ]
    deploy = entity_id_for(task_key(PROJECT, "Deploy to staging"))
    placeholder = entity_id_for(placeholder_condition_key(PROJECT, deploy))
    blocked = {
        row[0]: row[1:]
        for row in conn.execute(
            "SELECT task_id, blocker_id, blocker_type, auto_placeholder FROM v_blocked_tasks"
        ).fetchall()
    }
    assert blocked == {
        entity_id_for(task_key(PROJECT, "Publish the package")): (artifact, "artifact", False),
        entity_id_for(task_key(PROJECT, "Publish the docs")): (condition[0][0], "condition", False),
        deploy: (placeholder, "condition", True),
    }
    assert types(events).count(ARTIFACT_DECLARED) == 1
    assert types(events).count(CONDITION_DECLARED) == 2  # the design review + the placeholder


def test_a_blocker_naming_an_existing_task_strictly_links_the_task_and_never_a_stub(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Rotate the registry certificate", "in_progress")])
    resolver.resolve(
        [
            mention("e2", "Deploy", "blocked", blocked_by=("the registry certificate renewal",)),
            mention("e3", "Release", "blocked", blocked_by=("rotate the registry certificate",)),
        ]
    )

    cert = entity_id_for(task_key(PROJECT, "Rotate the registry certificate"))
    release = entity_id_for(task_key(PROJECT, "Release"))
    assert edges(conn, "blocked_by", release) == [(release, cert)]
    # a loose wording becomes a condition with the task as a candidate, not a new task
    deploy = entity_id_for(task_key(PROJECT, "Deploy"))
    [(_, cond)] = edges(conn, "blocked_by", deploy)
    assert cond.startswith("cnd_")
    candidates = conn.execute(
        "SELECT json_extract(current_json, '$.candidates[0].task_id')::VARCHAR FROM entities WHERE entity_id = ?",
        [cond],
    ).fetchone()[0]
    assert cert in candidates
    assert len(tasks(conn)) == 3


def test_unaligned_blockers_are_only_suggestions(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Ship", "blocked", blocked_by=("OPS-1",))])
    events = resolver.resolve(
        [mention("e2", "Ship", "blocked", blocked_by=("OPS-2",), aligned=False)]
    )

    ship = entity_id_for(task_key(PROJECT, "Ship"))
    [blockers_set] = [e for e in events if e.event_type == TASK_BLOCKERS_SET]
    assert blockers_set.payload["mode"] == "suggest"
    assert edges(conn, "blocked_by", ship) == [(ship, entity_id_for("art:jira:OPS-1"))]
    assert edges(conn, "blocked_by_suggested", ship) == [(ship, entity_id_for("art:jira:OPS-2"))]


def test_aligned_blockers_replace_the_old_ones_and_done_clears_them(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    ship = entity_id_for(task_key(PROJECT, "Ship"))
    resolver.resolve([mention("e1", "Ship", "blocked", blocked_by=("OPS-1", "OPS-2"))])
    resolver.resolve([mention("e2", "Ship", "blocked", blocked_by=("OPS-3",))])
    assert edges(conn, "blocked_by", ship) == [(ship, entity_id_for("art:jira:OPS-3"))]

    resolver.resolve([mention("e3", "Ship", "done")])
    assert edges(conn, "blocked_by", ship) == []
    assert tasks(conn) == [(ship, "Ship", "done")]
    assert conn.execute(
        "SELECT count(*) FROM v_task_blockers_effective WHERE task_id = ?", [ship]
    ).fetchone() == (0,)


def test_a_new_task_whose_text_is_an_open_condition_resolves_it(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve(
        [mention("e1", "Publish", "blocked", blocked_by=("waiting for the security review",))]
    )
    events = resolver.resolve([mention("e2", "Security review", "in_progress", session="s2")])

    review = entity_id_for(task_key(PROJECT, "Security review"))
    [resolved] = [e for e in events if e.event_type == CONDITION_RESOLVED_TO]
    assert resolved.payload["target_id"] == review
    row = conn.execute(
        "SELECT blocker_id, via_resolution, declared_blocker_type FROM v_task_blockers_effective"
    ).fetchone()
    assert row == (review, True, "condition")


def test_a_task_blocked_through_a_condition_resolving_to_itself_stays_done(conn) -> None:
    """Its placeholder resolved to the task itself: the task's own done is no blocker
    of it reported done (that read the task's state from before the done change and
    moved it blocked -> pending after it)."""
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Ship", "blocked", source="todowrite", at=T0)])
    ship = entity_id_for(task_key(PROJECT, "Ship"))
    cond = entity_id_for(placeholder_condition_key(PROJECT, ship))
    resolve_condition(conn, cond, ship)

    events = resolver.resolve([mention("e2", "Ship", "done", source="todowrite", at=T0)])
    changes = [
        (e.payload["from"], e.payload["to"]) for e in events if e.event_type == TASK_STATUS_CHANGED
    ]
    assert changes == [("blocked", "in_progress"), ("in_progress", "done")]
    assert tasks(conn) == [(ship, "Ship", "done")]
    assert [t.status for t in list_tasks_as_of(conn, datetime(9999, 1, 1))] == ["done"]


# --------------------------------------------------------------------------- transitions


def test_a_new_task_never_starts_done(conn) -> None:
    events = TaskResolver(conn, PROJECT).resolve([mention("e1", "Write docs", "completed")])
    created = next(e for e in events if e.event_type == TASK_CREATED)
    assert created.payload["status"] == "in_progress"
    assert created.payload["requested_status"] == "done"
    assert TASK_STATUS_CHANGED not in types(events)


def test_illegal_transitions_are_recorded_not_applied(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve(
        [mention("e1", "Write docs", "in_progress"), mention("e2", "Write docs", "done")]
    )
    # A TodoWrite "pending" is an explicit status (a prose TODO only restates the task).
    again = mention("e3", "Write docs", "pending", blocked_by=("OPS-9",), source="todowrite")
    events = resolver.resolve([again])

    rejected = [e for e in events if e.event_type == TASK_TRANSITION_REJECTED]
    assert [(e.payload["from"], e.payload["to"]) for e in rejected] == [("done", "pending")]
    assert rejected[0].payload["reason"].startswith("closed_needs_reopen")
    assert tasks(conn)[0][2] == "done"
    assert TASK_BLOCKERS_SET not in types(events)
    assert types(events)[-1] == TASK_MENTIONED


def test_a_stale_observation_does_not_undo_newer_progress(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve(
        [mention("new", "Write docs", "in_progress", priority="high", at=T0 + timedelta(days=5))]
    )
    old = mention("old", "Write docs", "pending", priority="low", at=T0, source="todowrite")
    events = resolver.resolve([old])

    assert tasks(conn)[0][2] == "in_progress"
    [rejected] = [e for e in events if e.event_type == TASK_TRANSITION_REJECTED]
    assert rejected.payload["reason"].startswith("stale_observation")
    assert TASK_PRIORITY_CHANGED not in types(events)
    receipt = next(e for e in events if e.event_type == TASK_MENTIONED)
    assert receipt.payload["stale"] is True


def test_blockers_said_before_the_newest_list_are_only_suggested(conn) -> None:
    """A session imported late names blockers older than the list that replaced the
    task's: they are suggestions, as a stale status's blockers are, not a new list."""
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e0", "Write docs", at=T0)])
    resolver.resolve([mention("new", "Write docs", blocked_by=("OPS-1",), at=T0 + timedelta(1))])
    events = resolver.resolve([mention("old", "Write docs", blocked_by=("OPS-2",), at=T0)])

    [changed] = [e for e in events if e.event_type == TASK_BLOCKERS_SET]
    assert changed.payload["mode"] == "suggest"
    [task_id] = [t[0] for t in tasks(conn)]
    state, extras = load_task_state(conn, task_id)
    assert [b.raw_text for b in state.blockers] == ["OPS-1"]
    assert [b.raw_text for b in state.suggested_blockers] == ["OPS-2"]
    assert extras["last_blockers_observed_at"].startswith("2025-03-02")


def test_a_blocker_reported_done_before_the_newest_list_stays(conn) -> None:
    """Day 20 names PLAT-142 and OPS-7; "PLAT-142 is done", said on day 12 and imported
    after, is older than that list: the task keeps both blockers."""
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e0", "Write docs", "blocked", blocked_by=("PLAT-142",), at=T0)])
    resolver.resolve(
        [mention("e1", "Write docs", blocked_by=("PLAT-142", "OPS-7"), at=T0 + timedelta(20))]
    )
    report = TaskMention(
        "e2", "s2", "PLAT-142", "done", evidence_aligned=True, update_only=True,
        observed_at=T0 + timedelta(12),
    )  # fmt: skip
    assert not [e for e in resolver.resolve([report]) if e.event_type == TASK_BLOCKERS_SET]
    [task_id] = [t[0] for t in tasks(conn)]
    state, _ = load_task_state(conn, task_id)
    assert state.status == "blocked"
    assert sorted(b.raw_text for b in state.blockers) == ["OPS-7", "PLAT-142"]


def test_a_list_said_before_a_blocker_was_reported_done_does_not_bring_it_back(conn) -> None:
    """Day 20 names PLAT-142 and OPS-7, day 25 reports PLAT-142 done; a day-22 transcript
    naming both, imported last, is older than what the report left: only suggested."""
    resolver = TaskResolver(conn, PROJECT)
    both = ("PLAT-142", "OPS-7")
    resolver.resolve([mention("e0", "Write docs", "in_progress", at=T0)])
    resolver.resolve([mention("e1", "Write docs", blocked_by=both, at=T0 + timedelta(20))])
    done = TaskMention(
        "e2", "s2", "PLAT-142", "done", evidence_aligned=True, update_only=True,
        observed_at=T0 + timedelta(25),
    )  # fmt: skip
    resolver.resolve([done])
    resolver.resolve([mention("e3", "Write docs", blocked_by=both, at=T0 + timedelta(22))])
    [task_id] = [t[0] for t in tasks(conn)]
    state, _ = load_task_state(conn, task_id)
    assert [b.raw_text for b in state.blockers] == ["OPS-7"]
    later = get_task_as_of(conn, task_id, datetime(9999, 1, 1))
    assert [b.raw_text for b in later.blockers] == ["OPS-7"]


# --------------------------------------------------------------------------- bad input


def test_bad_input_is_recorded_with_reasons_and_never_crashes_or_makes_stubs(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e0", "Real task", "pending")])
    events = resolver.resolve(
        [
            mention("e1", "", "pending"),
            mention("e2", "!!!", "blocked"),
            mention("e3", None, "pending"),  # type: ignore[arg-type]
            mention("", "No entry id", "pending"),
            mention("e4", "Weird status", "sort of done-ish", priority="whenever"),
            mention("e5", "Todo without status", None, source="todowrite"),
            mention("e6", "Ship", "blocked", blocked_by=("", "???", "tsk_0123456789ab")),
            mention("e7", "Ship", "blocked", blocked_by=("Ship",)),
        ]
    )

    reasons = sorted(
        (e.payload["field"], e.payload["reason"])
        for e in events
        if e.event_type == TASK_INPUT_REJECTED
    )
    assert reasons == [
        ("blocked_by", "self_reference"),
        ("blocked_by", "unknown_task_id"),
        ("blocked_by", "unrecognised_blocker"),
        ("blocked_by", "unrecognised_blocker"),
        ("mention", "missing_entry_id"),
        ("priority", "unknown_priority"),
        ("status", "missing_status"),
        ("status", "unknown_status"),
        ("title", "empty_title"),
        ("title", "empty_title"),
        ("title", "empty_title"),
    ]
    titles = sorted(t[1] for t in tasks(conn))
    assert titles == ["Real task", "Ship", "Todo without status", "Weird status"]
    ship = entity_id_for(task_key(PROJECT, "Ship"))
    # the unknown task id falls back to a condition; no task named tsk_0123456789ab exists
    [(_, blocker)] = edges(conn, "blocked_by", ship)
    assert blocker.startswith("cnd_")
    assert conn.execute(
        "SELECT count(*) FROM entities WHERE entity_id = 'tsk_0123456789ab'"
    ).fetchone() == (0,)


def test_an_explicit_task_id_blocker_links_that_task(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Migrate the database", "in_progress")])
    db_task = entity_id_for(task_key(PROJECT, "Migrate the database"))
    resolver.resolve([mention("e2", "Ship", "blocked", blocked_by=(f"task {db_task}",))])
    ship = entity_id_for(task_key(PROJECT, "Ship"))
    assert edges(conn, "blocked_by", ship) == [(ship, db_task)]


def test_an_internal_error_while_planning_is_recorded_and_the_rest_goes_on(
    conn, monkeypatch
) -> None:
    resolver = TaskResolver(conn, PROJECT)

    def boom(*args, **kwargs):
        raise RuntimeError("matcher exploded")

    monkeypatch.setattr(resolver.matcher, "match", boom)
    events = resolver.resolve([mention("e1", "Anything", "pending")])
    assert [(e.event_type, e.payload["reason"]) for e in events] == [
        (TASK_INPUT_REJECTED, "internal_error: RuntimeError: matcher exploded")
    ]
    monkeypatch.undo()
    assert (
        types(resolver.resolve([mention("e2", "Something else", "pending")]))[-1] == TASK_MENTIONED
    )


# --------------------------------------------------------------------------- idempotency


def test_processing_the_same_sessions_twice_appends_no_event_and_no_edge(conn) -> None:
    batch = [
        mention("e1", "Write the events migration", "pending", at=T0),
        mention("e2", "Publish", "blocked", blocked_by=("PLAT-142", "waiting on review"), at=T0),
        mention("e3", "Deploy", "blocked", at=T0),
        mention("e4", "", "pending"),
        mention("e5", "Write the events migration", "done", session="s2", at=T0 + timedelta(1)),
        mention("e6", "Review", "pending", session="s2", at=T0 + timedelta(1)),
    ]
    first = TaskResolver(conn, PROJECT).resolve(batch)
    before_events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    before = snapshot(conn)

    again = TaskResolver(conn, PROJECT).resolve(batch)
    again_reversed = TaskResolver(conn, PROJECT).resolve(list(reversed(batch)))

    assert first and again == [] and again_reversed == []
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == before_events
    assert snapshot(conn) == before


def test_incremental_projection_equals_a_full_rebuild(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Ship", "blocked", blocked_by=("OPS-1", "waiting on QA"))])
    resolver.resolve([mention("e2", "QA", "in_progress")])
    resolver.resolve([mention("e3", "Ship", "blocked", blocked_by=("OPS-2",), aligned=False)])
    resolver.resolve([mention("e4", "Ship", "in_progress"), mention("e5", "Ship", "done")])
    incremental = snapshot(conn)

    rebuild(conn, [TaskProjector()])
    assert snapshot(conn) == incremental


def test_observed_at_may_be_an_aware_datetime_or_an_iso_string(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("a", "Write docs", "in_progress", at="2025-03-10T12:00:00+02:00")])  # type: ignore[arg-type]
    events = resolver.resolve(
        [mention("b", "Write docs", "pending", at=datetime(2025, 3, 10, 9, 0), source="todowrite")]
    )
    assert tasks(conn)[0][2] == "in_progress"  # 09:00 UTC is before 10:00 UTC
    assert types(events)[0] == TASK_TRANSITION_REJECTED
    later = mention("c", "Write docs", "pending", at="not a time", source="todowrite")  # type: ignore[arg-type]
    events = resolver.resolve([later])
    assert tasks(conn)[0][2] == "pending"  # unknown time: not judged stale


def test_a_blocker_said_in_prose_joins_the_todo_it_names_by_part_of_its_title(conn) -> None:
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve(
        [mention("e1", "Deploy ledgerly to the staging cluster", "pending", source="todowrite")]
    )
    resolver.resolve(
        [mention("e2", "Deploying to staging", "blocked", session="s2", blocked_by=("OPS-311",))]
    )
    [(_, title, status)] = tasks(conn)
    assert (title, status) == ("Deploy ledgerly to the staging cluster", "blocked")


def test_a_partial_title_in_prose_adds_no_alias_a_todowrite_item_could_join_by(conn) -> None:
    """ "Deploying to staging" named the todo by part of its title; a TodoWrite item of that
    wording later is a todo of its own, not the first one moved back to pending."""
    resolver = TaskResolver(conn, PROJECT)
    first = "Deploy ledgerly to the staging cluster"
    resolver.resolve([mention("e1", first, "pending", source="todowrite")])
    resolver.resolve([mention("e2", "Deploying to staging", "in_progress", session="s2")])
    resolver.resolve(
        [mention("e3", "Deploying to staging", "pending", session="s3", source="todowrite")]
    )
    assert sorted((title, status) for _, title, status in tasks(conn)) == [
        (first, "in_progress"),
        ("Deploying to staging", "pending"),
    ]


def test_a_mention_repeated_in_one_call_is_processed_once(conn) -> None:
    twice = mention("e1", "Write the events migration", "pending", at=T0)

    appended = TaskResolver(conn, PROJECT).resolve([twice, twice])

    assert types(appended) == [TASK_CREATED, TASK_MENTIONED]


def test_a_mentions_events_are_stored_in_order_each_later_than_the_one_before(conn) -> None:
    blocked = mention("e1", "Publish", "blocked", blocked_by=("PLAT-142",), at=T0)

    appended = TaskResolver(conn, PROJECT).resolve([blocked])

    stored = conn.execute(
        "SELECT event_id, ts FROM events WHERE event_id IN (SELECT unnest(?)) ORDER BY ts",
        [[e.event_id for e in appended]],
    ).fetchall()
    assert [r[0] for r in stored] == [e.event_id for e in appended]
    assert len({r[1] for r in stored}) == len(appended) > 2


# --------------------------------------------------------------------------- remembered rows


def test_a_resolver_sees_a_task_changed_by_other_hands_between_its_calls(conn) -> None:
    """Its projector remembers the rows it saves during one `resolve` only: a rename by
    someone else before the next call is what that call builds on."""
    resolver = TaskResolver(conn, PROJECT)
    resolver.resolve([mention("e1", "Write the events migration", "pending", at=T0)])
    tid = entity_id_for(task_key(PROJECT, "Write the events migration"))
    rename_task(conn, tid, "Write the event store migration")

    resolver.resolve(
        [mention("e2", "Write the events migration", "in_progress", at=T0 + timedelta(1))]
    )

    state, data = load_task_state(conn, tid)
    assert (state.title, state.status) == ("Write the event store migration", "in_progress")
    assert data["mention_count"] == 2
    assert data["aliases"] == ["Write the events migration"]


_MENTIONS = [
    mention("e1", "Write the events migration", "pending", at=T0),
    mention("e2", "write the events migration", "in_progress", at=T0 + timedelta(1)),
    mention("e3", "Ship the importer", "blocked", blocked_by=("e1",), at=T0),
    mention("e4", "Write the events migration.", "completed", at=T0 + timedelta(2)),
    mention("e5", "Ship the importer", "in_progress", at=T0 + timedelta(3)),
]


def _resolved(conn: duckdb.DuckDBPyConnection) -> tuple[list[tuple], dict[str, list[tuple]]]:
    """The events and tables (without the times rows were written at) of `_MENTIONS`."""
    TaskResolver(conn, PROJECT).resolve(_MENTIONS)
    events = conn.execute(
        "SELECT event_type, dedupe_key, payload_json FROM events ORDER BY seq"
    ).fetchall()
    tables = {
        name: [tuple(v for v in row if not isinstance(v, datetime)) for row in rows]
        for name, rows in snapshot(conn).items()
    }
    return events, tables


def test_remembering_rows_plans_and_projects_what_reading_them_back_does(
    conn, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same mentions resolved with the projector remembering its rows (as the resolver
    does) and with one that reads every row back: the same events, the same tables, and
    a rebuild gives them too."""
    remembered = _resolved(conn)
    tables = snapshot(conn)
    rebuild(conn, [TaskProjector()])
    assert snapshot(conn) == tables

    class Forgetful(TaskProjector):
        def __init__(self, remember: bool = False) -> None:
            super().__init__(remember=False)

    monkeypatch.setattr(resolver_module, "TaskProjector", Forgetful)
    other = Database(tmp_path / "forgetful" / "axiom.duckdb")
    migrate(other)
    with other.write() as fresh:
        assert _resolved(fresh) == remembered
