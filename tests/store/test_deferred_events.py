"""`deferred`: appends held back in memory give what appending at once gives."""

from __future__ import annotations

import shutil
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from axiom.store.db import Database
from axiom.store.events import (
    EventStore,
    FreshKeyStored,
    NewEvent,
    deferred,
    reading_every_key,
)
from axiom.store.migrate import migrate
from axiom.store.projection import write_projecting

# An operation: ("append", [(type, key or None), ...]) or a read by name.
APPEND = st.tuples(
    st.just("append"),
    st.lists(
        st.tuples(st.sampled_from("tu"), st.one_of(st.none(), st.sampled_from("abcde"))),
        min_size=1,
        max_size=4,
    ),
)
READ = st.tuples(st.sampled_from(["stored_keys", "by_key", "fetch", "count"]), st.just([]))


def _run(
    conn: duckdb.DuckDBPyConnection,
    ops: list[tuple[str, list[Any]]],
    fresh: frozenset[str] = frozenset(),
) -> list[Any]:
    """Each operation's outcome, in order, with the times left out (the wall clock); the
    keys in `fresh` are taken as not stored, rightly or not."""
    store, seen = EventStore(conn), []
    for n, (op, items) in enumerate(ops):
        if op == "append":
            events = [NewEvent(t, {"n": n, "i": i}, dedupe_key=k) for i, (t, k) in enumerate(items)]
            appended = store.append_many(events, fresh=fresh)
            seen.append([(r.event.event_id, r.created) for r in appended])
        elif op == "stored_keys":
            seen.append(sorted(store.stored_keys(list("abcde"), fresh=fresh)))
        elif op == "by_key":
            found = store.get_by_dedupe_key("a")
            seen.append(found and (found.event_id, found.payload))
        elif op == "fetch":
            seen.append([(e.event_id, e.payload) for e in store.fetch_since(None, None)])
        else:
            seen.append(store.count())
    return seen


