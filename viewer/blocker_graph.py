"""A task's blocker graph, laid out in columns for an inline SVG (no JavaScript).

Columns, left to right: the tasks this task blocks, the task, what it is blocked by (and
the suggested blockers, drawn dashed), and what a blocking condition was resolved to.
Every arrow reads "is blocked by" (or "resolves to"). This module only computes
positions and shortened labels; the template draws them, so every string is escaped by
the template engine like any other.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.urls import reverse

from axiom.tasks.queries import BlockerView, TaskDetail, TaskSummary

NODE_W, NODE_H = 180, 46
COL_GAP, ROW_GAP, PAD = 48, 14, 8  # four columns fit the page's 60rem
LOOP_ROOM = 36  # below the nodes, for an edge that points back (a cycle)
LABEL_ROOM = NODE_W - 16  # px available for the title inside a node
FONT_PX = 12.0
LABEL_LINES = 2


@dataclass
class GraphNode:
    key: str
    kind: str  # task / condition / artifact / unknown
    title: str
    caption: str  # the small line above the title: kind and status
    href: str | None
    focus: bool = False
    external: bool = False  # href leaves the site (a URL blocker): new tab, rel=noopener
    status: str = ""  # for the status colour (pending, blocked, done, open, resolved, ...)
    placeholder: bool = False
    column: int = 0
    x: float = 0
    y: float = 0

    @property
    def label(self) -> str:
        return shorten(self.title, LABEL_ROOM)

    @property
    def lines(self) -> list[str]:
        """The title wrapped on two lines (the rest cut; the node's `<title>` has it all)."""
        return wrap(self.title, LABEL_ROOM, LABEL_LINES)

    @property
    def transform(self) -> str:
        return f"translate({self.x:g},{self.y:g})"

    @property
    def cx(self) -> float:
        return self.x + NODE_W / 2


@dataclass(frozen=True)
class GraphEdge:
    path: str
    rel: str  # blocked_by / suggested / resolves_to
    title: str
    backward: bool = False


@dataclass
class BlockerGraph:
    nodes: list[GraphNode] = field(default_factory=list)
    edges: list[GraphEdge] = field(default_factory=list)
    width: int = 0
    height: int = 0
    node_w: int = NODE_W
    node_h: int = NODE_H

    @property
    def kinds(self) -> list[str]:
        """The node kinds present, for the legend."""
        seen: list[str] = []
        for node in self.nodes:
            if node.kind not in seen:
                seen.append(node.kind)
        return seen


def _char_px(char: str) -> float:
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return FONT_PX
    return FONT_PX * 0.58


def shorten(text: str, room_px: float) -> str:
    """`text` cut with an ellipsis to fit `room_px` at the graph's font size (estimated)."""
    text = " ".join(text.split())
    width = sum(_char_px(c) for c in text)
    if width <= room_px:
        return text
    out, used = [], _char_px("…")
    for char in text:
        used += _char_px(char)
        if used > room_px:
            break
        out.append(char)
    return "".join(out).rstrip() + "…"


def wrap(text: str, room_px: float, max_lines: int) -> list[str]:
    """`text` in at most `max_lines` lines of `room_px`, by words; the last one shortened."""
    lines: list[str] = []
    words = text.split()
    while words and len(lines) < max_lines - 1:
        line = words.pop(0)
        while words and _px(f"{line} {words[0]}") <= room_px:
            line += " " + words.pop(0)
        if _px(line) > room_px:  # one word wider than the node: cut it on the last line
            words.insert(0, line)
            break
        lines.append(line)
    if words:
        lines.append(shorten(" ".join(words), room_px))
    return lines


def _px(text: str) -> float:
    return sum(_char_px(c) for c in text)


def entity_href(kind: str, entity_id: str, title: str) -> tuple[str, bool]:
    """Where a node or blocker links, and whether that leaves the site: a task's page; a URL
    artifact's URL; a ticket key (PLAT-142, #412) or a condition: a search for its text."""
    if kind == "task":
        return reverse("viewer-task", args=[entity_id]), False
    if kind == "artifact" and title.lower().startswith(("http://", "https://")):
        return title, True
    return f"{reverse('viewer-search')}?{urlencode({'q': title})}", False


def _task_node(task: TaskSummary, focus: bool = False) -> GraphNode:
    return GraphNode(
        key=task.task_id,
        kind="task",
        title=task.title,
        caption=f"task · {task.status}",
        href=None if focus else reverse("viewer-task", args=[task.task_id]),
        focus=focus,
        status=task.status,
    )


def _blocker_node(blocker: BlockerView, entity_id: str, title: str) -> GraphNode:
    kind = blocker.kind if blocker.kind in ("task", "condition", "artifact") else "unknown"
    caption = kind
    if blocker.auto_placeholder:
        caption += " · placeholder"
    elif blocker.status:
        caption += f" · {blocker.status}"
    href, external = entity_href(kind, entity_id, title)
    return GraphNode(
        entity_id, kind, title, caption, href, placeholder=blocker.auto_placeholder,
        external=external, status=blocker.status or "",
    )  # fmt: skip


def edge_between(source: GraphNode, target: GraphNode, rel: str, title: str) -> GraphEdge:
    x1, y1 = source.x + NODE_W, source.y + NODE_H / 2
    x2, y2 = target.x, target.y + NODE_H / 2
    if target.column <= source.column:  # a cycle drawn backwards: loop under the nodes
        x1, x2 = source.cx, target.cx
        y1, y2 = source.y + NODE_H, target.y + NODE_H
        low = max(y1, y2) + LOOP_ROOM
        path = f"M{x1:g},{y1:g} C{x1:g},{low:g} {x2:g},{low:g} {x2:g},{y2 + 6:g}"
        return GraphEdge(path, rel, title, backward=True)
    mid = (x1 + x2) / 2
    path = f"M{x1:g},{y1:g} C{mid:g},{y1:g} {mid:g},{y2:g} {x2 - 6:g},{y2:g}"
    return GraphEdge(path, rel, title)


def build_blocker_graph(detail: TaskDetail) -> BlockerGraph:
    """Nodes and edges for `detail`'s task; an empty graph when nothing blocks it either way."""
    nodes: dict[str, GraphNode] = {}
    pending: list[tuple[str, str, str, str]] = []  # (source key, target key, rel, title)

    def add(node: GraphNode, column: int) -> GraphNode:
        existing = nodes.get(node.key)
        if existing is not None:
            return existing
        node.column = column
        nodes[node.key] = node
        return node

    task = add(_task_node(detail.task, focus=True), 1)
    for other in detail.blocking:
        add(_task_node(other), 0)
        pending.append((other.task_id, task.key, "blocked_by", "is blocked by"))
    for blocker in detail.blockers:
        add(_blocker_node(blocker, blocker.entity_id, blocker.title), 2)
        pending.append((task.key, blocker.entity_id, "blocked_by", "is blocked by"))
    for blocker in detail.effective_blockers:
        if blocker.via_resolution and blocker.declared_id:
            declared = blocker.declared_title or blocker.declared_id
            source = add(
                GraphNode(
                    blocker.declared_id,
                    "condition",
                    declared,
                    "condition",
                    entity_href("condition", blocker.declared_id, declared)[0],
                ),  # fmt: skip
                2,
            )
            pending.append((task.key, source.key, "blocked_by", "is blocked by"))
            add(_blocker_node(blocker, blocker.entity_id, blocker.title), 3)
            pending.append((source.key, blocker.entity_id, "resolves_to", "resolves to"))
        elif blocker.entity_id not in nodes:
            add(_blocker_node(blocker, blocker.entity_id, blocker.title), 2)
            pending.append((task.key, blocker.entity_id, "blocked_by", "is blocked by"))
    for blocker in detail.suggested_blockers:
        if blocker.entity_id in nodes:  # already drawn as a confirmed blocker
            continue
        add(_blocker_node(blocker, blocker.entity_id, blocker.title), 2)
        pending.append((task.key, blocker.entity_id, "suggested", "may be blocked by (suggested)"))

    graph = BlockerGraph()
    if len(nodes) == 1:
        return graph
    place(list(nodes.values()), graph)
    seen: set[tuple[str, str, str]] = set()
    for source_key, target_key, rel, title in pending:
        if source_key == target_key or (source_key, target_key, rel) in seen:
            continue
        seen.add((source_key, target_key, rel))
        graph.edges.append(edge_between(nodes[source_key], nodes[target_key], rel, title))
    if any(edge.backward for edge in graph.edges):
        graph.height += LOOP_ROOM
    return graph


def place(nodes: list[GraphNode], graph: BlockerGraph) -> None:
    """Columns side by side (empty ones dropped), each centred on the tallest one."""
    used = sorted({n.column for n in nodes})
    columns = [[n for n in nodes if n.column == c] for c in used]
    tallest = max(len(col) for col in columns)
    full = tallest * NODE_H + (tallest - 1) * ROW_GAP
    for position, column in enumerate(columns):
        height = len(column) * NODE_H + (len(column) - 1) * ROW_GAP
        top = PAD + (full - height) / 2
        for row, node in enumerate(column):
            node.column = position
            node.x = PAD + position * (NODE_W + COL_GAP)
            node.y = top + row * (NODE_H + ROW_GAP)
    graph.nodes = nodes
    graph.width = 2 * PAD + len(columns) * NODE_W + (len(columns) - 1) * COL_GAP
    graph.height = round(2 * PAD + full)
