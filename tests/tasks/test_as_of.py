"""`?as_of=T` on the task pages and `--as-of` on the CLI: the task as the sessions written
by T left it."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from axiom.extract.types import (
    ExtractedEntry,
    ExtractedEvidence,
    ExtractionResult,
    TaskFields,
)
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database
from axiom.tasks.as_of import list_blocked_tasks_as_of, list_tasks_as_of
from axiom.tasks.queries import list_tasks
from axiom.tasks.resolver import TaskMention, TaskResolver
from tests.cli_support import run_cli

TITLE = "Move the invoice exports to parquet"
LATER = "Rotate the signing keys of the mobile app"
SCRIPT = {
    "early": ("2026-03-10T09:00:00Z", [(f"I started: {TITLE}", TITLE, "in_progress")]),
    "late": (
        "2026-04-20T16:30:00Z",
        [(f"Done: {TITLE}", TITLE, "done"), (f"New todo: {LATER}", LATER, "pending")],
    ),
}


BLOCKED_TITLE = "Publish the tide-table widget"
BLOCKER = "the ferry timetable feed"
BLOCK_SCRIPT = {
    "early": (
        "2026-05-02T08:00:00Z",
        [(f"{BLOCKED_TITLE} waits on {BLOCKER}", BLOCKED_TITLE, "blocked")],
    ),
    "late": ("2026-05-28T17:00:00Z", [(f"Shipped: {BLOCKED_TITLE}", BLOCKED_TITLE, "done")]),
}


class TaskScript:
    name, model, prompt_hash = "scripted-tasks", "v1", "t" * 64

    def __init__(self, script: dict = SCRIPT) -> None:
        self.script = script

    def extract(self, transcript: Transcript) -> ExtractionResult:
        said = self.script[transcript.session_id][1]
        entries = tuple(
            ExtractedEntry.create(
                transcript.session_id,
                "task_note",
                title,
                text,
                (ExtractedEvidence(i, text),),
                task=TaskFields(
                    title=title,
                    status=status,  # type: ignore[arg-type]
                    blocked_by=(BLOCKER,) if status == "blocked" else (),
                ),
            )
            for i, (text, title, status) in enumerate(said)
        )
        return ExtractionResult(entries, self.name, self.model, self.prompt_hash)


def _two_sessions(db: Database, workdir: Path, script: dict = SCRIPT) -> str:
    _run(db, workdir, script)
    with db.read() as conn:
        now = {t.title: t for t in list_tasks(conn)}
    assert now[TITLE].status == "done" and now[LATER].status == "pending"
    return now[TITLE].task_id


def _run(db: Database, workdir: Path, script: dict) -> None:
    ingest_transcripts(
        db,
        [
            Transcript(
                sid,
                "demo",
                "json",
                tuple(
                    Message(i, "user", text, timestamp=when) for i, (text, _, _) in enumerate(said)
                ),
                started_at=when,
            )
            for sid, (when, said) in script.items()
        ],
    )
    pipeline = Pipeline(extractor=TaskScript(script), workdir=workdir)
    for sid in script:
        assert process_session(db, sid, pipeline).status == "success"


def test_as_of_before_the_second_session_shows_the_task_as_the_first_left_it(
    client, site: Database, tmp_path: Path
) -> None:
    task_id = _two_sessions(site, tmp_path)
    page = client.get("/tasks/", {"as_of": "2026-03-15"}).content.decode()
    assert TITLE in page and LATER not in page
    assert "task-in_progress" in page and "task-done" not in page
    assert TITLE in client.get("/tasks/").content.decode()
    assert LATER in client.get("/tasks/").content.decode()

    detail = client.get(f"/tasks/{task_id}/", {"as_of": "2026-03-15"})
    assert detail.status_code == 200
    html = detail.content.decode()
    assert "task-in_progress" in html and "Showing what was known on 2026-03-15" in html
    assert "task-done" in client.get(f"/tasks/{task_id}/").content.decode()
    assert client.get(f"/tasks/{task_id}/", {"as_of": "2026-03-01"}).status_code == 404


def test_a_bad_as_of_on_the_task_list_is_reported_and_ignored(
    client, site: Database, tmp_path: Path
) -> None:
    _two_sessions(site, tmp_path)
    html = client.get("/tasks/", {"as_of": "last tuesday"}).content.decode()
    assert "is not an ISO 8601 date" in html and LATER in html


def test_the_cli_lists_tasks_as_of_a_date(db: Database, data_dir: Path, tmp_path: Path) -> None:
    task_id = _two_sessions(db, tmp_path)
    then = run_cli(data_dir, "tasks", "--as-of", "2026-03-15", "--json")
    assert then.returncode == 0, then.stderr
    assert [(t["title"], t["status"]) for t in json.loads(then.stdout)] == [(TITLE, "in_progress")]
    shown = run_cli(data_dir, "task", "show", task_id, "--as-of", "2026-03-15", "--json")
    detail = json.loads(shown.stdout)
    assert detail["status"] == "in_progress" and detail["mention_count"] == 1
    assert {h["session_id"] for h in detail["history"]} == {"early"}
    bad = run_cli(data_dir, "tasks", "--as-of", "someday")
    assert bad.returncode == 1 and "not an ISO 8601 date" in bad.stderr


def test_the_blocked_tasks_page_and_cli_as_of_show_what_was_blocked_then(
    client, site: Database, data_dir: Path, tmp_path: Path
) -> None:
    _run(site, tmp_path, BLOCK_SCRIPT)
    then = client.get("/tasks/blocked/", {"as_of": "2026-05-10"}).content.decode()
    assert BLOCKED_TITLE in then and BLOCKER in then
    assert "Showing what was known on 2026-05-10" in then
    assert BLOCKED_TITLE not in client.get("/tasks/blocked/").content.decode()

    shown = run_cli(data_dir, "blocked", "--as-of", "2026-05-10", "--json")
    assert shown.returncode == 0, shown.stderr
    [item] = json.loads(shown.stdout)
    assert item["title"] == BLOCKED_TITLE and item["status"] == "blocked"
    assert [b["title"] for b in item["blockers"]] == [BLOCKER]
    assert json.loads(run_cli(data_dir, "blocked", "--json").stdout) == []
    assert run_cli(data_dir, "blocked", "--as-of", "2026-05-01", "--json").stdout.strip() == "[]"


EARLY_TODO = ("2026-03-10T09:00:00Z", [(f"New todo: {TITLE}", TITLE, "pending")])

# Imported in this order: the "late" session (said 03-20) before the "middle" one (said
# 03-15), whose "done" the resolver therefore rejects as stale.
OUT_OF_ORDER = {
    "early": EARLY_TODO,
    "late": ("2026-03-20T09:00:00Z", [(f"Reopened: {TITLE}", TITLE, "in_progress")]),
    "middle": ("2026-03-15T09:00:00Z", [(f"Done: {TITLE}", TITLE, "done")]),
}


def test_a_completion_imported_after_a_newer_session_counts_from_when_it_was_said(
    db: Database, tmp_path: Path
) -> None:
    _run(db, tmp_path, OUT_OF_ORDER)
    with db.read() as conn:
        [now] = list_tasks(conn)
        then = {
            when: [(t.status, t.updated_at.isoformat()) for t in list_tasks_as_of(conn, at)]
            for when, at in [
                ("before", datetime(2026, 3, 12)),
                ("between", datetime(2026, 3, 16)),
                ("after", datetime(2026, 3, 21)),
            ]
        }
    assert now.status == "in_progress"  # the newer observation wins today
    assert then == {
        "before": [("pending", "2026-03-10T09:00:00")],
        "between": [("done", "2026-03-15T09:00:00")],
        "after": [("in_progress", "2026-03-20T09:00:00")],
    }


def test_the_api_answers_tasks_as_of_as_the_cli_does(
    client, site: Database, tmp_path: Path
) -> None:
    _run(site, tmp_path, BLOCK_SCRIPT)
    [task] = client.get("/api/v1/tasks", {"as_of": "2026-05-10"}).json()
    assert (task["title"], task["status"]) == (BLOCKED_TITLE, "blocked")
    assert client.get("/api/v1/tasks", {"as_of": "2026-05-01"}).json() == []
    [blocked] = client.get("/api/v1/tasks/blocked", {"as_of": "2026-05-10"}).json()
    assert [b["title"] for b in blocked["blockers"]] == [BLOCKER]
    assert client.get("/api/v1/tasks/blocked").json() == []
    detail = client.get(f"/api/v1/tasks/{task['task_id']}", {"as_of": "2026-05-10"})
    assert detail.status_code == 200 and detail.json()["status"] == "blocked"
    assert client.get(f"/api/v1/tasks/{task['task_id']}").json()["status"] == "done"
    assert (
        client.get(f"/api/v1/tasks/{task['task_id']}", {"as_of": "2026-05-01"}).status_code == 404
    )
    assert client.get("/api/v1/tasks", {"as_of": "someday"}).status_code == 422


def _now_and_far_future(db: Database, workdir: Path, script: dict) -> tuple[str, str]:
    _run(db, workdir, script)
    with db.read() as conn:
        [now] = list_tasks(conn)
        [then] = list_tasks_as_of(conn, datetime(2030, 1, 1))
    return now.status, then.status


def test_a_stale_completion_said_before_the_task_was_created_stays_rejected(
    db: Database, tmp_path: Path
) -> None:
    """The newer session creates the task: its creation is the newer observation."""
    script = {
        "late": ("2026-03-20T09:00:00Z", [(f"Reopened: {TITLE}", TITLE, "in_progress")]),
        "middle": ("2026-03-15T09:00:00Z", [(f"Done: {TITLE}", TITLE, "done")]),
    }
    assert _now_and_far_future(db, tmp_path, script) == ("in_progress", "in_progress")


def test_a_newer_mention_restating_the_status_wins_over_a_stale_change(
    db: Database, tmp_path: Path
) -> None:
    """ "Still pending" on 03-20 moved nothing, but it is newer than the stale 03-15 done."""
    script = {
        "early": EARLY_TODO,
        "late": ("2026-03-20T09:00:00Z", [(f"Still todo: {TITLE}", TITLE, "pending")]),
        "middle": ("2026-03-15T09:00:00Z", [(f"Done: {TITLE}", TITLE, "done")]),
    }
    assert _now_and_far_future(db, tmp_path, script) == ("pending", "pending")
    with db.read() as conn:
        [between] = list_tasks_as_of(conn, datetime(2026, 3, 16))
    assert between.status == "done"


def test_a_stale_block_decided_again_shows_the_blocker_it_named(
    db: Database, tmp_path: Path
) -> None:
    script = {
        "early": EARLY_TODO,
        "late": ("2026-03-20T09:00:00Z", [(f"Started: {TITLE}", TITLE, "in_progress")]),
        "middle": ("2026-03-15T09:00:00Z", [(f"{TITLE} waits on {BLOCKER}", TITLE, "blocked")]),
    }
    _run(db, tmp_path, script)
    with db.read() as conn:
        [now] = list_tasks(conn)
        [between] = list_blocked_tasks_as_of(conn, datetime(2026, 3, 16))
        [later] = list_tasks_as_of(conn, datetime(2030, 1, 1))
    assert now.status == later.status == "in_progress"
    assert [b.title for b in between.blockers] == [BLOCKER]


def test_a_restated_status_after_a_stale_change_keeps_the_blockers_it_had(
    db: Database,
) -> None:
    """Day 0 names a blocker; day 1 restates pending; a day-0 "blocked" without blockers,
    recorded later, is stale: as of any later time the task is as now (found by the
    resolver state machine at more examples)."""
    said = [(None, 0, ("PLAT-142",), True), ("pending", 1, (), False), ("blocked", 0, (), False)]
    assert _said_now_and_far_future(db, said) == ([("pending", 1)], [("pending", 1)])


def test_a_completion_said_before_a_blocker_was_named_leaves_the_task_without_it(
    db: Database,
) -> None:
    """Day 1 names a blocker (no status); a day-0 "done", recorded later, is not stale (a
    blocker is not a status observation) and clears it. Folded in said order the blocker
    comes after the completion; as of any later time the task is done without blockers,
    as now (found by the resolver state machine in the full suite)."""
    said = [(None, 0, (), False), (None, 1, ("PLAT-142",), True), ("done", 0, (), False)]
    assert _said_now_and_far_future(db, said) == ([("done", 0)], [("done", 0)])


def test_a_stale_completion_decided_again_leaves_a_later_block_its_blocker(
    db: Database,
) -> None:
    """Day 1 blocks the task (a placeholder blocker); a day-0 "done", recorded later, is
    stale and never cleared anything. Decided again in said order it comes before the
    block, which keeps its blocker (a first fix of the test above broke this; the state
    machine found it)."""
    said = [(None, 0, (), False), ("blocked", 1, (), False), ("done", 0, (), False)]
    assert _said_now_and_far_future(db, said) == ([("blocked", 1)], [("blocked", 1)])


def test_a_blocker_named_after_a_stale_change_survives_the_restated_status(
    db: Database,
) -> None:
    """Day 1 names a blocker and restates pending; a day-0 "in_progress", recorded later,
    is stale. Decided again in said order it comes first, then the day-1 blocker, then the
    restated pending: the task keeps the blocker named after the stale change (it put back
    the blockers from before that change, none; the state machine found it)."""
    said = [
        (None, 0, (), False),
        ("pending", 1, ("PLAT-142",), True),
        ("in_progress", 0, (), False),
    ]
    assert _said_now_and_far_future(db, said) == ([("pending", 1)], [("pending", 1)])


def test_a_stale_block_decided_again_does_not_leave_its_blocker_to_a_later_change(
    db: Database,
) -> None:
    """Day 1 starts the task; a day-0 "blocked" (no blocker named), recorded later, is
    stale. Decided again in said order it blocks the task with a placeholder, then the
    day-1 change applies over the blockers from before the block, none, as the table did
    (the state machine found it, seed 15)."""
    said = [(None, 0, (), False), ("in_progress", 1, (), False), ("blocked", 0, (), False)]
    assert _said_now_and_far_future(db, said) == ([("in_progress", 0)], [("in_progress", 0)])


def test_a_stale_completion_decided_again_does_not_clear_the_blockers_a_later_change_kept(
    db: Database,
) -> None:
    """Day 0 names a blocker of a pending task; day 1 starts it (the blocker stays); a
    day-0 "done", recorded later, is stale. Decided again it clears the blocker in said
    order, and the day-1 change applies over the blockers from before it."""
    said = [
        (None, 0, ("PLAT-142",), True),
        ("in_progress", 1, (), False),
        ("done", 0, (), False),
    ]
    assert _said_now_and_far_future(db, said) == ([("in_progress", 1)], [("in_progress", 1)])


def test_the_blockers_a_stale_block_names_are_gone_after_a_later_change(
    db: Database,
) -> None:
    """Day 5 blocks the task on a named blocker, recorded after a day-10 start, so stale;
    its blockers are recorded as suggestions. Decided again, the block holds its blocker
    until day 10, whose change applies over the blockers from before the block, none."""
    said = [("pending", 0, (), True), ("in_progress", 10, (), True)]
    said.append(("blocked", 5, ("PLAT-142",), True))
    assert _said_now_and_far_future(db, said) == ([("in_progress", 0)], [("in_progress", 0)])


def test_blockers_said_before_a_newer_list_do_not_replace_it(db: Database) -> None:
    """Day 1 names two blockers; day 0 names one of them, recorded later. The older list
    is only suggested, so in said order too the newer list is the one that stands (the
    state machine found the table keeping the older list, seed 15)."""
    said = [(None, 0, (), False), (None, 1, ("PLAT-142", "OPS-7"), True)]
    said.append((None, 0, ("PLAT-142",), True))
    assert _said_now_and_far_future(db, said) == ([("pending", 2)], [("pending", 2)])


def test_a_blocker_named_while_a_stale_block_stands_survives_the_restated_status(
    db: Database,
) -> None:
    """Day 1 names a blocker and restates pending; a day-0 "blocked" without blockers,
    recorded later, is stale. Decided again it blocks the task in said order; the day-1
    blocker is named over it, and the restated pending keeps that blocker, as the table
    did (the state machine found the fold dropping it, seed 15)."""
    said = [(None, 0, (), False), ("pending", 1, ("PLAT-142",), True)]
    said.append(("blocked", 0, (), False))
    assert _said_now_and_far_future(db, said) == ([("pending", 1)], [("pending", 1)])


def test_a_stale_completion_decided_again_shows_no_blocker_named_after_it(db: Database) -> None:
    """A day-5 "done", recorded after a day-10 start, is stale; decided again in said
    order, the task is done from day 5, and the blocker day 8 names leaves it without
    blockers as of day 8 (done has none), while the table keeps it on the started task."""
    said = [("pending", 0, (), True), (None, 8, ("PLAT-142",), True)]
    said += [("in_progress", 10, (), True), ("done", 5, (), True)]
    now, later = _said_now_and_far_future(db, said)
    with db.read() as conn:
        then = [
            (t.status, t.blocker_count) for t in list_tasks_as_of(conn, datetime(2025, 1, 9, 12))
        ]
    assert (now, later, then) == ([("in_progress", 1)], [("in_progress", 1)], [("done", 0)])


def _said_now_and_far_future(
    db: Database, said: list[tuple[str | None, int, tuple[str, ...], bool]]
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """The mentions `said` (status, day, blockers, aligned) resolved in this order; each
    task's (status, blocker count) now and as of a far future time."""
    with db.write() as conn:
        for n, (status, day, blocked, aligned) in enumerate(said):
            mention = TaskMention(
                entry_id=f"e{n}",
                session_id=f"s{day}",
                title=TITLE,
                status=status,
                blocked_by=blocked,
                evidence_aligned=aligned,
                source="todowrite",
                observed_at=datetime(2025, 1, 1 + day),
            )
            TaskResolver(conn, "axiom").resolve([mention])
    with db.read() as conn:
        now = [(t.status, t.blocker_count) for t in list_tasks(conn)]
        later = [(t.status, t.blocker_count) for t in list_tasks_as_of(conn, datetime(9999, 1, 1))]
    return now, later
