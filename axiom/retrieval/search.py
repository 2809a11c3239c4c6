"""Hybrid search over memory entries and raw messages: the read side of the LanceDB table.

One query runs through five steps; every hit carries the numbers of each (its *breakdown*).

1. **Candidates.** The outbox writer keeps one LanceDB row per entry, per message, and per
   message a `context` row (the previous message of the session + the message; see
   `axiom.outbox`). A query is matched four ways ("views"), each giving its top
   `PER_SOURCE` (100) documents:

   ============  ================================================================
   lexical_own   BM25 (LanceDB FTS over our analyzer's `lex_terms`) on entries and messages
   lexical_ctx   the same on message context rows (entries count with their own row)
   dense_own     cosine of the query embedding to entries' and messages' vectors
   dense_ctx     the same on message context rows (entries with their own row)
   ============  ================================================================

   `mode="fts"` uses the two lexical views, `mode="vector"` the two dense ones,
   `mode="hybrid"` all four. A context row stands for its message: a reply ("Yes, last
   summer!") is found through the turn it answers. Each modality is one LanceDB query
   (`2 x PER_SOURCE` rows) split into its two views by `kind`; the full-text query runs in
   a thread beside query embedding + kNN, and a third opens the DuckDB read meanwhile.

2. **Fusion.** `blend(views, norm="zscore")` with equal weights (`axiom.retrieval.fusion`):
   each view's scores become z-scores over that view's own candidates, a document a view
   did not return gets that view's lowest z, and the z-scores add up. On LoCoMo dev this
   beat Reciprocal Rank Fusion by ~0.06 in recall@5 and MRR (bench/retrieval_locomo.py);
   `fusion="rrf"` and `"minmax"` stay selectable so `eval locomo` keeps measuring the
   choice on the product path.

3. **Rerank.** `relevance` = the fused score min-max scaled over the candidate pool (the
   best candidate 1.0, the worst 0.0), then

       score = relevance x stage_weight x status_penalty x recency

   * stage weight: certified 1.00 > verified 0.95 > candidate 0.85 > working 0.75 > raw
     0.60; a raw message 0.90 — it is the verbatim source, so it ranks above unchecked
     extractions (raw..candidate) and below entries whose proof was checked.
   * status penalty: active 1.0, contested 0.5, deprecated 0.3, superseded 0.2.
   * recency: `floor + (1 - floor) * 0.5 ** (age_days / half_life)` with half-life 30
     days and floor 0.85: a memory from today keeps its whole score, one from a month ago
     92.5 %, anything older than a few months ~85 %. No timestamp counts as old. The
     floor keeps recency a tie-breaker among similar matches: it never buries an exact
     old answer under a vaguely related new one. A message's time is its own timestamp,
     else its session's start; an entry's is its session's start (when it was said, not
     when the pipeline extracted it), else its creation.

   Stage and status are read from DuckDB `entries` at query time (the copy in LanceDB
   would be stale after a promotion); a LanceDB row whose entry or message no longer
   exists in DuckDB is dropped and counted as `stale`.

4. **Match score and confidence tier.** Fused and reranked scores are relative to the
   candidates, so they cannot say "this is the thing you asked for". The *match* score is
   an absolute 0..1 similarity of the query to the document's own text:

       match = max(lexical_match, dense_match)
       lexical_match = share of the query's distinct analyzed terms present in the document
       dense_match   = clip((cosine - lo) / (hi - lo), 0, 1)

   with (lo, hi) per embedder (`DENSE_CALIBRATION`): e5 gives unrelated texts cosines of
   0.70-0.80 and close paraphrases 0.85-0.92, so absolute cosines are not a confidence;
   dense_match reaches 0.92 only for a near-restatement (cosine >= 0.92). Measured on the
   231 LoCoMo dev questions: the hybrid top hit was a gold evidence turn 74 % of the times
   it was `high` (25 of 34), 40 % when `suggested`, 27 % when `none`; there, e5's top-1
   cosine did not separate gold from other turns at all (0.846 both) while term coverage
   did (0.78 vs 0.67). `eval locomo` reports these shares on every run.

   The tier: `high` when match >= 0.92 and it leads every other candidate's match by >=
   0.03, `suggested` when match >= 0.75, else `none` — the thresholds of DESIGN §4 task
   matching. "Other" leaves out the hit's own source:
   an entry and the message it was extracted from say the same thing, so both may be
   high; two unrelated documents never are.

5. **Citation.** An entry hit carries its first citation (evidence order) — or, when none
   of its quotes aligned, the message citation of its first evidence message; a message
   hit its message citation (`axiom.evidence.citations`, the whole message). All open with
   `python -m axiom cite ID` and `GET /api/v1/citations/{id}`.

Latency (bench/bench_search.py, 2 shared cores, k=10): p50/p95 64/81 ms at 10k entries,
75/95 ms at 100k with the IVF index (147/227 ms with exact kNN). Quality (`python -m
axiom eval locomo` on the two dev conversations, 231 questions): hybrid recall@5 0.68,
MRR 0.54; fts 0.63/0.52; vector 0.54/0.43; hybrid with RRF 0.61/0.50.

Bad input: an empty query is a `QueryError`; a query longer than `MAX_QUERY_CHARS` (2,000)
is cut there with a warning. A model that fails to load makes `mode="vector"` a
`SearchUnavailable` and degrades `hybrid` to the lexical views with a warning; a missing or
unreadable LanceDB table is a `SearchUnavailable` that says what to run.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np

from axiom.evidence.citations import first_citations, message_citations
from axiom.retrieval.confidence import tier_for
from axiom.retrieval.fusion import FusedHit, blend, rrf
from axiom.store.db import Database
from axiom.vectors.embedder import Embedder
from axiom.vectors.lexical import DEFAULT_ANALYZER, Analyzer

Mode = Literal["hybrid", "fts", "vector"]
Fusion = Literal["zscore", "minmax", "rrf"]
MODES: tuple[str, ...] = ("hybrid", "fts", "vector")
FUSIONS: tuple[str, ...] = ("zscore", "minmax", "rrf")
SEARCHABLE_KINDS: tuple[str, ...] = ("entry", "message")
VIEWS = ("lexical_own", "lexical_ctx", "dense_own", "dense_ctx")
MODE_VIEWS: dict[str, tuple[str, ...]] = {
    "hybrid": VIEWS,
    "fts": ("lexical_own", "lexical_ctx"),
    "vector": ("dense_own", "dense_ctx"),
}

MAX_QUERY_CHARS = 2_000
PER_SOURCE = 100
MAX_K = 100
SUMMARY_CHARS = 160
DETAIL_POOL = 20  # best-matching candidates whose details are read for the tier's gap

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

# cosine -> 0..1 per embedder name: (lo, hi). See the module docstring, step 4.
DENSE_CALIBRATION: dict[str, tuple[float, float]] = {
    "multilingual-e5-small": (0.80, 0.93),
    "all-MiniLM-L6-v2": (0.30, 0.85),
}
DEFAULT_CALIBRATION = (0.5, 0.95)


class SearchError(Exception):
    """Base of search errors."""


class QueryError(SearchError, ValueError):
    """The query or a parameter is unusable (empty query, unknown mode, k out of range)."""


class SearchUnavailable(SearchError, RuntimeError):
    """Search cannot run: no LanceDB table yet, an unreadable one, or no embedding model."""


# --- results -------------------------------------------------------------------------------


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

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "score": round(self.score, 6),
            "match": round(self.match, 4),
            "tier": self.tier,
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
        }


# --- pure parts ----------------------------------------------------------------------------


def validate_query(query: Any, max_chars: int = MAX_QUERY_CHARS) -> tuple[str, list[str]]:
    """The query to run and warnings; `QueryError` when there is nothing to search for."""
    if not isinstance(query, str):
        raise QueryError(f"the query must be text, got {type(query).__name__}")
    text = " ".join(query.split())
    if not text:
        raise QueryError("the query is empty")
    warnings = []
    if len(text) > max_chars:
        cut = text[:max_chars]
        space = cut.rfind(" ")
        if space > max_chars * 0.8:  # end on a word when one ends near the limit
            cut = cut[:space]
        warnings.append(
            f"the query was {len(text):,} characters; only the first {len(cut):,} were searched"
            f" (limit {max_chars:,})"
        )
        text = cut
    return text, warnings


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


def doc_id_of(row: dict[str, Any]) -> str | None:
    """The document a LanceDB row stands for (a context row stands for its message)."""
    kind = row.get("kind")
    if kind == "entry":
        return f"entry:{row['entry_id']}"
    if kind in ("message", "context"):
        return f"message:{row['session_id']}:{row['message_index']}"
    return None


@dataclass
class _Doc:
    """What the candidate lists told about one document."""

    id: str
    kind: str
    entry_id: str | None = None
    session_id: str | None = None
    message_index: int | None = None
    ts: datetime | None = None
    own_terms: str | None = None
    raw: dict[str, float] = field(default_factory=dict)  # view -> BM25 score or cosine
    ranks: dict[str, int] = field(default_factory=dict)


def _split(
    rows: list[dict[str, Any]],
    kinds: Sequence[str],
    score: Callable[[dict[str, Any]], float],
    own_view: str,
    ctx_view: str,
    docs: dict[str, _Doc],
    per_source: int,
) -> dict[str, list[tuple[Hashable, float]]]:
    """One modality's rows (best first) -> its own and context views, top `per_source` each."""
    own: list[tuple[Hashable, float]] = []
    ctx: list[tuple[Hashable, float]] = []
    for row in rows:
        kind = row.get("kind")
        doc_kind = "message" if kind == "context" else kind
        if doc_kind not in kinds:
            continue
        doc_id = doc_id_of(row)
        if doc_id is None:
            continue
        value = score(row)
        doc = docs.get(doc_id)
        if doc is None:
            doc = docs[doc_id] = _Doc(
                id=doc_id,
                kind=str(doc_kind),
                entry_id=row.get("entry_id") if doc_kind == "entry" else None,
                session_id=row.get("session_id"),
                message_index=row.get("message_index") if doc_kind == "message" else None,
            )
        if kind != "context":
            doc.ts = row.get("ts") or doc.ts
            doc.own_terms = row.get("lex_terms", doc.own_terms)
            if len(own) < per_source and own_view not in doc.ranks:
                own.append((doc_id, value))
                doc.raw[own_view] = value
                doc.ranks[own_view] = len(own)
        elif doc.ts is None:
            doc.ts = row.get("ts")
        # An entry has no context row: its own row stands in the context view too.
        if kind in ("context", "entry") and len(ctx) < per_source and ctx_view not in doc.ranks:
            ctx.append((doc_id, value))
            doc.raw[ctx_view] = value
            doc.ranks[ctx_view] = len(ctx)
    return {own_view: own, ctx_view: ctx}


