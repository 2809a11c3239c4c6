"""The project-wide blocker graph: every task that blocks or is blocked, what blocks it
(tasks, conditions, artifacts) and what a condition resolves to, as plain nodes and edges.

Read from the task projection (`entities`, `edges`); the viewer lays it out. Closed tasks
(done, cancelled) are left out unless asked for, with their edges.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb

from axiom.tasks.projector import BLOCKED_BY, BLOCKED_BY_SUGGESTED, RESOLVES_TO
from axiom.tasks.state import CLOSED_STATUSES

__all__ = ["GraphData", "GraphEntity", "GraphLink", "get_blocker_graph"]

RELS = (BLOCKED_BY, BLOCKED_BY_SUGGESTED, RESOLVES_TO)


@dataclass(frozen=True)
class GraphEntity:
    entity_id: str
    kind: str  # task / condition / artifact
    title: str
    status: str  # a task's status; a condition's open/resolved; "" for an artifact
    project: str
    artifact_kind: str = ""  # jira / gh_issue / url
    placeholder: bool = False


@dataclass(frozen=True)
class GraphLink:
    src_id: str
    dst_id: str
    rel: str  # blocked_by / blocked_by_suggested / resolves_to


@dataclass(frozen=True)
class GraphData:
    entities: dict[str, GraphEntity]
    links: list[GraphLink]
    projects: list[str]  # every project that has a task, for the filter


def _entity(row: tuple) -> GraphEntity:
    entity_id, kind, title, current = row
    data = json.loads(current) if current else {}
    return GraphEntity(
        entity_id=entity_id,
        kind=kind,
        title=title,
        status=str(data.get("status") or ""),
        project=str(data.get("project") or ""),
        artifact_kind=str(data.get("artifact_kind") or ""),
        placeholder=bool(data.get("auto_placeholder")),
    )


def get_blocker_graph(
    conn: duckdb.DuckDBPyConnection, *, project: str | None = None, closed: bool = False
) -> GraphData:
    """The blocker graph of one project (or all), with closed tasks when `closed`."""
    marks = ", ".join("?" for _ in RELS)
    rows = conn.execute(
        "SELECT e.src_id, e.dst_id, e.rel_type FROM edges e"
        f" WHERE e.rel_type IN ({marks}) ORDER BY e.src_id, e.rel_type, e.dst_id",
        list(RELS),
    ).fetchall()
    ids = sorted({r[0] for r in rows} | {r[1] for r in rows})
    entities: dict[str, GraphEntity] = {}
    if ids:
        found = conn.execute(
            "SELECT entity_id, entity_type, title, current_json FROM entities"
            " WHERE entity_id IN (SELECT unnest(?))",
            [ids],
        ).fetchall()
        entities = {row[0]: _entity(row) for row in found}
    keep = {
        eid: e
        for eid, e in entities.items()
        if e.kind != "task"
        or ((closed or e.status not in CLOSED_STATUSES) and (not project or e.project == project))
    }
    links = [GraphLink(*r) for r in rows if r[0] in keep and r[1] in keep]
    linked = {eid for link in links for eid in (link.src_id, link.dst_id)}
    projects = conn.execute(
        "SELECT DISTINCT json_extract_string(current_json, '$.project') AS p FROM entities"
        " WHERE entity_type = 'task' AND p IS NOT NULL ORDER BY p"
    ).fetchall()
    return GraphData(
        {eid: e for eid, e in keep.items() if eid in linked}, links, [p[0] for p in projects]
    )
