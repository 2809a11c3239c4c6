"""TaskResolver: turns task mentions from extracted entries into task events.

The pipeline calls, inside its write transaction, after the session's entries exist::

    TaskResolver(conn, project, build_id=build_id).resolve(mentions) -> list[StoredEvent]

For each `TaskMention`, in order:

1. **Already processed?** The receipt ``task_mentioned`` has dedupe key
   ``task_mentioned:{mention_key}`` (`axiom.tasks.events.mention_key`: entry id + title).
   If it exists, the mention is skipped: re-processing a session appends nothing, even
   when later sessions have moved the task on since.
2. **Validate.** No entry id or a title with no letters/digits → one
   ``task_input_rejected`` and no task (never a stub). An unknown status or priority
   word, or a TodoWrite item without a status, is recorded as ``task_input_rejected``
   for that field and the rest of the mention is still used. Problems the extractor
   already found in the mention (`TaskMention.problems`: a TodoWrite status
   ``"frobnicated"``, a priority ``5``) are recorded the same way, with their original
   values.
3. **Match** (`TaskMatcher`): the exact canonical-key hit is the same task; else a strict
   match (see `axiom.tasks.matcher`; a mention from prose, not TodoWrite, may name a task
   by part of its title: ``partial_title``) is the same task and the new wording becomes an
   alias — but not a partial title: that fragment of prose is no name of the task, and as
   an alias key it would later join a TodoWrite item of that wording by exact key; else
   a new task is created (`decide_create`: never done on creation, blocked
   without blockers gets a placeholder condition). Non-strict candidates are kept on the
   receipt as possible duplicates. A mention marked `update_only` (a status report from
   prose) that matches no task creates none: one ``task_input_rejected`` with reason
   ``no_task_to_update`` — unless it says "done" of a blocker ("OPS-55 is done": an
   artifact by its key, or a condition by its text). Then that blocker is taken off each
   open task it blocks (`decide_blocker_resolved`, also through a condition resolving to
   it), and a task left with none goes back to pending; a task whose status or blockers
   were observed later than the report is left alone. A task that becomes done is taken
   off the tasks it blocks the same way.
4. **Stale observations.** A mention observed before the newest status observation
   already recorded for the task (``observed_at`` older) does not move status or
   priority: a differing status is recorded as ``task_transition_rejected`` with reason
   ``stale_observation`` (carrying the blockers it named, so `axiom.tasks.as_of` can
   decide it again in said order), and its blockers only as suggestions. So are the
   blockers of a mention observed before the task's blockers were last named (in a
   transcript, or by a person: ``last_blockers_observed_at``), and a blocker reported
   done before then stays. This keeps a late re-import of an old session from undoing
   newer progress.
5. **Decide** with `axiom.tasks.state` (`decide_priority`, `decide_status`,
   `decide_blockers`): blockers ``replace`` when the evidence aligned, ``suggest``
   otherwise; illegal transitions are recorded as ``task_transition_rejected``.
   Blockers come from `BlockerResolver`; their ``condition_declared`` /
   ``artifact_declared`` events (and the placeholder's) are appended first.
6. A new task whose text equals an open condition's text resolves that condition to it
   (``condition_resolved_to``).
7. Append everything (each event with a deterministic dedupe key), then advance the
   `TaskProjector` in the same transaction, so the next mention sees this one's task.

Observations that yielded no task at all (`RejectedInput`: a TodoWrite item that is a
plain string, has no usable title, a call without a ``todos`` list) are passed as
``resolve(mentions, rejected=...)`` and each becomes one ``task_input_rejected`` with
``task_id`` null, its original value and where it was (message index, tool-use id, item).
Every rejected value is stored through `axiom.extract.types.json_value`: kept as found
when it is JSON, and a JSON text over 2,000 characters is cut (as `axiom.tasks.events` says).

The resolver reads the task projection (entities / aliases) for matching and current
state, and keeps it current itself by running `TaskProjector` before the first mention
and after each one. All reads and decisions for a mention happen before its first append,
so an unexpected error while planning is recorded as ``task_input_rejected``
(``internal_error``) instead of aborting the pipeline's transaction half-written.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from axiom.extract.types import json_value
from axiom.store.db import is_interrupt
from axiom.store.event_types import (
    CONDITION_RESOLVED_TO,
    TASK_BLOCKERS_SET,
    TASK_CREATED,
    TASK_INPUT_REJECTED,
    TASK_MENTIONED,
    TASK_STATUS_CHANGED,
    TASK_TRANSITION_REJECTED,
)
from axiom.store.events import EventStore, NewEvent, StoredEvent
from axiom.store.projection import run_projector, set_offset
from axiom.tasks.blockers import (
    BlockerResolver,
    ResolvedBlockers,
    blocker_match_text,
    condition_key_for_text,
)
from axiom.tasks.canonical import (
    artifact_keys_in,
    entity_id_for,
    normalize_project,
    normalize_text,
    task_key,
)
from axiom.tasks.events import digest, mention_key
from axiom.tasks.matcher import MatchResult, TaskMatcher, VectorSearch, candidates_json
from axiom.tasks.projector import TaskProjector
from axiom.tasks.queries import condition_status, count_entities, task_json, tasks_blocked_by
from axiom.tasks.state import (
    BLOCKED,
    DONE,
    PENDING,
    REASON_STALE,
    BlockerRef,
    Event,
    TaskState,
    coerce_priority,
    coerce_status,
    decide_blocker_resolved,
    decide_blockers,
    decide_create,
    decide_priority,
    decide_status,
    evolve,
)

log = logging.getLogger(__name__)

__all__ = ["RejectedInput", "TaskMention", "TaskResolver", "load_task_state", "matcher_texts"]

# A status report ("X is done", "X is still blocked") naming no existing task.
REASON_NO_TASK_TO_UPDATE = "no_task_to_update"


@dataclass(frozen=True)
class TaskMention:
    """One observation of a task, as the pipeline hands it over.

    `status` and `priority` are the extractor's raw words (None when not stated);
    `problems` are ``(field, value, reason)`` triples the extractor already rejected
    (recorded as they are; a status problem replaces the generic ``missing_status``);
    `evidence_aligned` says whether the entry's evidence aligned with the transcript
    (it decides ``replace`` vs ``suggest`` for blockers); `observed_at` is when the
    observation was made in the transcript (the message time), if known — a datetime
    (aware or naive UTC) or an ISO-8601 string; anything else counts as unknown.
    """

    entry_id: str
    session_id: str
    title: str
    status: str | None = None
    priority: str | None = None
    blocked_by: tuple[str, ...] = ()
    evidence_aligned: bool = False
    source: str = "text"
    observed_at: datetime | None = None
    problems: tuple[tuple[str, Any, str], ...] = ()
    update_only: bool = False

    def __post_init__(self) -> None:
        blocked = self.blocked_by
        if blocked is None:
            blocked = ()
        elif isinstance(blocked, str):
            blocked = (blocked,)
        elif not isinstance(blocked, tuple):
            try:
                blocked = tuple(blocked)
            except TypeError:
                blocked = (blocked,)
        object.__setattr__(self, "blocked_by", blocked)

    @classmethod
    def from_entry(
        cls,
        entry: Any,
        session_id: str,
        *,
        evidence_aligned: bool,
        observed_at: datetime | None = None,
    ) -> TaskMention | None:
        """The mention carried by an `ExtractedEntry` (None when it has no task fields)."""
        task = getattr(entry, "task", None)
        if task is None:
            return None
        return cls(
            entry_id=entry.entry_id,
            session_id=session_id,
            title=task.title,
            status=task.status,
            priority=task.priority,
            blocked_by=tuple(task.blocked_by),
            evidence_aligned=evidence_aligned,
            source=task.source,
            observed_at=observed_at,
            problems=tuple(
                (p.field, p.value, p.reason) for p in getattr(task, "problems", None) or ()
            ),
            update_only=bool(getattr(task, "update_only", False)),
        )


@dataclass(frozen=True)
class RejectedInput:
    """A task observation that yielded no task (see the module docstring).

    `where` says where it was (``message_index``, ``tool_use_id``, ``item``; JSON values)
    and is part of its identity together with field, value and reason.
    """

    session_id: str | None
    field: str
    value: Any
    reason: str
    where: dict[str, Any] | None = None
    source: str = "todowrite"


def matcher_texts(mentions: Iterable[TaskMention]) -> list[str]:
    """Every text `TaskResolver.resolve` may ask its matcher (and so its vector hook) about
    for these mentions, deduplicated in order: each usable title as `_plan` matches it
    (whitespace collapsed) and each blocker text as `BlockerResolver` matches it
    (`blocker_match_text`). A superset: a blocker of a mention that turns out to need none
    is included. The pipeline computes vector neighbours for exactly these before its
    write transaction opens (`axiom.tasks.matcher.precomputed_search`)."""
    out: dict[str, None] = {}
    for m in mentions:
        title = m.title
        if isinstance(title, str) and normalize_text(title):
            out.setdefault(" ".join(title.split()))
        for raw in m.blocked_by or ():
            text = blocker_match_text(raw)
            if text is not None:
                out.setdefault(text)
    return list(out)


def _entry_of_receipt(key: str) -> str:
    """The entry id of a receipt key (`_receipt_key`): ``task_mentioned:<entry>:<digest>``."""
    return key.split(":")[1]


def _receipt_key(m: Any) -> str | None:
    """The ``task_mentioned`` dedupe key of a mention with an entry id: stored once the
    mention was processed (None without an entry id)."""
    entry_id = getattr(m, "entry_id", None)
    entry_id = entry_id.strip() if isinstance(entry_id, str) else ""
    return (
        f"{TASK_MENTIONED}:{mention_key(entry_id, getattr(m, 'title', None))}" if entry_id else None
    )


def _receipt_keys(items: Iterable[Any]) -> list[str]:
    """`_receipt_key` of each mention that has one (a mention whose key cannot be computed
    is left to `_plan` to reject)."""
    keys = []
    for m in items:
        with contextlib.suppress(Exception):
            if (key := _receipt_key(m)) is not None:
                keys.append(key)
    return keys


def _naive_utc(value: Any) -> datetime | None:
    """A naive UTC datetime from a datetime or an ISO-8601 string (else None)."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value