@dataclass
class _Numbers:
    """The rerank's inputs and result for one candidate, for its breakdown."""

    fused: FusedHit
    relevance: float
    stage_weight: float
    status_penalty: float
    age_days: float | None
    recency: float
    final: float


@dataclass
class _Scored:
    hit: SearchHit
    doc: _Doc
    fact: dict[str, Any]
    numbers: _Numbers


def _breakdown(item: _Scored, view_names: Sequence[str]) -> dict[str, Any]:
    """Every number that made the hit's score: per view its rank, raw and normalized score;
    the fused score and relevance; stage weight, status penalty, recency; the final score."""
    n, doc, entry = item.numbers, item.doc, item.doc.kind == "entry"
    return {
        "views": {
            name: {
                "rank": n.fused.ranks[i],
                "raw": _round(doc.raw.get(name)),
                "normalized": _round(n.fused.parts[i]),
            }
            for i, name in enumerate(view_names)
        },
        "fusion": {"score": _round(n.fused.score), "relevance": _round(n.relevance)},
        "stage": item.fact.get("stage") if entry else "message",
        "stage_weight": n.stage_weight,
        "status": item.fact.get("status") if entry else None,
        "status_penalty": n.status_penalty,
        "age_days": None if n.age_days is None else round(n.age_days, 2),
        "recency": _round(n.recency),
        "final": _round(n.final),
    }


