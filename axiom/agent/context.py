"""What SessionStart and UserPromptSubmit print: the few memories that matter, or nothing.

A block of at most `budget` tokens (AXIOM_INJECT_BUDGET, default 600; tokens estimated as
`ceil(chars / 4)` like `axiom.retrieval.disclosure`). Each line is one memory: its title,
stage, date, `mem:` citation, and a CONTESTED flag when the pipeline found a contradiction.
The date is when the memory was said (its latest quoted message, `entries.said_at`; a
search hit's time is its session's start), else when Axiom recorded it: an imported
history is not all "today".

Two ways to find them:

* **with the service up** (`memories_from_hits`): the running web process searches with the
  full hybrid `SearchService` (entries only) and keeps the hits whose
  `axiom.retrieval.confidence.relevance` is `high` or `suggested`;
* **with the service down** (`memories_from_store`): one DuckDB read, no model, no LanceDB:
  the newest `POOL` active/contested entries are scored by the share of the prompt's
  analyzed terms they contain, and tiered by the same `tier_for` rule.

At session start there is no prompt: `session_start_memories` shows the project's proven
memories (verified or certified), newest first. When nothing clears the rule the block
is empty: the agent's context gets no noise.

Each task and each memory text is shown once (`distinct`): three sessions that each said
"the refund report is blocked by OPS-77" leave three notes of one task and three "OPS-77"
references, and the block names the task once and the ticket once, in the order found,
the freed lines going to the next memories.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import duckdb

from axiom.entries.queries import EntryRow, recent_entries
from axiom.evidence.citations import first_citations
from axiom.extract.types import normalize_title
from axiom.ingest.session_queries import session_ids_for_project
from axiom.retrieval.confidence import relevance, tier_for
from axiom.retrieval.disclosure import estimate_tokens
from axiom.tasks.queries import tasks_of_entries
from axiom.vectors.lexical import DEFAULT_ANALYZER

if TYPE_CHECKING:
    from axiom.retrieval.results import SearchHit

POOL = 2_000  # entries a full-text fallback scores
MAX_MEMORIES = 5
START_POOL = 4 * MAX_MEMORIES  # memories looked at before `distinct` keeps MAX_MEMORIES
SHOWN_STATUSES = ("active", "contested")
PROVEN_STAGES = ("verified", "certified")
HEADER = "Axiom memory (cite with `python -m axiom cite ID`):"
TITLE_CHARS = 160


@dataclass(frozen=True)
class Memory:
    entry_id: str
    title: str
    stage: str | None
    status: str | None
    date: datetime | None
    citation: str | None
    relevance: str  # high | suggested | proven (session start)

    def line(self) -> str:
        title = " ".join(self.title.split())
        if len(title) > TITLE_CHARS:
            title = title[: TITLE_CHARS - 1] + "…"
        bits = [self.stage or "?", self.date.date().isoformat() if self.date else "undated"]
        if self.status == "contested":
            bits.append("CONTESTED")
        cite = self.citation or f"entry:{self.entry_id}"
        return f"- {title} [{', '.join(bits)}] ({cite})"


def render(memories: Sequence[Memory], budget: int) -> str:
    """The block for the agent within `budget` tokens; "" when no memory fits."""
    lines: list[str] = []
    used = estimate_tokens(HEADER) + 1
    for memory in memories[:MAX_MEMORIES]:
        line = memory.line()
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            continue
        lines.append(line)
        used += cost
    return "\n".join([HEADER, *lines]) if lines else ""


def distinct(conn: duckdb.DuckDBPyConnection, memories: Sequence[Memory]) -> list[Memory]:
    """`memories` in order, without one whose task or text an earlier one already shows
    (texts compared as `normalize_title` does: case and spacing aside)."""
    tasks = tasks_of_entries(conn, [m.entry_id for m in memories])
    seen: set[str] = set()
    out = []
    for memory in memories:
        keys = {f"text:{normalize_title(memory.title)}"}
        keys |= {f"task:{t}" for t in tasks.get(memory.entry_id, ())}
        if keys.isdisjoint(seen):
            out.append(memory)
        seen |= keys
    return out


def project_folder(cwd: str) -> str:
    """Claude Code's project folder name for a working directory (`/a/b.c` → `-a-b-c`)."""
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def memories_from_hits(hits: Sequence[SearchHit]) -> list[Memory]:
    """Entry hits of a search that clear the confidence rule, best first."""
    out = []
    for hit in hits:
        level = relevance(hit)
        if hit.kind != "entry" or level == "none" or hit.entry_id is None:
            continue
        title = hit.summary
        out.append(Memory(hit.entry_id, title, hit.stage, hit.status, hit.ts, hit.citation, level))
    return out


@dataclass
class _Scored:
    entry: EntryRow
    match: float
    tier: str = "none"
    status: str | None = None


def memories_from_store(conn: duckdb.DuckDBPyConnection, prompt: str) -> list[Memory]:
    """Full-text fallback (service down): the newest entries scored against `prompt`."""
    terms = set(DEFAULT_ANALYZER(prompt))
    if not terms:
        return []
    scored = []
    for entry in recent_entries(conn, SHOWN_STATUSES, POOL):
        doc = set(DEFAULT_ANALYZER(f"{entry.title}\n{entry.content}"))
        match = len(terms & doc) / len(terms)
        if match > 0:
            scored.append(_Scored(entry, match, status=entry.status))
    scored.sort(key=lambda s: (-s.match, s.entry.entry_id))
    for item in scored:
        others = (s.match for s in scored if s.entry.session_id != item.entry.session_id)
        item.tier = tier_for(item.match, max(others, default=0.0))
    kept = [s for s in scored if relevance(s) != "none"][:START_POOL]
    return distinct(conn, _as_memories(conn, [s.entry for s in kept], [s.tier for s in kept]))[
        :MAX_MEMORIES
    ]


def session_start_memories(conn: duckdb.DuckDBPyConnection, cwd: str | None) -> list[Memory]:
    """The project's proven memories, newest first (nothing for an unknown project)."""
    if not cwd:
        return []
    sessions = session_ids_for_project(conn, project_folder(cwd), cwd)
    if not sessions:
        return []
    entries = recent_entries(conn, SHOWN_STATUSES, START_POOL, sessions, PROVEN_STAGES)
    return distinct(conn, _as_memories(conn, entries, ["proven"] * len(entries)))[:MAX_MEMORIES]


def _as_memories(
    conn: duckdb.DuckDBPyConnection, entries: Sequence[EntryRow], levels: Sequence[str]
) -> list[Memory]:
    cites = first_citations(conn, [e.entry_id for e in entries])
    return [
        Memory(
            e.entry_id,
            e.title,
            e.stage,
            e.status,
            e.said_at or e.created_ts,
            cites.get(e.entry_id),
            lvl,
        )
        for e, lvl in zip(entries, levels, strict=True)
    ]