def _said_before(observed: datetime | None, extras: dict[str, Any], clock: str) -> bool:
    """Whether `observed` is older than the task's clock `clock` (an extra of its
    projection: ``last_status_observed_at``, ``last_blockers_observed_at``); an unknown
    time is never older."""
    newest = _naive_utc(extras.get(clock))
    return observed is not None and newest is not None and observed < newest


def _older_than_task(observed: datetime | None, extras: dict[str, Any]) -> bool:
    """Whether a report observed at `observed` is older than the task's newest status or
    list of blockers (then it does not take a blocker off: the newer word stands)."""
    clocks = ("last_status_observed_at", "last_blockers_observed_at")
    return any(_said_before(observed, extras, clock) for clock in clocks)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="microseconds") if value is not None else None


def _field_problems(m: TaskMention) -> tuple[list[tuple[str, Any, str]], str | None, str | None]:
    """The mention's status and priority as known words, and the (field, value, reason)
    of each one that is not, after the problems the extractor already found."""
    problems: list[tuple[str, Any, str]] = [
        p for p in m.problems or () if isinstance(p, tuple) and len(p) == 3
    ]
    status = coerce_status(m.status) if isinstance(m.status, str) else None
    if m.status is not None and status is None:
        problems.append(("status", m.status, "unknown_status"))
    stated = any(p[0] == "status" for p in problems)
    if m.status is None and m.source == "todowrite" and not stated:
        problems.append(("status", None, "missing_status"))
    priority = coerce_priority(m.priority) if isinstance(m.priority, str) else None
    if m.priority is not None and priority is None:
        problems.append(("priority", m.priority, "unknown_priority"))
    return problems, status, priority