def _related(a: _Scored, b: _Scored) -> bool:
    """An entry and a message it cites as evidence (either way round)."""

    def cites(entry: _Scored, message: _Scored) -> bool:
        key = (message.hit.session_id, message.hit.message_index)
        return key in entry.fact.get("evidence", ())

    return cites(a, b) or cites(b, a)


def _evidence_ids(evidence_json: Any, session_id: str | None) -> tuple[tuple[str, int], ...]:
    """(session_id, message_index) of each evidence item, in evidence order."""
    try:
        evidence = json.loads(evidence_json) if evidence_json else []
    except (TypeError, ValueError):
        return ()
    out = []
    for ev in evidence:
        if isinstance(ev, dict) and isinstance(ev.get("message_index"), int):
            out.append((str(ev.get("session_id") or session_id), ev["message_index"]))
    return tuple(dict.fromkeys(out))


def _summary(item: _Scored) -> str:
    """One line: "[decision] <title>" for an entry, "<speaker>: <first line>" for a message."""
    if item.hit.kind == "entry":
        title = item.fact.get("title") or ""
        return summarize_text(f"[{item.fact.get('type') or 'entry'}] {title}")
    speaker = speaker_of(item.fact.get("role"), item.fact.get("meta") or {})
    return summarize_text(f"{speaker}: {item.fact.get('text') or ''}")


