"""Steps 3 and 4 of a search: rerank the fused candidates, then match score and tier.

The numbers and why they are what they are: `axiom.retrieval.search`'s module docstring.
Everything here is pure; the DuckDB reads that feed it are in `axiom.retrieval.reads`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from axiom.retrieval.candidates import Doc
from axiom.retrieval.confidence import tier_for
from axiom.retrieval.fusion import FusedHit
from axiom.retrieval.results import SearchHit, speaker_of, summarize_text
from axiom.retrieval.snippets import snippet
from axiom.vectors.lexical import Analyzer
from axiom.vectors.routed import RoutedEmbedder, routed_match_to_cosine

STAGE_WEIGHTS = {
    "certified": 1.0,
    "verified": 0.95,
    "candidate": 0.85,
    "working": 0.75,
    "raw": 0.6,
}
MESSAGE_WEIGHT = 0.9
STATUS_PENALTIES = {
    "active": 1.0,
    "contested": 0.5,
    "deprecated": 0.3,
    "superseded": 0.2,
}
RECENCY_HALF_LIFE_DAYS = 30.0
RECENCY_FLOOR = 0.85

# cosine -> 0..1 per embedder name: (lo, hi). See axiom.retrieval.search, step 4.
DENSE_CALIBRATION: dict[str, tuple[float, float]] = {
    "multilingual-e5-small": (0.80, 0.93),
    "all-MiniLM-L6-v2": (0.30, 0.85),
    # already calibrated per model inside the vector (axiom.vectors.routed)
    RoutedEmbedder.name: (routed_match_to_cosine(0.0), routed_match_to_cosine(1.0)),
}
DEFAULT_CALIBRATION = (0.5, 0.95)
DETAIL_POOL = 20  # best-matching candidates whose details are read for the tier's gap

MessageKey = tuple[str, int]  # (session_id, message_index)


def stage_weight(kind: str, stage: str | None) -> float:
    if kind != "entry":
        return MESSAGE_WEIGHT
    return STAGE_WEIGHTS.get(stage or "", STAGE_WEIGHTS["raw"])


def status_penalty(status: str | None) -> float:
    return STATUS_PENALTIES.get(status or "active", 1.0)


def recency_factor(
    ts: datetime | None,
    now: datetime,
    half_life_days: float = RECENCY_HALF_LIFE_DAYS,
    floor: float = RECENCY_FLOOR,
) -> tuple[float, float | None]:
    """(factor, age in days); a missing timestamp counts as old (the floor)."""
    if ts is None:
        return floor, None
    if ts.tzinfo is not None:
        ts = ts.astimezone(UTC).replace(tzinfo=None)
    age = max(0.0, (now - ts).total_seconds() / 86400.0)
    return floor + (1.0 - floor) * 0.5 ** (age / half_life_days), age


def dense_match(cosine: float | None, embedder_name: str | None) -> float:
    if cosine is None:
        return 0.0
    lo, hi = DENSE_CALIBRATION.get(embedder_name or "", DEFAULT_CALIBRATION)
    return float(min(1.0, max(0.0, (cosine - lo) / (hi - lo))))


def term_coverage(query_terms: set[str], doc_terms: set[str]) -> float:
    """Share of the query's distinct terms found in the document (0 for a termless query)."""
    if not query_terms:
        return 0.0
    return len(query_terms & doc_terms) / len(query_terms)


@dataclass
class Facts:
    """What DuckDB says of a candidate now: stage, status and time for every candidate
    (`reads.read_facts`); title, type, evidence, role, text and meta for the few whose
    details are read (`reads.read_details`)."""

    ts: datetime | None = None
    stage: str | None = None  # entries
    status: str | None = None  # entries
    session_id: str | None = None  # entries
    entry_type: str | None = None  # entries
    title: str | None = None  # entries
    evidence: tuple[MessageKey, ...] = ()  # entries: their evidence messages, in order
    role: str | None = None  # messages
    text: str | None = None  # messages
    meta: dict[str, Any] = field(default_factory=dict)  # messages


