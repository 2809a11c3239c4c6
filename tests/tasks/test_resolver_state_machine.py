"""A Hypothesis state machine over random task-mention sequences through the real store.

Each example gets a fresh in-memory DuckDB (real DuckDB, migrated with the real files).
Rules feed random mentions — differently worded titles, every status word (and garbage),
blockers of every kind (artifact ids, conditions, task titles, nonsense, unknown task ids),
aligned or not, observed in or out of order — re-process earlier mentions, resolve
conditions, and rebuild the projection. After every step:

* blocked ⇒ ≥ 1 effective blocker; done ⇒ no blocker at all (declared or effective);
* no ``task_status_changed`` outside the transition table (so never pending → done);
* a prose "pending" (a TODO restating a known task) moves no task back to pending and
  asks to reopen none;
* each task's projected state equals the fold of its events;
* the tasks as of a far future time (`axiom.tasks.as_of`, events folded in said order,
  stale changes decided again) are the current ones;
* re-processing creates no event, entity, alias or edge;
* the incremental projection equals a full rebuild (checked by the `rebuild` rule and at
  the end of every example).
"""

from __future__ import annotations

import contextlib
import json
from datetime import datetime, timedelta

import duckdb
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from axiom.store.event_types import TASK_STATUS_CHANGED
from axiom.store.migrate import migration_files
from axiom.store.projection import rebuild
from axiom.tasks.as_of import get_task_as_of, list_tasks_as_of
from axiom.tasks.canonical import normalize_text
from axiom.tasks.commands import TaskCommandError, resolve_condition
from axiom.tasks.projector import TaskProjector
from axiom.tasks.queries import list_tasks
from axiom.tasks.resolver import TaskMention, TaskResolver, load_task_state
from axiom.tasks.state import TASK_EVENT_TYPES, TaskState, fold, is_allowed_transition

PROJECT = "axiom"
T0 = datetime(2025, 1, 1)

TITLES = [
    "Write the events migration",
    "write the  events migration.",
    "WRITE THE EVENTS MIGRATION",
    "Write the event migration",
    "Publish the package",
    "publish the package!",
    "Review the design",
    "Fix the login bug",
    "",
    "???",
]
STATUS_WORDS = [
    None,
    "pending",
    "todo",
    "in_progress",
    "doing",
    "blocked",
    "waiting",
    "done",
    "completed",
    "cancelled",
    "sort of finished",
]
BLOCKERS = [
    "PLAT-142",
    "https://github.com/acme/api/issues/7",
    "waiting on the design review",
    "review the design",
    "Publish the package",
    "tsk_0123456789ab",
    "",
    "???",
]


def _tables(conn: duckdb.DuckDBPyConnection) -> dict[str, list[tuple]]:
    return {
        t: conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
        for t in ("entities", "entity_aliases", "edges")
    }