def fuse(
    views: dict[str, list[tuple[Hashable, float]]], names: Sequence[str], fusion: str
) -> list[FusedHit]:
    lists = [views.get(name, []) for name in names]
    if fusion == "rrf":
        return rrf(lists, k=60.0)
    return blend(lists, norm="minmax" if fusion == "minmax" else "zscore")


# --- the service ---------------------------------------------------------------------------


class SearchService:
    """Searches one LanceDB table (one embedding version) joined with one DuckDB file.

    Cheap to keep: the table handle, the embedder and the last query embeddings are reused
    across calls, and it is safe to share between threads.
    """

    def __init__(
        self,
        db: Database,
        store: Any,  # axiom.vectors.lance_store.LanceStore
        embedder: Embedder | Callable[[], Embedder] | None = None,
        *,
        analyzer: Analyzer = DEFAULT_ANALYZER,
        per_source: int = PER_SOURCE,
        nprobes: int = 32,
        cache_size: int = 512,
        workers: int = 1,
    ) -> None:
        self.db = db
        self.store = store
        self.analyzer = analyzer
        self.per_source = per_source
        self.nprobes = nprobes
        # An embedder, or a zero-argument callable (a class, a loader) that makes one.
        factory = isinstance(embedder, type) or not hasattr(embedder, "embed")
        self._embedder_or_factory = embedder
        self._embedder: Embedder | None = None if factory else embedder  # type: ignore[assignment]
        self._embedder_checked = False
        self._embedder_error: str | None = None
        self._table: Any = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        # A thread that opens the DuckDB read and runs the full-text query beside query
        # embedding + kNN in the caller's thread; 0 runs everything in the caller's thread.
        # On 2 cores more threads only fight over them (measured at 100k entries: p50
        # 95 ms with 1 thread, 101-108 ms with 2-3, 112 ms inline).
        self._pool: Any = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="axiom-search")
            if workers > 0
            else _Inline()
        )

    @classmethod
    def from_config(cls, config: Any = None) -> SearchService:
        """The service over `AxiomConfig.from_env()` with the configured embedder."""
        from axiom.config import AxiomConfig
        from axiom.vectors.config import (
            configured_dim,
            configured_embedder,
            configured_embedding_version,
            vectors_enabled,
        )
        from axiom.vectors.lance_store import LanceStore

        config = config or AxiomConfig.from_env()
        try:
            version, dim = configured_embedding_version(), configured_dim()
        except Exception as exc:  # unknown AXIOM_EMBEDDER
            raise SearchUnavailable(str(exc)) from exc
        store = LanceStore(config.lancedb_dir, version, dim)
        embedder = configured_embedder if vectors_enabled() else None  # none: full-text only
        return cls(Database(config.duckdb_path), store, embedder)

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    # -- resources -------------------------------------------------------------------------

    def table(self) -> Any:
        with self._lock:
            if self._table is None:
                self._table = self._open_table()
            return self._table

    def _open_table(self) -> Any:
        from axiom.vectors.lance_store import LanceStoreError

        try:
            return self.store.open_table_for_read()
        except LanceStoreError as exc:
            raise SearchUnavailable(f"search index unavailable: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - anything LanceDB raises on a bad directory
            raise SearchUnavailable(
                f"search index unavailable: cannot open {getattr(self.store, 'table_path', '?')}:"
                f" {exc.__class__.__name__}: {exc}"
            ) from exc

    def embedder(self) -> Embedder:
        """The query embedder, loaded on first use; `SearchUnavailable` if it cannot load."""
        with self._lock:
            if self._embedder is not None and self._embedder_checked:
                return self._embedder
            if self._embedder_error is not None:
                raise SearchUnavailable(self._embedder_error)
            embedder = self._embedder
            if embedder is None:
                factory = self._embedder_or_factory
                if factory is None:
                    self._embedder_error = "no embedding model is configured (AXIOM_EMBEDDER=none)"
                    raise SearchUnavailable(self._embedder_error)
                try:
                    embedder = factory()  # type: ignore[operator]
                except Exception as exc:  # noqa: BLE001 - EmbedderLoadError and friends
                    self._embedder_error = (
                        f"the embedding model could not be loaded: {exc.__class__.__name__}: {exc}"
                    )
                    raise SearchUnavailable(self._embedder_error) from exc
            version = getattr(self.store, "embedding_version", None)
            own = f"{embedder.name}@{embedder.version}"
            if version and version != own:
                self._embedder_error = (
                    f"the query embedder is {own} but the index holds {version} vectors;"
                    " set AXIOM_EMBEDDER to the model the index was built with"
                )
                raise SearchUnavailable(self._embedder_error)
            self._embedder, self._embedder_checked = embedder, True
            return embedder

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            cached = self._cache.get(text)
            if cached is not None:
                self._cache.move_to_end(text)
                return cached
        vector = self.embedder().embed([text], kind="query")[0]
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return vector

    # -- searching -------------------------------------------------------------------------

    def search(
        self,
        query: Any,
        k: int = 10,
        mode: str = "hybrid",
        *,
        kinds: Sequence[str] = SEARCHABLE_KINDS,
        fusion: str = "zscore",
        now: datetime | None = None,
    ) -> SearchResult:
        started = time.perf_counter()
        text, warnings = validate_query(query)
        if mode not in MODES:
            raise QueryError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
        if fusion not in FUSIONS:
            raise QueryError(f"unknown fusion {fusion!r}; use one of {', '.join(FUSIONS)}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
            raise QueryError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
        kinds = tuple(dict.fromkeys(kinds))
        if not kinds or any(kd not in SEARCHABLE_KINDS for kd in kinds):
            raise QueryError(f"kinds must be among {', '.join(SEARCHABLE_KINDS)}, got {kinds}")
        now = now or datetime.now(UTC).replace(tzinfo=None)
        timings: dict[str, float] = {}

        table = self.table()
        # Open the DuckDB read (~12 ms: connect and catalog) while LanceDB works.
        read_scope = ExitStack()
        reading = self._pool.submit(read_scope.enter_context, self.db.read())
        try:
            query_terms = self.analyzer(text)
            use_lexical = mode in ("hybrid", "fts")
            use_dense = mode in ("hybrid", "vector")
            if use_lexical and not query_terms:
                warnings.append("the query has no searchable words for full-text search")
            docs: dict[str, _Doc] = {}
            views: dict[str, list[tuple[Hashable, float]]] = {}
            lex_future = (
                self._pool.submit(self._lexical_rows, table, query_terms, kinds)
                if use_lexical and query_terms
                else None
            )
            dense_rows: list[dict[str, Any]] = []
            embedder_name: str | None = None
            if use_dense:
                try:
                    t0 = time.perf_counter()
                    vector = self.embed_query(text)
                    timings["embed"] = _ms(t0)
                    embedder_name = self.embedder().name
                    t0 = time.perf_counter()
                    dense_rows = self._dense_rows(table, vector, kinds)
                    timings["dense"] = _ms(t0)
                except SearchUnavailable as exc:
                    if mode == "vector":
                        raise
                    warnings.append(f"vector search skipped, full-text only: {exc}")
                    use_dense = False
            if lex_future is not None:
                t0 = time.perf_counter()
                lex_rows, lex_ms = lex_future.result()
                timings["lexical"] = lex_ms
                timings["lexical_wait"] = _ms(t0)
                views.update(
                    _split(
                        lex_rows,
                        kinds,
                        lambda r: float(r["_score"]),
                        "lexical_own",
                        "lexical_ctx",
                        docs,
                        self.per_source,
                    )
                )
            if dense_rows:
                views.update(
                    _split(
                        dense_rows,
                        kinds,
                        lambda r: 1.0 - float(r["_distance"]),
                        "dense_own",
                        "dense_ctx",
                        docs,
                        self.per_source,
                    )
                )

            view_names = MODE_VIEWS[mode if use_dense or mode != "hybrid" else "fts"]
            t0 = time.perf_counter()
            fused = fuse(views, view_names, fusion)
            timings["fuse"] = _ms(t0)
            t0 = time.perf_counter()
            conn = reading.result()  # one short read: stage/status, messages, citations
            if fused:
                scored, stale = self._rerank(conn, fused, docs, now)
                hits = self._finish(conn, scored, set(query_terms), embedder_name, k, view_names)
            else:
                hits, stale = [], 0
        finally:
            with suppress(Exception):  # raised above already, or nothing to close
                reading.result()
            # Closing a DuckDB connection takes a few ms: off the caller's path. The read
            # lock is released a moment later, which is all a waiting writer notices.
            self._pool.submit(read_scope.close)
        timings["rerank"] = _ms(t0)
        timings["total"] = _ms(started)
        return SearchResult(
            query=text,
            mode=mode,
            k=k,
            hits=hits,
            warnings=warnings,
            candidates=len(fused),
            stale=stale,
            timings_ms=timings,
        )

    def _where(self, kinds: Sequence[str]) -> str | None:
        if set(kinds) == set(SEARCHABLE_KINDS):
            return None  # everything but tasks: cheaper to drop the few task rows afterwards
        row_kinds = set(kinds) | ({"context"} if "message" in kinds else set())
        if "entry" in kinds:
            row_kinds.add("entry")
        return "kind IN (" + ", ".join(f"'{kd}'" for kd in sorted(row_kinds)) + ")"

    def _lexical_rows(
        self, table: Any, terms: list[str], kinds: Sequence[str]
    ) -> tuple[list[dict[str, Any]], float]:
        from lancedb.query import MatchQuery

        t0 = time.perf_counter()
        builder = table.search(
            MatchQuery(" ".join(terms), self.store.lexical.column), query_type="fts"
        )
        where = self._where(kinds)
        if where:
            builder = builder.where(where, prefilter=True)
        columns = [*_ROW_COLUMNS, "lex_terms", "_score"]
        rows = self._run(lambda: builder.limit(2 * self.per_source).select(columns).to_list())
        return rows, _ms(t0)

    def _dense_rows(self, table: Any, vector: np.ndarray, kinds: Sequence[str]) -> list[dict]:
        builder = (
            table.search(np.asarray(vector, dtype=np.float32), vector_column_name="vector")
            .distance_type("cosine")
            .nprobes(self.nprobes)
        )
        where = self._where(kinds)
        if where:
            builder = builder.where(where, prefilter=True)
        columns = [*_ROW_COLUMNS, "_distance"]
        return self._run(lambda: builder.limit(2 * self.per_source).select(columns).to_list())

    def _run(self, fn: Callable[[], list[dict[str, Any]]]) -> list[dict[str, Any]]:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - LanceDB raises many kinds on bad files
            with self._lock:
                self._table = None  # reopen next time (the writer may have rebuilt it)
            raise SearchUnavailable(
                f"search index unreadable ({getattr(self.store, 'table_path', '?')}):"
                f" {exc.__class__.__name__}: {exc}. If it is corrupt, move it aside and run"
                " `python -m axiom reconcile` so the writer rebuilds it."
            ) from exc

    def _rerank(
        self,
        conn: Any,
        fused: list[FusedHit],
        docs: dict[str, _Doc],
        now: datetime,
    ) -> tuple[list[_Scored], int]:
        """Every fused candidate still in DuckDB, scored and sorted; and the stale count."""
        facts = self._facts(conn, [docs[str(h.id)] for h in fused])
        scores = [h.score for h in fused]
        lo, hi = min(scores), max(scores)
        scored: list[_Scored] = []
        for fh in fused:
            doc = docs[str(fh.id)]
            fact = facts.get(doc.id)
            if fact is None:
                continue
            relevance = 1.0 if hi - lo <= 1e-12 else (fh.score - lo) / (hi - lo)
            ts = fact.get("ts") or doc.ts
            entry = doc.kind == "entry"
            weight = stage_weight(doc.kind, fact.get("stage"))
            penalty = status_penalty(fact.get("status")) if entry else 1.0
            recency, age = recency_factor(ts, now)
            final = relevance * weight * penalty * recency
            # The breakdown is written out for the hits shown only (`_breakdown`): the pool
            # holds hundreds of candidates and their dicts were a visible share of a search.
            numbers = _Numbers(fh, relevance, weight, penalty, age, recency, final)
            hit = SearchHit(
                id=doc.id,
                kind=doc.kind,
                score=final,
                match=0.0,
                tier="none",
                summary="",
                citation=None,
                entry_id=doc.entry_id,
                session_id=doc.session_id if not entry else fact.get("session_id"),
                message_index=doc.message_index,
                ts=ts,
                stage=fact.get("stage") if entry else None,
                status=fact.get("status") if entry else None,
            )
            scored.append(_Scored(hit, doc, fact, numbers))
        scored.sort(key=lambda s: -s.hit.score)  # stable: ties keep the fused order
        return scored, len(fused) - len(scored)

    def _finish(
        self,
        conn: Any,
        scored: list[_Scored],
        query_terms: set[str],
        embedder_name: str | None,
        k: int,
        view_names: Sequence[str],
    ) -> list[SearchHit]:
        """Match score over the whole pool, then tier, breakdown, summary and citation for
        the top k."""
        if not scored:
            return []
        top = scored[:k]
        rough = [self._match(item, query_terms, embedder_name) for item in scored]
        by_match = sorted(range(len(scored)), key=lambda i: -rough[i])
        # Titles, evidence, message texts: for the hits shown and the best-matching others
        # (the competitors of the tier's gap), not for the whole pool.
        wanted = {id(item): item for item in top}
        wanted.update((id(scored[i]), scored[i]) for i in by_match[:DETAIL_POOL])
        self._details(conn, list(wanted.values()))
        matches: list[float] = []
        for i, item in enumerate(scored):
            lexical, dense = self._match_parts(item, query_terms, embedder_name, shown=i < k)
            item.hit.match = max(lexical, dense)
            if i < k:
                item.hit.breakdown = _breakdown(item, view_names)
                item.hit.breakdown["match"] = {
                    "lexical": _round(lexical),
                    "dense": _round(dense),
                    "score": _round(item.hit.match),
                }
            matches.append(item.hit.match)
        order = sorted(range(len(matches)), key=lambda i: -matches[i])
        for i, item in enumerate(top):
            # The best match among the other candidates, leaving out the hit's own
            # source: an entry and the message it was extracted from say the same thing.
            other = next(
                (matches[j] for j in order if j != i and not _related(item, scored[j])), 0.0
            )
            item.hit.tier = tier_for(item.hit.match, other)
            item.hit.breakdown["match"]["gap"] = _round(item.hit.match - other)
            item.hit.summary = _summary(item)
            item.hit.entry_type = item.fact.get("type")
            item.hit.role = item.fact.get("role")
            item.hit.meta = item.fact.get("meta") or {}
        self._attach_citations(conn, top)
        return [item.hit for item in top]

    def _match(self, item: _Scored, query_terms: set[str], embedder_name: str | None) -> float:
        """The match from the candidate rows alone (own terms, own cosine): for ordering."""
        lexical = 0.0
        if item.doc.own_terms is not None:
            lexical = term_coverage(query_terms, set(item.doc.own_terms.split()))
        return max(lexical, dense_match(item.doc.raw.get("dense_own"), embedder_name))

    def _match_parts(
        self, item: _Scored, query_terms: set[str], embedder_name: str | None, shown: bool
    ) -> tuple[float, float]:
        """(lexical, dense) match of the document's own text; see the module docstring."""
        if item.doc.own_terms is not None:
            lexical = term_coverage(query_terms, set(item.doc.own_terms.split()))
        elif shown and query_terms:  # found through its context row only: analyze its text
            text = item.fact.get("text") or item.fact.get("title") or ""
            lexical = term_coverage(query_terms, set(self.analyzer(text)))
        else:
            lexical = 0.0
        return lexical, dense_match(item.doc.raw.get("dense_own"), embedder_name)

    # -- DuckDB ----------------------------------------------------------------------------

    def _facts(self, conn: Any, docs: list[_Doc]) -> dict[str, dict[str, Any]]:
        """Current stage, status and time of every candidate, by document id (narrow
        columns: at 100k entries the lookup is a scan, and wide columns cost double).

        A document missing here is stale (deleted or not yet projected) and is dropped.
        """
        entry_ids = [d.entry_id for d in docs if d.kind == "entry" and d.entry_id]
        messages = [
            (d.session_id, int(d.message_index))
            for d in docs
            if d.kind == "message" and d.session_id is not None and d.message_index is not None
        ]
        out: dict[str, dict[str, Any]] = {}
        if entry_ids:
            rows = conn.execute(
                "SELECT e.entry_id, e.stage, e.status, e.session_id,"
                " coalesce(s.started_at, e.created_ts)"
                " FROM entries e LEFT JOIN sessions s ON s.session_id = e.session_id"
                " WHERE e.entry_id IN (SELECT unnest(?))",
                [entry_ids],
            ).fetchall()
            for eid, stage, status, sid, ts in rows:
                out[f"entry:{eid}"] = {
                    "stage": stage,
                    "status": status or "active",
                    "session_id": sid,
                    "ts": ts,
                }
        if messages:
            rows = conn.execute(
                "SELECT m.session_id, m.message_index, coalesce(m.ts, s.started_at)"
                " FROM (SELECT unnest(?) AS sid, unnest(?) AS idx) w"
                " JOIN messages m ON m.session_id = w.sid AND m.message_index = w.idx"
                " LEFT JOIN sessions s ON s.session_id = m.session_id",
                [[m[0] for m in messages], [m[1] for m in messages]],
            ).fetchall()
            for sid, idx, ts in rows:
                out[f"message:{sid}:{idx}"] = {"ts": ts}
        return out

    def _details(self, conn: Any, items: list[_Scored]) -> None:
        """Title, type and evidence of entries; role, text and meta of messages."""
        entries = {i.hit.entry_id: i for i in items if i.hit.kind == "entry" and i.hit.entry_id}
        messages = {
            (i.hit.session_id, i.hit.message_index): i for i in items if i.hit.kind == "message"
        }
        if entries:
            rows = conn.execute(
                "SELECT entry_id, entry_type, title, evidence_json FROM entries"
                " WHERE entry_id IN (SELECT unnest(?))",
                [list(entries)],
            ).fetchall()
            for eid, etype, title, evidence_json in rows:
                fact = entries[eid].fact
                fact.update(
                    type=etype,
                    title=title,
                    evidence=_evidence_ids(evidence_json, fact.get("session_id")),
                )
        if messages:
            rows = conn.execute(
                "SELECT m.session_id, m.message_index, m.role, m.text, m.meta_json"
                " FROM (SELECT unnest(?) AS sid, unnest(?) AS idx) w"
                " JOIN messages m ON m.session_id = w.sid AND m.message_index = w.idx",
                [[m[0] for m in messages], [m[1] for m in messages]],
            ).fetchall()
            for sid, idx, role, text, meta_json in rows:
                messages[(sid, idx)].fact.update(
                    role=role, text=text, meta=json.loads(meta_json) if meta_json else {}
                )

    def _attach_citations(self, conn: Any, items: list[_Scored]) -> None:
        """An entry's first evidence citation; an entry none of whose quotes aligned gets
        the message citation of its first evidence message; a message its own."""
        entry_ids = [i.hit.entry_id for i in items if i.hit.kind == "entry" and i.hit.entry_id]
        by_entry = first_citations(conn, entry_ids)
        wanted: dict[str, tuple[str, int]] = {}
        for i in items:
            if i.hit.kind == "message":
                wanted[i.hit.id] = (str(i.hit.session_id), int(i.hit.message_index or 0))
            elif i.hit.entry_id not in by_entry and i.fact.get("evidence"):
                wanted[i.hit.id] = i.fact["evidence"][0]
        by_message = message_citations(conn, list(wanted.values()))
        for i in items:
            if i.hit.kind == "entry" and i.hit.entry_id in by_entry:
                i.hit.citation = by_entry[i.hit.entry_id]
            elif i.hit.id in wanted:
                i.hit.citation = by_message.get(wanted[i.hit.id])


class _Inline:
    """An executor that runs each task at once, in the caller's thread."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through result()
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True) -> None:
        pass


# What a candidate row brings back (not its text: the hit's text comes from DuckDB).
_ROW_COLUMNS = ["id", "kind", "entry_id", "session_id", "message_index", "ts"]


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


def _round(value: float | None, places: int = 4) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), places)
