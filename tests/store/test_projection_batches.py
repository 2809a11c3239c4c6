"""A projector's batch (`apply_many`) gives the tables that applying the same events one at
a time gives: random event sequences (hypothesis), with rows stored before the batch,
repeated ids, updates before and after their row's creation, poison payloads. Real DuckDB."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from axiom.builds.projector import BuildProjector
from axiom.conflicts.projector import ConflictProjector
from axiom.entries.projector import EntryProjector
from axiom.evidence.citations import CitationProjector, _digest, span_key
from axiom.outbox.projector import OutboxProjector
from axiom.projections import project_all, rebuild_all
from axiom.store.db import Database
from axiom.store.events import EventStore, NewEvent
from axiom.store.migrate import migrate
from axiom.store.projection import (
    Projector,
    get_offsets,
    one_event_at_a_time,
    run_projector,
    run_projectors,
    set_offset,
    write_projecting,
)

IDS = st.sampled_from(["e1", "e2", "e3"])
STAGES = st.sampled_from(["raw", "verified", "certified"])
MAYBE = st.one_of(st.none(), st.text(alphabet="ab ", max_size=3))


def _drop(payload: dict[str, Any], key: str | None) -> dict[str, Any]:
    """The payload without `key`: a poison event (its projector raises KeyError)."""
    return {k: v for k, v in payload.items() if k != key}


def _evidence(session: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    span = st.builds(
        lambda i, start, aligned: {
            "session_id": session,
            "message_index": i,
            "span_start": start,
            "span_end": start + 3,
            "quote_hash": f"h{i}{start}",
            "method": "exact",
            "confidence": 1.0,
            "aligned": aligned,
        },
        st.integers(0, 2),
        st.integers(0, 2),
        st.booleans(),
    )
    return st.lists(span, max_size=3)


def _created(poison: str | None = None) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    return st.builds(
        lambda eid, kind, title, evidence, subject, missing: (
            "entry_created",
            _drop(
                {
                    "entry_id": eid,
                    "session_id": "s1",
                    "entry_type": kind,
                    "title": title,
                    "content": f"{title} content",
                    "canonical_key": f"{kind}:{title}",
                    "evidence": evidence,
                    "subject": subject,
                    "value": subject and "v",
                    "said_at": "2025-01-02T03:04:05",
                },
                missing,
            ),
        ),
        IDS,
        st.sampled_from(["fact", "decision", "preference"]),
        st.sampled_from(["a title", "another"]),
        _evidence("s1"),
        MAYBE,
        st.sampled_from([None, None, None, "title", "evidence"]),
    )


ENTRY_EVENTS = st.one_of(
    _created(),
    st.builds(
        lambda t, eid, to: (t, {"entry_id": eid, "to": to}),
        st.sampled_from(["entry_promoted", "entry_demoted"]),
        IDS,
        STAGES,
    ),
    st.builds(
        lambda eid, to, by: (
            "entry_status_changed",
            {"entry_id": eid, "to": to, "superseded_by": by},
        ),
        IDS,
        st.sampled_from(["active", "contested", "superseded"]),
        st.sampled_from([None, "e2"]),
    ),
    st.just(("entry_promoted", {"entry_id": "e1"})),  # poison: no "to"
)

CONFLICT_EVENTS = st.one_of(
    ENTRY_EVENTS,
    st.builds(
        lambda cid, older, newer: (
            "conflict_detected",
            {
                "conflict_id": cid,
                "older_id": older,
                "newer_id": newer,
                "conflict_type": "value",
                "reason": "r",
                "subject": "s",
            },
        ),
        st.sampled_from(["c1", "c2"]),
        IDS,
        IDS,
    ),
    st.builds(
        lambda cid, choice, who: (
            "conflict_resolved",
            {"conflict_id": cid, "choice": choice, "who": who, "note": None},
        ),
        st.sampled_from(["c1", "c2"]),
        st.sampled_from(["keep_newer", "keep_both", "bogus"]),  # bogus: ValueError
        st.sampled_from([None, "ann"]),
    ),
)

SPEC = {
    "extractor_model": "rule:1",
    "extractor_prompt_hash": "p",
    "embedder_model": "none",
    "embedding_version": "none",
    "idris_version": "v",
    "schema_version": "2",
}
BUILD_EVENTS = st.one_of(
    st.builds(
        lambda bid: ("build_started", {"build_id": bid, "spec": SPEC}),
        st.sampled_from(["b1", "b2"]),
    ),
    st.builds(
        lambda bid, status, n: (
            "build_finished",
            {
                "build_id": bid,
                "status": status,
                "error": None if status == "success" else "boom",
                "metrics": [
                    {"stage": f"s{i}", "latency_ms": 1.5 * i, "success": True} for i in range(n)
                ],
            },
        ),
        st.sampled_from(["b1", "b2"]),
        st.sampled_from(["success", "failed"]),
        st.integers(0, 3),
    ),
    st.just(("build_finished", {"build_id": "b1", "metrics": []})),  # poison: no status
)


def _ingest(session: str, texts: list[str]) -> tuple[str, dict[str, Any]]:
    messages = [{"index": i, "role": "user", "text": t} for i, t in enumerate(texts)]
    return (
        "session_ingested",
        {
            "transcript": {
                "session_id": session,
                "project": "p",
                "source": "t",
                "messages": messages,
            }
        },
    )


OUTBOX_EVENTS = st.one_of(
    _created(),
    st.builds(
        _ingest,
        st.sampled_from(["s1", "s2"]),
        st.lists(st.sampled_from(["hi", "", "yo"]), max_size=3),
    ),
    st.builds(
        lambda tid, title: ("task_created", {"task_id": tid, "title": title}),
        st.sampled_from(["t1", "t2"]),
        st.sampled_from(["Fix it", "Ship it"]),
    ),
    st.builds(
        lambda tid, title: ("task_title_changed", {"task_id": tid, "to": title}),
        st.sampled_from(["t1", "t2"]),
        st.sampled_from(["Fix it", "Ship it", "Other"]),
    ),
)

CITATION_EVENTS = st.one_of(
    _created(),
    st.builds(
        _ingest, st.sampled_from(["s1", "s2"]), st.lists(st.sampled_from(["hi", "yo"]), max_size=3)
    ),
)

TABLES = {
    "entries": ("entries",),
    "conflicts": ("conflicts", "conflict_facts"),
    "builds": ("build_runs", "pipeline_metrics"),
    "outbox": ("vector_outbox",),
    "citations": ("citations", "message_citations"),
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("batches") / "axiom.duckdb"
    migrate(Database(path))
    return path


@pytest.fixture
def conn(template: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(str(template))
    yield connection
    connection.close()


WRITTEN_AT = {"entries": " EXCLUDE (created_at)"}  # the transaction's clock, not an event's


def _state(
    conn: duckdb.DuckDBPyConnection,
    projector: Projector,
    tables: tuple[str, ...],
    before: list[tuple[str, dict[str, Any]]],
    batch: list[tuple[str, dict[str, Any]]],
    batched: bool,
) -> list[list[str]]:
    """The tables after `before` one at a time then `batch` (batched or not), rolled back;
    event ids and times named by position (the store's sequence is not rolled back)."""
    conn.execute("BEGIN TRANSACTION")
    try:
        store, names = EventStore(conn), {}
        for phase, (events, as_batch) in enumerate(((before, False), (batch, batched))):
            stored = store.append_many([NewEvent(t, p, build_id="b1") for t, p in events])
            for n, result in enumerate(stored):
                names[result.event.event_id] = f"E{phase}.{n}"
                names[result.event.ts] = f"T{phase}"
            if as_batch:
                run_projector(conn, projector)
            else:
                with one_event_at_a_time(projector.name):
                    run_projector(conn, projector)
        return [
            sorted(
                _named(row, names)
                for row in conn.execute(f"SELECT *{WRITTEN_AT.get(t, '')} FROM {t}").fetchall()
            )
            for t in (*tables, "projection_errors")
        ]
    finally:
        conn.execute("ROLLBACK")


def _named(row: tuple[Any, ...], names: dict[Any, str]) -> str:
    out = []
    for value in row:
        if isinstance(value, str):
            for event_id in (k for k in names if isinstance(k, str) and k in value):
                value = value.replace(event_id, names[event_id])
        out.append(names.get(value, value) if not isinstance(value, list | dict) else value)
    return repr(out)


def _check(conn, projector, tables, before, batch) -> None:  # type: ignore[no-untyped-def]
    one_by_one = _state(conn, projector, tables, before, batch, batched=False)
    assert _state(conn, projector, tables, before, batch, batched=True) == one_by_one


RANDOM = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@RANDOM
@given(before=st.lists(ENTRY_EVENTS, max_size=4), batch=st.lists(ENTRY_EVENTS, max_size=10))
def test_entries_batch_equals_one_at_a_time(conn, before, batch) -> None:  # type: ignore[no-untyped-def]
    _check(conn, EntryProjector(), TABLES["entries"], before, batch)


@RANDOM
@given(before=st.lists(CONFLICT_EVENTS, max_size=4), batch=st.lists(CONFLICT_EVENTS, max_size=10))
def test_conflicts_batch_equals_one_at_a_time(conn, before, batch) -> None:  # type: ignore[no-untyped-def]
    _check(conn, ConflictProjector(), TABLES["conflicts"], before, batch)


@RANDOM
@given(before=st.lists(BUILD_EVENTS, max_size=3), batch=st.lists(BUILD_EVENTS, max_size=8))
def test_builds_batch_equals_one_at_a_time(conn, before, batch) -> None:  # type: ignore[no-untyped-def]
    _check(conn, BuildProjector(), TABLES["builds"], before, batch)


@RANDOM
@given(before=st.lists(OUTBOX_EVENTS, max_size=3), batch=st.lists(OUTBOX_EVENTS, max_size=8))
def test_outbox_batch_equals_one_at_a_time(conn, before, batch) -> None:  # type: ignore[no-untyped-def]
    _check(conn, OutboxProjector("v1"), TABLES["outbox"], before, batch)


@RANDOM
@given(before=st.lists(CITATION_EVENTS, max_size=3), batch=st.lists(CITATION_EVENTS, max_size=8))
def test_citations_batch_equals_one_at_a_time(conn, before, batch) -> None:  # type: ignore[no-untyped-def]
    _check(conn, CitationProjector(), TABLES["citations"], before, batch)


def test_citation_ids_lengthen_on_collision_as_one_at_a_time(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    """A stored citation holds the 6-character id of a span the batch brings: that span
    gets 7 characters, the others their own 6, in both ways."""
    evidence = [
        {"session_id": "s1", "message_index": i, "span_start": 0, "span_end": 3,
         "quote_hash": f"q{i}", "method": "exact", "confidence": 1.0, "aligned": True}
        for i in range(3)
    ]  # fmt: skip
    created = ("entry_created", {"entry_id": "e1", "session_id": "s1", "entry_type": "fact",
               "title": "t", "content": "c", "canonical_key": "fact:t", "evidence": evidence})  # fmt: skip
    taken = "mem:" + _digest(span_key("e1", evidence[1]))[:6]
    conn.execute(
        "INSERT INTO citations VALUES (?, 'other', 'e0', 's0', 0, 0, 1, 'x', 'exact', 1.0, now())",
        [taken],
    )
    try:
        projector, tables = CitationProjector(), TABLES["citations"]
        state = _state(conn, projector, tables, [], [created], batched=True)
        assert state == _state(conn, projector, tables, [], [created], batched=False)
        ids = conn.execute("SELECT citation_id FROM citations").fetchall()  # rolled back: 1
        assert ids == [(taken,)]
        lengths = sorted(len(row.split("'")[1]) for row in state[0])  # "['mem:…', …]"
        assert lengths == [10, 10, 10, 11]  # "mem:" + 6 (the stored one), 6, 6 and 7
    finally:
        conn.execute("DELETE FROM citations")


def test_a_batch_that_aborts_runs_again_one_event_at_a_time(db: Database, table_rows) -> None:  # type: ignore[no-untyped-def]
    """An entry without a title breaks the batch's insert (NOT NULL): the unit runs again
    with the projector one event at a time, the bad event is recorded, the rest applied;
    a rebuild gives the same tables."""
    good = {"session_id": "s1", "entry_type": "fact", "content": "c", "canonical_key": "k",
            "evidence": []}  # fmt: skip
    with db.write() as conn:
        EventStore(conn).append_many(
            [
                NewEvent("entry_created", {**good, "entry_id": "e1", "title": "one"}),
                NewEvent("entry_created", {**good, "entry_id": "e2", "title": None}),
                NewEvent("entry_promoted", {"entry_id": "e1", "to": "verified"}),
                NewEvent("entry_created", {**good, "entry_id": "e3", "title": "three"}),
            ]
        )
    write_projecting(db, lambda conn: run_projector(conn, EntryProjector()))
    state = table_rows(db, "entries", "projection_errors")
    assert [(r[0], r[5]) for r in state["entries"]] == [("e1", "verified"), ("e3", "raw")]
    assert [(r[0], r[2]) for r in state["projection_errors"]] == [("entries", "entry_created")]
    assert state["projection_errors"][0][4].startswith("ConstraintException")
    project_all(db)  # the others too (conflicts records the same event), then replay

    def replayable() -> tuple[list[tuple], dict[str, list[tuple]]]:
        with db.read() as conn:  # entries.created_at is the writer's clock: not replayed
            entries = conn.execute("SELECT * EXCLUDE (created_at) FROM entries ORDER BY ALL")
            return entries.fetchall(), table_rows(db, "conflict_facts", "projection_errors")

    state_before = replayable()
    rebuild_all(db)
    assert replayable() == state_before


def test_run_projectors_reads_once_and_moves_every_offset_forward(db: Database) -> None:
    """After a shared read every projector's offset is at the last event read, its own type
    or not (builds sees no event here), so the next shared read starts there; an offset
    already further on is never moved back."""
    created = {"session_id": "s1", "entry_type": "note", "title": "t", "content": "c",
               "canonical_key": "k", "evidence": []}  # fmt: skip
    with db.write() as conn:
        store = EventStore(conn)
        first = store.append(NewEvent("entry_created", {**created, "entry_id": "e1"})).event
        counts = run_projectors(conn, [EntryProjector(), BuildProjector()])
        assert counts == {"entries": 1, "builds": 0}
        assert get_offsets(conn, ["entries", "builds"]) == {
            "entries": (first.ts, first.event_id),
            "builds": (first.ts, first.event_id),
        }
        later = store.append(NewEvent("entry_created", {**created, "entry_id": "e2"})).event
        set_offset(conn, "builds", later)  # ahead of what entries has read
        assert run_projectors(conn, [EntryProjector(), BuildProjector()]) == {
            "entries": 1,
            "builds": 0,
        }
        assert get_offsets(conn, ["builds"])["builds"] == (later.ts, later.event_id)
        assert conn.execute("SELECT entry_id FROM entries ORDER BY 1").fetchall() == [
            ("e1",),
            ("e2",),
        ]


def test_set_offset_moves_a_stored_offset_and_makes_a_missing_one(db: Database) -> None:
    with db.write() as conn:
        store = EventStore(conn)
        first = store.append(NewEvent("x", {"n": 1})).event
        second = store.append(NewEvent("x", {"n": 2})).event
        set_offset(conn, "tasks", first)  # no row yet: inserted
        assert get_offsets(conn, ["tasks"]) == {"tasks": (first.ts, first.event_id)}
        set_offset(conn, "tasks", second)  # the row moved, not another added
        assert get_offsets(conn, ["tasks"]) == {"tasks": (second.ts, second.event_id)}
        rows = conn.execute("SELECT count(*) FROM projection_offsets").fetchone()
        assert rows == (1,)


def test_a_backlog_past_the_shared_read_leaves_every_offset_at_the_newest_event(
    db: Database,
) -> None:
    """With `batch` or more events pending each projector runs on its own; every offset
    then moves to the newest event of their types, so a projector that never saw an event
    of its own (builds here) does not send every later shared read back to the start."""
    created = {"session_id": "s1", "entry_type": "note", "title": "t", "content": "c",
               "canonical_key": "k", "evidence": []}  # fmt: skip
    projectors = [EntryProjector(), BuildProjector()]
    with db.write() as conn:
        store = EventStore(conn)
        for i in range(12):
            newest = store.append(NewEvent("entry_created", {**created, "entry_id": f"e{i}"}))
        assert run_projectors(conn, projectors, batch=5) == {"entries": 12, "builds": 0}
        at_newest = (newest.event.ts, newest.event.event_id)
        assert get_offsets(conn, ["entries", "builds"]) == {"entries": at_newest, "builds": at_newest}  # fmt: skip
        store.append(NewEvent("entry_created", {**created, "entry_id": "e12"}))
        assert run_projectors(conn, projectors, batch=5) == {"entries": 1, "builds": 0}
        assert conn.execute("SELECT count(*) FROM entries").fetchone()[0] == 13


def test_rebuild_leaves_every_offset_at_the_newest_event(db: Database) -> None:
    created = {"session_id": "s1", "entry_type": "note", "title": "t", "content": "c",
               "canonical_key": "k", "evidence": [], "entry_id": "e1"}  # fmt: skip
    with db.write() as conn:
        event = EventStore(conn).append(NewEvent("entry_created", created)).event
    rebuild_all(db)
    with db.read() as conn:
        offsets = get_offsets(conn, ["entries", "builds", "conflicts"])
    assert set(offsets.values()) == {(event.ts, event.event_id)}