class TaskMentions(RuleBasedStateMachine):
    @initialize()
    def setup(self) -> None:
        self.conn = duckdb.connect(":memory:")
        for path in migration_files():
            self.conn.execute(path.read_text(encoding="utf-8"))
        self.mentions: list[TaskMention] = []
        self.counter = 0

    def teardown(self) -> None:
        if hasattr(self, "conn"):
            self.check_rebuild_equals_incremental()
            self.conn.close()

    def resolver(self) -> TaskResolver:
        return TaskResolver(self.conn, PROJECT)

    @rule(
        title=st.sampled_from(TITLES),
        status=st.sampled_from(STATUS_WORDS),
        priority=st.sampled_from([None, "high", "low", "p1", "whenever"]),
        blockers=st.lists(st.sampled_from(BLOCKERS), max_size=3),
        aligned=st.booleans(),
        source=st.sampled_from(["todowrite", "text"]),
        day=st.integers(min_value=0, max_value=30),
    )
    def mention(self, title, status, priority, blockers, aligned, source, day) -> None:
        self.counter += 1
        m = TaskMention(
            entry_id=f"e{self.counter}",
            session_id=f"s{day}",
            title=title,
            status=status,
            priority=priority,
            blocked_by=tuple(blockers),
            evidence_aligned=aligned,
            source=source,
            observed_at=T0 + timedelta(days=day),
        )
        self.mentions.append(m)
        self.resolver().resolve([m])

    @precondition(lambda self: self.mentions)
    @rule(data=st.data())
    def reprocess(self, data) -> None:
        chosen = data.draw(st.lists(st.sampled_from(self.mentions), min_size=1, max_size=5))
        before_events = self.conn.execute("SELECT count(*) FROM events").fetchone()[0]
        before = _tables(self.conn)
        assert self.resolver().resolve(chosen) == []
        assert self.conn.execute("SELECT count(*) FROM events").fetchone()[0] == before_events
        assert _tables(self.conn) == before

    @rule(data=st.data())
    def resolve_a_condition(self, data) -> None:
        conditions = [r[0] for r in self.conn.execute(
            "SELECT entity_id FROM entities WHERE entity_type = 'condition' ORDER BY entity_id"
        ).fetchall()]  # fmt: skip
        targets = [r[0] for r in self.conn.execute(
            "SELECT entity_id FROM entities ORDER BY entity_id"
        ).fetchall()]  # fmt: skip
        if not conditions or not targets:
            return
        cond = data.draw(st.sampled_from(conditions))
        target = data.draw(st.sampled_from(targets))
        with contextlib.suppress(TaskCommandError):
            resolve_condition(self.conn, cond, target, reason="test")

    @rule()
    def rebuild_projection(self) -> None:
        self.check_rebuild_equals_incremental()

    def check_rebuild_equals_incremental(self) -> None:
        incremental = _tables(self.conn)
        rebuild(self.conn, [TaskProjector()])
        assert _tables(self.conn) == incremental

    # ------------------------------------------------------------------ invariants

    def task_rows(self) -> list[tuple[str, dict]]:
        rows = self.conn.execute(
            "SELECT entity_id, current_json FROM entities WHERE entity_type = 'task'"
        ).fetchall()
        return [(tid, json.loads(data)) for tid, data in rows]

    @invariant()
    def blocked_has_a_blocker_and_done_has_none(self) -> None:
        for task_id, data in self.task_rows():
            effective = self.conn.execute(
                "SELECT count(*) FROM v_task_blockers_effective WHERE task_id = ?", [task_id]
            ).fetchone()[0]
            declared = self.conn.execute(
                "SELECT count(*) FROM edges WHERE src_id = ? AND rel_type = 'blocked_by'",
                [task_id],
            ).fetchone()[0]
            if data["status"] == "blocked":
                assert effective >= 1 and declared >= 1, task_id
            if data["status"] == "done":
                assert effective == 0 and declared == 0, task_id
                assert data["blockers"] == []

    @invariant()
    def every_status_change_is_in_the_table(self) -> None:
        for (payload,) in self.conn.execute(
            "SELECT payload_json FROM events WHERE event_type = ?", [TASK_STATUS_CHANGED]
        ).fetchall():
            p = json.loads(payload)
            assert is_allowed_transition(p["from"], p["to"]), p
            assert (p["from"], p["to"]) != ("pending", "done")

    @invariant()
    def a_prose_todo_never_demotes_a_task(self) -> None:
        """Prose reads "pending" into every TODO: that restates work, it moves nothing
        back to pending and reopens nothing (TodoWrite's explicit "pending" still may)."""
        for (payload,) in self.conn.execute(
            "SELECT payload_json FROM events WHERE event_type IN (?, ?)",
            [TASK_STATUS_CHANGED, "task_transition_rejected"],
        ).fetchall():
            p = json.loads(payload)
            if p.get("source") == "text" and p["to"] == "pending":
                assert not p["reason"].startswith(("observed in entry", "closed_needs")), p

    @invariant()
    def projection_equals_the_fold_of_each_task(self) -> None:
        marks = ", ".join("?" for _ in TASK_EVENT_TYPES)
        for task_id, data in self.task_rows():
            events = self.conn.execute(
                f"SELECT event_type, payload_json FROM events WHERE event_type IN ({marks})"
                " AND json_extract_string(payload_json, '$.task_id') = ? ORDER BY ts, event_id",
                [*sorted(TASK_EVENT_TYPES), task_id],
            ).fetchall()
            assert TaskState.from_json(data) == fold((t, json.loads(p)) for t, p in events)

    @invariant()
    def as_of_the_far_future_is_now(self) -> None:
        def shown(tasks: list) -> list[tuple]:
            return sorted((t.task_id, t.title, t.status, t.blocker_count) for t in tasks)

        far = datetime(9999, 1, 1)
        now = shown(list_tasks(self.conn))
        assert shown(list_tasks_as_of(self.conn, far)) == now
        for task_id, *_ in now:  # the same blockers, not only as many
            state, _ = load_task_state(self.conn, task_id)
            then = get_task_as_of(self.conn, task_id, far)
            assert then is not None
            assert sorted(b.entity_id for b in then.blockers) == sorted(state.blocker_ids)

    @invariant()
    def one_entity_per_wording(self) -> None:
        """Every wording that normalizes the same way always lands on the same task, and a
        family of close wordings has at most one open task (a fuzzy variant may start a new
        task only when the one it resembles is cancelled, which makes it ineligible)."""
        seen: dict[str, set[str]] = {}
        for (payload,) in self.conn.execute(
            "SELECT payload_json FROM events WHERE event_type = 'task_mentioned'"
        ).fetchall():
            p = json.loads(payload)
            seen.setdefault(normalize_text(p["title"]), set()).add(p["task_id"])
        assert all(len(ids) == 1 for ids in seen.values()), seen
        for family in ("migration", "publish"):
            open_tasks = [
                tid
                for tid, data in self.task_rows()
                if family in data["title"].lower() and data["status"] != "cancelled"
            ]
            assert len(open_tasks) <= 1, (family, open_tasks)


TaskMentions.TestCase.settings = settings(
    max_examples=20,
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_task_mentions = TaskMentions.TestCase
