"""The project-wide blocker graph laid out for an SVG: columns by depth along "is blocked
by" arrows (a task left of what blocks it), nodes and edges drawn by the same template and
geometry as a task's own graph (`viewer.blocker_graph`).

Depth is the longest path from a node nothing points at; a cycle stops growing after as
many rounds as there are nodes, and its closing arrow is drawn as a loop under the nodes.
"""

from __future__ import annotations

from axiom.tasks.graph import GraphData, GraphEntity
from viewer.blocker_graph import (
    LOOP_ROOM,
    BlockerGraph,
    GraphNode,
    edge_between,
    entity_href,
    place,
)

REL_NAMES = {
    "blocked_by": ("blocked_by", "is blocked by"),
    "blocked_by_suggested": ("suggested", "may be blocked by (suggested)"),
    "resolves_to": ("resolves_to", "resolves to"),
}


def _node(entity: GraphEntity) -> GraphNode:
    caption = entity.kind
    if entity.placeholder:
        caption += " · placeholder"
    elif entity.kind == "artifact" and entity.artifact_kind:
        caption += f" · {entity.artifact_kind}"
    elif entity.status:
        caption += f" · {entity.status}"
    href, external = entity_href(entity.kind, entity.entity_id, entity.title)
    return GraphNode(
        key=entity.entity_id,
        kind=entity.kind if entity.kind in ("task", "condition", "artifact") else "unknown",
        title=entity.title,
        caption=caption,
        href=href,
        placeholder=entity.placeholder,
        external=external,
        status=entity.status,
    )


def _depths(ids: list[str], links: list[tuple[str, str]]) -> dict[str, int]:
    depth = dict.fromkeys(ids, 0)
    for _ in range(len(ids)):
        changed = False
        for src, dst in links:
            if depth[dst] < depth[src] + 1:
                depth[dst] = depth[src] + 1
                changed = True
        if not changed:
            break
    return depth


def build_project_graph(data: GraphData) -> BlockerGraph:
    """Nodes in depth columns and their edges; an empty graph when nothing is blocked."""
    nodes = {eid: _node(entity) for eid, entity in sorted(data.entities.items())}
    pairs = [(link.src_id, link.dst_id) for link in data.links]
    for eid, depth in _depths(list(nodes), pairs).items():
        nodes[eid].column = depth
    graph = BlockerGraph()
    if not nodes:
        return graph
    ordered = sorted(nodes.values(), key=lambda n: (n.column, n.kind != "task", n.title.lower()))
    place(ordered, graph)
    for link in data.links:
        rel, title = REL_NAMES.get(link.rel, (link.rel, link.rel))
        graph.edges.append(edge_between(nodes[link.src_id], nodes[link.dst_id], rel, title))
    if any(edge.backward for edge in graph.edges):
        graph.height += LOOP_ROOM
    return graph