def _restates(m: TaskMention, status: str | None, state: TaskState) -> bool:
    """Whether a prose mention only restates a known task as work to do ("TODO: fix the
    login bug" after "I'm fixing the login bug"): prose gives "pending" to every TODO /
    "need to" it reads, which is not a report that started or blocked work went back to
    pending, nor that done work reopened. Such a mention moves no status (its receipt
    records none); a TodoWrite "pending" is an explicit status and still moves it."""
    return m.source == "text" and status == PENDING and state.status != PENDING


def _where(
    m: TaskMention, entry_id: str, session_id: str | None, observed: datetime | None
) -> dict[str, Any]:
    """Where a mention was observed: on every task event it causes and on its receipt."""
    return {
        "entry_id": entry_id,
        "session_id": session_id,
        "observed_at": _iso(observed),
        "source": m.source if isinstance(m.source, str) else None,
    }


@dataclass
class _Plan:
    """What one mention does to its task, before it becomes events."""

    task_id: str
    decided: list[Event]
    resolved: ResolvedBlockers
    extra: list[NewEvent]  # condition resolutions a new task causes
    stale: bool
    canonical: str  # the task's canonical key (the receipt's alias_key when they differ)
    status: str | None  # the status the mention reports (None: a restatement, see below)


def _mark_created(plan: _Plan, m: TaskMention, where: dict[str, Any], status: str | None) -> None:
    """A new task's ``task_created`` says where it was seen, and a "done" it could not
    start as (`decide_create`) as ``requested_status``."""
    plan.decided[0][1].update(where, evidence_aligned=bool(m.evidence_aligned))
    if status == DONE:
        plan.decided[0][1]["requested_status"] = DONE


