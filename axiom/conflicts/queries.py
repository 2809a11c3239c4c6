"""Read-side queries over `conflicts` and `conflict_facts` (owned by this package)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from itertools import starmap
from typing import Any

import duckdb

from axiom.conflicts.detector import Fact, divergence

CONFLICT_STATUSES = ("open", "resolved", "all")
_FACT_COLS = (
    "entry_id, session_id, entry_type, title, content, canonical_key, subject, value,"
    " previous_value, said_at"
)


def _fact(r: tuple) -> Fact:
    return Fact(*r)


def believed_facts(conn: duckdb.DuckDBPyConnection, entry_type: str) -> list[Fact]:
    """Facts of `entry_type` still believed (active or contested): what a new one may
    contradict."""
    rows = conn.execute(
        f"SELECT {_FACT_COLS} FROM conflict_facts WHERE entry_type = ?"
        " AND status IN ('active', 'contested') ORDER BY created_ts, entry_id",
        [entry_type],
    ).fetchall()
    return list(starmap(Fact, rows))


def believed_facts_dated(
    conn: duckdb.DuckDBPyConnection, entry_type: str
) -> list[tuple[tuple[datetime, str], Fact]]:
    """`believed_facts` with each one's place in their order, (created_ts, entry_id): a
    write transaction's builds keep them and merge the facts they add
    (`axiom.pipeline.fact_view`)."""
    rows = conn.execute(
        f"SELECT created_ts, {_FACT_COLS} FROM conflict_facts WHERE entry_type = ?"
        " AND status IN ('active', 'contested') ORDER BY created_ts, entry_id",
        [entry_type],
    ).fetchall()
    return [((r[0], r[1]), Fact(*r[1:])) for r in rows]


def facts_dated(
    conn: duckdb.DuckDBPyConnection, entry_ids: list[str]
) -> dict[str, tuple[tuple[datetime, str], Fact]]:
    """The stored facts among `entry_ids`, each with its place in `believed_facts` order."""
    rows = conn.execute(
        f"SELECT created_ts, {_FACT_COLS} FROM conflict_facts WHERE entry_id IN (SELECT unnest(?))",
        [entry_ids],
    ).fetchall()
    return {r[1]: ((r[0], r[1]), Fact(*r[1:])) for r in rows}


def fact_statuses(conn: duckdb.DuckDBPyConnection, entry_ids: list[str]) -> dict[str, str]:
    rows = conn.execute(
        "SELECT entry_id, status FROM conflict_facts WHERE entry_id IN (SELECT unnest(?))",
        [entry_ids],
    ).fetchall()
    return dict(rows)


@dataclass(frozen=True)
class ConflictRow:
    conflict_id: str
    status: str
    older_id: str
    newer_id: str
    conflict_type: str
    subject: str | None
    reason: str | None
    detected_at: datetime
    resolved_at: datetime | None
    resolution: str | None
    resolved_by: str | None
    note: str | None

    @property
    def entry_ids(self) -> tuple[str, str]:
        return (self.older_id, self.newer_id)

    def other(self, entry_id: str) -> str:
        return self.newer_id if entry_id == self.older_id else self.older_id

    def to_json(self) -> dict[str, Any]:
        return {
            "conflict_id": self.conflict_id,
            "status": self.status,
            "older_id": self.older_id,
            "newer_id": self.newer_id,
            "entry_ids": list(self.entry_ids),
            "conflict_type": self.conflict_type,
            "subject": self.subject,
            "reason": self.reason,
            "detected_at": self.detected_at.isoformat(),
            "resolved_at": self.resolved_at.isoformat() if self.resolved_at else None,
            "resolution": self.resolution,
            "resolved_by": self.resolved_by,
            "note": self.note,
        }


_COLS = (
    "conflict_id, status, older_id, newer_id, conflict_type, subject, reason, detected_at,"
    " resolved_at, resolution, resolved_by, note"
)


def list_conflicts(
    conn: duckdb.DuckDBPyConnection,
    status: str = "all",
    entry_id: str | None = None,
    as_of: datetime | None = None,
    limit: int | None = None,
) -> list[ConflictRow]:
    """Conflicts, newest first; `status` open, resolved or all; `entry_id` those naming it;
    at most `limit` (the dashboard's few, not every conflict ever found).

    With `as_of` (bitemporal): only conflicts between entries whose sources were both
    written by then, each as it stood then: a resolution recorded later is not shown
    (the conflict was still open)."""
    if status not in CONFLICT_STATUSES:
        raise ValueError(f"status must be one of {', '.join(CONFLICT_STATUSES)}; got {status!r}")
    where, params = [], []
    if entry_id:
        where.append("(older_id = ? OR newer_id = ?)")
        params += [entry_id, entry_id]
    if as_of is not None:
        where.append(
            "(SELECT count(*) FROM conflict_facts f WHERE f.entry_id IN (older_id, newer_id)"
            " AND coalesce(f.said_at, f.created_ts) <= ?) = 2"
        )
        params.append(as_of)
    elif status != "all":  # as of now the stored status is the one to filter on
        where.append("status = ?")
        params.append(status)
    sql = f"SELECT {_COLS} FROM conflicts"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY detected_at DESC, conflict_id"
    if as_of is None and limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    rows = [_as_of(ConflictRow(*r), as_of) for r in conn.execute(sql, params).fetchall()]
    return [r for r in rows if status == "all" or r.status == status][:limit]


def open_partners(conn: duckdb.DuckDBPyConnection, entry_ids: list[str]) -> dict[str, list[str]]:
    """For each of `entry_ids` in an open conflict, the entries it conflicts with (search
    hits of a contested memory name them)."""
    rows = conn.execute(
        "SELECT older_id, newer_id FROM conflicts WHERE status = 'open'"
        " AND (older_id IN (SELECT unnest(?)) OR newer_id IN (SELECT unnest(?)))"
        " ORDER BY detected_at, conflict_id",
        [entry_ids, entry_ids],
    ).fetchall()
    wanted, out = set(entry_ids), {}
    for older, newer in rows:
        for mine, other in ((older, newer), (newer, older)):
            if mine in wanted:
                out.setdefault(mine, []).append(other)
    return out


def open_conflict_pairs(conn: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(older id, newer id) of every open conflict, in `list_conflicts`' order: all a build
    needs of them, without reading each conflict's other columns."""
    return conn.execute(
        "SELECT older_id, newer_id FROM conflicts WHERE status = 'open'"
        " ORDER BY detected_at DESC, conflict_id"
    ).fetchall()


def open_conflicts_dated(conn: duckdb.DuckDBPyConnection) -> dict[str, tuple[datetime, str, str]]:
    """conflict id -> (detected_at, older id, newer id) of every open conflict: what
    `open_conflict_pairs` orders, for a transaction that adds and settles conflicts in
    memory (`axiom.pipeline.fact_view`)."""
    rows = conn.execute(
        "SELECT conflict_id, detected_at, older_id, newer_id FROM conflicts WHERE status = 'open'"
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def all_open_partners(conn: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """`open_partners` for every entry in an open conflict."""
    rows = conn.execute(
        "SELECT older_id, newer_id FROM conflicts WHERE status = 'open'"
        " ORDER BY detected_at, conflict_id"
    ).fetchall()
    out: dict[str, list[str]] = {}
    for older, newer in rows:
        out.setdefault(older, []).append(newer)
        out.setdefault(newer, []).append(older)
    return out


def _as_of(row: ConflictRow, as_of: datetime | None) -> ConflictRow:
    if as_of is None or row.resolved_at is None or row.resolved_at <= as_of:
        return row
    return replace(
        row, status="open", resolved_at=None, resolution=None, resolved_by=None, note=None
    )


def get_conflict(
    conn: duckdb.DuckDBPyConnection, conflict_id: str, as_of: datetime | None = None
) -> ConflictRow | None:
    found = [c for c in list_conflicts(conn, "all", as_of=as_of) if c.conflict_id == conflict_id]
    return found[0] if found else None


_STATUS_AFTER = {
    "keep_newer": ("superseded", "active"),
    "keep_older": ("active", "superseded"),
    "keep_both": ("active", "active"),
    "reject_both": ("deprecated", "deprecated"),
    "taken_back_older": ("superseded", "active"),
    "taken_back_newer": ("active", "superseded"),
    "taken_back_both": ("superseded", "superseded"),
}
CONFLICT_STATUSES_OF_ENTRIES = ("contested", "superseded", "deprecated")


def statuses_as_of(
    conn: duckdb.DuckDBPyConnection, entries: dict[str, str], as_of: datetime
) -> dict[str, str]:
    """entry id -> status as it stood at `as_of`, for entries whose current status
    (`entries`: id -> status) may come from a conflict: contested while a conflict known
    then was open, as resolved when its resolution was known, else active. An entry a
    conflict names that is active now (kept by the resolution) was contested before it."""
    out: dict[str, str] = {}
    in_conflicts = {e for c in list_conflicts(conn, "all") for e in c.entry_ids}
    for entry_id, current in entries.items():
        if current not in (*CONFLICT_STATUSES_OF_ENTRIES, "active"):
            out[entry_id] = current
            continue
        if entry_id not in in_conflicts:
            out[entry_id] = current  # not a conflict's doing (a re-import superseded it)
            continue
        status, known = "active", list_conflicts(conn, "all", entry_id, as_of)
        for c in sorted(known, key=lambda c: c.resolved_at or c.detected_at):
            if c.status != "open" and c.resolution in _STATUS_AFTER:
                older, newer = _STATUS_AFTER[c.resolution]
                status = older if entry_id == c.older_id else newer
        if status == "active" and any(c.status == "open" for c in known):
            status = "contested"  # kept by one resolution, still disputed by another
        out[entry_id] = status
    return out


def get_fact(conn: duckdb.DuckDBPyConnection, entry_id: str) -> Fact | None:
    row = conn.execute(
        f"SELECT {_FACT_COLS} FROM conflict_facts WHERE entry_id = ?", [entry_id]
    ).fetchone()
    return _fact(row) if row else None


def possible_conflicts(
    conn: duckdb.DuckDBPyConnection, entry_id: str, limit: int = 5
) -> list[tuple[Fact, float]]:
    """Believed facts that share the entry's topic words but little content (seed 003's
    divergence), with their overlap: a hint for the reader, never a conflict."""
    fact = get_fact(conn, entry_id)
    if fact is None:
        return []
    known = {c.other(entry_id) for c in list_conflicts(conn, "all", entry_id)}
    found = []
    for other in believed_facts(conn, fact.entry_type):
        if other.entry_id == entry_id or other.entry_id in known:
            continue
        if (score := divergence(fact, other)) is not None:
            found.append((other, score))
    return sorted(found, key=lambda pair: pair[1])[:limit]
