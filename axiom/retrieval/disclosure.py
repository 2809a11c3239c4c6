"""Progressive disclosure: how much of each search hit to show within a token budget.

Three layers per hit, each more expensive than the last:

1. **index** — id, kind, one-line summary, score, tier, citation (~40-80 tokens);
2. **timeline** — the messages around the hit in its session (a message hit: its
   neighbours; an entry: the neighbours of its first evidence message), each cut to
   `TIMELINE_CHARS`;
3. **detail** — an entry with its content, stage, status and every evidence item with its
   quote and citation; a message in full (up to `DETAIL_CHARS`) with its meta and citation.

Tokens are estimated as `ceil(len(text) / 4)` of each piece's compact JSON — the form the
API and an agent receive (about right for English; generous for code, tight for Korean).

`disclose(db, result, budget)` fills the budget greedily in three passes, best hit first
in each: (1) the index line of every hit that fits; (2) the detail of each indexed hit
whose detail fits the remaining budget (a hit that does not fit is skipped, a smaller one
further down may still fit); (3) likewise the timeline. So a small budget gives the top
hits' index lines, a medium one adds what the best hits say, a large one their context.
An agent can also ask for one layer of one hit: `timeline(conn, hit_id)`,
`details(conn, hit_id)`. The rows of every layer of every hit are read at once
(`read_hit_rows`: a fixed handful of queries through each table's owner, not a query per
hit), after the search itself.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import duckdb

from axiom.entries.queries import EntryRow, get_entries
from axiom.evidence.citations import (
    citations_for_entries,
    message_citations,
    span_citations,
    span_key,
)
from axiom.ingest.session_queries import (
    SessionSummary,
    WindowMessage,
    get_sessions,
    message_windows,
)
from axiom.retrieval.query import QueryError
from axiom.retrieval.results import SearchHit, SearchResult, speaker_of, summarize_text
from axiom.store.db import Database

TIMELINE_BEFORE, TIMELINE_AFTER = 3, 3
TIMELINE_CHARS = 300
DETAIL_CHARS = 20_000
MAX_BUDGET = 200_000


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def tokens_of(piece: Any) -> int:
    return estimate_tokens(
        json.dumps(piece, ensure_ascii=False, separators=(",", ":"), default=str)
    )


def parse_hit_id(hit_id: str) -> tuple[str, str | None, str | None, int | None]:
    """`entry:<id>` → ("entry", entry_id, None, None); `message:<sid>:<i>` → ("message",
    None, sid, i). Raises ValueError for anything else (a session id may contain colons)."""
    kind, _, rest = hit_id.partition(":")
    if kind == "entry" and rest:
        return "entry", rest, None, None
    if kind == "message" and rest:
        sid, _, index = rest.rpartition(":")
        if sid and index.isdigit():
            return "message", None, sid, int(index)
    raise ValueError(f"not a search hit id: {hit_id!r} (entry:<id> or message:<session>:<index>)")


# --- layer 1 --------------------------------------------------------------------------------


def index_item(hit: SearchHit) -> dict[str, Any]:
    return {
        "id": hit.id,
        "kind": hit.kind,
        "summary": hit.summary,
        "score": round(hit.score, 4),
        "tier": hit.tier,
        "citation": hit.citation,
        **({"conflicts_with": hit.conflicts_with} if hit.conflicts_with else {}),
    }


# --- one read for every hit -----------------------------------------------------------------


@dataclass
class HitRows:
    """Everything layers 2 and 3 show of a set of hits, read at once: their entries, the
    messages around each hit's place, the sessions, and the citations of all of them."""

    entries: dict[str, EntryRow] = field(default_factory=dict)
    windows: dict[str, list[WindowMessage]] = field(default_factory=dict)
    sessions: dict[str, SessionSummary] = field(default_factory=dict)
    message_cites: dict[tuple[str, int], str] = field(default_factory=dict)
    entry_cites: dict[str, list[str]] = field(default_factory=dict)
    span_cites: dict[str, dict[str, str]] = field(default_factory=dict)

    def anchor(self, hit_id: str) -> tuple[str, int] | None:
        """A message hit's own place; an entry's first evidence message."""
        kind, entry_id, sid, index = parse_hit_id(hit_id)
        if kind == "message":
            return sid, index  # type: ignore[return-value]
        entry = self.entries.get(entry_id or "")
        if entry is None:
            return None
        for ev in entry.evidence:
            if ev.get("message_index") is not None:
                return ev.get("session_id") or entry.session_id, int(ev["message_index"])  # type: ignore[return-value]
        return None

    def messages(self, sid: str, first: int, last: int) -> list[WindowMessage]:
        return [m for m in self.windows.get(sid, []) if first <= m.index <= last]


