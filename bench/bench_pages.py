"""Viewer and API latency on a big, idle store (issue 13: dashboard and list pages first
byte p95 < 300 ms, API p95 < 100 ms, search through HTTP within 50 ms of the core search).

    python bench/bench_pages.py                 # 100,000 entries, 30 requests per page
    python bench/bench_pages.py --quick         # 5,000 entries, 8 requests per page
    python bench/bench_pages.py --json out.json

In a fresh data dir: synthetic entries (bench_search's generator: Zipf vocabulary, every
stage and status, 40 per session) written in bulk into DuckDB `entries` + `citations`,
their sessions, one build run per session with its stage metrics, and LanceDB rows with
random unit vectors plus the FTS and (from 50,000 rows) IVF_FLAT index, as the writer
leaves them. Then the real web server (`manage.py runserver`, as `make up` runs it) on a
free port, measured once its warm-up (first page read, query model) has finished, as
`/api/v1/health` reports. Each page is fetched `--requests` times after one warm-up; the
figure is the time to the first byte of the body. Search: the same kind of queries (distinct, so no
cached embedding) through `SearchService.search` in this process (k=20, hybrid, as the
page asks) and through `GET /search/?q=` over HTTP; the target compares their p50 and p95.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import shutil
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import protocol  # noqa: E402 - bench/protocol.py, beside this script
from bench_search import _zipf_words, synthetic_entries, write_duckdb, write_lance  # noqa: E402

from axiom.config import AxiomConfig  # noqa: E402
from axiom.retrieval.search import SearchService  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from axiom.vectors.config import configured_embedder, embedding_version_of  # noqa: E402
from axiom.vectors.lance_store import LanceStore  # noqa: E402
from tests.live_server import runserver  # noqa: E402

PAGES = ["/", "/sessions/", "/entries/", "/tasks/", "/conflicts/", "/builds/", "/decisions/"]
API = [
    "/api/v1/health",
    "/api/v1/sessions",
    "/api/v1/entries?limit=50",
    "/api/v1/entries?stage=verified&limit=50",
    "/api/v1/tasks",
    "/api/v1/conflicts",
]
STAGES = ("extract", "align", "validate", "promote", "materialize")


def write_sessions_and_builds(db: Database, entries: list[dict]) -> None:
    """A session per 40 entries, a successful build run per session with its metrics."""
    firsts: dict[str, object] = {}
    for e in entries:
        firsts.setdefault(e["session_id"], e["ts"])
    sids, starts = list(firsts), list(firsts.values())
    n = len(sids)
    ts = pa.array(starts, pa.timestamp("us"))
    sessions = pa.table(
        {
            "session_id": sids,
            "title": [f"Bench session {i}" for i in range(n)],
            "started_at": ts,
            "ingest_event_id": [f"ev_{s}" for s in sids],
        }
    )
    metrics = pa.table(
        {
            "id": [f"m_{s}_{st}" for s in sids for st in STAGES],
            "ts": pa.array([t for t in starts for _ in STAGES], pa.timestamp("us")),
            "stage": [st for _ in sids for st in STAGES],
            "latency_ms": [float(5 + (i * 37) % 90) for i in range(n * len(STAGES))],
            "session_id": [s for s in sids for _ in STAGES],
        }
    )
    with db.write() as conn:
        conn.register("bench_sessions", sessions)
        conn.execute(
            "INSERT INTO sessions (session_id, project, source, title, started_at, ended_at,"
            " message_count, ingest_event_id, ingested_at) SELECT session_id, 'bench', 'json',"
            " title, started_at, started_at + INTERVAL 5 MINUTE, 40, ingest_event_id, started_at"
            " FROM bench_sessions"
        )
        conn.execute(
            "INSERT INTO build_runs (build_id, started_at, finished_at, extractor_model,"
            " extractor_prompt_hash, embedder_model, embedding_version, idris_version,"
            " schema_version, status) SELECT 'bld_' || session_id, started_at,"
            " started_at + INTERVAL 2 SECOND, 'rules:rules-v1', 'x', 'e5', 'e5', 'builtin', '2',"
            " 'success' FROM bench_sessions"
        )
        conn.execute("UPDATE entries SET build_id = 'bld_' || session_id")
        conn.register("bench_metrics", metrics)
        conn.execute(
            "INSERT INTO pipeline_metrics (id, ts, stage, latency_ms, success, session_id)"
            " SELECT id, ts, stage, latency_ms, true, session_id FROM bench_metrics"
        )


def first_byte_ms(conn: http.client.HTTPConnection, path: str) -> float:
    """Milliseconds from sending the request to the first byte of the body (status 200)."""
    t0 = time.perf_counter()
    conn.request("GET", path)
    response = conn.getresponse()
    response.read(1)
    elapsed = (time.perf_counter() - t0) * 1000
    response.read()
    if response.status != 200:
        raise RuntimeError(f"{path}: HTTP {response.status}")
    return elapsed


def percentiles(values: list[float]) -> tuple[float, float]:
    s = sorted(values)
    return s[len(s) // 2], s[min(len(s) - 1, int(len(s) * 0.95))]


def time_paths(base: str, paths: list[str], requests: int) -> dict[str, tuple[float, float]]:
    host, port = urllib.parse.urlsplit(base).netloc.split(":")
    out = {}
    for path in paths:
        conn = http.client.HTTPConnection(host, int(port), timeout=120)
        first_byte_ms(conn, path)  # warm-up
        out[path] = percentiles([first_byte_ms(conn, path) for _ in range(requests)])
        conn.close()
    return out


def time_search(base: str, service: SearchService, queries: int, seed: int) -> dict[str, tuple]:
    rng = random.Random(seed)
    words = [" ".join(_zipf_words(rng, rng.randint(3, 6))) for _ in range(2 * queries + 2)]
    core_q, http_q = words[:queries], words[queries : 2 * queries]
    service.search(words[-1], k=20)  # warm-up
    core = []
    for q in core_q:
        t0 = time.perf_counter()
        service.search(q, k=20, mode="hybrid")
        core.append((time.perf_counter() - t0) * 1000)
    host, port = urllib.parse.urlsplit(base).netloc.split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=120)
    first_byte_ms(conn, "/search/?" + urllib.parse.urlencode({"q": words[-2]}))
    over_http = [
        first_byte_ms(conn, "/search/?" + urllib.parse.urlencode({"q": q})) for q in http_q
    ]
    conn.close()
    return {"core": percentiles(core), "http": percentiles(over_http)}


def result(
    metric: str, p50: float, p95: float, target: str | None, met: bool | None, **kw: Any
) -> dict[str, Any]:
    """A latency row of the bench protocol (milliseconds, rounded to 0.1)."""
    return protocol.result(
        metric, "ms", percentiles=(round(p50, 1), round(p95, 1)), target=target, met=met, **kw
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--requests", type=int, default=30)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--quick", action="store_true", help="5,000 entries, 8 requests, 8 queries")
    ap.add_argument("--keep", help="build the data dir here and keep it")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    if args.quick:
        args.entries, args.requests, args.queries = 5_000, 8, 8
    os.environ.setdefault("AXIOM_EMBEDDER", "e5")
    base_dir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="axiom-pages-"))
    shutil.rmtree(base_dir, ignore_errors=True)
    config = AxiomConfig(data_dir=base_dir)
    db = Database(config.duckdb_path)
    migrate(db)
    embedder = configured_embedder()
    t0 = time.perf_counter()
    entries = synthetic_entries(args.entries)
    write_duckdb(db, entries)
    write_sessions_and_builds(db, entries)
    store = LanceStore(config.lancedb_dir, embedding_version_of(embedder), embedder.dim)
    write_lance(store, entries)
    with store.writer_lock():
        store.ensure_vector_index(min_rows=50_000)
    load = os.getloadavg()[0]
    print(
        f"{args.entries:,} entries written in {time.perf_counter() - t0:.0f} s;"
        f" {os.cpu_count()} CPUs, load average {load:.2f}",
        flush=True,
    )
    results = []
    try:
        with runserver(
            base_dir,
            base_dir / "runserver.log",
            warm=True,
            AXIOM_EMBEDDER=os.environ["AXIOM_EMBEDDER"],
        ) as base:
            pages = time_paths(base, PAGES, args.requests)
            api = time_paths(base, API, args.requests)
            service = SearchService(db, store, embedder, cache_size=0)
            search = time_search(base, service, args.queries, seed=args.entries)
            service.close()
        load = os.getloadavg()[0]  # over the last minute of measuring
    finally:
        if not args.keep:
            shutil.rmtree(base_dir, ignore_errors=True)
    # In-run reference: the health endpoint (no page, one tiny read) on the same machine
    # at the same moment, so a loaded machine shows as a high reference, not as slow pages.
    ref = api["/api/v1/health"][1]
    print(f"\n{'page / endpoint':<44} {'p50 ms':>7} {'p95 ms':>7} {'p95/health':>10}")
    for path, (p50, p95) in pages.items():
        print(f"{path:<44} {p50:>7.1f} {p95:>7.1f} {p95 / ref:>10.2f}")
        results.append(
            result(
                f"first byte {path}",
                p50,
                p95,
                "p95 < 300 ms",
                p95 < 300,
                reference=round(ref, 1),
                ratio=round(p95 / ref, 2),
            )
        )
    for path, (p50, p95) in api.items():
        print(f"{path:<44} {p50:>7.1f} {p95:>7.1f} {p95 / ref:>10.2f}")
        results.append(
            result(
                f"API {path}",
                p50,
                p95,
                "p95 < 100 ms",
                p95 < 100,
                reference=round(ref, 1),
                ratio=round(p95 / ref, 2),
            )
        )
    (c50, c95), (h50, h95) = search["core"], search["http"]
    print(f"{'core SearchService.search (k=20)':<44} {c50:>7.1f} {c95:>7.1f}")
    print(f"{'GET /search/?q= (first byte)':<44} {h50:>7.1f} {h95:>7.1f}")
    print(f"HTTP minus core: p50 {h50 - c50:+.1f} ms, p95 {h95 - c95:+.1f} ms (target: within 50)")
    results.append(result("search core", c50, c95, None, None))
    results.append(
        result(
            "search over HTTP",
            h50,
            h95,
            "p50 and p95 within 50 ms of the core",
            h50 - c50 <= 50 and h95 - c95 <= 50,
            reference=round(c95, 1),
            ratio=round(h95 / c95, 2) if c95 else None,
        )
    )
    params = {
        "entries": args.entries,
        "requests": args.requests,
        "queries": args.queries,
        "embedder": embedding_version_of(embedder),
        "load_average": round(load, 2),
        "cpus": os.cpu_count(),
    }
    protocol.write_json(args.json, "pages", params, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
