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
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import axiom.projections
from axiom.conflicts.queries import believed_facts, fact_statuses, open_conflict_pairs
from axiom.entries.queries import corroboration_pool
from axiom.graduation.corroboration import pool_index
from axiom.pipeline.build_view import BuildView
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

IDS = [f"e{i}" for i in range(8)]
TYPES = ["fact", "decision", "note"]
SESSIONS = ["s1", "s2", None]
TITLES = [
    "Melanie: the billing store runs on postgres",
    "Melanie: billing store running on postgres now",
    "the upload limit is 20MB",
    "upload limit 50MB",
    "deploy region eu-west-1",
]
STAGES = ["raw", "working", "candidate", "verified", "certified"]
STATUSES = ["active", "contested", "superseded", "rejected"]
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
    eid = draw(st.sampled_from(IDS))
    kind = draw(
        st.sampled_from(["created", "created", "promoted", "status", "detected", "resolved"])
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
        name = payload.get("entry_id") or payload["conflict_id"]
        once = event_type in (ENTRY_CREATED, CONFLICT_DETECTED)
        serial[0] += 1
        key = f"{event_type}:{name}" if once else f"{event_type}:{name}:{serial[0]}"
        events.append(NewEvent(event_type, payload, key, payload.get("session_id"), "test"))
    EventStore(conn).append_many(events)


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


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prior=st.lists(_event(), max_size=10),
    batches=_batches(),
    read_early=st.booleans(),
    advance_each=st.booleans(),
)
def test_views_answer_what_the_projected_tables_answer(
    prior: list[tuple[str, dict[str, Any]]],
    batches: list[list[tuple[str, dict[str, Any]]]],
    read_early: bool,
    advance_each: bool,
) -> None:
    viewed = axiom.projections.read_by_builds()
    serial = [0]
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "axiom.duckdb")
        migrate(db)
        with db.write() as conn:
            _append(conn, prior, serial)
            run_projectors(conn, viewed)
        with db.write() as conn, appended() as log:
            follower = Follower(conn, viewed, log)
            follower.start()
            view = BuildView(conn, log, follower)
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