def _table(conn: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    return conn.execute(
        "SELECT e.event_id, e.seq, e.event_type, e.payload_json, e.dedupe_key, d.event_id"
        " FROM events e LEFT JOIN event_dedup d USING (dedupe_key) ORDER BY e.ts, e.event_id"
    ).fetchall()


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated, empty store to copy (migrating one per example is most of the time)."""
    path = tmp_path_factory.mktemp("template") / "empty.duckdb"
    migrate(Database(path))
    return path


def _fresh(template: Path, root: Path, name: str) -> Database:
    shutil.copy(template, root / f"{name}.duckdb")
    return Database(root / f"{name}.duckdb")


@settings(max_examples=30, deadline=None)
@given(ops=st.lists(st.one_of(APPEND, READ), min_size=1, max_size=12), split=st.integers(0, 12))
def test_deferred_appends_read_and_store_what_appending_at_once_does(
    tmp_path_factory: pytest.TempPathFactory,
    migrated: Path,
    ops: list[tuple[str, list[Any]]],
    split: int,
) -> None:
    root = tmp_path_factory.mktemp("deferred")
    outcomes, tables = [], []
    for name, hold in (("now", False), ("held", True)):
        database = _fresh(migrated, root, name)
        with database.write() as conn:  # some events stored before, in their own transaction
            _run(conn, ops[:split])
        with database.write() as conn, deferred(conn) if hold else nullcontext():
            outcomes.append(_run(conn, ops[split:]))
        with database.read() as conn:
            tables.append(_table(conn))
    assert outcomes[0] == outcomes[1]
    assert tables[0] == tables[1]


@settings(max_examples=30, deadline=None)
@given(
    ops=st.lists(st.one_of(APPEND, READ), min_size=1, max_size=12),
    split=st.integers(0, 12),
    fresh=st.sets(st.sampled_from("abcde")),
)
def test_keys_taken_for_fresh_rightly_or_not_give_what_reading_them_does(
    tmp_path_factory: pytest.TempPathFactory,
    migrated: Path,
    ops: list[tuple[str, list[Any]]],
    split: int,
    fresh: set[str],
) -> None:
    """A wrong guess is caught before its rows go in, and the unit runs again reading every
    key (`write_projecting`): what a unit that reads every key gives, either way."""
    root = tmp_path_factory.mktemp("fresh")
    outcomes, tables = [], []
    for name, taken in (("read", frozenset[str]()), ("taken", frozenset(fresh))):
        database = _fresh(migrated, root, name)
        with database.write() as conn:
            _run(conn, ops[:split])

        def unit(conn: duckdb.DuckDBPyConnection, taken: frozenset[str] = taken) -> list[Any]:
            with deferred(conn):
                return _run(conn, ops[split:], taken)

        outcomes.append(write_projecting(database, unit))
        with database.read() as conn:
            tables.append(_table(conn))
    assert outcomes[0] == outcomes[1]
    assert tables[0] == tables[1]


def test_a_stored_key_taken_for_fresh_is_caught_before_its_row_goes_in(db: Database) -> None:
    with db.write() as conn:
        EventStore(conn).append(NewEvent("t", {"x": 1}, dedupe_key="k"))
    with pytest.raises(FreshKeyStored) as caught, db.write() as conn, deferred(conn):
        store = EventStore(conn)
        assert store.stored_keys(["k"], fresh={"k"}) == set()  # not read: taken at its word
        assert store.append(NewEvent("t", {"x": 2}, dedupe_key="k")).created is False  # read
        assert store.append_many([NewEvent("t", {"x": 3}, dedupe_key="j")], fresh={"j"})
    assert caught.value.keys == {"k"}
    with db.read() as conn:
        assert [e.payload for e in EventStore(conn).fetch_since(None, None)] == [{"x": 1}]


def test_fresh_keys_are_read_like_any_other_while_reading_every_key(db: Database) -> None:
    with db.write() as conn:
        first = EventStore(conn).append(NewEvent("t", {"x": 1}, dedupe_key="k")).event
    with reading_every_key(), db.write() as conn, deferred(conn):
        store = EventStore(conn)
        assert store.stored_keys(["k"], fresh={"k"}) == {"k"}
        again = store.append_many([NewEvent("t", {"x": 2}, dedupe_key="k")], fresh={"k"})
        assert again[0].created is False and again[0].event.event_id == first.event_id


def test_held_back_rows_are_inserted_when_the_block_ends(db: Database) -> None:
    with db.write() as conn:
        with deferred(conn):
            first = EventStore(conn).append(NewEvent("t", {"x": 1}, dedupe_key="k")).event
            assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0
            again = EventStore(conn).append(NewEvent("t", {"x": 2}, dedupe_key="k"))
            assert not again.created and again.event.event_id == first.event_id
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 1
        # the sequence moved on as far as the numbers handed out from memory
        nxt = EventStore(conn).append(NewEvent("t", {"x": 3})).event
        assert nxt.seq == first.seq + 1


def test_a_failing_block_inserts_nothing(db: Database) -> None:
    with pytest.raises(RuntimeError, match="boom"), db.write() as conn, deferred(conn):
        EventStore(conn).append(NewEvent("t", {"x": 1}))
        raise RuntimeError("boom")
    with db.read() as conn:
        assert EventStore(conn).count() == 0


def test_a_block_inside_another_on_the_same_connection_is_that_block(db: Database) -> None:
    with db.write() as conn, deferred(conn):
        first = EventStore(conn).append(NewEvent("t", {"x": 1}, dedupe_key="k")).event
        with deferred(conn):
            again = EventStore(conn).append(NewEvent("t", {"x": 2}, dedupe_key="k"))
        assert not again.created and again.event.event_id == first.event_id
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 0  # still held
    with db.read() as conn:
        assert EventStore(conn).count() == 1