def _alias_key(key: str, canonical: str, match: MatchResult) -> str | None:
    """The key the mention's wording adds to the task's identity: none for its own key,
    nor for a partial title (prose naming the task by part of it, not a name)."""
    return None if key == canonical or match.reason == "partial_title" else key


def load_task_state(
    conn: duckdb.DuckDBPyConnection, task_id: str, projector: TaskProjector | None = None
) -> tuple[TaskState, dict[str, Any]] | None:
    """The projected state of a task and its projection extras (None if unknown); through
    `projector` when given, which may remember the row (`TaskProjector.current_json`)."""
    if projector is None:
        data = task_json(conn, task_id)
    else:
        text = projector.current_json(conn, task_id)
        data = None if text is None else json.loads(text)
    if data is None:
        return None
    return TaskState.from_json(data), data


class TaskResolver:
    """See the module docstring."""

    def __init__(
        self,
        conn: duckdb.DuckDBPyConnection,
        project: str | None,
        *,
        build_id: str | None = None,
        actor: str = "task_resolver",
        vector_search: VectorSearch | None = None,
        projected: bool = False,
        fresh_entries: Collection[str] = (),
    ) -> None:
        self.conn = conn
        # Entries no event has named yet (a pipeline build of a session never built): the
        # keys of their mentions' events are taken as unstored, not read, and checked once
        # when the write unit's events go in (`axiom.store.events.FreshKeyStored`).
        self.fresh_entries = frozenset(fresh_entries)
        # The caller brought the task projector up to date and nothing but resolvers,
        # which apply what they append, appends task events in its transaction (a
        # pipeline build transaction): `resolve` need not read what is pending first.
        self.projected = projected
        self.project = normalize_project(project)
        self.build_id = build_id
        self.actor = actor
        self.store = EventStore(conn)
        self.projector = TaskProjector(remember=True)  # forgotten around each `resolve`
        self.matcher = TaskMatcher(conn, self.project, vector_search=vector_search)
        self.blockers = BlockerResolver(conn, self.project, self.matcher)
        # Dedupe keys known stored: the receipts of a `resolve` call's mentions, read at
        # once, and every key it appends since (`_plan` asks about its receipt).
        self._stored: set[str] = set()

    # ------------------------------------------------------------------ public

    def resolve(
        self,
        items: Sequence[TaskMention] | Iterable[TaskMention],
        rejected: Iterable[RejectedInput] = (),
    ) -> list[StoredEvent]:
        """Process `items` in order, then record `rejected`; return the events this call
        appended (none on a re-run). Its projector remembers the tasks it saves meanwhile:
        nothing else writes them until it returns."""
        self.projector.forget()
        try:
            return self._resolve(items, rejected)
        finally:
            self.projector.forget()

    def _resolve(
        self,
        items: Sequence[TaskMention] | Iterable[TaskMention],
        rejected: Iterable[RejectedInput],
    ) -> list[StoredEvent]:
        if not self.projected:
            run_projector(self.conn, self.projector)
        appended: list[StoredEvent] = []
        last_projected: StoredEvent | None = None
        items = list(items)
        receipts = _receipt_keys(items)
        fresh = {k for k in receipts if _entry_of_receipt(k) in self.fresh_entries}
        self._stored = self.store.stored_keys(receipts, fresh=fresh) if receipts else set()
        # each planned after the one before is applied
        plans = ((item, self._safe_plan(item)) for item in items)
        rejections = [self._rejected_input(r) for r in rejected]  # no reads: one batch
        for item, planned in itertools.chain(plans, [(None, rejections)]):
            if not planned:
                continue
            # A mention's events in one append (four statements, not four per event), each
            # 1 µs after the one before, as one by one; then applied in order, as before:
            # the projector reads only its tables, and the plan read all it needs first.
            unstored = self._fresh_keys(item, planned)
            for result in self.store.append_many(planned, spaced=True, fresh=unstored):
                if not result.created:
                    continue
                self._stored.add(result.event.dedupe_key or "")
                appended.append(result.event)
                if result.event.event_type in self.projector.event_types:
                    # Exactly what run_projector would fetch next: the projection was
                    # caught up above and these are the newest events in (ts, id) order.
                    self.projector.apply(self.conn, result.event)
                    last_projected = result.event
        if last_projected is not None:
            set_offset(self.conn, self.projector.name, last_projected)
        return appended

    def _fresh_keys(self, item: TaskMention | None, planned: list[NewEvent]) -> set[str]:
        """The keys of `planned` scoped to `item`, a mention of an entry in
        `fresh_entries` (they hold its mention key): never stored before it."""
        entry_id = getattr(item, "entry_id", None)
        entry_id = entry_id.strip() if isinstance(entry_id, str) else ""
        if item is None or entry_id not in self.fresh_entries:
            return set()
        scope = f":{mention_key(entry_id, item.title)}"
        return {e.dedupe_key for e in planned if e.dedupe_key and scope in e.dedupe_key}

    # ------------------------------------------------------------------ planning

    def _safe_plan(self, item: TaskMention) -> list[NewEvent]:
        try:
            return self._plan(item)
        except Exception as exc:  # one bad mention must not abort the session
            if is_interrupt(exc):  # Ctrl-C during a read: the person's, not the mention's
                raise
            log.exception("task resolver could not plan a mention: %r", item)
            return [self._internal_error(item, exc)]

    def _rejected_input(self, r: RejectedInput) -> NewEvent:
        """``task_input_rejected`` (no task) for an observation that yielded no task."""
        value = json_value(r.value)
        where = {k: json_value(v) for k, v in sorted((r.where or {}).items())}
        payload = {
            "task_id": None,
            "entry_id": None,
            "session_id": r.session_id if isinstance(r.session_id, str) else None,
            "field": r.field,
            "value": value,
            "reason": r.reason,
            "source": r.source,
            **where,
        }
        key = (
            f"{TASK_INPUT_REJECTED}:session:{payload['session_id']}:"
            f"{digest([where, r.field, value, r.reason])}"
        )
        return self._new(TASK_INPUT_REJECTED, payload, key, r.session_id)

    def _new(
        self, event_type: str, payload: dict[str, Any], dedupe_key: str, session_id: Any
    ) -> NewEvent:
        return NewEvent(
            event_type,
            payload,
            dedupe_key=dedupe_key,
            session_id=session_id if isinstance(session_id, str) else None,
            actor=self.actor,
            build_id=self.build_id,
        )

    def _with_meta(self, event: NewEvent) -> NewEvent:
        return NewEvent(
            event.event_type,
            event.payload,
            dedupe_key=event.dedupe_key,
            session_id=event.session_id,
            actor=self.actor,
            build_id=self.build_id,
        )

    def _rejection(
        self,
        mkey: str,
        *,
        task_id: str | None,
        entry_id: Any,
        session_id: Any,
        field: str,
        value: Any,
        reason: str,
    ) -> NewEvent:
        value = json_value(value)
        payload = {
            "task_id": task_id,
            "entry_id": entry_id if isinstance(entry_id, str) else None,
            "session_id": session_id if isinstance(session_id, str) else None,
            "field": field,
            "value": value,
            "reason": reason,
        }
        key = f"{TASK_INPUT_REJECTED}:{mkey}:{field}:{digest([value, reason])}"
        return self._new(TASK_INPUT_REJECTED, payload, key, session_id)

    def _internal_error(self, item: Any, exc: Exception) -> NewEvent:
        entry_id = getattr(item, "entry_id", None)
        title = getattr(item, "title", None)
        session_id = getattr(item, "session_id", None)
        mkey = mention_key(entry_id if isinstance(entry_id, str) else repr(entry_id), title)
        return self._rejection(
            mkey,
            task_id=None,
            entry_id=entry_id,
            session_id=session_id,
            field="mention",
            value=title if isinstance(title, str) else repr(title),
            reason=f"internal_error: {type(exc).__name__}: {exc}",
        )

    def _plan(self, m: TaskMention) -> list[NewEvent]:
        """Screen the mention (steps 1-2 of the module docstring), then plan its events."""
        entry_id = m.entry_id.strip() if isinstance(m.entry_id, str) else ""
        session_id = m.session_id if isinstance(m.session_id, str) else None
        title = m.title
        if not entry_id:
            value = title if isinstance(title, str) else repr(title)
            mkey = mention_key(f"session:{session_id}", title)
            return [
                self._input_rejected(mkey, None, session_id, "mention", value, "missing_entry_id")
            ]
        if _receipt_key(m) in self._stored:  # processed before
            return []
        mkey = mention_key(entry_id, title)
        if not isinstance(title, str) or not normalize_text(title):
            return [self._input_rejected(mkey, entry_id, session_id, "title", title, "empty_title")]
        return self._plan_mention(m, mkey, entry_id, session_id, " ".join(title.split()))

    def _input_rejected(
        self,
        mkey: str,
        entry_id: str | None,
        session_id: str | None,
        field: str,
        value: Any,
        reason: str,
    ) -> NewEvent:
        """A mention that yields no task at all (`task_id` null)."""
        return self._rejection(
            mkey,
            task_id=None,
            entry_id=entry_id,
            session_id=session_id,
            field=field,
            value=value,
            reason=reason,
        )

    def _plan_mention(
        self, m: TaskMention, mkey: str, entry_id: str, session_id: str | None, title: str
    ) -> list[NewEvent]:
        """Steps 3-6: match, decide, and the events in the order they are appended."""
        problems, status, priority = _field_problems(m)
        observed = _naive_utc(m.observed_at)
        key = task_key(self.project, title)
        match = self.matcher.match(title, now=observed, partial=m.source != "todowrite")
        target = match.identity or match.strict
        if target is None and m.update_only:  # "X is done" about no known task
            return self._plan_update_of_nothing(m, mkey, entry_id, session_id, title, status)
        plan = (
            self._plan_new(m, title, key, status, priority, entry_id, session_id, observed)
            if target is None
            else self._plan_existing(m, target.task_id, status, priority, entry_id, session_id, observed)
        )  # fmt: skip
        where = _where(m, entry_id, session_id, observed)
        if target is None:
            _mark_created(plan, m, where, status)
        task_events = [
            self._task_event(event_type, payload, plan.task_id, mkey, where, session_id)
            for event_type, payload in plan.decided
        ]
        if any(t == TASK_STATUS_CHANGED and p["to"] == DONE for t, p in plan.decided):
            reason = f"{title} done in entry {entry_id}"  # its dependants are unblocked
            plan.extra.extend(self._unblock([plan.task_id], m, mkey, reason))
        declarations = self._declarations(
            plan.decided, plan.resolved, plan.task_id, entry_id, session_id
        )
        problems += [("blocked_by", p.text, p.reason) for p in plan.resolved.problems]
        rejections = [
            self._rejection(
                mkey, task_id=plan.task_id, entry_id=entry_id, session_id=session_id,
                field=f, value=v, reason=r,
            )
            for f, v, r in problems
        ]  # fmt: skip
        receipt = self._receipt(m, mkey, title, key, match, target, plan, priority, where)
        return [*declarations, *task_events, *plan.extra, *rejections, receipt]

    def _plan_update_of_nothing(
        self,
        m: TaskMention,
        mkey: str,
        entry_id: str,
        session_id: str | None,
        title: str,
        status: str | None,
    ) -> list[NewEvent]:
        """A status report about no known task: the blockers it names done are taken off
        (step 3b), else it is rejected as ``no_task_to_update``."""
        unblocked = self._plan_blocker_done(m, mkey, title) if status == DONE else None
        if unblocked is not None:  # … but about a ticket or condition that blocks tasks
            return unblocked
        return [
            self._input_rejected(
                mkey, entry_id, session_id, "mention", title, REASON_NO_TASK_TO_UPDATE
            )
        ]

    def _receipt(
        self,
        m: TaskMention,
        mkey: str,
        title: str,
        key: str,
        match: MatchResult,
        target: Any,
        plan: _Plan,
        priority: str | None,
        where: dict[str, Any],
    ) -> NewEvent:
        """The ``task_mentioned`` receipt: which task, how it matched, what it reported."""
        payload = {
            "task_id": plan.task_id,
            "title": title,
            "alias_key": _alias_key(key, plan.canonical, match),
            "match": self._match_json(match, target),
            "candidates": candidates_json(
                [c for c in match.candidates if c.task_id != plan.task_id][:3]
            ),
            "status": plan.status,
            "priority": priority,
            "evidence_aligned": bool(m.evidence_aligned),
            "stale": plan.stale,
            **where,
        }
        return self._new(TASK_MENTIONED, payload, f"{TASK_MENTIONED}:{mkey}", where["session_id"])

    def _plan_blocker_done(self, m: TaskMention, mkey: str, title: str) -> list[NewEvent] | None:
        """Step 3b: "OPS-55 is done" names a blocker (an artifact by its key, or a condition
        by its text): it is taken off every open task it blocks (`_unblock`). None when it
        names no known blocker; ``[]`` when it does but blocks nothing (any more: a re-run
        appends nothing)."""
        ids = [entity_id_for(k) for k in artifact_keys_in(title)]
        with contextlib.suppress(ValueError):
            ids.append(entity_id_for(condition_key_for_text(self.project, title)))
        if not count_entities(self.conn, ids):
            return None
        return self._unblock(ids, m, mkey, f"{title} reported done in entry {m.entry_id}")

    def _unblock(self, ids: list[str], m: TaskMention, mkey: str, reason: str) -> list[NewEvent]:
        """`decide_blocker_resolved` for every open task that `ids` block (a task left
        with no blocker is no longer blocked), skipping a task whose status was observed
        after `m` or whose blockers were named after it, and a task among `ids` itself
        (blocked through a condition resolving to it): its done change clears its
        blockers, and the projection read here is from before that change."""
        entry_id, session_id = m.entry_id.strip(), m.session_id
        observed = _naive_utc(m.observed_at)
        where = _where(m, entry_id, session_id, observed)
        out: list[NewEvent] = []
        states: dict[str, TaskState] = {}
        for task_id, declared in tasks_blocked_by(self.conn, ids):
            if task_id in ids:
                continue
            if task_id not in states:
                loaded = load_task_state(self.conn, task_id, self.projector)
                if loaded is None or _older_than_task(observed, loaded[1]):
                    continue  # a newer observation of the task wins over this older report
                states[task_id] = loaded[0]
            for event_type, payload in decide_blocker_resolved(states[task_id], declared, reason):
                states[task_id] = evolve(states[task_id], event_type, payload)  # type: ignore[assignment]
                payload.setdefault("reason", reason)
                out.append(self._task_event(event_type, payload, task_id, mkey, where, session_id))
        return out

    def _plan_new(
        self,
        m: TaskMention,
        title: str,
        key: str,
        status: str | None,
        priority: str | None,
        entry_id: str,
        session_id: str | None,
        observed: datetime | None,
    ) -> _Plan:
        """A mention that matches no task creates one (`decide_create`)."""
        task_id = entity_id_for(key)
        resolved = self._blockers(m, task_id, entry_id, session_id, observed)
        decided = decide_create(
            task_id, title, key, self.project, status, priority, resolved.refs,
            evidence_aligned=bool(m.evidence_aligned),
        )  # fmt: skip
        extra = self._auto_resolution(task_id, title, entry_id, session_id)
        return _Plan(task_id, decided, resolved, extra, stale=False, canonical=key, status=status)

    def _plan_existing(
        self,
        m: TaskMention,
        task_id: str,
        status: str | None,
        priority: str | None,
        entry_id: str,
        session_id: str | None,
        observed: datetime | None,
    ) -> _Plan:
        """A mention of a known task moves it on, unless it is older than what moved it last."""
        loaded = load_task_state(self.conn, task_id, self.projector)
        if loaded is None:  # projection out of step with the alias table
            raise LookupError(f"task {task_id} is matched but has no projected state")
        state, data = loaded
        if _restates(m, status, state):
            status = None
        last = _naive_utc(data.get("last_status_observed_at"))
        stale = _said_before(observed, data, "last_status_observed_at")
        # Blockers said before the task's were last named are suggestions only, as a stale
        # status's are: a late re-import does not undo a newer list (or a person's).
        older_blockers = _said_before(observed, data, "last_blockers_observed_at")
        needs_blockers = bool(m.blocked_by) or status == BLOCKED
        resolved = (
            self._blockers(m, task_id, entry_id, session_id, observed)
            if needs_blockers
            else ResolvedBlockers()
        )
        decided = self._decide_existing(
            state, status, priority, resolved, bool(m.evidence_aligned), stale, older_blockers,
            entry_id, observed, last, m,
        )  # fmt: skip
        return _Plan(
            task_id, decided, resolved, [], stale=stale, canonical=state.canonical_key,
            status=status,
        )  # fmt: skip

    def _task_event(
        self,
        event_type: str,
        payload: dict[str, Any],
        task_id: str,
        mkey: str,
        where: dict[str, Any],
        session_id: str | None,
    ) -> NewEvent:
        """A decided event; every one but `task_created` says where it was observed."""
        if event_type == TASK_CREATED:
            return self._new(event_type, payload, f"{TASK_CREATED}:{task_id}", session_id)
        payload.update(where)
        dedupe = f"{event_type}:{task_id}:{mkey}:{digest(payload)}"
        return self._new(event_type, payload, dedupe, session_id)

    def _blockers(
        self,
        m: TaskMention,
        task_id: str,
        entry_id: str,
        session_id: str | None,
        observed: datetime | None,
    ) -> ResolvedBlockers:
        return self.blockers.resolve(
            m.blocked_by, task_id=task_id, entry_id=entry_id, session_id=session_id, now=observed
        )

    def _decide_existing(
        self,
        state: TaskState,
        status: str | None,
        priority: str | None,
        resolved: ResolvedBlockers,
        aligned: bool,
        stale: bool,
        older_blockers: bool,
        entry_id: str,
        observed: datetime | None,
        last: datetime | None,
        m: TaskMention,
    ) -> list[Event]:
        events: list[Event] = []
        current = state

        def take(new: list[Event]) -> None:
            nonlocal current
            for event_type, payload in new:
                events.append((event_type, payload))
                current = evolve(current, event_type, payload)  # type: ignore[assignment]

        reason = f"observed in entry {entry_id}"
        if not stale:
            take(decide_priority(current, priority))
        blockers_done = False
        if status is not None and status != current.status:
            if stale:
                take(
                    [
                        (
                            TASK_TRANSITION_REJECTED,
                            {
                                "task_id": current.task_id,
                                "from": current.status,
                                "to": status,
                                "reason": f"{REASON_STALE}: observed {_iso(observed)},"
                                f" status last observed {_iso(last)}",
                                # what `axiom.tasks.as_of` needs to decide it again
                                "blockers": [r.to_json() for r in resolved.refs],
                                "evidence_aligned": aligned,
                            },
                        )
                    ]
                )
            else:
                decided = decide_status(
                    current,
                    status,
                    reason,
                    resolved.refs if status == BLOCKED else (),
                    evidence_aligned=aligned and not older_blockers,
                )
                if decided and decided[-1][0] == TASK_TRANSITION_REJECTED:
                    decided[-1][1]["blocked_by"] = [
                        b if isinstance(b, str) else repr(b) for b in m.blocked_by
                    ]
                    take(decided)
                    return events
                take(decided)
                blockers_done = status == BLOCKED
        if not blockers_done and (resolved.refs or current.status == BLOCKED):
            take(decide_blockers(current, resolved.refs, aligned and not (stale or older_blockers)))
        return events

    def _declarations(
        self,
        decided: list[Event],
        resolved: ResolvedBlockers,
        task_id: str,
        entry_id: str,
        session_id: str | None,
    ) -> list[NewEvent]:
        """Declaration events for every condition/artifact the decided events refer to."""
        out: dict[str, NewEvent] = {}
        for event_type, payload in decided:
            if event_type != TASK_BLOCKERS_SET:
                continue
            for data in payload.get("blockers") or ():
                ref = BlockerRef.from_json(data)
                if ref.entity_id in out:
                    continue
                if ref.entity_id in resolved.declarations:
                    out[ref.entity_id] = self._with_meta(resolved.declarations[ref.entity_id])
                elif ref.auto_placeholder:
                    out[ref.entity_id] = self._with_meta(
                        self.blockers.placeholder_declaration(
                            ref, task_id, entry_id=entry_id, session_id=session_id
                        )
                    )
        return list(out.values())

    def _auto_resolution(
        self, task_id: str, title: str, entry_id: str, session_id: str | None
    ) -> list[NewEvent]:
        """``condition_resolved_to`` for an open condition whose text is this new task's."""
        try:
            cid = entity_id_for(condition_key_for_text(self.project, title))
        except ValueError:
            return []
        if condition_status(self.conn, cid) != "open":
            return []
        payload = {
            "condition_id": cid,
            "target_id": task_id,
            "target_kind": "task",
            "reason": "a task with the same text was created",
            "entry_id": entry_id,
            "session_id": session_id,
        }
        return [
            self._new(
                CONDITION_RESOLVED_TO,
                payload,
                f"{CONDITION_RESOLVED_TO}:{cid}:{task_id}",
                session_id,
            )
        ]

    @staticmethod
    def _match_json(match: MatchResult, target: Any) -> dict[str, Any]:
        if target is None:
            return {"method": "new", "reason": match.reason, "score": None, "similarity": None}
        return {
            "method": target.method,
            "reason": match.reason,
            "score": round(target.score, 4),
            "similarity": round(target.similarity, 4),
        }
