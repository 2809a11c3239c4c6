"""The views a write transaction's builds read (`axiom.pipeline.build_view`) equal the
tables the projectors derive from the same events.

Generated histories of entry and conflict events, some projected before the transaction
and the rest appended in batches (one batch per build) inside it: after each batch the
views, caught up, must answer what the projected tables answer (believed facts in order,
fact statuses, open conflicts, and every session's corroboration pool), whether a view was
first read before or after the events, and whether the tables were advanced meanwhile (a
reader of the tables, `graduate_kept`, makes the transaction advance them).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import axiom.projections
from axiom.conflicts.queries import believed_facts, fact_statuses, open_conflict_pairs
from axiom.entries.queries import corroboration_pool
from axiom.extract.types import ExtractedEntry, ExtractedEvidence
from axiom.graduation.corroboration import pool_index
from axiom.pipeline.build_conflicts import BuildConflicts
from axiom.pipeline.build_view import BuildView
from axiom.pipeline.fact_view import FactView
from axiom.pipeline.pool_view import POOL_STATUSES, memory_words
from axiom.store.db import Database
from axiom.store.event_types import (
    CONFLICT_DETECTED,
    CONFLICT_RESOLVED,
    ENTRY_CREATED,
    ENTRY_PROMOTED,
    ENTRY_STATUS_CHANGED,
)
from axiom.store.events import EventStore, NewEvent, appended
from axiom.store.migrate import migrate
from axiom.store.projection import Follower, run_projectors

IDS = [f"e{i}" for i in range(6)]
TYPES = ["fact", "decision", "note"]
SESSIONS = ["s1", "s2", None]
TITLES = [
    "Melanie: the billing store runs on postgres",
    "Melanie: billing store running on postgres now",
    "the upload limit is 20MB",
    "upload limit 50MB",
    "deploy region eu-west-1",
]
# Weighted towards the corroboration pool (verified or better, still believed): an entry
# must be created, promoted and left active or contested to be in one.
STAGES = ["raw", "working", "candidate", "verified", "verified", "certified", "certified"]
STATUSES = ["active", "active", "contested", "contested", "superseded", "rejected"]
PAIRS = [(a, b) for a in IDS[:4] for b in IDS[2:6] if a < b]


def _created(eid: str, draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    title = draw(st.sampled_from(TITLES))
    return ENTRY_CREATED, {
        "entry_id": eid,
        "session_id": draw(st.sampled_from(SESSIONS)),
        "entry_type": draw(st.sampled_from(TYPES)),
        "title": title,
        "content": draw(st.sampled_from(["", "details"])),
        "task": None,
        "canonical_key": draw(st.sampled_from([None, "fact:billing", f"k:{title}"])),
        "evidence": [],
        "said_at": draw(st.sampled_from([None, "2026-05-01T10:00:00Z"])),
        "subject": draw(st.sampled_from([None, "billing store", "upload limit"])),
        "value": draw(st.sampled_from([None, "postgres", "20MB"])),
    }


@st.composite
def _event(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    event_type, payload = draw(_well_formed())
    if draw(st.integers(0, 9)) == 0:  # a poison event: the projectors record and pass it
        payload = {k: v for k, v in payload.items() if k != draw(st.sampled_from(sorted(payload)))}
        if event_type == CONFLICT_RESOLVED and "choice" in payload:
            payload["choice"] = "flip_a_coin"
    return event_type, payload


@st.composite
def _well_formed(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    eid = draw(st.sampled_from(IDS))
    kind = draw(
        st.sampled_from(
            [
                "created",
                "created",
                "promoted",
                "promoted",
                "promoted",
                "status",
                "detected",
                "resolved",
            ]
        )
    )
    if kind == "created":
        return _created(eid, draw)
    if kind == "promoted":
        return ENTRY_PROMOTED, {"entry_id": eid, "from": None, "to": draw(st.sampled_from(STAGES))}
    if kind == "status":
        to = draw(st.sampled_from(STATUSES))
        return ENTRY_STATUS_CHANGED, {
            "entry_id": eid,
            "from": None,
            "to": to,
            "superseded_by": None,
        }
    older, newer = draw(st.sampled_from(PAIRS))
    cid = f"cf_{older}_{newer}"
    if kind == "detected":
        return CONFLICT_DETECTED, {
            "conflict_id": cid,
            "older_id": older,
            "newer_id": newer,
            "conflict_type": "changed_value",
            "reason": "generated",
            "subject": None,
        }
    return CONFLICT_RESOLVED, {
        "conflict_id": cid,
        "choice": "keep_newer",
        "who": "me",
        "note": None,
    }


def _batches() -> st.SearchStrategy[list[list[tuple[str, dict[str, Any]]]]]:
    return st.lists(st.lists(_event(), max_size=6), min_size=1, max_size=4)


def _append(conn: Any, batch: list[tuple[str, dict[str, Any]]], serial: list[int]) -> None:
    """Appended as a build would: created entries and detected conflicts once (dedupe
    keys), other changes each as an event of its own."""
    events = []
    for event_type, payload in batch:
        name = payload.get("entry_id") or payload.get("conflict_id") or "unnamed"
        once = event_type in (ENTRY_CREATED, CONFLICT_DETECTED)
        serial[0] += 1
        key = f"{event_type}:{name}" if once else f"{event_type}:{name}:{serial[0]}"
        events.append(NewEvent(event_type, payload, key, payload.get("session_id"), "test"))
    EventStore(conn).append_many(events)


@contextmanager
def _transaction(
    prior: list[tuple[str, dict[str, Any]]], serial: list[int]
) -> Iterator[tuple[Any, Follower, BuildView]]:
    """A store holding `prior`, projected, and a write transaction on it with its follower
    and views, as `axiom.pipeline.batch.write_builds` opens one."""
    viewed = axiom.projections.read_by_builds()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "axiom.duckdb")
        migrate(db)
        with db.write() as conn:
            _append(conn, prior, serial)
            run_projectors(conn, viewed)
        with db.write() as conn, appended() as log:
            follower = Follower(conn, viewed, log)
            follower.start()
            yield conn, follower, BuildView(conn, log, follower)


def _assert_view_is_tables(conn: Any, view: BuildView) -> None:
    for entry_type in ("fact", "decision"):
        assert view.facts.believed(entry_type).facts == believed_facts(conn, entry_type)
    assert view.facts.statuses(IDS) == fact_statuses(conn, IDS)
    assert view.facts.open_pairs() == open_conflict_pairs(conn)
    for entry_type in TYPES:
        pool = view.pools.pool(entry_type)
        for session in SESSIONS:
            rows = corroboration_pool(conn, entry_type, session, POOL_STATUSES)
            listed = {r[0]: (r[0], r[1], r[2]) for r in rows}
            assert {e: pool.member(e, session) for e in IDS if pool.member(e, session)} == listed
            index = pool_index(entry_type, rows)
            for title in TITLES:
                words = memory_words(entry_type, title)
                key = f"k:{title}"
                assert pool.matching(key, words, session) == index.matching(key, words)


def _promoted(eid: str, to: str) -> tuple[str, dict[str, Any]]:
    return ENTRY_PROMOTED, {"entry_id": eid, "from": None, "to": to}


def _status(eid: str, to: str) -> tuple[str, dict[str, Any]]:
    return ENTRY_STATUS_CHANGED, {"entry_id": eid, "from": None, "to": to, "superseded_by": None}


def _fact(eid: str, session: str) -> tuple[str, dict[str, Any]]:
    title = TITLES[0]
    return ENTRY_CREATED, {
        "entry_id": eid,
        "session_id": session,
        "entry_type": "fact",
        "title": title,
        "content": "",
        "task": None,
        "canonical_key": f"k:{title}",
        "evidence": [],
        "said_at": None,
        "subject": "billing store",
        "value": "postgres",
    }


# A pool member whose stage moves on, leaves and comes back, in builds after the views
# were read: what random histories reach only now and then.
POOL_LIFE = [
    [_fact("e0", "s1"), _fact("e1", "s2"), _promoted("e0", "verified")],
    [_promoted("e0", "certified"), _promoted("e1", "verified")],
    [_status("e0", "superseded"), _status("e1", "contested")],
    [_status("e0", "active"), _status("e1", "rejected")],
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prior=st.lists(_event(), max_size=10),
    batches=_batches(),
    read_early=st.booleans(),
    advance_each=st.booleans(),
)
@example(prior=[], batches=POOL_LIFE, read_early=True, advance_each=True)
@example(prior=POOL_LIFE[0], batches=POOL_LIFE[1:], read_early=True, advance_each=False)
def test_views_answer_what_the_projected_tables_answer(
    prior: list[tuple[str, dict[str, Any]]],
    batches: list[list[tuple[str, dict[str, Any]]]],
    read_early: bool,
    advance_each: bool,
) -> None:
    serial = [0]
    with _transaction(prior, serial) as (conn, follower, view):
        if read_early:  # loaded from the tables before any event of the transaction
            _assert_view_is_tables(conn, view)
        for batch in batches:
            _append(conn, batch, serial)
            view.catch_up()
            if advance_each:
                view.tables_current()
                _assert_view_is_tables(conn, view)
        follower.settle()
        _assert_view_is_tables(conn, view)


QUERIES = ("believed", "statuses", "open", "pools")


def _answers(conn: Any, view: BuildView | None, asked: list[str]) -> list[Any]:
    """What a build reads: from `view`, else from the tables."""
    out: list[Any] = []
    for query in asked:
        if query == "believed":
            for t in ("fact", "decision"):
                # A copy: the view's index is the transaction's, and grows at `catch_up`.
                out.append(list(view.facts.believed(t).facts) if view else believed_facts(conn, t))
        elif query == "statuses":
            out.append(view.facts.statuses(IDS) if view else fact_statuses(conn, IDS))
        elif query == "open":
            out.append(view.facts.open_pairs() if view else open_conflict_pairs(conn))
        else:
            for t, session in ((t, s) for t in TYPES for s in SESSIONS):
                rows = corroboration_pool(conn, t, session, POOL_STATUSES)
                pool = view.pools.pool(t) if view else None
                index = pool_index(t, rows)
                for title in TITLES:
                    key, words = f"k:{title}", memory_words(t, title)
                    found = (
                        pool.matching(key, words, session) if pool else index.matching(key, words)
                    )
                    out.append(found)
                members = {e: pool.member(e, session) for e in IDS} if pool else None
                out.append(
                    {e: m for e, m in members.items() if m}
                    if members is not None
                    else {r[0]: (r[0], r[1], r[2]) for r in rows}
                )
    return out


def _run(
    prior: list[tuple[str, dict[str, Any]]],
    batches: list[list[tuple[str, dict[str, Any]]]],
    asked: list[list[str]],
    current: list[bool],
    through_views: bool,
) -> list[list[Any]]:
    """Before each batch (a build), the answers to `asked`: through views over tables left
    stale (brought up to date only where `current` says, as `graduate_kept` does), or from
    tables advanced before every build, as the pipeline did before the views."""
    serial, answers = [0], []
    with _transaction(prior, serial) as (conn, follower, view):
        for n, batch in enumerate(batches):
            if n and through_views:
                view.catch_up()
            elif n:
                follower.advance()
            if through_views and current[n]:
                view.tables_current()
            answers.append(_answers(conn, view if through_views else None, asked[n]))
            _append(conn, batch, serial)
    return answers


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(prior=st.lists(_event(), max_size=10), batches=_batches(), data=st.data())
def test_views_over_stale_tables_answer_what_tables_advanced_per_build_answered(
    prior: list[tuple[str, dict[str, Any]]],
    batches: list[list[tuple[str, dict[str, Any]]]],
    data: st.DataObject,
) -> None:
    """The production case: the views are read while the tables lag behind the
    transaction, against the old way, the tables advanced before every build (two stores
    fed the same events; event times differ between them, their order does not)."""
    asked = [data.draw(st.lists(st.sampled_from(QUERIES), unique=True)) for _ in batches]
    current = [data.draw(st.booleans()) for _ in batches]
    through_views = _run(prior, batches, asked, current, through_views=True)
    assert through_views == _run(prior, batches, asked, current, through_views=False)


def test_a_build_of_a_session_without_an_id_compares_its_facts_with_its_earlier_ones(
    tmp_path: Path,
) -> None:
    """Its facts are from no session, so each is compared with the build's earlier ones
    as with believed facts (they were added to the believed index before the views), and
    again by when each was said (`_within_session`)."""
    said_late = ExtractedEntry(
        "ea", "fact", "upload limit is 50MB", "", (ExtractedEvidence(5, "q"),),
        subject="upload limit", value="50MB",
    )  # fmt: skip
    said_early = ExtractedEntry(
        "eb", "fact", "upload limit is 20MB", "", (ExtractedEvidence(1, "q"),),
        subject="upload limit", value="20MB",
    )  # fmt: skip
    db = Database(tmp_path / "axiom.duckdb")
    migrate(db)
    detected: list[tuple[str, str]] = []

    def append(event_type: str, payload: dict[str, Any], key: str) -> None:
        if event_type == CONFLICT_DETECTED:
            detected.append((payload["older_id"], payload["newer_id"]))

    with db.write() as conn:
        conflicts = BuildConflicts(FactView(conn), None, append)  # type: ignore[arg-type]
        conflicts.said_changes((said_late, said_early))
        for entry in (said_late, said_early):
            conflicts.weigh(entry.entry_id)
    assert detected == [("ea", "eb"), ("eb", "ea")]


def test_views_over_stale_tables_follow_a_pool_members_life() -> None:
    """`POOL_LIFE` read build by build through views over stale tables, as through tables
    advanced before every build (random histories reach such a life only now and then)."""
    asked = [list(QUERIES)] * (len(POOL_LIFE) + 1)
    batches = [*POOL_LIFE, []]
    current = [False] * len(batches)
    through_views = _run([], batches, asked, current, through_views=True)
    assert through_views == _run([], batches, asked, current, through_views=False)