def read_hit_rows(
    conn: duckdb.DuckDBPyConnection,
    hit_ids: list[str],
    before: int = TIMELINE_BEFORE,
    after: int = TIMELINE_AFTER,
) -> HitRows:
    """The rows of `hit_ids` and of their timelines: a fixed number of queries, whatever
    the number of hits."""
    parsed = [parse_hit_id(h) for h in hit_ids]
    entry_ids = [eid for kind, eid, _s, _i in parsed if kind == "entry" and eid]
    rows = HitRows(entries=get_entries(conn, entry_ids))
    anchors = [a for a in map(rows.anchor, hit_ids) if a is not None]
    rows.windows = message_windows(conn, [(sid, i - before, i + after) for sid, i in anchors])
    sids = [sid for sid, _i in anchors] + [
        e.session_id for e in rows.entries.values() if e.session_id
    ]
    rows.sessions = get_sessions(conn, sids)
    keys = [(m.session_id, m.index) for window in rows.windows.values() for m in window]
    rows.message_cites = message_citations(conn, keys)
    found = list(rows.entries)
    rows.entry_cites = citations_for_entries(conn, found)
    rows.span_cites = span_citations(conn, found)
    return rows


# --- layer 2 --------------------------------------------------------------------------------


def timeline(
    conn: duckdb.DuckDBPyConnection,
    hit_id: str,
    before: int = TIMELINE_BEFORE,
    after: int = TIMELINE_AFTER,
    max_chars: int = TIMELINE_CHARS,
) -> dict[str, Any] | None:
    """The messages around a hit in its session; None when the hit has no session place."""
    rows = read_hit_rows(conn, [hit_id], before, after)
    return timeline_of(rows, hit_id, before, after, max_chars)


def timeline_of(
    rows: HitRows,
    hit_id: str,
    before: int = TIMELINE_BEFORE,
    after: int = TIMELINE_AFTER,
    max_chars: int = TIMELINE_CHARS,
) -> dict[str, Any] | None:
    """`timeline` from rows read already (`read_hit_rows`)."""
    anchor = rows.anchor(hit_id)
    if anchor is None:
        return None
    sid, index = anchor
    window = rows.messages(sid, index - before, index + after)
    if not window:
        return None
    session = rows.sessions.get(sid)
    messages = [
        {
            "index": m.index,
            "speaker": speaker_of(m.role, m.meta),
            "role": m.role,
            "text": _cut(m.text or "", max_chars),
            "ts": m.ts.isoformat() if m.ts else None,
            "citation": rows.message_cites.get((sid, m.index)),
            "hit": m.index == index,
        }
        for m in window
    ]
    return {
        "id": hit_id,
        "session_id": sid,
        "session_title": session.title if session else None,
        "session_started_at": (
            session.started_at.isoformat() if session and session.started_at else None
        ),
        "anchor_index": index,
        "messages": messages,
    }


# --- layer 3 --------------------------------------------------------------------------------


def details(
    conn: duckdb.DuckDBPyConnection, hit_id: str, max_chars: int = DETAIL_CHARS
) -> dict[str, Any] | None:
    """Everything about one hit: an entry with its evidence and citations, or a message."""
    return details_of(read_hit_rows(conn, [hit_id], 0, 0), hit_id, max_chars)


def details_of(rows: HitRows, hit_id: str, max_chars: int = DETAIL_CHARS) -> dict[str, Any] | None:
    """`details` from rows read already (`read_hit_rows`)."""
    kind, entry_id, sid, index = parse_hit_id(hit_id)
    if kind == "entry":
        return _entry_detail(rows, entry_id, max_chars)  # type: ignore[arg-type]
    found = rows.messages(sid, index, index)  # type: ignore[arg-type]
    if not found:
        return None
    message = found[0]
    session = rows.sessions.get(sid)  # type: ignore[arg-type]
    started = session.started_at if session else None
    text = message.text or ""
    when = message.ts or started
    return {
        "id": hit_id,
        "kind": "message",
        "session_id": sid,
        "message_index": index,
        "session_title": session.title if session else None,
        "project": session.project if session else None,
        "speaker": speaker_of(message.role, message.meta),
        "role": message.role,
        "ts": when.isoformat() if when else None,
        "text": text[:max_chars],
        "truncated": len(text) > max_chars,
        "chars": len(text),
        "meta": message.meta,
        "citation": rows.message_cites.get((sid, index)),  # type: ignore[arg-type]
    }


