"""The memory browser's page (`list_entry_groups`) against a plain-Python reading of what it
promises, over random entries full of ties: builds that share a recording time, sources
said at the same time, the same text in other case and outer spaces, groups longer than
the members shown, unknown stages, every sort, grouped or not, any page."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from axiom.entries.queries import (
    INDEXED_LOOKUP_MAX,
    MEMBERS_SHOWN,
    EntryFilter,
    get_entries,
    list_entry_groups,
)
from axiom.graduation.stages import STAGES
from axiom.store.db import Database

T0 = datetime(2026, 3, 1, 10, 0)
RANK = {str(s): s.rank for s in STAGES}
SPEC = {"type": "decision", "title": "t", "stage": "raw", "status": "active", "said": None}
TITLES = ["Use DuckDB", "use duckdb ", "  USE DuckDB", "Deploy on Fridays", "Keep logs"]

entry = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["decision", "todo"]),
        "title": st.sampled_from(TITLES),
        "stage": st.sampled_from([*RANK, "retired-stage"]),  # unknown: ranks below raw
        "status": st.sampled_from(["active", "superseded"]),
        "created": st.integers(0, 3),  # few times: a build's entries share one
        "said": st.none() | st.integers(0, 3),
    }
)


def _insert(db: Database, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for n, spec in enumerate(specs):
        created = T0 + timedelta(minutes=spec["created"])
        said = None if spec["said"] is None else T0 + timedelta(minutes=spec["said"])
        # ids not in insertion order, so the id tie-break is not the scan order
        rows.append({**spec, "id": f"ent_{(n * 7919) % 1009:04d}", "ts": created, "at": said})
    with db.write() as conn:
        conn.execute("DELETE FROM entries")
        for r in rows:
            conn.execute(
                "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json, stage,"
                ' status, said_at) VALUES (?, ?, ?, ?, \'{"content": "x"}\', ?, ?, ?)',
                [r["id"], r["ts"], r["type"], r["title"], r["stage"], r["status"], r["at"]],
            )
    return rows


def _age(r: dict[str, Any]) -> tuple:
    """When it was said (else recorded), then recorded, then the id: the dates the list
    shows read in its order."""
    return (r["at"] or r["ts"], r["ts"], r["id"])


def _reference(
    rows: list[dict[str, Any]], status: str | None, sort: str, group: bool, limit: int, offset: int
) -> list[tuple[str, int, list[str]]]:
    """What the page should be: groups of the same type and title (case and outer spaces
    aside) led by the best proven, newest member; sorted with newest-first tie-breaks."""
    groups: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        if status is None or r["status"] == status:
            key = (r["type"], r["title"].strip().lower()) if group else r["id"]
            groups.setdefault(key, []).append(r)
    rank = lambda r: RANK.get(r["stage"], -1)  # noqa: E731
    ordered = list(groups.values())
    ordered.sort(key=lambda g: max(map(_age, g)), reverse=True)  # newest first
    if sort == "oldest":
        ordered.sort(key=lambda g: min(map(_age, g)))
    elif sort == "stage":
        ordered.sort(key=lambda g: max(map(rank, g)), reverse=True)  # stable: newest within
    elif sort == "type":
        ordered.sort(key=lambda g: g[0]["type"])
    page = []
    for g in ordered[offset : offset + limit]:
        lead = max(g, key=lambda r: (rank(r), _age(r)))
        members = sorted(g, key=_age, reverse=True)[:MEMBERS_SHOWN] if len(g) > 1 else []
        page.append((lead["id"], len(g), [m["id"] for m in members]))
    return page


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    specs=st.lists(entry, max_size=60),
    status=st.none() | st.just("active"),
    sort=st.sampled_from(["newest", "oldest", "stage", "type"]),
    group=st.booleans(),
    limit=st.integers(1, 8),
    offset=st.integers(0, 12),
)
def test_a_page_is_the_reference_grouping_order_and_paging(
    db: Database,
    specs: list[dict[str, Any]],
    status: str | None,
    sort: str,
    group: bool,
    limit: int,
    offset: int,
) -> None:
    rows = _insert(db, specs)
    with db.read() as conn:
        page = list_entry_groups(conn, EntryFilter(status=status), sort, group, limit, offset)
    got = [(g.lead.entry_id, g.count, [m.entry_id for m in g.members]) for g in page]
    assert got == _reference(rows, status, sort, group, limit, offset)


def test_a_group_longer_than_the_members_shown_keeps_its_count(db: Database) -> None:
    specs = [
        {"type": "todo", "title": "Ship it", "stage": "raw", "status": "active"}
        | {"created": n, "said": None}
        for n in range(MEMBERS_SHOWN + 5)
    ]
    rows = _insert(db, specs)
    with db.read() as conn:
        (only,) = list_entry_groups(conn, EntryFilter())
    newest = sorted(rows, key=_age, reverse=True)
    assert only.count == MEMBERS_SHOWN + 5 and only.lead.entry_id == newest[0]["id"]
    assert [m.entry_id for m in only.members] == [r["id"] for r in newest[:MEMBERS_SHOWN]]


def test_entries_are_read_the_same_by_key_probes_and_by_one_scan(db: Database) -> None:
    rows = _insert(db, [{**SPEC, "created": n % 4} for n in range(INDEXED_LOOKUP_MAX + 50)])
    ids = [r["id"] for r in rows] + ["ent_absent"]
    with db.read() as conn:
        scanned = get_entries(conn, ids)  # past the limit: one scan
        probed = {}
        for start in range(0, len(ids), INDEXED_LOOKUP_MAX):
            probed |= get_entries(conn, ids[start : start + INDEXED_LOOKUP_MAX])
    assert len(ids) - 1 > INDEXED_LOOKUP_MAX
    assert scanned == probed and set(scanned) == set(ids) - {"ent_absent"}
