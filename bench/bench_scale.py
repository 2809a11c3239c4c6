"""The scale curve: bulk import, search and page latency at 10k, 100k and 1M entries.

    python bench/bench_scale.py [--quick] [--full] [--queries 100] [--json OUT] [--keep DIR
                                [--reuse]]

`--quick` measures 10,000 entries only; the default 10,000 and 100,000; `--full` adds
1,000,000 (about 1.5 GB of disk and several minutes of loading). For each size, in a fresh
data dir, bench_search.py's synthetic entries (Zipf vocabulary, every stage and status,
one citation each, random unit vectors; built column-wise, ~1 s per 100,000, timed apart
as `generate_s`) are loaded by the bulk path: Arrow inserts into DuckDB (`entries`,
`citations`), one LanceDB `create_table` of the same rows the outbox writer stores, the
FTS index, and from 50,000 rows the IVF_FLAT index the writer builds (`load_s` is the
sum). Then:

* search: `--queries` distinct queries through `SearchService.search(k=10, hybrid)`, the
  real query embedding included (target: p95 < 150 ms at 1M);
* page: the real web server (`manage.py runserver`) serving `/entries/?page=N` (the memory
  browser, 50 rows a page, random pages) and `/entries/<id>/` of a random entry, over HTTP.

Reported per size: the load time per step (items/s of `load_s`), search p50/p95 with its
step medians, page p50/p95, the load average before and after, the growth from the
smallest size (the cost ratio, and cost ratio / size ratio; <= 1: no worse than linear)
and each size against the one before it (`per_10x`: the cost ratio of every step).

`load_s` is a bulk load, not what a user's import does: the outbox writer upserts a batch
at a time, optimizes every ~1000 rows, builds the IVF index once at 50,000 rows and lets
`optimize()` fold the later rows in, which LanceDB does with delta segments and
re-partitioning (`bench/bench_ivf.py` `appended<step>` measures that path's index cost
and its search). Embedding and the memory pipeline are not in it either.
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
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for p in (str(ROOT), str(BENCH)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench_search import (  # noqa: E402
    _zipf_words,
    measure,
    synthetic_entries,
    write_duckdb,
    write_lance,
)
from protocol import result  # noqa: E402 - bench/protocol.py, beside this script
from soak_db import get, machine, summarize, web_server  # noqa: E402

from axiom.config import AxiomConfig  # noqa: E402
from axiom.retrieval.search import SearchService  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from axiom.vectors.config import configured_embedder, embedding_version_of  # noqa: E402
from axiom.vectors.lance_store import LanceStore  # noqa: E402

IVF_MIN_ROWS = 50_000
STEPS_FILE = "load_steps.json"  # in a kept data dir: what its load took


def load(base: Path, n: int, embedder: Any) -> tuple[dict[str, float], LanceStore, Database]:
    """The bulk path: DuckDB, LanceDB + FTS, and (from 50k) the IVF index; seconds per step.
    Generating the entries (`generate_s`) is timed apart and not part of `load_s`."""
    config = AxiomConfig(data_dir=base)
    db = Database(config.duckdb_path)
    migrate(db)
    started = time.perf_counter()
    entries = synthetic_entries(n)
    steps = {"generate_s": time.perf_counter() - started}
    steps["duckdb_s"] = write_duckdb(db, entries)
    store = LanceStore(config.lancedb_dir, embedding_version_of(embedder), embedder.dim)
    steps["lance_fts_s"] = write_lance(store, entries)
    started = time.perf_counter()
    if n >= IVF_MIN_ROWS:
        with store.writer_lock():
            store.ensure_vector_index(min_rows=IVF_MIN_ROWS)
    steps["ivf_s"] = time.perf_counter() - started
    steps["load_s"] = steps["duckdb_s"] + steps["lance_fts_s"] + steps["ivf_s"]
    return {k: round(v, 1) for k, v in steps.items()}, store, db


def reopen(base: Path, embedder: Any) -> tuple[dict[str, Any], LanceStore, Database]:
    """A store kept by an earlier `--keep` run, with the load times that run measured."""
    config = AxiomConfig(data_dir=base)
    steps = {**json.loads((base / STEPS_FILE).read_text()), "reused": True}
    store = LanceStore(config.lancedb_dir, embedding_version_of(embedder), embedder.dim)
    return steps, store, Database(config.duckdb_path)


def pages(base: Path, n: int, requests: int) -> dict[str, Any]:
    """Entry list pages and entry details over HTTP from the real web server: both
    together (`page`, the growth measure) and each apart."""
    rng = random.Random(n)
    latencies: dict[str, list[float]] = {"list": [], "detail": []}
    with web_server(base, base / "web.log") as (url, _server):
        get(f"{url}/entries/")  # warm-up
        for i in range(requests):
            kind = "list" if i % 2 == 0 else "detail"
            path = (
                f"/entries/?page={rng.randint(1, max(1, n // 50))}"
                if kind == "list"
                else f"/entries/ent_{rng.randrange(n):07d}/"
            )
            started = time.perf_counter()
            get(url + path)
            latencies[kind].append((time.perf_counter() - started) * 1000)
    both = summarize(latencies["list"] + latencies["detail"])
    return {**both, **{kind: summarize(values) for kind, values in latencies.items()}}


def run_size(n: int, args: argparse.Namespace, embedder: Any) -> dict[str, Any]:
    base = args.keep / f"n{n}" if args.keep else Path(tempfile.mkdtemp(prefix="axiom-scale-"))
    try:
        load_avg = [round(x, 2) for x in os.getloadavg()]
        if args.reuse and (base / STEPS_FILE).exists():
            steps, store, db = reopen(base, embedder)
        else:
            if args.keep:
                shutil.rmtree(base, ignore_errors=True)
            steps, store, db = load(base, n, embedder)
            (base / STEPS_FILE).write_text(json.dumps(steps))
        print(f"\n{n:,} entries: {json.dumps(steps)}", flush=True)
        rng = random.Random(1000 + n)
        queries = [" ".join(_zipf_words(rng, rng.randint(3, 6))) for _ in range(args.queries)]
        service = SearchService(db, store, embedder, cache_size=0)
        search = measure(service, queries, 10)
        service.close()
        page = pages(base, n, args.pages)
        row = {
            "entries": n,
            **steps,
            "search": search,
            "page": page,
            "load_average": [load_avg, [round(x, 2) for x in os.getloadavg()]],
        }
        print(json.dumps(row), flush=True)
        return row
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


STEPS = ("duckdb_s", "lance_fts_s", "ivf_s")


def per_step(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each size against the one before it (10x the data): the cost ratio of every load step,
    of the whole load and of search / page p95."""
    out = []
    for before, r in zip(rows, rows[1:], strict=False):
        ratios = {k: round(r[k] / before[k], 2) if before[k] else None for k in (*STEPS, "load_s")}
        ratios["search_p95"] = round(r["search"]["p95_ms"] / before["search"]["p95_ms"], 2)
        ratios["page_p95"] = round(r["page"]["p95"] / before["page"]["p95"], 2)
        out.append({"from": before["entries"], "to": r["entries"], **ratios})
    return out


