"""Read-side queries over `entries` and the entry-related events (history)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:  # only in annotations: hooks import this module and must not load pyarrow
    import pyarrow as pa

from axiom.graduation.stages import STAGES
from axiom.store.event_types import (
    ENTRY_APPROVED,
    ENTRY_CREATED,
    ENTRY_DEMOTED,
    ENTRY_PROMOTED,
    ENTRY_STATUS_CHANGED,
    IDRIS_CHECKED,
    PROMOTION_BLOCKED,
)
from axiom.store.events import EventStore

HISTORY_TYPES = (
    ENTRY_CREATED,
    IDRIS_CHECKED,
    ENTRY_PROMOTED,
    PROMOTION_BLOCKED,
    ENTRY_APPROVED,
    ENTRY_STATUS_CHANGED,
    ENTRY_DEMOTED,
)


@dataclass(frozen=True)
class EntryRow:
    entry_id: str
    entry_type: str
    title: str
    content: str
    task: dict[str, Any] | None
    stage: str
    status: str
    session_id: str | None
    canonical_key: str | None
    build_id: str | None
    created_ts: datetime
    evidence: list[dict[str, Any]]
    subject: str | None = None
    value: str | None = None
    previous_value: str | None = None
    negated: bool = False
    said_at: datetime | None = None  # the latest quoted message's time (the source's time)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "entry",
            "entry_id": self.entry_id,
            "type": self.entry_type,
            "stage": self.stage,
            "status": self.status,
            "title": self.title,
            "content": self.content,
            "task": self.task,
            "session_id": self.session_id,
            "canonical_key": self.canonical_key,
            "build_id": self.build_id,
            "created_ts": self.created_ts.isoformat(),
            "evidence": self.evidence,
            "subject": self.subject,
            "value": self.value,
            "previous_value": self.previous_value,
            "negated": self.negated,
            "said_at": self.said_at.isoformat() if self.said_at else None,
        }


# Written by `as_of`: the latest quoted message (else the recording time) is not later.
_SAID_BY = "coalesce(said_at, created_ts) <= ?"
# Oldest first. A build's entries are written in one transaction and share `created_ts`,
# so ties go to when their source was said, then to the id: "newest" is exactly the reverse.
INDEXED_LOOKUP_MAX = 200  # ids looked up one by one in the key index; more: one scan
_AGE = "created_ts, coalesce(said_at, created_ts), entry_id"
# The browser, the dashboard's recent memories and the hooks show when each memory was
# said (`said_at`, else recorded), so they sort by that: a session imported today but
# said last week sorts among last week's memories, not above today's. Ties (one
# message's entries) go to the recording order, then the id. (`list_entries`, the API's
# and CLI's pages, stays in recording order: a new import never shifts the offsets a
# client has already read.)
_SAID_AGE = "coalesce(said_at, created_ts), created_ts, entry_id"
_NEWEST_FIRST = "coalesce(said_at, created_ts) DESC, created_ts DESC, entry_id DESC"
_COLS = (
    "entry_id, entry_type, title, content_json, stage, status, session_id, canonical_key,"
    " build_id, created_ts, evidence_json, subject, value, previous_value, negated, said_at"
)


def _row(r: tuple) -> EntryRow:
    content = json.loads(r[3])
    return EntryRow(
        entry_id=r[0],
        entry_type=r[1],
        title=r[2],
        content=content.get("content", ""),
        task=content.get("task"),
        stage=r[4],
        status=r[5],
        session_id=r[6],
        canonical_key=r[7],
        build_id=r[8],
        created_ts=r[9],
        evidence=json.loads(r[10]) if r[10] else [],
        subject=r[11],
        value=r[12],
        previous_value=r[13],
        negated=bool(r[14]),
        said_at=r[15],
    )


def list_entries(
    conn: duckdb.DuckDBPyConnection,
    stage: str | None = None,
    entry_type: str | None = None,
    status: str | None = None,
    session_id: str | None = None,
    limit: int | None = None,
    offset: int = 0,
    as_of: datetime | None = None,
) -> list[EntryRow]:
    """Entries oldest first; with `as_of`, only those whose source was written by then."""
    where, params = [], []
    if as_of is not None:
        where.append(_SAID_BY)
        params.append(as_of)
    for column, value in (
        ("stage", stage),
        ("entry_type", entry_type),
        ("status", status),
        ("session_id", session_id),
    ):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    sql = f"SELECT {_COLS} FROM entries"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY {_AGE}"
    if limit is not None:
        sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
    return [_row(r) for r in conn.execute(sql, params).fetchall()]


def count_entries(conn: duckdb.DuckDBPyConnection) -> int:
    return conn.execute("SELECT count(*) FROM entries").fetchone()[0]


def get_entry(
    conn: duckdb.DuckDBPyConnection, entry_id: str, as_of: datetime | None = None
) -> EntryRow | None:
    """One entry; with `as_of`, None unless its source was written by then."""
    sql, params = f"SELECT {_COLS} FROM entries WHERE entry_id = ?", [entry_id]
    if as_of is not None:
        sql += f" AND {_SAID_BY}"
        params.append(as_of)
    row = conn.execute(sql, params).fetchone()
    return _row(row) if row else None


def entry_history(conn: duckdb.DuckDBPyConnection, entry_id: str) -> list[dict[str, Any]]:
    """Every event about the entry, oldest first: creation, checks, promotions, blocks."""
    return [
        {"event_id": e.event_id, "type": e.event_type, "ts": e.ts.isoformat(), "payload": e.payload}
        for e in EventStore(conn).about("entry_id", entry_id, HISTORY_TYPES)
    ]


def corroboration_pool(
    conn: duckdb.DuckDBPyConnection,
    entry_type: str,
    session_id: str,
    statuses: tuple[str, ...] = ("active",),
) -> list[tuple[str, str, str, str, str | None]]:
    """(entry_id, session_id, stage, title, canonical_key) of the verified-or-better
    entries of a type from other sessions with one of `statuses`: what a new entry may be
    corroborated by (the pipeline also reads contested ones, whose conflict a build may
    settle, and leaves out those still in an open conflict)."""
    # Statuses as placeholders and the sort in Python: a pipeline build reads this once
    # per entry type, and `IN (SELECT unnest(?))` plus `ORDER BY` made it ~3x slower.
    marks = ", ".join("?" for _ in statuses) or "NULL"
    rows = conn.execute(
        "SELECT entry_id, session_id, stage, title, canonical_key FROM entries"
        " WHERE entry_type = ? AND session_id IS DISTINCT FROM ?"
        f" AND stage IN ('verified', 'certified') AND status IN ({marks})",
        [entry_type, session_id, *statuses],
    ).fetchall()
    return sorted(rows, key=itemgetter(0))  # code points: the order of DuckDB's UTF-8 bytes


POOL_STAGES = ("verified", "certified")  # the stages that corroborate another entry


def corroboration_members(
    conn: duckdb.DuckDBPyConnection, entry_type: str, statuses: tuple[str, ...]
) -> list[tuple[str, str | None, str, str, str | None]]:
    """(entry_id, session_id, stage, title, canonical_key) of the entries of a type
    `corroboration_pool` would list for any session: a write transaction's builds keep
    them and follow the changes their events make (`axiom.pipeline.pool_view`)."""
    stages = ", ".join("?" for _ in POOL_STAGES)
    marks = ", ".join("?" for _ in statuses) or "NULL"
    return conn.execute(
        "SELECT entry_id, session_id, stage, title, canonical_key FROM entries"
        f" WHERE entry_type = ? AND stage IN ({stages}) AND status IN ({marks})",
        [entry_type, *POOL_STAGES, *statuses],
    ).fetchall()


def pool_fields(
    conn: duckdb.DuckDBPyConnection, entry_ids: Sequence[str]
) -> list[tuple[str, str, str | None, str, str, str, str | None]]:
    """(entry_id, entry_type, session_id, stage, status, title, canonical_key) of the
    stored entries among `entry_ids`: what decides their place in a corroboration pool."""
    return conn.execute(
        "SELECT entry_id, entry_type, session_id, stage, status, title, canonical_key"
        " FROM entries WHERE entry_id IN (SELECT unnest(?))",
        [list(entry_ids)],
    ).fetchall()


def recent_entries(
    conn: duckdb.DuckDBPyConnection,
    statuses: tuple[str, ...],
    limit: int,
    session_ids: list[str] | None = None,
    stages: tuple[str, ...] | None = None,
) -> list[EntryRow]:
    """The newest entries (by when they were said, else recorded) with one of `statuses`
    (optionally of some sessions and stages): the bounded pool a reader without the search
    index scores itself."""
    where, params = ["status IN (SELECT unnest(?))"], [list(statuses)]
    if session_ids is not None:
        where.append("session_id IN (SELECT unnest(?))")
        params.append(list(session_ids))
    if stages is not None:
        where.append("stage IN (SELECT unnest(?))")
        params.append(list(stages))
    # The newest ids from narrow columns first, then the wide rows of those few: sorting
    # whole rows scanned every title and JSON column (~0.5 s at 100k entries, loaded box).
    newest = (
        f"SELECT entry_id FROM entries WHERE {' AND '.join(where)}"
        f" ORDER BY {_NEWEST_FIRST} LIMIT {int(limit)}"
    )
    sql = f"SELECT {_COLS} FROM entries WHERE entry_id IN ({newest}) ORDER BY {_NEWEST_FIRST}"
    return [_row(r) for r in conn.execute(sql, params).fetchall()]


# --- reads for other packages: the outbox writer, stats, tasks, citations -----------------


def entries_to_embed(
    conn: duckdb.DuckDBPyConnection, entry_ids: Sequence[str]
) -> list[tuple[str, str, str | None, datetime, str | None]]:
    """(entry_id, title, content_json, created_ts, session_id) of the entries that exist."""
    return conn.execute(
        "SELECT entry_id, title, content_json, created_ts, session_id FROM entries"
        " WHERE entry_id IN (SELECT unnest(?))",
        [list(entry_ids)],
    ).fetchall()


def count_entries_by_stage(conn: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """stage -> number of entries (stages with none are left out)."""
    return dict(conn.execute("SELECT stage, count(*) FROM entries GROUP BY stage").fetchall())


def entry_sources(
    conn: duckdb.DuckDBPyConnection, entry_ids: Sequence[str]
) -> dict[str, tuple[str | None, str, str]]:
    """entry_id -> (session_id, title, stage) of the entries that exist."""
    rows = conn.execute(
        "SELECT entry_id, session_id, title, stage FROM entries"
        " WHERE entry_id IN (SELECT unnest(?))",
        [list(dict.fromkeys(entry_ids))],
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def entry_title_and_build(
    conn: duckdb.DuckDBPyConnection, entry_id: str
) -> tuple[str, str | None] | None:
    """(title, build_id) of the entry, None when it does not exist."""
    return conn.execute(
        "SELECT title, build_id FROM entries WHERE entry_id = ?", [entry_id]
    ).fetchone()


# --- reads for search and disclosure (axiom.retrieval) -------------------------------------


@dataclass(frozen=True)
class EntryRankFacts:
    """What search's rerank needs of an entry: narrow columns, read for hundreds of
    candidates at once (at 100k entries the lookup is a scan, and wide columns cost double)."""

    entry_id: str
    stage: str
    status: str | None
    session_id: str | None
    created_ts: datetime


@dataclass(frozen=True)
class EntryHeadline:
    """An entry's type, title and evidence items, for a search hit's summary and citation."""

    entry_id: str
    entry_type: str
    title: str
    evidence: list[dict[str, Any]] | None  # None when the stored evidence is unreadable


def entry_rank_facts(conn: duckdb.DuckDBPyConnection, entry_ids: list[str]) -> list[EntryRankFacts]:
    """Stage, status, session and creation time of each existing entry of `entry_ids`."""
    if not entry_ids:
        return []
    rows = conn.execute(
        "SELECT entry_id, stage, status, session_id, created_ts FROM entries"
        " WHERE entry_id IN (SELECT unnest(?))",
        [entry_ids],
    ).fetchall()
    return [EntryRankFacts(*row) for row in rows]


# An evidence list cut to where each item points (its quotes and hashes are most of an
# entry's bytes); NULL when the stored evidence is not a JSON list.
_EVIDENCE_POINTERS = (
    "CASE WHEN json_type(CASE WHEN json_valid(evidence_json) THEN evidence_json END) = 'ARRAY'"
    " THEN to_json(list_transform(json_extract(evidence_json, '$[*]'), e -> json_object("
    "'session_id', e->'$.session_id', 'message_index', e->'$.message_index'))) END"
)


def entry_search_table(conn: duckdb.DuckDBPyConnection) -> pa.Table:
    """Every entry's stage, status, session, creation time, type, title and evidence
    pointers (`evidence_json` holding only each item's session_id and message_index), in
    one columnar read: search keeps it in memory while the store is unchanged."""
    return conn.execute(
        "SELECT entry_id, stage, status, session_id, created_ts, entry_type, title,"
        f" {_EVIDENCE_POINTERS} AS evidence_json FROM entries"
    ).fetch_arrow_table()


def entry_headlines(conn: duckdb.DuckDBPyConnection, entry_ids: list[str]) -> list[EntryHeadline]:
    """Type, title and evidence of each existing entry of `entry_ids`."""
    if not entry_ids:
        return []
    rows = conn.execute(
        "SELECT entry_id, entry_type, title, evidence_json FROM entries"
        " WHERE entry_id IN (SELECT unnest(?))",
        [entry_ids],
    ).fetchall()
    return [entry_headline(*row) for row in rows]


def entry_headline(
    entry_id: str, entry_type: str, title: str, evidence_json: str | None
) -> EntryHeadline:
    """The headline of one `entries` row (its evidence JSON parsed)."""
    return EntryHeadline(entry_id, entry_type, title, _evidence_or_none(evidence_json))


def get_entries(conn: duckdb.DuckDBPyConnection, entry_ids: list[str]) -> dict[str, EntryRow]:
    """entry_id -> the entry, for each existing entry of `entry_ids` (one read). A few ids
    go in as a list of parameters, which DuckDB looks up in the primary-key index (a
    semi-join on `unnest(?)` scans every wide row); past `INDEXED_LOOKUP_MAX` ids the one
    scan is cheaper than that many index probes (README, "Scale curve")."""
    if not entry_ids:
        return {}
    ids = list(dict.fromkeys(entry_ids))
    if len(ids) <= INDEXED_LOOKUP_MAX:
        where, params = f"entry_id IN ({', '.join('?' * len(ids))})", ids
    else:
        where, params = "entry_id IN (SELECT unnest(?))", [ids]
    rows = conn.execute(f"SELECT {_COLS} FROM entries WHERE {where}", params).fetchall()
    return {row.entry_id: row for row in map(_row, rows)}


def _evidence_or_none(evidence_json: str | None) -> list[dict[str, Any]] | None:
    try:
        evidence = json.loads(evidence_json) if evidence_json else []
    except (TypeError, ValueError):
        return None
    return evidence if isinstance(evidence, list) else None


@dataclass(frozen=True)
class AgeingEntry:
    """What half-life demotion needs of an active entry: its stage now, the highest stage it
    was promoted to, and when it was said (else recorded)."""

    entry_id: str
    entry_type: str
    stage: str
    peak_stage: str
    said_at: datetime


def ageing_entries(conn: duckdb.DuckDBPyConnection, stages: Sequence[str]) -> list[AgeingEntry]:
    """Active entries at one of `stages`, oldest first, with their peak stage."""
    rows = conn.execute(
        "SELECT entry_id, entry_type, stage, coalesce(said_at, created_ts) FROM entries"
        " WHERE status = 'active' AND list_contains(?, stage) ORDER BY created_ts, entry_id",
        [list(stages)],
    ).fetchall()
    order = {str(stage): stage.rank for stage in STAGES}
    peaks: dict[str, str] = {r[0]: r[2] for r in rows}
    for event in EventStore(conn).about_any("entry_id", list(peaks), [ENTRY_PROMOTED]):
        eid, to = event.payload["entry_id"], event.payload.get("to")
        if to in order and order[to] > order.get(peaks[eid], -1):
            peaks[eid] = to
    return [AgeingEntry(r[0], r[1], r[2], peaks[r[0]], r[3]) for r in rows]


# --- aggregates for the dashboard and the builds page ---------------------------------------


def entries_per_day(conn: duckdb.DuckDBPyConnection, days: int = 30) -> list[tuple[Any, int]]:
    """(day, entries said that day) over the last `days` days that end at the newest one
    (said = the latest quoted message's time, else the recording time)."""
    return conn.execute(
        "WITH e AS (SELECT CAST(coalesce(said_at, created_ts) AS DATE) AS d FROM entries)"
        " SELECT d, count(*) FROM e WHERE d > (SELECT max(d) FROM e) - CAST(? AS INTEGER)"
        " GROUP BY d ORDER BY d",
        [int(days)],
    ).fetchall()


def count_entries_by_build(
    conn: duckdb.DuckDBPyConnection, build_ids: Sequence[str]
) -> dict[str, int]:
    """build_id -> entries it produced, for each of `build_ids` that produced any."""
    if not build_ids:
        return {}
    rows = conn.execute(
        "SELECT build_id, count(*) FROM entries WHERE build_id IN (SELECT unnest(?))"
        " GROUP BY build_id",
        [list(build_ids)],
    ).fetchall()
    return dict(rows)


# --- the memory browser: text filter, sort, duplicates grouped (the viewer's list) ---------

ENTRY_SORTS = ("newest", "oldest", "stage", "type")
# A group's members read per page at most; a todo repeated hundreds of times still shows
# its count, and the list stays one bounded read.
MEMBERS_SHOWN = 20
# Same type and same title, case and outer spaces aside: what a person reads as "the same
# memory" (extraction already collapses inner spacing). A hash, not the text: grouping 100k
# rows by a 64-bit key is several times faster than by string, and a regexp per row more so.
_DUP_KEY = "hash(entry_type, lower(trim(title)))"
_STAGE_RANK = "CASE stage " + " ".join(f"WHEN '{s}' THEN {s.rank}" for s in STAGES) + " ELSE -1 END"
# `age` in the grouped query is each entry's place in `_SAID_AGE` order (1 = oldest): a BIGINT
# the aggregates compare cheaply (grouping 1M entries by STRUCT keys took 2.3 s of 4.5).
# The lead is the best proven, then newest: (rank + 1) * 2^40 + age orders exactly as
# (rank, age) while fewer than 2^40 entries pass the filter (rank is -1 for an unknown stage).
_LEAD_KEY = "(rank + 1) * 1099511627776 + age"
_GROUP_ORDER = {
    "newest": "newest DESC, lead_id",
    "oldest": "oldest, lead_id",
    "stage": "top_rank DESC, newest DESC, lead_id",
    "type": "group_type, newest DESC, lead_id",
}
# Each entry shown alone: the same orders read straight off the rows (ages are unique, so
# a group's `newest` and `oldest` are its entry's age and `lead_id` never breaks a tie).
_ENTRY_ORDER = {
    "newest": _NEWEST_FIRST,
    "oldest": _SAID_AGE,
    "stage": f"{_STAGE_RANK} DESC, {_NEWEST_FIRST}",
    "type": f"entry_type, {_NEWEST_FIRST}",
}


@dataclass(frozen=True)
class EntryFilter:
    """What the memory browser narrows by; empty values do not narrow."""

    text: str = ""
    stage: str | None = None
    entry_type: str | None = None
    status: str | None = None
    as_of: datetime | None = None

    def where(self) -> tuple[str, list[Any]]:
        clauses, params = ["TRUE"], []
        if self.as_of is not None:
            clauses.append(_SAID_BY)
            params.append(self.as_of)
        for column, value in (
            ("stage", self.stage),
            ("entry_type", self.entry_type),
            ("status", self.status),
        ):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        if self.text.strip():
            pattern = "%" + _like_escaped(self.text.strip()) + "%"
            clauses.append(
                "(title ILIKE ? ESCAPE '\\' OR"
                " json_extract_string(content_json, '$.content') ILIKE ? ESCAPE '\\')"
            )
            params += [pattern, pattern]
        return " AND ".join(clauses), params


@dataclass(frozen=True)
class EntryGroup:
    """One row of the browser: an entry, or the entries sharing its text (`count` > 1),
    led by the best proven, newest of them; `members` the first `MEMBERS_SHOWN`."""

    lead: EntryRow
    count: int
    members: list[EntryRow]


def _like_escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def list_entry_groups(
    conn: duckdb.DuckDBPyConnection,
    narrow: EntryFilter,
    sort: str = "newest",
    group: bool = True,
    limit: int = 50,
    offset: int = 0,
) -> list[EntryGroup]:
    """One page of the browser, filtered, grouped and sorted in SQL: one query picks the
    page's groups and the ids of their members, a second reads those rows whole."""
    if sort not in _GROUP_ORDER:
        sort = "newest"
    if not group:
        ids = _page_of_entries(conn, narrow, sort, limit, offset)
        rows = get_entries(conn, ids)
        return [EntryGroup(rows[i], 1, []) for i in ids]
    picked = _page_of_groups(conn, narrow, sort, limit, offset)
    rows = get_entries(conn, [r[0] for r in picked] + [r[2] for r in picked])
    groups: dict[str, EntryGroup] = {}
    for lead, n, member in picked:
        entry = groups.setdefault(lead, EntryGroup(rows[lead], n, []))
        if n > 1:
            entry.members.append(rows[member])
    return list(groups.values())


def _page_of_entries(
    conn: duckdb.DuckDBPyConnection, narrow: EntryFilter, sort: str, limit: int, offset: int
) -> list[str]:
    """The ids of one page of entries each shown alone: a top-N over narrow columns, with
    no grouping of one-entry groups (the grouped query took seconds for it at 1M)."""
    where, params = narrow.where()
    return [
        r[0]
        for r in conn.execute(
            f"SELECT entry_id FROM entries WHERE {where} ORDER BY {_ENTRY_ORDER[sort]}"
            f" LIMIT {int(limit)} OFFSET {int(offset)}",
            params,
        ).fetchall()
    ]


def _page_of_groups(
    conn: duckdb.DuckDBPyConnection, narrow: EntryFilter, sort: str, limit: int, offset: int
) -> list[tuple[str, int, str]]:
    """(lead id, count, member id) of one page of duplicate groups, in page order, each
    group's members newest first and at most `MEMBERS_SHOWN` (a single entry is its own
    member). The filtered scan is materialized once with scalar keys only; the page is a
    top-N of the groups (no window over all of them) and its members a hash join."""
    where, params = narrow.where()
    order = _GROUP_ORDER[sort]
    return conn.execute(
        f"WITH f AS MATERIALIZED (SELECT entry_id, entry_type, {_STAGE_RANK} AS rank,"
        f" row_number() OVER (ORDER BY {_SAID_AGE}) AS age, {_DUP_KEY} AS gkey"
        f" FROM entries WHERE {where}),"
        " g AS (SELECT gkey, count(*) AS n, min(entry_type) AS group_type,"
        f" arg_max(entry_id, {_LEAD_KEY}) AS lead_id,"
        " max(age) AS newest, min(age) AS oldest, max(rank) AS top_rank"
        " FROM f GROUP BY gkey),"
        f" page AS (SELECT * FROM g ORDER BY {order} LIMIT {int(limit)} OFFSET {int(offset)})"
        " SELECT page.lead_id, page.n, f.entry_id FROM page JOIN f ON f.gkey = page.gkey"
        " QUALIFY row_number() OVER (PARTITION BY page.gkey ORDER BY f.age DESC)"
        f" <= {MEMBERS_SHOWN} ORDER BY {order}, f.age DESC",
        params,
    ).fetchall()


def subject_names(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """Every distinct subject the entries state ("Melanie", "Melanie's kids")."""
    rows = conn.execute("SELECT DISTINCT subject FROM entries WHERE subject IS NOT NULL").fetchall()
    return [subject for (subject,) in rows]


def entry_subjects(conn: duckdb.DuckDBPyConnection, entry_ids: list[str]) -> dict[str, str]:
    """entry_id -> its stated subject, for the existing entries of `entry_ids` that name one."""
    if not entry_ids:
        return {}
    rows = conn.execute(
        "SELECT entry_id, subject FROM entries"
        " WHERE entry_id IN (SELECT unnest(?)) AND subject IS NOT NULL",
        [entry_ids],
    ).fetchall()
    return dict(rows)
