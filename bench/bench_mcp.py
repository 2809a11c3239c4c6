"""MCP `mem-search` against the core search it wraps, on the same store (issue 14: "MCP
search within 50 ms of the core search on 100,000 entries").

    python bench/bench_mcp.py                 # 100,000 entries, 100 queries
    python bench/bench_mcp.py --quick         # 2,000 entries, 10 queries (smoke run)
    python bench/bench_mcp.py --json OUT.json

A fresh data dir is filled by `bench_search`'s bulk generator (synthetic entries straight
into DuckDB and LanceDB with fixed random vectors, FTS index, IVF_FLAT from 50,000 rows, as
the outbox writer leaves it). Then each query goes, in turn, through

- the core: `SearchService.from_config(...).search(q, k=10, mode="hybrid")` in this
  process (the in-run reference), and
- MCP: `python -m axiom mcp` started once as a child and called over stdio by the `mcp`
  SDK's client (`call_tool("mem-search", ...)`), timed at the client: the JSON-RPC round
  trip, the server's own search and the hits' serialization.

Both sides embed queries with the configured `AXIOM_EMBEDDER` (the project's default when
unset) and warm up first (model load, first connection). Queries are distinct, so no
query cache helps either side; alternating them puts both under the same machine load.
Reported: p50/p95 of each and the MCP minus core difference (target < 50 ms at p50 and
p95). The load average is printed and written with the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from axiom.config import AxiomConfig  # noqa: E402
from axiom.retrieval.search import SearchService  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from axiom.vectors.config import configured_embedder, embedding_version_of  # noqa: E402
from axiom.vectors.lance_store import LanceStore  # noqa: E402
from bench import protocol  # noqa: E402
from bench.bench_search import _zipf_words, synthetic_entries, write_duckdb, write_lance  # noqa: E402

TARGET_MS = 50.0
IVF_MIN_ROWS = 50_000
WARMUP = 3


def build_store(data_dir: Path, n: int) -> str:
    """`n` synthetic entries in a fresh data dir; returns what was built, with timings."""
    config = AxiomConfig(data_dir=data_dir)
    db = Database(config.duckdb_path)
    migrate(db)
    embedder = configured_embedder()
    entries = synthetic_entries(n)
    duck_s = write_duckdb(db, entries)
    store = LanceStore(config.lancedb_dir, embedding_version_of(embedder), embedder.dim)
    lance_s = write_lance(store, entries)
    built = "no vector index"
    if n >= IVF_MIN_ROWS:
        with store.writer_lock():
            built = f"IVF_FLAT: {store.ensure_vector_index(min_rows=IVF_MIN_ROWS)}"
    return f"{n:,} entries (DuckDB {duck_s:.1f}s, LanceDB + FTS {lance_s:.1f}s, {built})"


async def measure(data_dir: Path, queries: list[str], k: int) -> tuple[list[float], list[float]]:
    """(core ms, MCP ms) per query, the two alternating."""
    env = {**os.environ, "AXIOM_DATA_DIR": str(data_dir)}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "axiom", "mcp"], env=env, cwd=ROOT
    )
    core = SearchService.from_config(AxiomConfig(data_dir=data_dir))
    core_ms, mcp_ms = [], []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            core.search(q, k=k, mode="hybrid")
            t1 = time.perf_counter()
            result = await session.call_tool("mem-search", {"query": q, "k": k, "mode": "hybrid"})
            t2 = time.perf_counter()
            if result.is_error:
                raise RuntimeError(f"mem-search failed: {result.content}")
            if i >= WARMUP:
                core_ms.append((t1 - t0) * 1000)
                mcp_ms.append((t2 - t1) * 1000)
    core.close()
    return core_ms, mcp_ms


def results(core_ms: list[float], mcp_ms: list[float]) -> list[dict]:
    """The protocol's result rows: each side, and the differences with the target."""
    rows = []
    for name, values in (("core SearchService.search", core_ms), ("MCP mem-search", mcp_ms)):
        pct = (round(statistics.median(values), 1), round(protocol.p95(values), 1))
        rows.append(protocol.result(f"{name} latency", "ms", percentiles=pct))
    core_p50, mcp_p50 = rows[0]["median"], rows[1]["median"]
    core_p95, mcp_p95 = rows[0]["p95"], rows[1]["p95"]
    for label, mcp, ref in (("p50", mcp_p50, core_p50), ("p95", mcp_p95, core_p95)):
        diff = round(mcp - ref, 1)
        rows.append(
            protocol.result(
                f"MCP minus core, {label}",
                "ms",
                value=diff,
                reference=ref,
                ratio=round(mcp / ref, 2) if ref else None,
                target=f"{label} difference < {TARGET_MS:.0f} ms",
                met=diff < TARGET_MS,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 entries, 10 queries")
    ap.add_argument("--entries", type=int, default=None)
    ap.add_argument("--queries", type=int, default=None)
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--keep", type=Path, help="build the data dir here and keep it")
    ap.add_argument("--json", type=Path, help="write the protocol's JSON object here")
    args = ap.parse_args(argv)
    n = args.entries or (2_000 if args.quick else 100_000)
    n_queries = args.queries or (10 if args.quick else 100)
    data_dir = args.keep or Path(tempfile.mkdtemp(prefix="axiom-bench-mcp-"))
    if data_dir.exists():
        shutil.rmtree(data_dir)
    embedder = os.environ.get("AXIOM_EMBEDDER", "(default)")
    try:
        print(f"store: {build_store(data_dir, n)}; AXIOM_EMBEDDER={embedder}", flush=True)
        rng = random.Random(4242 + n)
        queries = [" ".join(_zipf_words(rng, rng.randint(3, 6))) for _ in range(n_queries + WARMUP)]
        core_ms, mcp_ms = asyncio.run(measure(data_dir, queries, args.k))
    finally:
        if not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
    load = [round(x, 1) for x in os.getloadavg()]
    rows = results(core_ms, mcp_ms)
    for r in rows:
        figures = (
            f"p50 {r['median']} ms, p95 {r['p95']} ms"
            if r["value"] is None
            else f"{r['value']} ms (core {r['reference']} ms; target {r['target']}: "
            f"{'met' if r['met'] else 'NOT met'})"
        )
        print(f"{r['metric']:<36} {figures}")
    print(f"{len(core_ms)} queries, k={args.k}; load average {load} on {os.cpu_count()} cores")
    params = {
        "entries": n,
        "queries": len(core_ms),
        "k": args.k,
        "embedder": embedder,
        "load_average": load,
        "cpus": os.cpu_count(),
    }
    protocol.write_json(args.json, "mcp", params, rows)
    return 0 if all(r["met"] is not False for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
