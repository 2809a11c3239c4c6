"""Do two checkouts build the same store from the pipeline bench's input?

    PYTHONPATH=<checkout> python bench/compare_pipeline_stores.py dump OUT.json [--repeat N] [FILES...]
    python bench/compare_pipeline_stores.py diff A.json B.json

`dump` runs what `bench_pipeline.py` runs (import + `process_sessions`, embeddings off) with
the `axiom` found on PYTHONPATH (run it from that checkout) in a temporary data directory,
then writes what must not change with a speed-up: every event in order (id, type, dedupe
key, session, build, actor, payload without stage latencies and with the data directory
replaced by `<DATA>`, the checkout's by `<CHECKOUT>`), every derived table's rows without timestamp and float columns
(sorted), the projection offsets' event ids, and the orders times decide (sessions by
ingest time, the outbox's claim order, entries by creation, build runs by start). `diff`
prints the first difference of each part, or IDENTICAL (exit 0).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from protocol import locomo_dev  # noqa: E402 - bench/protocol.py, beside this script

SKIPPED_TABLES = ("events", "event_dedup", "schema_migrations", "projection_offsets")
TIMED_TYPES = ("TIMESTAMP", "DOUBLE", "FLOAT", "REAL", "DATE")
ORDERS = {
    "sessions_by_ingest": "SELECT session_id FROM sessions ORDER BY ingested_at, session_id",
    "outbox_claim": "SELECT job_id FROM vector_outbox"
    " ORDER BY item_kind = 'message', created_at, job_id",
    "entries_by_creation": "SELECT entry_id FROM entries ORDER BY created_ts, entry_id",
    "builds_by_start": "SELECT build_id FROM build_runs ORDER BY started_at, build_id",
}


def default_files() -> list[Path]:
    return [
        *sorted(locomo_dev(ROOT).glob("*.json")),
        *sorted((ROOT / "axiom" / "samples" / "claude_code").rglob("*.jsonl")),
    ]


def build(files: list[Path], repeat: int, data_dir: str) -> Path:
    """The bench's store, built by the `axiom` on the path; returns the DuckDB file."""
    os.environ["AXIOM_DATA_DIR"] = data_dir
    os.environ["AXIOM_EMBEDDER"] = "none"
    from axiom.config import AxiomConfig  # the checkout under test: imported after the env
    from axiom.ingest.formats import parse_file
    from axiom.ingest.importer import ingest_transcripts
    from axiom.pipeline.batch import process_sessions
    from axiom.store.db import Database

    try:  # session 22 on: as `axiom import` runs (every projector, the first chunk ahead)
        from axiom.pipeline.batch import analysis_ahead
        from axiom.projections import all_projectors
    except ImportError:  # an older checkout: its own import and process
        analysis_ahead = None
    from axiom.store.migrate import migrate

    print(f"axiom from {sys.modules['axiom'].__file__}", file=sys.stderr)
    db = Database(AxiomConfig.from_env().duckdb_path)
    migrate(db)
    if hasattr(db, "reuse_write_engine"):  # as `axiom import` does (a checkout since session 23)
        db.reuse_write_engine()
    copies = [
        dataclasses.replace(t, session_id=t.session_id if n == 0 else f"{t.session_id}~r{n}")
        for n in range(repeat)
        for path in files
        for t in parse_file(path).transcripts
    ]
    ids = [t.session_id for t in copies]
    if analysis_ahead is None:
        ingest_transcripts(db, copies)
        reports = process_sessions(db, ids)
    else:
        ahead = analysis_ahead()
        try:
            ingest_transcripts(db, copies, projectors=all_projectors(), before_write=ahead.offer)
            reports = process_sessions(db, ids, ahead=ahead)
        finally:
            ahead.close()
    failed = [r for r in reports if r.error]
    if failed:
        raise SystemExit(f"{len(failed)} build(s) failed: {failed[0].error}")
    return db.path


def _clean(value: Any, data_dir: str) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v, data_dir) for k, v in value.items() if k != "latency_ms"}
    if isinstance(value, list):
        return [_clean(v, data_dir) for v in value]
    if not isinstance(value, str):
        return value
    # The sample transcript's path names the checkout it was read from.
    return value.replace(data_dir, "<DATA>").replace(str(ROOT), "<CHECKOUT>")


def _events(conn: duckdb.DuckDBPyConnection, data_dir: str) -> list[Any]:
    rows = conn.execute(
        "SELECT event_id, event_type, dedupe_key, session_id, build_id, actor, payload_json"
        " FROM events ORDER BY seq"
    ).fetchall()
    return [[*row[:6], _clean(json.loads(row[6]), data_dir)] for row in rows]


def _table(conn: duckdb.DuckDBPyConnection, table: str, data_dir: str) -> list[str]:
    columns = conn.execute(
        "SELECT column_name, data_type FROM information_schema.columns"
        " WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    kept = [f'"{c}"' for c, kind in columns if not any(t in kind for t in TIMED_TYPES)]
    rows = conn.execute(f'SELECT {", ".join(kept)} FROM "{table}"').fetchall()
    return sorted(json.dumps(_clean(list(r), data_dir), default=str) for r in rows)


def dump(path: Path, data_dir: str) -> dict[str, Any]:
    conn = duckdb.connect(str(path), read_only=True)
    out: dict[str, Any] = {"events": _events(conn, data_dir)}
    tables = conn.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_name").fetchall()
    for (table,) in tables:
        if table not in SKIPPED_TABLES:
            out[f"table:{table}"] = _table(conn, table, data_dir)
    offsets = conn.execute("SELECT projector_name, last_event_id FROM projection_offsets")
    out["offsets"] = sorted(map(list, offsets.fetchall()))
    for name, sql in ORDERS.items():
        out[f"order:{name}"] = [r[0] for r in conn.execute(sql).fetchall()]
    conn.close()
    return out


def diff(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Print the first difference of each part; True when there is none."""
    same = True
    for part in sorted(set(a) | set(b)):
        left, right = a.get(part) or [], b.get(part) or []
        if left == right:
            continue
        same = False
        print(f"DIFFERENT {part}: {len(left)} against {len(right)}")
        first = next((i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y), None)
        if first is not None:
            print(
                f"  first at {first}:\n    {str(left[first])[:300]}\n    {str(right[first])[:300]}"
            )
    print("IDENTICAL" if same else "DIFFERENT", f"({len(a.get('events', []))} events)")
    return same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("dump")
    make.add_argument("out", type=Path)
    make.add_argument("files", nargs="*", type=Path)
    make.add_argument("--repeat", type=int, default=1)
    compare = sub.add_parser("diff")
    compare.add_argument("a", type=Path)
    compare.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "diff":
        return 0 if diff(*(json.loads(p.read_text()) for p in (args.a, args.b))) else 1
    with tempfile.TemporaryDirectory() as tmp:
        path = build(args.files or default_files(), args.repeat, tmp)
        args.out.write_text(json.dumps(dump(path, tmp), default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
