"""The memory browser's query at 100,000 entries: filter, group duplicates, sort, page.

    python bench/bench_memory_list.py [--quick] [--json OUT] [--runs 15]

Fills a fresh DuckDB file with N entries (a third of them repeating another's text, as
todos re-announced across sessions do) straight into the `entries` table (a benchmark of
the read, not of the pipeline), then times `list_entry_groups` for the browser's cases
through `Database.read()` (lock, open read-only, query, close: what a page pays). The
in-run reference is the browser's previous query (`list_entries`, oldest first, no
grouping, 51 rows). Target: p95 < 300 ms (the list pages' first-byte budget).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from axiom.entries.queries import EntryFilter, list_entries, list_entry_groups  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from bench import protocol  # noqa: E402

STAGES = ("raw", "working", "candidate", "verified", "certified")
TYPES = ("decision", "fact", "task_note", "preference")


def fill(db: Database, n: int) -> None:
    with db.write() as conn:
        conn.execute(
            "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json, stage,"
            " status, session_id, evidence_json)"
            " SELECT printf('ent_%016x', i), TIMESTAMP '2025-01-01' + to_seconds(i * 60),"
            f" list_extract({list(TYPES)}, (i % 4) + 1),"
            " CASE WHEN i % 3 = 0 THEN printf('Rotate the signing keys of service %d', i % 997)"
            "      ELSE printf('Memory number %d about topic %d', i, i % 113) END,"
            " json_object('content', printf('Details of memory %d, said in passing.', i)),"
            f" list_extract({list(STAGES)}, (i % 5) + 1), 'active',"
            " printf('session-%05d', i // 20), '[]'"
            " FROM range(?) t(i)",
            [n],
        )


def timed(db: Database, run, runs: int) -> list[float]:  # noqa: ANN001 - a callable
    out = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        with db.read() as conn:
            run(conn)
        out.append((time.perf_counter() - start) * 1000)
    return out[1:]  # the first run warms the file cache


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    n, runs = (5_000, 5) if args.quick else (100_000, args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(Path(tmp) / "axiom.duckdb")
        migrate(db)
        fill(db, n)
        reference = timed(db, lambda c: list_entries(c, limit=51), runs)
        cases = {
            "default (grouped, newest)": lambda c: list_entry_groups(c, EntryFilter()),
            "text filter 'signing'": lambda c: list_entry_groups(c, EntryFilter(text="signing")),
            "sort stage, page 100": lambda c: list_entry_groups(
                c, EntryFilter(), "stage", offset=4950
            ),
            "each shown, type filter": lambda c: list_entry_groups(
                c, EntryFilter(entry_type="decision"), group=False
            ),
        }
        results = []
        ref_median = statistics.median(reference)
        print(f"{n} entries, load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        print(f"reference list_entries(limit=51): median {ref_median:.1f} ms")
        for name, run in cases.items():
            values = timed(db, run, runs)
            med, high = statistics.median(values), protocol.p95(values)
            print(f"{name}: median {med:.1f} ms, p95 {high:.1f} ms, {med / ref_median:.1f}x ref")
            results.append(
                protocol.result(
                    f"list_entry_groups: {name}",
                    "ms",
                    values,
                    reference=ref_median,
                    ratio=med / ref_median,
                    target="p95 < 300 ms",
                    met=high < 300,
                )
            )
    protocol.write_json(args.json, "memory_list", {"entries": n, "runs": runs}, results)


if __name__ == "__main__":
    main()