@dataclass
class Numbers:
    """The rerank's inputs and result for one candidate, for its breakdown."""

    fused: FusedHit
    relevance: float
    stage_weight: float
    status_penalty: float
    age_days: float | None
    recency: float
    final: float
    subject: float = 1.0  # `axiom.retrieval.subjects`: the question names who it is about
    time: float = 1.0  # the question asks when and the candidate says when
    asks: bool = False  # the candidate's text asks something (read for the cues only)
    cited: float = 0.0  # `axiom.retrieval.lists`: added by entries citing it (list questions)
    blended: float | None = None  # `axiom.retrieval.cue_blend`: its linear score (hybrid)
    feedback: float = 0.0  # `axiom.retrieval.feedback`: the feedback query's part of it


@dataclass
class Scored:
    hit: SearchHit
    doc: Doc
    fact: Facts
    numbers: Numbers


def rerank(
    fused: list[FusedHit], docs: dict[str, Doc], facts: dict[str, Facts], now: datetime
) -> tuple[list[Scored], int]:
    """Every fused candidate still in DuckDB (`facts`), scored and sorted; and the count
    of stale ones dropped."""
    scores = [h.score for h in fused]
    lo, hi = min(scores), max(scores)
    scored: list[Scored] = []
    for fh in fused:
        doc = docs[str(fh.id)]
        fact = facts.get(doc.id)
        if fact is None:
            continue
        relevance = 1.0 if hi - lo <= 1e-12 else (fh.score - lo) / (hi - lo)
        ts = fact.ts or doc.ts
        entry = doc.kind == "entry"
        weight = stage_weight(doc.kind, fact.stage)
        penalty = status_penalty(fact.status) if entry else 1.0
        recency, age = recency_factor(ts, now)
        final = relevance * weight * penalty * recency
        # The breakdown is written out for the hits shown only (`breakdown`): the pool
        # holds hundreds of candidates and their dicts were a visible share of a search.
        numbers = Numbers(fh, relevance, weight, penalty, age, recency, final)
        hit = SearchHit(
            id=doc.id,
            kind=doc.kind,
            score=final,
            match=0.0,
            tier="none",
            summary="",
            citation=None,
            entry_id=doc.entry_id,
            session_id=doc.session_id if not entry else fact.session_id,
            message_index=doc.message_index,
            ts=ts,
            stage=fact.stage if entry else None,
            status=fact.status if entry else None,
        )
        scored.append(Scored(hit, doc, fact, numbers))
    scored.sort(key=lambda s: -s.hit.score)  # stable: ties keep the fused order
    return scored, len(fused) - len(scored)


def detail_pool(
    scored: list[Scored], query_terms: set[str], embedder_name: str | None, k: int
) -> list[Scored]:
    """The candidates whose details are read: the top k (shown) and the best-matching
    others (the competitors of the tier's gap), not the whole pool."""
    rough = [_rough_match(item, query_terms, embedder_name) for item in scored]
    by_match = sorted(range(len(scored)), key=lambda i: -rough[i])
    wanted = {id(item): item for item in scored[:k]}
    wanted.update((id(scored[i]), scored[i]) for i in by_match[:DETAIL_POOL])
    return list(wanted.values())


