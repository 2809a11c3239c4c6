"""What a search returns: hits with their score breakdown, and the one-line summaries."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from axiom.retrieval.confidence import relevance

SUMMARY_CHARS = 160


@dataclass
class SearchHit:
    id: str  # "entry:<entry_id>" | "message:<session_id>:<index>"
    kind: str  # entry | message
    score: float
    match: float
    tier: str  # high | suggested | none
    summary: str
    citation: str | None
    entry_id: str | None = None
    session_id: str | None = None
    message_index: int | None = None
    ts: datetime | None = None
    stage: str | None = None  # entries
    status: str | None = None  # entries
    entry_type: str | None = None  # entries
    role: str | None = None  # messages
    meta: dict[str, Any] = field(default_factory=dict)  # messages: the message's meta
    breakdown: dict[str, Any] = field(default_factory=dict)
    conflicts_with: list[str] = field(default_factory=list)  # contested: the other entries
    # (text, matched) pieces of the hit's text around the query's terms (`snippets`)
    snippet: list[tuple[str, bool]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "score": round(self.score, 6),
            "match": round(self.match, 4),
            "tier": self.tier,
            "relevance": relevance(self),  # the one rule for what may be shown unasked
            "summary": self.summary,
            "citation": self.citation,
            "entry_id": self.entry_id,
            "session_id": self.session_id,
            "message_index": self.message_index,
            "ts": self.ts.isoformat() if self.ts else None,
            "stage": self.stage,
            "status": self.status,
            "type": self.entry_type,
            "role": self.role,
            "meta": self.meta,
            "breakdown": self.breakdown,
            "conflicts_with": self.conflicts_with,
        }


@dataclass
class SearchResult:
    query: str
    mode: str
    k: int
    hits: list[SearchHit]
    warnings: list[str] = field(default_factory=list)
    candidates: int = 0
    stale: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    unindexed: int = 0  # outbox items not embedded yet: no search finds them

    def unindexed_notice(self) -> str | None:
        """What to tell a person when some items cannot be found yet, else None."""
        if self.unindexed <= 0:
            return None
        return (
            f"{self.unindexed:,} item(s) are not searchable yet: the outbox writer has not"
            " embedded them (it runs under `python -m axiom up`, or run"
            " `python -m axiom outbox drain`)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "k": self.k,
            "hits": [h.to_json() for h in self.hits],
            "warnings": self.warnings,
            "candidates": self.candidates,
            "stale": self.stale,
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
            "unindexed": self.unindexed,
        }


def summarize_text(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The first line of `text`, whitespace squashed, cut at a word near `limit`."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 0.6 else cut) + "…"


def speaker_of(role: str | None, meta: dict[str, Any]) -> str:
    for key in ("speaker", "name"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return role or "message"
