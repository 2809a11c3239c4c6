"""The IVF vector index's build cost and search latency by size and configuration.

    python bench/bench_ivf.py --dir DIR --n 100000 [--variants sqrt,cap316,...] [--queries 100]

On a table of `n` random unit vectors (dim 384, the e5 embedder's), kept in `DIR/n<n>` and
reused by later runs, each variant drops the vector index, builds its own and times it,
then times 100 nearest-neighbour queries the way search runs them (cosine, `nprobes`,
`limit 100`, `_distance` and one column) and their recall@10 against exact search.
`appended<step>` is the outbox writer's path instead: the index built once at 50,000 rows,
the rest appended in `step`-row batches (default 50,000; the writer's is ~1000), each
followed by `optimize()` (no retraining); its build time is the index build plus every
optimize (the appends themselves are not in it); `appended<step>t<rows>` builds that first
index with `target_partition_size=<rows>` instead of sqrt(50,000) partitions. `target<rows>`
is a one-shot build with `target_partition_size=<rows>`. `rebuild<step>x<growth>` is the
writer's path with its rebuild rule (`lance_store.build_vector_index_if_grown`, the code the
writer runs): before each optimize the index is rebuilt from scratch (sqrt(rows)
partitions) once the table has `growth` times the rows of the last build
(`rebuild<step>x<growth>s<segments>`: or has more than that many delta segments); `--probes
150000,199000` also times kNN at those row counts on the way (one line each), to see the
worst point just before a rebuild.
Random vectors have no clusters, so recall here is a floor, not the real data's figure.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import IvfFlat

from axiom.vectors.lance_store import (
    CLEANUP_OLDER_THAN,
    VECTOR_INDEX_NAME,
    build_vector_index_if_grown,
)

DIM = 384
BATCH = 50_000
FIRST_INDEX_ROWS = 50_000
NPROBES = 32


def _batch(rng: np.random.Generator, start: int, n: int) -> pa.RecordBatch:
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return pa.RecordBatch.from_pydict(
        {
            "id": pa.array([f"entry:{i:07d}" for i in range(start, start + n)]),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), DIM),
        }
    )


def _batches(n: int, start: int = 0, seed: int = 7) -> list[pa.RecordBatch]:
    rng = np.random.default_rng(seed + start)
    return [_batch(rng, s, min(BATCH, start + n - s)) for s in range(start, start + n, BATCH)]


def table_of(base: Path, n: int) -> Any:
    db = lancedb.connect(base / f"n{n}")
    if "v" in db.table_names():
        return db.open_table("v")
    return db.create_table("v", data=pa.Table.from_batches(_batches(n)))


def partitions(variant: str, n: int) -> IvfFlat:
    sqrt = max(1, int(math.sqrt(n)))
    configs = {
        "sqrt": IvfFlat(distance_type="cosine", num_partitions=sqrt),
        "sqrt_it10": IvfFlat(distance_type="cosine", num_partitions=sqrt, max_iterations=10),
        "sqrt_s64": IvfFlat(distance_type="cosine", num_partitions=sqrt, sample_rate=64),
        "cap316": IvfFlat(distance_type="cosine", num_partitions=min(sqrt, 316)),
        "cap224": IvfFlat(distance_type="cosine", num_partitions=min(sqrt, 224)),
    }
    if variant.startswith("target"):  # target<rows>: LanceDB sizes the partitions
        return IvfFlat(distance_type="cosine", target_partition_size=int(variant[6:]))
    return configs[variant]


def build(table: Any, variant: str, n: int) -> float:
    for index in table.list_indices():
        table.drop_index(index.name)
    t0 = time.perf_counter()
    table.create_index("vector", config=partitions(variant, n))
    return time.perf_counter() - t0


def build_appended(
    base: Path, n: int, step: int = BATCH, target: int | None = None
) -> tuple[Any, dict[str, float]]:
    """The writer's path: index at 50,000 rows, then append + optimize per `step` rows
    (the outbox writer optimizes every ~1000 rows)."""
    path = base / f"appended{n}_{step}_{target}"
    shutil.rmtree(path, ignore_errors=True)
    db = lancedb.connect(path)
    table = db.create_table("v", data=pa.Table.from_batches(_batches(FIRST_INDEX_ROWS)))
    t0 = time.perf_counter()
    first = (
        IvfFlat(distance_type="cosine", target_partition_size=target)
        if target
        else IvfFlat(distance_type="cosine", num_partitions=int(FIRST_INDEX_ROWS**0.5))
    )
    table.create_index("vector", config=first)
    steps = {"index_s": time.perf_counter() - t0, "append_s": 0.0, "optimize_s": 0.0}
    for start in range(FIRST_INDEX_ROWS, n, step):
        t0 = time.perf_counter()
        table.add(pa.Table.from_batches(_batches(min(step, n - start), start)))
        steps["append_s"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        table.optimize(cleanup_older_than=CLEANUP_OLDER_THAN)  # as the writer does
        steps["optimize_s"] += time.perf_counter() - t0
    steps["last_optimize_s"] = time.perf_counter() - t0
    return table, steps


def build_rebuilt(
    base: Path,
    n: int,
    step: int,
    growth: float,
    max_segments: int | None = None,
    probe: Callable[[Any, int], None] = lambda table, rows: None,
) -> tuple[Any, dict[str, float]]:
    """The writer's path with its rebuild rule: index at 50,000 rows, then per `step` rows
    append, rebuild if the table grew `growth`x since the last build, optimize."""
    path = base / f"rebuilt{n}_{step}_{growth}_{max_segments}"
    shutil.rmtree(path, ignore_errors=True)
    db = lancedb.connect(path)
    table = db.create_table("v", data=pa.Table.from_batches(_batches(FIRST_INDEX_ROWS)))
    t0 = time.perf_counter()
    build_vector_index_if_grown(table, FIRST_INDEX_ROWS, growth)
    steps = {"index_s": time.perf_counter() - t0, "append_s": 0.0, "optimize_s": 0.0}
    steps.update(rebuilds=0, max_segments=1, slowest_rebuild_s=0.0)
    for start in range(FIRST_INDEX_ROWS, n, step):
        rows = min(step, n - start)
        t0 = time.perf_counter()
        table.add(pa.Table.from_batches(_batches(rows, start)))
        steps["append_s"] += time.perf_counter() - t0
        segments = table.index_stats(VECTOR_INDEX_NAME).num_indices
        steps["max_segments"] = max(steps["max_segments"], segments)
        t0 = time.perf_counter()
        if build_vector_index_if_grown(table, FIRST_INDEX_ROWS, growth, max_segments):
            took = time.perf_counter() - t0
            steps["index_s"] += took
            steps["rebuilds"] += 1
            steps["slowest_rebuild_s"] = max(steps["slowest_rebuild_s"], took)
        t0 = time.perf_counter()
        table.optimize(cleanup_older_than=CLEANUP_OLDER_THAN)  # as the writer does
        steps["optimize_s"] += time.perf_counter() - t0
        probe(table, start + rows)
    return table, steps


def exact_top10(table: Any, queries: np.ndarray) -> list[set[str]]:
    data = table.to_arrow()
    vectors = data.column("vector").combine_chunks().values.to_numpy().reshape(-1, DIM)
    ids = data.column("id").to_pylist()
    top = np.argpartition(-(queries @ vectors.T), 10, axis=1)[:, :10]
    return [{ids[i] for i in row} for row in top]


def knn(table: Any, queries: np.ndarray, truth: list[set[str]]) -> dict[str, float]:
    times, hits = [], 0
    for q, want in zip(queries, truth, strict=True):
        t0 = time.perf_counter()
        rows = (
            table.search(q, vector_column_name="vector")
            .distance_type("cosine")
            .nprobes(NPROBES)
            .limit(100)
            .select(["id", "_distance"])
            .to_list()
        )
        times.append((time.perf_counter() - t0) * 1000)
        hits += len(want & {r["id"] for r in rows[:10]})
    times.sort()
    return {
        "knn_p50_ms": round(times[len(times) // 2], 1),
        "knn_p95_ms": round(times[int(len(times) * 0.95)], 1),
        "recall_at_10": round(hits / (10 * len(queries)), 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--variants", default="sqrt,cap316")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--probes", default="", help="rebuild variants: row counts to time kNN at")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(99)
    queries = rng.standard_normal((args.queries, DIM), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    probes = {int(p) for p in args.probes.split(",") if p}
    for variant in args.variants.split(","):

        def probe(table: Any, rows: int, variant: str = variant) -> None:
            if rows in probes:
                segments = table.index_stats(VECTOR_INDEX_NAME).num_indices
                found = knn(table, queries, exact_top10(table, queries))
                line = {"n": rows, "variant": variant, "probe": True, "segments": segments}
                print(json.dumps({**line, **found}), flush=True)

        if variant.startswith("rebuild"):
            step_text, _, rule = variant.removeprefix("rebuild").partition("x")
            growth, _, cap = rule.partition("s")
            table, steps = build_rebuilt(
                args.dir, args.n, int(step_text), float(growth), int(cap) if cap else None, probe
            )
            row = {"build_s": round(steps["index_s"] + steps["optimize_s"], 1)}
            row.update({k: round(v, 1) for k, v in steps.items()})
            row["segments"] = table.index_stats(VECTOR_INDEX_NAME).num_indices
        elif variant.startswith("appended"):
            step_text, _, target = variant.removeprefix("appended").partition("t")
            step = int(step_text or BATCH)
            table, steps = build_appended(args.dir, args.n, step, int(target) if target else None)
            row: dict[str, Any] = {"build_s": round(steps["index_s"] + steps["optimize_s"], 1)}
            row.update({k: round(v, 1) for k, v in steps.items()})
            row["segments"] = table.index_stats("vector_idx").num_indices
        else:
            table = table_of(args.dir, args.n)
            row = {"build_s": round(build(table, variant, args.n), 1)}
        truth = exact_top10(table, queries)
        row = {"n": args.n, "variant": variant, **row, **knn(table, queries, truth)}
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
