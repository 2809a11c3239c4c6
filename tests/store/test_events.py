from __future__ import annotations

import hashlib
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from axiom.store.db import Database
from axiom.store.events import EventStore, NewEvent, appended, canonical_json, encode_payload
from axiom.store.migrate import migrate


def test_it_appends_an_event_with_a_checksum_over_canonical_json(db: Database) -> None:
    with db.write() as conn:
        result = EventStore(conn).append(NewEvent("thing_happened", {"b": 2, "a": "가"}))
    assert result.created
    expected = hashlib.sha256('{"a":"가","b":2}'.encode()).hexdigest()
    assert result.event.checksum == expected
    with db.read() as conn:
        stored = EventStore(conn).get(result.event.event_id)
    assert stored is not None and stored.payload == {"b": 2, "a": "가"}
    assert stored.checksum == expected


def test_a_duplicate_dedupe_key_returns_the_existing_event_and_writes_nothing(db: Database) -> None:
    with db.write() as conn:
        store = EventStore(conn)
        first = store.append(NewEvent("x", {"n": 1}, dedupe_key="k1"))
        second = store.append(NewEvent("x", {"n": 2}, dedupe_key="k1"))
        assert store.count() == 1
    assert not second.created
    assert second.event.event_id == first.event.event_id
    assert second.event.payload == {"n": 1}


def test_fetch_since_returns_events_after_a_position_in_insertion_order(db: Database) -> None:
    with db.write() as conn:
        store = EventStore(conn)
        ids = [store.append(NewEvent("t" if i % 2 else "u", {"i": i})).event for i in range(6)]
        after = store.fetch_since(ids[2].ts, ids[2].event_id)
        assert [e.payload["i"] for e in after] == [3, 4, 5]
        only_t = store.fetch_since(None, None, types=["t"])
        assert [e.payload["i"] for e in only_t] == [1, 3, 5]
        assert [e.payload["i"] for e in store.replay(batch=2)] == list(range(6))


def test_the_store_offers_no_way_to_update_or_delete() -> None:
    public = {name for name in dir(EventStore) if not name.startswith("_")}
    assert not {n for n in public if any(w in n for w in ("update", "delete", "remove", "set"))}


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 3)), min_size=1, max_size=15))
def test_appending_is_idempotent_per_dedupe_key(tmp_path_factory, appends) -> None:  # type: ignore[no-untyped-def]
    from axiom.store.migrate import migrate

    database = Database(tmp_path_factory.mktemp("ev") / "a.duckdb")
    migrate(database)
    with database.write() as conn:
        store = EventStore(conn)
        for kind, n in appends:
            store.append(NewEvent(kind, {"n": n}, dedupe_key=f"{kind}:{n}"))
        assert store.count() == len(set(appends))
        stamps = [(e.ts, e.event_id) for e in store.replay()]
    assert stamps == sorted(stamps)


def test_canonical_json_is_key_sorted_and_compact() -> None:
    assert canonical_json({"b": [1, {"d": 1, "c": 2}], "a": None}) == json.dumps(
        {"a": None, "b": [1, {"c": 2, "d": 1}]}, separators=(",", ":")
    )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)


def test_a_payload_encoded_ahead_is_stored_as_one_encoded_at_the_append(db: Database) -> None:
    """`encode_payload`, worked out before the write (`prepare_session`), gives the event
    the text, checksum and payload a plain append gives it, and a read returns."""

    @settings(max_examples=50, deadline=None)
    @given(payload=st.dictionaries(st.text(), JSON_VALUES, max_size=4))
    def stored_alike(payload: dict) -> None:  # type: ignore[type-arg]
        with db.write() as conn:
            store = EventStore(conn)
            plain = store.append(NewEvent("x", payload)).event
            ahead = store.append(NewEvent("x", payload, encoded=encode_payload(payload))).event
            read = store.get(ahead.event_id)
        assert read is not None
        assert ahead.checksum == plain.checksum == read.checksum
        assert json.dumps(ahead.payload) == json.dumps(plain.payload) == json.dumps(read.payload)

    stored_alike()


def test_about_finds_events_by_a_payload_field_in_order(db: Database) -> None:
    with db.write() as conn:
        store = EventStore(conn)
        for i, (kind, ref) in enumerate(
            [("a", "x"), ("b", "x"), ("a", "y"), ("c", "x"), ("a", "x")]
        ):
            store.append(NewEvent(kind, {"ref": ref, "i": i}))
        found = store.about("ref", "x", ["a", "b"])
    assert [(e.event_type, e.payload["i"]) for e in found] == [("a", 0), ("b", 1), ("a", 4)]


def test_appended_collects_what_a_read_after_the_appends_returns(db: Database) -> None:
    with db.write() as conn:
        store = EventStore(conn)
        before = store.append(NewEvent("x", {"n": 0}, dedupe_key="k0")).event
        with appended() as log:
            store.append(NewEvent("x", {"n": 1}, dedupe_key="k0"))  # a repeat: nothing stored
            store.append_many(
                [NewEvent("y", {"n": 2, "t": "가"}), NewEvent("x", {"n": 3}, dedupe_key="k3")]
            )
            store.append_many([NewEvent("x", {"n": 4}, dedupe_key="k3")])  # a repeat again
        store.append(NewEvent("z", {"n": 5}))  # after the block: not collected
        assert log == store.fetch_since(before.ts, before.event_id)[:2]
        assert [e.payload["n"] for e in log] == [2, 3]


@settings(max_examples=25, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(["a", "b", "c"]), min_size=0, max_size=30),
    seen=st.lists(st.integers(min_value=-1, max_value=30), min_size=1, max_size=3),
    limit=st.integers(min_value=1, max_value=40),
)
def test_count_pending_counts_what_fetch_pending_reads(
    tmp_path_factory, kinds, seen, limit
) -> None:  # type: ignore[no-untyped-def]
    """The backlog check counts the pending events without reading them: the same events
    as `fetch_pending`, whatever the readers' positions and types."""
    db = Database(tmp_path_factory.mktemp("pending") / "axiom.duckdb")
    migrate(db)
    with db.write() as conn:
        store = EventStore(conn)
        stored = [store.append(NewEvent(k, {"n": i}, f"k{i}")).event for i, k in enumerate(kinds)]
    types = [("a",), ("b", "c"), ("a", "c")]
    readers = [
        (None if n < 0 or n >= len(stored) else (stored[n].ts, stored[n].event_id), types[i])
        for i, n in enumerate(seen)
    ]
    with db.read() as conn:
        store = EventStore(conn)
        assert store.count_pending(readers, limit) == len(store.fetch_pending(readers, limit))