def finish(
    scored: list[Scored],
    query_terms: set[str],
    embedder_name: str | None,
    analyzer: Analyzer,
    k: int,
    view_names: Sequence[str],
) -> list[Scored]:
    """Match score over the whole pool, then tier, breakdown and summary of the top k
    (their details read already)."""
    top = scored[:k]
    matches: list[float] = []
    for i, item in enumerate(scored):
        lexical, dense = _match_parts(item, query_terms, embedder_name, analyzer, shown=i < k)
        item.hit.match = max(lexical, dense)
        if i < k:
            item.hit.breakdown = breakdown(item, view_names)
            item.hit.breakdown["match"] = {
                "lexical": round_or_none(lexical),
                "dense": round_or_none(dense),
                "score": round_or_none(item.hit.match),
            }
        matches.append(item.hit.match)
    order = sorted(range(len(matches)), key=lambda i: -matches[i])
    for i, item in enumerate(top):
        # The best match among the other candidates, leaving out the hit's own
        # source: an entry and the message it was extracted from say the same thing.
        other = next((matches[j] for j in order if j != i and not _related(item, scored[j])), 0.0)
        item.hit.tier = tier_for(item.hit.match, other)
        item.hit.breakdown["match"]["gap"] = round_or_none(item.hit.match - other)
        item.hit.summary = _summary(item)
        text = item.fact.text if item.hit.kind == "message" else item.fact.title
        item.hit.snippet = snippet(text or "", query_terms, analyzer)
        item.hit.entry_type = item.fact.entry_type
        item.hit.role = item.fact.role
        item.hit.meta = item.fact.meta
    return top


def _rough_match(item: Scored, query_terms: set[str], embedder_name: str | None) -> float:
    """The match from the candidate rows alone (own terms, own cosine): for ordering."""
    lexical = 0.0
    if item.doc.own_terms is not None:
        lexical = term_coverage(query_terms, set(item.doc.own_terms.split()))
    return max(lexical, dense_match(item.doc.raw.get("dense_own"), embedder_name))


def _match_parts(
    item: Scored,
    query_terms: set[str],
    embedder_name: str | None,
    analyzer: Analyzer,
    shown: bool,
) -> tuple[float, float]:
    """(lexical, dense) match of the document's own text; see the module docstring."""
    if item.doc.own_terms is not None:
        lexical = term_coverage(query_terms, set(item.doc.own_terms.split()))
    elif shown and query_terms:  # found through its context row only: analyze its text
        text = item.fact.text or item.fact.title or ""
        lexical = term_coverage(query_terms, set(analyzer(text)))
    else:
        lexical = 0.0
    return lexical, dense_match(item.doc.raw.get("dense_own"), embedder_name)


def breakdown(item: Scored, view_names: Sequence[str]) -> dict[str, Any]:
    """Every number that made the hit's score: per view its rank, raw and normalized score;
    the fused score and relevance; stage weight, status penalty, recency; the final score."""
    n, doc, entry = item.numbers, item.doc, item.doc.kind == "entry"
    return {
        "views": {
            name: {
                "rank": n.fused.ranks[i],
                "raw": round_or_none(doc.raw.get(name)),
                "normalized": round_or_none(n.fused.parts[i]),
            }
            for i, name in enumerate(view_names)
        },
        "fusion": {"score": round_or_none(n.fused.score), "relevance": round_or_none(n.relevance)},
        "stage": item.fact.stage if entry else "message",
        "stage_weight": n.stage_weight,
        "status": item.fact.status if entry else None,
        "status_penalty": n.status_penalty,
        "age_days": None if n.age_days is None else round(n.age_days, 2),
        "recency": round_or_none(n.recency),
        "subject_boost": n.subject,
        "time_boost": n.time,
        "asks": n.asks,
        "cited_lift": round_or_none(n.cited),
        "cue_blend": round_or_none(n.blended),
        "feedback": round_or_none(n.feedback),
        "final": round_or_none(n.final),
    }


def _related(a: Scored, b: Scored) -> bool:
    """An entry and a message it cites as evidence (either way round)."""

    def cites(entry: Scored, message: Scored) -> bool:
        key = (message.hit.session_id, message.hit.message_index)
        return key in entry.fact.evidence

    return cites(a, b) or cites(b, a)


def _summary(item: Scored) -> str:
    """One line: "[decision] <title>" for an entry, "<speaker>: <first line>" for a message."""
    if item.hit.kind == "entry":
        title = item.fact.title or ""
        return summarize_text(f"[{item.fact.entry_type or 'entry'}] {title}")
    speaker = speaker_of(item.fact.role, item.fact.meta)
    return summarize_text(f"{speaker}: {item.fact.text or ''}")


def round_or_none(value: float | None, places: int = 4) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), places)
