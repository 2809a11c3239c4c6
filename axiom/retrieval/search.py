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
   summer!") is found through the turn it answers. For the hybrid z-score ranking the
   dense views embed the question without the names of the people the store's entries
   are about (`axiom.retrieval.dense_query`; a *when* question keeps them). Each modality
   is one LanceDB query (`2 x PER_SOURCE` rows, each read for its `id`, `ts` and address:
   few columns, through the table's async handle; `axiom.retrieval.candidates`) split into
   its two views by `kind`; the full-text query runs in a thread beside query embedding +
   kNN; the DuckDB read follows, in the caller's thread.

2. **Fusion.** `blend(views, norm="zscore")` with equal weights (`axiom.retrieval.fusion`):
   each view's scores become z-scores over that view's own candidates, a document a view
   did not return gets that view's lowest z, and the z-scores add up. On LoCoMo dev this
   beat Reciprocal Rank Fusion by ~0.06 in recall@5 and MRR (bench/retrieval_locomo.py);
   `fusion="rrf"` and `"minmax"` stay selectable so `eval locomo` keeps measuring the
   choice on the product path.

3. **Rerank.** `relevance` = the fused score min-max scaled over the candidate pool (the
   best candidate 1.0, the worst 0.0), then

       score = relevance x stage_weight x status_penalty x recency x subject x time

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

   * subject and time (`axiom.retrieval.subjects`): x1.3 for a candidate said by, or a
     fact entry about, a person the query names; x1.2, for a *when* question, for one
     whose text says when; 1.0 otherwise (and no read when the query has neither cue).
   * cited lift (`axiom.retrieval.lists`): for a list question ("What books has X
     read?"), each message gains 0.4 x the score of the best entry candidate citing it
     as evidence (a message-only search draws entries into its candidates for this and
     drops them after); 0 otherwise.

   * cue blend (`axiom.retrieval.cue_blend`), the hybrid z-score ranking only: the
     factors above are replaced by one linear score, 0.5 x each own-text view's z +
     1.5 x each context view's z + 10 for a named person's candidate + 2 for a turn that
     says when (a *when* question) + 16 x the citing entry's score (a list question)
     - 1 for a turn that asks a question (where the cues read the texts),
     min-max scaled over the pool, x stage weight x status penalty x recency. `fts`,
     `vector` and RRF rank by the factors above.
   * feedback (`axiom.retrieval.feedback`), the hybrid z-score ranking only: the top 5
     candidates' rare words the question lacks (20 at most) go to BM25 once more with
     the question's terms, and each candidate's linear score gains the blend's lexical
     view weights x that query's z-scores; then the blend re-scales and re-sorts.

   Stage and status are DuckDB's `entries` as of the search (the copy in LanceDB would
   be stale after a promotion): on an unchanged store from the in-memory `RankFacts` of
   the current generation (`axiom.retrieval.rank_facts`), else read at query time; a
   LanceDB row whose entry or message no longer exists in DuckDB is dropped and counted
   as `stale`.

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

Latency: bench/bench_search.py, figures in the README ("Measured: speed"). Quality (`python -m
axiom eval locomo` on the two dev conversations, 231 questions): hybrid recall@5 0.79,
MRR 0.66, multi-hop recall@5 0.50 with the name-less dense query and the question-turn
cue (0.77/0.66/0.43 without them); 0.76/0.67 with the cue blend and the feedback query
before messages were embedded in context (0.75/0.63 without the feedback;
0.72/0.61 with the factors; 0.69/0.54 without the subject and time cues); README,
"Measured: retrieval quality".

The code, one module per step: `query` (what may be asked, errors), `candidates` (step 1,
LanceDB), `embedding` (the query embedder and its cache), `fusion` (step 2), `scoring`
(steps 3 and 4, pure), `reads` (the DuckDB reads behind steps 3-5, through each table's
owner), `rank_facts` (those reads for the whole store, held while it is unchanged),
`results` (hits); this module runs them in order.

Bad input: an empty query is a `QueryError`; a query longer than `MAX_QUERY_CHARS` (2,000)
is cut there with a warning. A model that fails to load makes `mode="vector"` a
`SearchUnavailable` and degrades `hybrid` to the lexical views with a warning; a missing or
unreadable LanceDB table is a `SearchUnavailable` that says what to run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from axiom.config import AxiomConfig
from axiom.retrieval.backlog import IndexBacklog
from axiom.retrieval.candidates import (
    FEEDBACK_COLUMNS,
    PER_SOURCE,
    CandidateSource,
    Doc,
    Row,
    View,
    dense_views,
    elapsed_ms,
    feedback_views,
    lexical_views,
    row_docs,
)
from axiom.retrieval.cue_blend import VIEW_WEIGHTS, blend_cues, blends
from axiom.retrieval.dense_query import KnownSubjects, dense_query
from axiom.retrieval.embedding import EmbedderFactory, QueryEmbedder
from axiom.retrieval.feedback import AskAgain, feedback_lift
from axiom.retrieval.fusion import FusedHit, fuse
from axiom.retrieval.lists import candidate_kinds, lift_cited_turns
from axiom.retrieval.query import (
    MODE_VIEWS,
    SEARCHABLE_KINDS,
    SearchUnavailable,
    validate_options,
    validate_query,
)
from axiom.retrieval.rank_facts import RANK_FACTS_MAX_ROWS, RankFactsLoader
from axiom.retrieval.reads import CachedRead, ReadCache
from axiom.retrieval.results import SearchHit, SearchResult
from axiom.retrieval.scoring import detail_pool, finish, rerank
from axiom.retrieval.subjects import apply_question_cues
from axiom.settings import Settings
from axiom.store.db import Database
from axiom.vectors.config import (
    configured_dim,
    configured_embedder,
    configured_embedding_version,
    vectors_enabled,
)
from axiom.vectors.embedder import Embedder
from axiom.vectors.lance_store import LanceStore
from axiom.vectors.lexical import DEFAULT_ANALYZER, Analyzer

if TYPE_CHECKING:
    from lancedb.table import AsyncTable

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass
class _Candidates:
    """Step 1's outcome: the views, the documents they name, and what it noticed."""

    views: dict[str, View] = field(default_factory=dict)
    docs: dict[str, Doc] = field(default_factory=dict)
    use_dense: bool = False
    embedder_name: str | None = None
    docs_by_row: dict[int, str] = field(default_factory=dict)  # row address -> document
    version: int | None = None  # the table version the rows' addresses belong to


class SearchService:
    """Searches one LanceDB table (one embedding version) joined with one DuckDB file.

    Cheap to keep: the table handle, the embedder and the last query embeddings are reused
    across calls, and it is safe to share between threads.
    """

    def __init__(
        self,
        db: Database,
        store: LanceStore,
        embedder: Embedder | EmbedderFactory | None = None,
        *,
        analyzer: Analyzer = DEFAULT_ANALYZER,
        per_source: int = PER_SOURCE,
        nprobes: int = 32,
        cache_size: int = 512,
        workers: int = 1,
        facts_rows: int = RANK_FACTS_MAX_ROWS,
    ) -> None:
        self.db = db
        self.store = store
        self.analyzer = analyzer
        self.per_source = per_source
        self.candidates = CandidateSource(store, per_source, nprobes)
        self.query_embedder = QueryEmbedder(embedder, store.embedding_version, cache_size)
        self.reads = ReadCache()  # DuckDB reads, kept while the store is unchanged
        self.rank_facts = RankFactsLoader(db, facts_rows)  # all of them, once the store is idle
        self.backlog = IndexBacklog(db, store.embedding_version)  # what no search finds yet
        self.known_subjects = KnownSubjects(db)  # whom the dense query leaves unnamed
        # A thread that runs the full-text query beside query
        # embedding + kNN in the caller's thread; 0 runs everything in the caller's thread.
        # On 2 cores more threads only fight over them (measured at 100k entries: p50
        # 95 ms with 1 thread, 101-108 ms with 2-3, 112 ms inline).
        self._pool: Executor = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="axiom-search")
            if workers > 0
            else _Inline()
        )

    @classmethod
    def from_config(cls, config: AxiomConfig | None = None) -> SearchService:
        """The service over `AxiomConfig.from_env()` with the configured embedder."""
        config = config or AxiomConfig.from_env()
        try:
            version, dim = configured_embedding_version(), configured_dim()
            embedder = configured_embedder if vectors_enabled() else None  # none: full-text
        except Exception as exc:  # unknown AXIOM_EMBEDDER
            raise SearchUnavailable(str(exc)) from exc
        store = LanceStore(config.lancedb_dir, version, dim)
        rows = Settings.from_env().search_facts_rows
        return cls(Database(config.duckdb_path), store, embedder, facts_rows=rows)

    def close(self) -> None:
        self._pool.shutdown(wait=False)
        self.rank_facts.close()

    def embedder(self) -> Embedder:
        """The query embedder, loaded on first use; `SearchUnavailable` if it cannot load."""
        return self.query_embedder.embedder()

    def embed_query(self, text: str) -> np.ndarray:
        return self.query_embedder.embed(text)

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
        """The top `k` hits for `query` (see the module docstring for every step)."""
        started = time.perf_counter()
        text, warnings = validate_query(query)
        kinds = validate_options(mode, fusion, k, kinds)
        now = now or datetime.now(UTC).replace(tzinfo=None)
        timings: dict[str, float] = {}
        query_terms = self.analyzer(text)
        drawn = candidate_kinds(text, kinds)  # a list question draws entries too
        embedded = (  # the cue blend's dense views: without the names the cue ranks by
            dense_query(text, self.known_subjects.names)
            if blends(MODE_VIEWS[mode], fusion)
            else text
        )
        try:
            table = self.candidates.table()
            found = self._candidates(table, embedded, query_terms, mode, drawn, warnings, timings)
        except SearchUnavailable:
            # Another process (a `forget`, a rebuild) may have compacted away the version
            # this long-lived handle reads: open the table afresh and try once more.
            warnings.clear()
            table = self.candidates.table()
            found = self._candidates(table, embedded, query_terms, mode, drawn, warnings, timings)
        view_names = MODE_VIEWS[mode if found.use_dense or mode != "hybrid" else "fts"]
        t0 = time.perf_counter()
        fused = fuse(found.views, view_names, fusion)
        timings["fuse"] = elapsed_ms(t0)
        t0 = time.perf_counter()
        # The DuckDB read is opened (only when the cache lacks a candidate: `CachedRead`)
        # and closed in this thread, never on the shared pool: a lock taken there waits
        # (behind a writer at the turnstile) while the release of another search's read
        # waits in the pool's queue behind it - a deadlock seen in bench/soak.py with a
        # hook and a page searching while the importer wrote.
        ask_again = self._ask_again(table, found, kinds, timings)
        with ExitStack() as read_scope:
            connect = lambda: read_scope.enter_context(self.db.read())  # noqa: E731
            facts = self.rank_facts.current(self.db.generation())
            read = CachedRead(self.reads, self.db, connect, facts)
            hits, stale = self._rank(
                read,
                fused,
                found,
                (text, set(query_terms)),
                (k, kinds),
                (view_names, fusion, ask_again),
                now,
            )
        timings["rerank"] = elapsed_ms(t0)
        unindexed = self.backlog.count()
        timings["total"] = elapsed_ms(started)
        return SearchResult(text, mode, k, hits, warnings, len(fused), stale, timings, unindexed)

    def _candidates(
        self,
        table: AsyncTable,
        text: str,
        query_terms: list[str],
        mode: str,
        kinds: tuple[str, ...],
        warnings: list[str],
        timings: dict[str, float],
    ) -> _Candidates:
        """Step 1: the full-text query on the pool's thread while `text` (the dense views'
        query, `axiom.retrieval.dense_query`) is embedded and its neighbours found in this
        one; a model that cannot load degrades hybrid to full text (with a warning) and
        fails vector mode."""
        found = _Candidates(use_dense=mode in ("hybrid", "vector"))
        if mode == "hybrid":  # only the feedback query, hybrid's, checks it
            found.version = self.candidates.version(table)
        use_lexical = mode in ("hybrid", "fts")
        if use_lexical and not query_terms:
            warnings.append("the query has no searchable words for full-text search")
        lexical: Future[tuple[list[Row], float]] | None = (
            self._pool.submit(self.candidates.lexical_rows, table, query_terms, kinds)
            if use_lexical and query_terms
            else None
        )
        dense_rows: list[Row] = []
        lex_rows: list[Row] = []
        if found.use_dense:
            try:
                t0 = time.perf_counter()
                vector = self.embed_query(text)
                timings["embed"] = elapsed_ms(t0)
                found.embedder_name = self.embedder().name
                t0 = time.perf_counter()
                dense_rows = self.candidates.dense_rows(table, vector, kinds)
                timings["dense"] = elapsed_ms(t0)
            except SearchUnavailable as exc:
                if mode == "vector":
                    raise
                warnings.append(f"vector search skipped, full-text only: {exc}")
                found.use_dense = False
        if lexical is not None:
            t0 = time.perf_counter()
            lex_rows, timings["lexical"] = lexical.result()
            timings["lexical_wait"] = elapsed_ms(t0)
            found.views.update(lexical_views(lex_rows, kinds, found.docs, self.per_source))
        if dense_rows:
            found.views.update(dense_views(dense_rows, kinds, found.docs, self.per_source))
        found.docs_by_row = row_docs(lex_rows + dense_rows)
        return found

    def _rank(
        self,
        read: CachedRead,
        fused: list[FusedHit],
        found: _Candidates,
        query: tuple[str, set[str]],
        wanted: tuple[int, tuple[str, ...]],
        fused_by: tuple[Sequence[str], str, AskAgain],
        now: datetime,
    ) -> tuple[list[SearchHit], int]:
        """Steps 3-5 over one DuckDB read (or the cache): rerank (with the question's cues:
        who it names, whether it asks when, what a list question's entries cite), match
        and tier, citations; and the number of stale candidates dropped. `query` is the
        text and its analyzed terms, `wanted` the number of hits and their kinds, `fused_by`
        the views and the fusion (the hybrid z-score ranking ends with the cue blend)."""
        if not fused:
            return [], 0
        facts = read.facts([found.docs[str(h.id)] for h in fused])
        scored, stale = rerank(fused, found.docs, facts, now)
        if not scored:
            return [], stale
        text, query_terms = query
        k, kinds = wanted
        apply_question_cues(read.conn, scored, text)
        scored = lift_cited_turns(scored, read.details, text, kinds)
        if not scored:
            return [], stale
        view_names, fusion, ask_again = fused_by
        if blends(view_names, fusion):
            blend_cues(scored, view_names)
            extra = feedback_lift(scored, query_terms, ask_again, VIEW_WEIGHTS)
            if extra is not None:
                blend_cues(scored, view_names, extra)
        read.details(detail_pool(scored, query_terms, found.embedder_name, k))
        top = finish(scored, query_terms, found.embedder_name, self.analyzer, k, view_names)
        read.citations(top)
        read.conflicts(top)
        return [item.hit for item in top], stale

    def _ask_again(
        self,
        table: AsyncTable,
        found: _Candidates,
        kinds: tuple[str, ...],
        timings: dict[str, float],
    ) -> AskAgain:
        """The feedback query (`axiom.retrieval.feedback`): BM25 for `terms`, only each
        row's kind, address and score, split into the two lexical views like step 1's
        (a row step 1 returned names its document); its time goes to
        `timings["feedback"]`. None (the first ranking stands) when it fails, or when the
        table moved to another version since step 1 (a compaction may have moved rows,
        so their addresses would name other documents)."""

        def ask(terms: list[str]) -> dict[str, View] | None:
            try:
                rows, timings["feedback"] = self.candidates.lexical_rows(
                    table, terms, kinds, columns=FEEDBACK_COLUMNS
                )
            except SearchUnavailable as exc:  # e.g. a forget swapped the table meanwhile
                log.warning("search feedback query failed, ranking without it: %s", exc)
                return None
            if found.version is None or self.candidates.version(table) != found.version:
                log.info("search table changed between the queries: ranking without feedback")
                return None
            return feedback_views(rows, kinds, found.docs_by_row, self.per_source)

        return ask


class _Inline(Executor):
    """An executor that runs each task at once, in the caller's thread."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through result()
            future.set_exception(exc)
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        pass