def growth(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cost ratio over size ratio against the smallest size, per measure."""
    first = rows[0]
    out = []
    for r in rows[1:]:
        size = r["entries"] / first["entries"]
        out.append(
            {
                "entries": r["entries"],
                "size_ratio": size,
                "load": round(r["load_s"] / first["load_s"] / size, 3),
                "search_p95": round(r["search"]["p95_ms"] / first["search"]["p95_ms"] / size, 3),
                "page_p95": round(r["page"]["p95"] / first["page"]["p95"] / size, 3),
                "cost_ratio": {
                    "load": round(r["load_s"] / first["load_s"], 2),
                    "search_p95": round(r["search"]["p95_ms"] / first["search"]["p95_ms"], 2),
                    "page_p95": round(r["page"]["p95"] / first["page"]["p95"], 2),
                },
            }
        )
    return out


def protocol_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        n, search, page = r["entries"], r["search"], r["page"]
        at_1m = n >= 1_000_000
        out += [
            result(f"load {n:,} entries", "items/s", value=round(n / r["load_s"])),
            result(
                f"search at {n:,} entries",
                "ms",
                percentiles=(search["p50_ms"], search["p95_ms"]),
                target="p95 < 150 ms" if at_1m else None,
                met=search["p95_ms"] < 150 if at_1m else None,
            ),
            result(f"page at {n:,} entries", "ms", percentiles=(page["p50"], page["p95"])),
            *(
                result(
                    f"{kind} page at {n:,} entries",
                    "ms",
                    percentiles=(page[kind]["p50"], page[kind]["p95"]),
                )
                for kind in ("list", "detail")
            ),
        ]
    for g in growth(rows):
        for what in ("load", "search_p95", "page_p95"):
            out.append(
                result(
                    f"{what} growth to {g['entries']:,} (cost ratio / size ratio)",
                    "x",
                    value=g[what],
                    ratio=g[what],
                    target="<= 1 (no worse than linear)",
                    met=g[what] <= 1.0,
                )
            )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10,000 entries only")
    ap.add_argument("--full", action="store_true", help="also 1,000,000 entries")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--pages", type=int, default=60)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="build the data dirs here (n<size>) and keep them")
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="with --keep: measure search and pages on the stores a --keep run left there"
        " (their load times are that run's), load only the missing ones",
    )
    args = ap.parse_args(argv)
    sizes = [10_000] if args.quick else [10_000, 100_000] + ([1_000_000] if args.full else [])
    if args.quick:
        args.queries, args.pages = 30, 20
    os.environ.setdefault("AXIOM_EMBEDDER", "e5")
    embedder = configured_embedder()
    rows = [run_size(n, args, embedder) for n in sizes]
    load_avg = [round(x, 2) for x in os.getloadavg()]
    print(
        "\n  entries  load s  items/s  search p50/p95 ms  page p50/p95 ms"
        "  (list p50/p95, detail p50/p95)"
    )
    for r in rows:
        print(
            f"{r['entries']:>9,} {r['load_s']:>7} {r['entries'] / r['load_s']:>8.0f}"
            f"  {r['search']['p50_ms']:>7} / {r['search']['p95_ms']:<7}"
            f"  {r['page']['p50']:>6} / {r['page']['p95']}"
            f"  ({r['page']['list']['p50']} / {r['page']['list']['p95']},"
            f" {r['page']['detail']['p50']} / {r['page']['detail']['p95']})"
        )
    for g in growth(rows):
        print(f"growth to {g['entries']:,} (cost ratio / size ratio): {json.dumps(g)}")
    for step in per_step(rows):
        print(f"cost ratio per 10x: {json.dumps(step)}")
    print(f"load average {load_avg}")
    if args.json:
        out = {
            "benchmark": "scale",
            "params": {
                "sizes": sizes,
                "queries": args.queries,
                "pages": args.pages,
                "embedder": embedding_version_of(embedder),
                "machine": machine(),
                "load_average": load_avg,
            },
            "rows": rows,
            "per_10x": per_step(rows),
            "results": protocol_rows(rows),
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
