"""Session ingest throughput through the whole pipeline (embeddings excluded).

    python bench/bench_ingest.py [FILES...] [--quick] [--json OUT]
                                  # default: ../shared/data/locomo-dev/*.json; --quick is the
                                  # same (two conversations are already a smoke size)

Imports into a fresh temporary data dir: parse + privacy filter + `session_ingested` +
projection, then `process_session` (extraction, alignment, validation, entries, task
resolution, citations) per session. Reports messages per second for each phase and checks
that every exact evidence span reproduces its quote.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import protocol  # noqa: E402 - bench/protocol.py, beside this script
from protocol import cpu_model, locomo_dev, write_json  # noqa: E402

DEFAULT = sorted(locomo_dev(ROOT).glob("*.json"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--quick", action="store_true", help="the default files (already small)")
    parser.add_argument("--json", type=Path, help="write the bench protocol's JSON here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["AXIOM_DATA_DIR"] = tmp
        from axiom.config import AxiomConfig
        from axiom.ingest.importer import import_paths
        from axiom.pipeline.factory import configured_pipeline
        from axiom.pipeline.process import process_session
        from axiom.store.db import Database
        from axiom.store.migrate import migrate

        db = Database(AxiomConfig.from_env().duckdb_path)
        migrate(db)
        started = time.perf_counter()
        report = import_paths(db, args.files)
        ingest_s = time.perf_counter() - started

        pipeline = configured_pipeline()
        started = time.perf_counter()
        for sid in report.session_ids:
            process_session(db, sid, pipeline)
        process_s = time.perf_counter() - started

        with db.read() as conn:
            texts = {
                (s, i): t
                for s, i, t in conn.execute(
                    "SELECT session_id, message_index, text FROM messages"
                ).fetchall()
            }
            rows = conn.execute("SELECT stage, evidence_json FROM entries").fetchall()
        stages: dict[str, int] = {}
        exact = mismatched = 0
        for stage, evidence in rows:
            stages[stage] = stages.get(stage, 0) + 1
            for ev in json.loads(evidence):
                if ev.get("method") == "exact":
                    exact += 1
                    text = texts[(ev["session_id"], ev["message_index"])]
                    mismatched += text[ev["span_start"] : ev["span_end"]] != ev["quote"]

    result = {
        "machine": f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}",
        "files": [str(f) for f in args.files],
        "sessions": len(report.session_ids),
        "messages": report.messages,
        "ingest_seconds": round(ingest_s, 2),
        "ingest_messages_per_s": round(report.messages / ingest_s, 1),
        "pipeline_seconds": round(process_s, 2),
        "pipeline_messages_per_s": round(report.messages / process_s, 1),
        "end_to_end_messages_per_s": round(report.messages / (ingest_s + process_s), 1),
        "entries": len(rows),
        "entries_by_stage": stages,
        "exact_spans_checked": exact,
        "exact_spans_mismatched": mismatched,
    }
    for key, value in result.items():
        print(f"{key:>28}: {value}")
    write_json(
        args.json,
        "ingest",
        {"files": result["files"], "sessions": result["sessions"], "messages": report.messages},
        [
            protocol.result(
                "import (parse, privacy, ingest, projection)",
                "msg/s",
                value=result["ingest_messages_per_s"],
            ),  # fmt: skip
            protocol.result(
                "memory pipeline (embeddings excluded)",
                "msg/s",
                value=result["pipeline_messages_per_s"],
            ),  # fmt: skip
            protocol.result("end to end", "msg/s", value=result["end_to_end_messages_per_s"]),
            protocol.result(
                "exact spans not reproducing their quote",
                "count",
                value=mismatched,
                target="0",
                met=not mismatched,
            ),  # fmt: skip
        ],
    )
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())
