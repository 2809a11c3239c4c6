"""The task aggregate: decisions, the fold, and a state machine over random decisions."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from axiom.store.event_types import (
    TASK_BLOCKERS_SET,
    TASK_CREATED,
    TASK_PRIORITY_CHANGED,
    TASK_STATUS_CHANGED,
    TASK_TITLE_CHANGED,
    TASK_TRANSITION_REJECTED,
)
from axiom.tasks.canonical import entity_id_for, placeholder_condition_key, task_key
from axiom.tasks.state import (
    ALLOWED_TRANSITIONS,
    BLOCKED,
    CANCELLED,
    DONE,
    IN_PROGRESS,
    PENDING,
    PRIORITIES,
    REOPEN_TRANSITIONS,
    STATUSES,
    BlockerRef,
    TaskEventError,
    TaskState,
    coerce_priority,
    coerce_status,
    decide_blocker_resolved,
    decide_blockers,
    decide_create,
    decide_priority,
    decide_status,
    decide_title,
    evolve,
    fold,
    is_allowed_transition,
    placeholder_blocker,
)

PROJECT = "axiom"
TITLE = "Fix the login bug"
KEY = task_key(PROJECT, TITLE)
TID = entity_id_for(KEY)

API_KEY = BlockerRef(entity_id="cnd_000000000001", kind="condition", raw_text="API key")
OTHER_TASK = BlockerRef(entity_id="tsk_000000000002", kind="task", raw_text="deploy")
JIRA = BlockerRef(entity_id="art_000000000003", kind="artifact", raw_text="OPS-1")
POOL = (API_KEY, OTHER_TASK, JIRA)


def create(status: str = PENDING, blockers=(), **kw) -> list:
    return decide_create(TID, TITLE, KEY, PROJECT, status, kw.pop("priority", None), blockers, **kw)


def run(*decisions: list) -> tuple[TaskState, list]:
    events = [e for d in decisions for e in d]
    state = fold(events)
    assert state is not None
    return state, events


def then(state: TaskState, events: list) -> TaskState:
    for event_type, payload in events:
        state = evolve(state, event_type, payload)
    return state


def statuses(events: list) -> list[tuple[str, str]]:
    return [(p["from"], p["to"]) for t, p in events if t == TASK_STATUS_CHANGED]


# --------------------------------------------------------------------------- create


def test_create_plain_task() -> None:
    events = create(priority="high")
    assert events == [
        (
            TASK_CREATED,
            {
                "task_id": TID,
                "title": TITLE,
                "canonical_key": KEY,
                "project": PROJECT,
                "status": PENDING,
                "priority": "high",
            },
        )
    ]
    state = fold(events)
    assert state == TaskState(TID, TITLE, KEY, PROJECT, PENDING, "high")
    assert state.version == 1


def test_new_task_never_starts_done() -> None:
    state, events = run(create(DONE))
    assert events[0][1]["status"] == IN_PROGRESS
    assert state.status == IN_PROGRESS


def test_status_none_means_pending() -> None:
    assert fold(create(None)).status == PENDING


def test_new_blocked_task_without_blockers_gets_a_placeholder() -> None:
    state, events = run(create(BLOCKED))
    assert [t for t, _ in events] == [TASK_CREATED, TASK_BLOCKERS_SET]
    payload = events[1][1]
    assert payload["mode"] == "replace"
    assert payload["blockers"][0]["auto_placeholder"] is True
    assert state.status == BLOCKED
    assert state.has_placeholder_blocker
    expected = entity_id_for(placeholder_condition_key(PROJECT, TID))
    assert state.blockers[0].entity_id == expected
    assert state.blockers == (placeholder_blocker(PROJECT, TID),)


def test_placeholder_can_be_supplied_as_ref_or_callable() -> None:
    ref = BlockerRef("cnd_custom000000", "condition", "who knows")
    by_ref = fold(create(BLOCKED, placeholder=ref))
    by_call = fold(create(BLOCKED, placeholder=lambda: ref))
    assert by_ref.blockers == by_call.blockers
    assert by_ref.blockers[0].entity_id == "cnd_custom000000"
    assert by_ref.blockers[0].auto_placeholder is True


def test_placeholder_callable_is_not_called_when_not_needed() -> None:
    def boom() -> BlockerRef:
        raise AssertionError("placeholder should not be needed")

    state = fold(create(BLOCKED, [API_KEY], placeholder=boom))
    assert state.blockers == (API_KEY,)


def test_new_blocked_task_with_unaligned_blockers_suggests_and_gets_a_placeholder() -> None:
    state, events = run(create(BLOCKED, [API_KEY], evidence_aligned=False))
    modes = [p["mode"] for t, p in events if t == TASK_BLOCKERS_SET]
    assert modes == ["suggest", "replace"]
    assert state.suggested_blockers == (API_KEY,)
    assert state.has_placeholder_blocker


def test_create_validates_input() -> None:
    with pytest.raises(ValueError):
        create("finished")
    with pytest.raises(ValueError):
        create(priority="urgent")
    with pytest.raises(ValueError):
        decide_create(TID, "   ", KEY, PROJECT)


# --------------------------------------------------------------------------- status


def test_same_status_is_a_no_op() -> None:
    state = fold(create(IN_PROGRESS))
    assert decide_status(state, IN_PROGRESS, "again") == []


def test_pending_to_done_goes_through_in_progress() -> None:
    state = fold(create())
    events = decide_status(state, DONE, "tests pass")
    assert statuses(events) == [(PENDING, IN_PROGRESS), (IN_PROGRESS, DONE)]
    assert events[0][1]["reason"] == "implied: tests pass"
    assert events[1][1]["reason"] == "tests pass"
    assert then(state, events).status == DONE


def test_blocked_to_done_goes_through_in_progress_and_clears_blockers() -> None:
    state = fold(create(BLOCKED, [API_KEY]))
    state = then(state, decide_blockers(state, [JIRA], evidence_aligned=False))
    events = decide_status(state, DONE)
    assert statuses(events) == [(BLOCKED, IN_PROGRESS), (IN_PROGRESS, DONE)]
    done = then(state, events)
    assert done.blockers == () and done.suggested_blockers == ()


def test_to_blocked_applies_blockers_before_the_status() -> None:
    state = fold(create(IN_PROGRESS))
    events = decide_status(state, BLOCKED, "waiting", [API_KEY, JIRA])
    assert [t for t, _ in events] == [TASK_BLOCKERS_SET, TASK_STATUS_CHANGED]
    after = then(state, events)
    assert after.status == BLOCKED and after.blockers == (API_KEY, JIRA)


def test_to_blocked_without_blockers_uses_existing_or_placeholder() -> None:
    state = fold(create(IN_PROGRESS, [API_KEY]))
    assert [t for t, _ in decide_status(state, BLOCKED)] == [TASK_STATUS_CHANGED]
    bare = fold(create(IN_PROGRESS))
    after = then(bare, decide_status(bare, BLOCKED))
    assert after.has_placeholder_blocker


def test_done_is_closed_without_reopen() -> None:
    state = fold(create(IN_PROGRESS))
    state = then(state, decide_status(state, DONE))
    for target in (PENDING, IN_PROGRESS, BLOCKED, CANCELLED):
        events = decide_status(state, target, "stale snapshot")
        assert events == [
            (
                TASK_TRANSITION_REJECTED,
                {
                    "task_id": TID,
                    "from": DONE,
                    "to": target,
                    "reason": "closed_needs_reopen: stale snapshot",
                },
            )
        ]
        rejected = then(state, events)
        assert rejected.status == DONE
        assert rejected.version == state.version + 1
        assert rejected.rejected_transitions == 1


def test_reopen_done_and_cancelled() -> None:
    done = fold(create(IN_PROGRESS))
    done = then(done, decide_status(done, DONE))
    assert statuses(decide_status(done, IN_PROGRESS, reopen=True)) == [(DONE, IN_PROGRESS)]
    cancelled = fold(create(CANCELLED))
    assert statuses(decide_status(cancelled, PENDING, reopen=True)) == [(CANCELLED, PENDING)]
    reopened = then(cancelled, decide_status(cancelled, BLOCKED, reopen=True))
    assert reopened.status == BLOCKED and reopened.blockers


def test_done_to_cancelled_is_never_allowed() -> None:
    done = fold(create(IN_PROGRESS))
    done = then(done, decide_status(done, DONE))
    events = decide_status(done, CANCELLED, reopen=True)
    assert events[0][0] == TASK_TRANSITION_REJECTED
    assert events[0][1]["reason"] == "not_allowed"


def test_cancelled_to_done_needs_reopen_and_goes_through_in_progress() -> None:
    cancelled = fold(create(CANCELLED))
    assert decide_status(cancelled, DONE)[0][0] == TASK_TRANSITION_REJECTED
    events = decide_status(cancelled, DONE, reopen=True)
    assert statuses(events) == [(CANCELLED, IN_PROGRESS), (IN_PROGRESS, DONE)]


def test_decide_status_rejects_unknown_input() -> None:
    with pytest.raises(ValueError):
        decide_status(None, DONE)
    with pytest.raises(ValueError):
        decide_status(fold(create()), "completed")


# --------------------------------------------------------------------------- blockers


def test_aligned_blockers_replace_and_unchanged_is_a_no_op() -> None:
    state = fold(create(BLOCKED, [API_KEY]))
    events = decide_blockers(state, [OTHER_TASK, JIRA], evidence_aligned=True)
    assert events[0][1]["mode"] == "replace"
    state = then(state, events)
    assert state.blockers == (OTHER_TASK, JIRA)
    assert decide_blockers(state, [JIRA, OTHER_TASK], evidence_aligned=True) == []
    renamed = BlockerRef(JIRA.entity_id, "artifact", raw_text="OPS-1 (again)")
    assert decide_blockers(state, [JIRA, OTHER_TASK, renamed], evidence_aligned=True) == []


def test_unaligned_blockers_only_add_suggestions() -> None:
    state = fold(create(BLOCKED, [API_KEY]))
    events = decide_blockers(state, [API_KEY, JIRA], evidence_aligned=False)
    assert events == [
        (TASK_BLOCKERS_SET, {"task_id": TID, "mode": "suggest", "blockers": [JIRA.to_json()]})
    ]
    state = then(state, events)
    assert state.blockers == (API_KEY,)
    assert state.suggested_blockers == (JIRA,)
    assert decide_blockers(state, [JIRA], evidence_aligned=False) == []


def test_replace_promotes_a_suggestion() -> None:
    state = fold(create(IN_PROGRESS, [JIRA], evidence_aligned=False))
    assert state.suggested_blockers == (JIRA,)
    state = then(state, decide_blockers(state, [JIRA], evidence_aligned=True))
    assert state.blockers == (JIRA,) and state.suggested_blockers == ()


def test_empty_aligned_list_clears_unless_blocked() -> None:
    working = fold(create(IN_PROGRESS, [API_KEY]))
    assert then(working, decide_blockers(working, [], evidence_aligned=True)).blockers == ()
    blocked = fold(create(BLOCKED, [API_KEY]))
    assert decide_blockers(blocked, [], evidence_aligned=True) == []


def test_real_blockers_replace_the_placeholder() -> None:
    state = fold(create(BLOCKED))
    state = then(state, decide_blockers(state, [API_KEY], evidence_aligned=True))
    assert state.blockers == (API_KEY,)
    assert not state.has_placeholder_blocker


def test_done_task_takes_blockers_only_as_suggestions() -> None:
    state = fold(create(IN_PROGRESS))
    state = then(state, decide_status(state, DONE))
    events = decide_blockers(state, [API_KEY], evidence_aligned=True)
    assert [p["mode"] for _, p in events] == ["suggest"]
    assert then(state, events).blockers == ()


# --------------------------------------------------------------------------- priority, title


def test_priority_changes_and_none_does_not_erase() -> None:
    state = fold(create(priority="low"))
    events = decide_priority(state, "high")
    assert events == [(TASK_PRIORITY_CHANGED, {"task_id": TID, "from": "low", "to": "high"})]
    state = then(state, events)
    assert state.priority == "high"
    assert decide_priority(state, None) == []
    assert decide_priority(state, "high") == []


def test_title_changes_only_beyond_normalization() -> None:
    state = fold(create())
    assert decide_title(state, "fix the LOGIN bug!") == []
    events = decide_title(state, "Fix the login and signup bugs")
    assert events[0][0] == TASK_TITLE_CHANGED
    # the alias key travels in the event, so a replay never recomputes it under a new rule
    assert events[0][1]["alias_key"] == task_key(state.project, "Fix the login and signup bugs")
    assert then(state, events).title == "Fix the login and signup bugs"
    assert then(state, events).canonical_key == KEY


# --------------------------------------------------------------------------- fold


def test_fold_rejects_corrupt_streams() -> None:
    created = create()
    with pytest.raises(TaskEventError):
        fold(decide_status(fold(created), IN_PROGRESS))
    with pytest.raises(TaskEventError):
        fold(created + created)
    other = (TASK_STATUS_CHANGED, {"task_id": "tsk_other", "from": PENDING, "to": DONE})
    with pytest.raises(TaskEventError):
        fold([*created, other])


def test_fold_ignores_other_event_types_and_empty() -> None:
    assert fold([]) is None
    state = fold([*create(), ("condition_declared", {"entity_id": "cnd_x"})])
    assert state.version == 1


def test_fold_does_not_revalidate_history() -> None:
    # History written under an older rule replays as written.
    legacy = [*create(), (TASK_STATUS_CHANGED, {"task_id": TID, "from": PENDING, "to": DONE})]
    assert fold(legacy).status == DONE


def test_state_to_json_round_trips_blockers() -> None:
    state = fold(create(BLOCKED, [API_KEY, JIRA]))
    data = json.loads(json.dumps(state.to_json()))
    assert [BlockerRef.from_json(b) for b in data["blockers"]] == list(state.blockers)
    assert data["status"] == BLOCKED


def test_coerce_vocabulary() -> None:
    assert coerce_status("Completed") == DONE
    assert coerce_status("in-progress") == IN_PROGRESS
    assert coerce_status("in_progress") == IN_PROGRESS
    assert coerce_status("canceled") == CANCELLED
    assert coerce_status("whatever") is None
    assert coerce_priority("P0") == "high"
    assert coerce_priority("normal") == "medium"
    assert coerce_priority(None) is None


def test_unblocking_clears_the_blockers() -> None:
    state, _ = run(create(BLOCKED, [JIRA]))
    events = decide_status(state, IN_PROGRESS, "unblocked")
    assert [t for t, _ in events] == [TASK_STATUS_CHANGED, TASK_BLOCKERS_SET]
    after = then(state, events)
    assert (after.status, after.blockers) == (IN_PROGRESS, ())


def test_a_resolved_blocker_is_taken_off_and_the_last_one_unblocks() -> None:
    state, _ = run(create(BLOCKED, [JIRA, API_KEY]))
    state = then(state, decide_blocker_resolved(state, JIRA.entity_id, "OPS-1 done"))
    assert (state.status, state.blocker_ids) == (BLOCKED, {API_KEY.entity_id})
    state = then(state, decide_blocker_resolved(state, API_KEY.entity_id))
    assert (state.status, state.blockers) == (PENDING, ())
    assert decide_blocker_resolved(state, API_KEY.entity_id) == []


def test_transition_tables_cover_every_status_and_never_allow_pending_to_done() -> None:
    assert set(ALLOWED_TRANSITIONS) == set(STATUSES) == set(REOPEN_TRANSITIONS)
    for reopen in (False, True):
        assert not is_allowed_transition(PENDING, DONE, reopen=reopen)
        for status in STATUSES:
            assert not is_allowed_transition(status, status, reopen=reopen)
    for status in STATUSES:
        if status != IN_PROGRESS:
            assert DONE not in ALLOWED_TRANSITIONS[status] | REOPEN_TRANSITIONS[status]


# --------------------------------------------------------------------------- state machine

blocker_lists = st.lists(st.sampled_from(POOL), max_size=3)
statuses_st = st.sampled_from(STATUSES)
priorities_st = st.one_of(st.none(), st.sampled_from(PRIORITIES))


class TaskMachine(RuleBasedStateMachine):
    """Random decisions on one task; every produced event is applied incrementally."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[tuple[str, dict]] = []
        self.state: TaskState | None = None
        self.reopen_allowed: set[tuple[str, str]] = set()

    def _apply(self, events: list, *, reopen: bool = False) -> None:
        for event_type, payload in events:
            assert set(payload) >= {"task_id"}
            if event_type == TASK_STATUS_CHANGED:
                frm, to = payload["from"], payload["to"]
                assert frm == self.state.status, "status events chain from the current status"
                assert (frm, to) != (PENDING, DONE)
                assert is_allowed_transition(frm, to, reopen=reopen), (frm, to)
                if to == DONE:
                    assert frm == IN_PROGRESS
                event(f"status {frm} -> {to}")
            if event_type == TASK_TRANSITION_REJECTED:
                assert len(events) == 1
                event(f"rejected {payload['from']} -> {payload['to']}")
            self.state = evolve(self.state, event_type, payload)
            self.events.append((event_type, payload))

    @initialize(
        status=st.one_of(st.none(), statuses_st),
        priority=priorities_st,
        blockers=blocker_lists,
        aligned=st.booleans(),
    )
    def create(self, status, priority, blockers, aligned) -> None:
        events = decide_create(
            TID, TITLE, KEY, PROJECT, status, priority, blockers, evidence_aligned=aligned
        )
        assert events[0][0] == TASK_CREATED
        assert events[0][1]["status"] != DONE
        self.state = evolve(None, *events[0])
        self.events.append(events[0])
        self._apply(events[1:])

    @rule(to=statuses_st, blockers=blocker_lists, aligned=st.booleans(), reopen=st.booleans())
    def change_status(self, to, blockers, aligned, reopen) -> None:
        before = self.state
        events = decide_status(
            before, to, "observed", blockers, evidence_aligned=aligned, reopen=reopen
        )
        if to == before.status:
            assert events == []
        self._apply(events, reopen=reopen)
        if events and events[0][0] == TASK_TRANSITION_REJECTED:
            assert self.state.status == before.status
            assert before.is_closed or not reopen
        else:
            assert self.state.status == to
            if before.status == BLOCKED and to in (PENDING, IN_PROGRESS):
                assert self.state.blockers == (), "an unblocked task keeps no blockers"
            # Re-deciding the same observation is a no-op.
            assert decide_status(self.state, to, "observed", blockers, reopen=reopen) == []

    @rule(blockers=blocker_lists, aligned=st.booleans())
    def set_blockers(self, blockers, aligned) -> None:
        before = self.state
        events = decide_blockers(before, blockers, aligned)
        assert all(t == TASK_BLOCKERS_SET for t, _ in events)
        if not aligned or before.status == DONE:
            assert all(p["mode"] == "suggest" for _, p in events)
        self._apply(events)
        assert self.state.status == before.status
        assert decide_blockers(self.state, blockers, aligned) == []
        if aligned and before.status != DONE and blockers:
            assert self.state.blocker_ids == {b.entity_id for b in blockers}

    @rule(blocker=st.sampled_from(POOL))
    def resolve_blocker(self, blocker) -> None:
        before = self.state
        self._apply(decide_blocker_resolved(before, blocker.entity_id, "ticket done"))
        assert blocker.entity_id not in self.state.blocker_ids or before.is_closed
        if not before.is_closed and before.blocker_ids <= {blocker.entity_id}:
            # every blocker resolved => not blocked
            assert self.state.status != BLOCKED and self.state.blockers == ()
        else:
            assert self.state.status == before.status
        assert decide_blocker_resolved(self.state, blocker.entity_id) == []

    @rule(priority=priorities_st)
    def change_priority(self, priority) -> None:
        self._apply(decide_priority(self.state, priority))
        if priority is not None:
            assert self.state.priority == priority
        assert decide_priority(self.state, priority) == []

    @rule(title=st.sampled_from([TITLE, "fix the LOGIN bug!", "Fix login + signup", "로그인 버그"]))
    def change_title(self, title) -> None:
        self._apply(decide_title(self.state, title))
        assert decide_title(self.state, title) == []

    @precondition(lambda self: self.state is not None)
    @invariant()
    def blocked_has_a_blocker(self) -> None:
        if self.state.status == BLOCKED:
            assert len(self.state.blockers) >= 1

    @precondition(lambda self: self.state is not None)
    @invariant()
    def done_has_no_blockers(self) -> None:
        # Entering done also clears suggestions, but later observations may add new ones
        # (recorded for review); real blockers never.
        if self.state.status == DONE:
            assert self.state.blockers == ()

    @precondition(lambda self: self.state is not None)
    @invariant()
    def no_duplicate_blockers(self) -> None:
        ids = [b.entity_id for b in self.state.blockers]
        assert len(ids) == len(set(ids))
        suggested = {b.entity_id for b in self.state.suggested_blockers}
        assert len(suggested) == len(self.state.suggested_blockers)
        assert not suggested & set(ids)

    @precondition(lambda self: self.state is not None)
    @invariant()
    def rebuild_equals_incremental(self) -> None:
        assert fold(self.events) == self.state
        # ... also after a round trip through JSON, as events come back from DuckDB.
        stored = json.loads(json.dumps(self.events))
        assert fold((t, p) for t, p in stored) == self.state
        assert self.state.version == len(self.events)

    @precondition(lambda self: self.state is not None)
    @invariant()
    def history_never_jumps_pending_to_done(self) -> None:
        for frm, to in statuses(self.events):
            assert (frm, to) != (PENDING, DONE)
            assert to in ALLOWED_TRANSITIONS[frm] | REOPEN_TRANSITIONS[frm]


TaskMachine.TestCase.settings = settings(
    max_examples=300,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_task_machine = TaskMachine.TestCase