def _entry_detail(rows: HitRows, entry_id: str, max_chars: int) -> dict[str, Any] | None:
    entry = rows.entries.get(entry_id)
    if entry is None:
        return None
    spans = rows.span_cites.get(entry_id, {})
    evidence = []
    for ev in entry.evidence:
        aligned = bool(ev.get("aligned")) and ev.get("span_start") is not None
        evidence.append(
            {
                "session_id": ev.get("session_id") or entry.session_id,
                "message_index": ev.get("message_index"),
                "quote": ev.get("quote"),
                "span": [ev.get("span_start"), ev.get("span_end")] if aligned else None,
                "method": ev.get("method"),
                "confidence": ev.get("confidence"),
                "citation": spans.get(span_key(entry_id, ev)) if aligned else None,
                "failure_reason": None if aligned else ev.get("failure_reason"),
            }
        )
    content = entry.content or ""
    return {
        "id": f"entry:{entry_id}",
        "kind": "entry",
        "entry_id": entry_id,
        "type": entry.entry_type,
        "title": entry.title,
        "content": content[:max_chars],
        "truncated": len(content) > max_chars,
        "stage": entry.stage,
        "status": entry.status,
        "task": entry.task,
        "session_id": entry.session_id,
        "created_ts": entry.created_ts.isoformat(),
        "evidence": evidence,
        "citations": rows.entry_cites.get(entry_id, []),
    }


# --- the budget -----------------------------------------------------------------------------


@dataclass
class DisclosedHit:
    id: str
    layers: list[int]
    index: dict[str, Any]
    detail: dict[str, Any] | None = None
    timeline: dict[str, Any] | None = None
    tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "layers": self.layers, "tokens": self.tokens}
        out["index"] = self.index
        if self.detail is not None:
            out["detail"] = self.detail
        if self.timeline is not None:
            out["timeline"] = self.timeline
        return out


@dataclass
class Disclosure:
    budget: int
    used: int = 0
    items: list[DisclosedHit] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)  # hits whose index line did not fit

    def to_json(self) -> dict[str, Any]:
        return {
            "budget": self.budget,
            "used_tokens": self.used,
            "items": [i.to_json() for i in self.items],
            "omitted": self.omitted,
        }

    def render(self) -> str:
        """Plain text for a terminal or a prompt: index lines, then details and timelines."""
        lines: list[str] = []
        for item in self.items:
            ix = item.index
            cite = f" [{ix['citation']}]" if ix.get("citation") else ""
            lines.append(f"{ix['score']:.3f} {ix['tier']:<9} {ix['id']}{cite}")
            lines.append(f"    {ix['summary']}")
            if item.detail is not None:
                d = item.detail
                if d["kind"] == "entry":
                    lines.append(f"    [{d['type']} · {d['stage']} · {d['status']}] {d['title']}")
                    for part in d["content"].splitlines():
                        lines.append(f"      {part}")
                    for ev in d["evidence"]:
                        where = f"message {ev['message_index']}"
                        cite = f" [{ev['citation']}]" if ev.get("citation") else ""
                        lines.append(f"      evidence {where}{cite}: {ev.get('quote')!r}")
                else:
                    lines.append(f"    {d['speaker']} ({d['ts'] or 'no time'}):")
                    for part in d["text"].splitlines():
                        lines.append(f"      {part}")
            if item.timeline is not None:
                lines.append(f"    timeline of {item.timeline['session_id']}:")
                for m in item.timeline["messages"]:
                    mark = ">" if m["hit"] else " "
                    lines.append(f"     {mark}#{m['index']} {m['speaker']}: {_one_line(m['text'])}")
        if self.omitted:
            lines.append(f"({len(self.omitted)} more hit(s) did not fit the budget)")
        lines.append(f"({self.used} of {self.budget} tokens)")
        return "\n".join(lines)


def disclose(db: Database, result: SearchResult, budget: int) -> Disclosure:
    """Choose layers for `result.hits` under `budget` tokens (see the module docstring)."""
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise QueryError(f"budget must be a whole number of tokens from 1 to {MAX_BUDGET}")
    out = Disclosure(budget=budget)
    for hit in result.hits:
        index = index_item(hit)
        cost = tokens_of(index)
        if out.used + cost > budget:
            out.omitted.append(hit.id)
            continue
        out.items.append(DisclosedHit(hit.id, [1], index, tokens=cost))
        out.used += cost
    if not out.items:
        return out
    with db.read() as conn:
        rows = read_hit_rows(conn, [item.id for item in out.items])
    for item in out.items:
        detail = details_of(rows, item.id)
        if detail is None:
            continue
        cost = tokens_of(detail)
        if out.used + cost <= budget:
            item.detail, item.tokens, out.used = detail, item.tokens + cost, out.used + cost
            item.layers.append(3)
    for item in out.items:
        line = timeline_of(rows, item.id)
        if line is None:
            continue
        cost = tokens_of(line)
        if out.used + cost <= budget:
            item.timeline, item.tokens, out.used = line, item.tokens + cost, out.used + cost
            item.layers.insert(1, 2)
    return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line(text: str) -> str:
    return summarize_text(text, 200)
