"""What a write unit's COMMIT costs in a large store, with the derived tables' secondary
indexes of migrations before 0013 and without them (migration 0013).

    python bench/bench_commit.py [N ...] [--units K] [--quick] [--json OUT]

Sizes N (rows in `entries`, `conflict_facts` and `vector_outbox`): those given, else
100000 1000000 (`--quick`: 100000). For each N and each schema, a fresh store is migrated (up to 0012, or
fully), filled with N synthetic rows per table through a writer's connection (Axiom's
row groups), then K write units (default 5) each append 1,000 entries, their conflict
facts and outbox jobs and move the entries' stage, as a build unit does; the COMMIT of
each (a checkpoint: `axiom.store.db.WRITE_CONFIG`) is timed. DuckDB 1.4 writes a table's
ART indexes whole at every checkpoint, so an index's cost grows with the table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from protocol import cpu_model, result, write_json  # noqa: E402

from axiom.store.db import Database, connect_write  # noqa: E402
from axiom.store.migrate import MIGRATIONS_DIR, migration_files  # noqa: E402

UNIT_ROWS = 1000


def migrated(path: Path, upto: str | None) -> None:
    """A store with every migration, or those before `upto` (as an older Axiom left it)."""
    db = Database(path)
    names = [p.name for p in migration_files() if upto is None or p.name < upto]
    with db.write() as conn:
        for name in names:
            conn.execute((MIGRATIONS_DIR / name).read_text(encoding="utf-8"))


def fill(path: Path, n: int) -> None:
    conn = connect_write(path)
    try:
        conn.execute(
            "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json, stage,"
            " status, canonical_key, session_id) SELECT 'ent_' || md5(i::VARCHAR), now(),"
            " ['fact', 'decision', 'task'][i % 3 + 1], 'title ' || i, '{}',"
            " ['raw', 'working', 'candidate', 'verified', 'certified'][i % 5 + 1], 'active',"
            " 'fact:' || (i % 5000), 'sess_' || (i // 20) FROM range(?) r(i)",
            [n],
        )
        conn.execute(
            "INSERT INTO conflict_facts (entry_id, session_id, entry_type, title, content,"
            " canonical_key, created_ts) SELECT entry_id, session_id, entry_type, title, '',"
            " canonical_key, created_ts FROM entries"
        )
        conn.execute(
            "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version, status)"
            " SELECT 'job_' || entry_id, 'entry', entry_id, 'v1', 'done' FROM entries"
        )
    finally:
        conn.close()


def unit(path: Path, k: int) -> float:
    """One write unit like a build's; the seconds its COMMIT took."""
    conn = connect_write(path)
    try:
        conn.execute("BEGIN TRANSACTION")
        conn.execute(
            "INSERT INTO entries (entry_id, created_ts, entry_type, title, content_json, stage,"
            " status, session_id) SELECT 'new_' || ? || '_' || i, now(), 'fact', 'new ' || i,"
            " '{}', 'raw', 'active', 'sess_new' FROM range(?) r(i)",
            [k, UNIT_ROWS],
        )
        conn.execute(
            "INSERT INTO conflict_facts (entry_id, session_id, entry_type, title, content,"
            " created_ts) SELECT entry_id, session_id, entry_type, title, '', created_ts"
            " FROM entries WHERE starts_with(entry_id, 'new_' || ? || '_')",
            [k],
        )
        conn.execute(
            "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version, status)"
            " SELECT 'job_' || entry_id, 'entry', entry_id, 'v1', 'pending' FROM entries"
            " WHERE starts_with(entry_id, 'new_' || ? || '_')",
            [k],
        )
        conn.execute(
            "UPDATE entries SET stage = 'verified' WHERE starts_with(entry_id, 'new_' || ? || '_')",
            [k],
        )
        started = time.perf_counter()
        conn.execute("COMMIT")
        return time.perf_counter() - started
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int)
    parser.add_argument("--units", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    args.sizes = args.sizes or ([100_000] if args.quick else [100_000, 1_000_000])
    results = []
    print(f"machine: {cpu_model()}")
    for n in args.sizes:
        for label, upto in (("before 0013", "0013"), ("with 0013", None)):
            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "axiom.duckdb"
                migrated(path, upto)
                fill(path, n)
                commits = [unit(path, k) * 1000 for k in range(args.units)]
            print(
                f"{n:>9,} rows, {label:11s}: commit ms median {statistics.median(commits):7.1f}"
                f"  ({', '.join(f'{c:.0f}' for c in commits)})"
            )
            results.append(result(f"commit, {n} rows, {label}", "ms", commits))
    if args.json:
        write_json(args.json, "bench_commit", {"sizes": args.sizes, "units": args.units}, results)


if __name__ == "__main__":
    main()
