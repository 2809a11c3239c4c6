"""Pipeline throughput as the store grows: 39 new sessions into a store already holding N
copies of the pipeline bench's input.

    python bench/bench_pipeline_growth.py [N ...] [--quick] [--json OUT]

Sizes N: those given, else 0 3 10 (`--quick`: 0 3).

For each N, a fresh data directory gets N copies of `bench_pipeline.py`'s input (imported
and processed), then the input once more under new session ids, timed: import + pipeline,
embeddings off, as `bench_pipeline.py` measures it. The copies repeat the same texts, so
corroboration and conflict pools grow faster than with real sessions: read it as how the
per-build reads and the checkpoint grow with the store, not as a forecast. `PROF=1` writes
cProfile stats of the timed part to /tmp/growth<N>.prof.
"""

import argparse
import cProfile
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
os.environ["AXIOM_EMBEDDER"] = "none"  # as bench_pipeline.py

import bench_pipeline as bp  # noqa: E402 - bench/bench_pipeline.py, beside this script
from protocol import result, write_json  # noqa: E402 - bench/protocol.py, beside this script

from axiom.config import AxiomConfig  # noqa: E402 - after bench_pipeline put the checkout first
from axiom.ingest.importer import ingest_transcripts  # noqa: E402
from axiom.pipeline.batch import process_sessions  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402


def grown(n: int) -> tuple[float, float]:
    """(messages per second, per CPU second) of the new sessions into a store of `n` copies."""
    tmp = tempfile.mkdtemp()
    os.environ["AXIOM_DATA_DIR"] = tmp
    try:
        db = Database(AxiomConfig.from_env().duckdb_path)
        migrate(db)
        if n:
            old = bp.parsed_copies(bp.DEFAULT, n)
            ingest_transcripts(db, old)
            process_sessions(db, [t.session_id for t in old])
        new = [
            dataclasses.replace(t, session_id=t.session_id + "~new")
            for t in bp.parsed_copies(bp.DEFAULT, 1)
        ]
        messages = sum(len(t.messages) for t in new)
        profiler = cProfile.Profile() if os.environ.get("PROF") else None
        started, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        ingest_transcripts(db, new)
        process_sessions(db, [t.session_id for t in new])
        if profiler:
            profiler.disable()
            profiler.dump_stats(f"/tmp/growth{n}.prof")
        wall, used = time.perf_counter() - started, time.process_time() - cpu
        print(
            f"store with {n} copies ({n * len(new)} sessions): {messages / wall:.0f} msg/s,"
            f" {messages / used:.0f} msg per CPU second (load {os.getloadavg()[0]:.2f})"
        )
        return messages / wall, messages / used
    finally:
        shutil.rmtree(tmp)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int)
    parser.add_argument("--quick", action="store_true", help="sizes 0 and 3")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    sizes = args.sizes or ([0, 3] if args.quick else [0, 3, 10])
    rates = {n: grown(n) for n in sizes}
    rows = [
        result(f"pipeline into a store of {n * 39} sessions", "msg/s", value=round(rates[n][0], 1))
        for n in sizes
    ]
    largest = max(sizes)
    if largest and 0 in rates:
        slower = rates[0][0] / rates[largest][0]
        rows.append(result(f"empty store / {largest * 39} sessions", "x", value=round(slower, 2)))
    write_json(args.json, "pipeline_growth", {"sizes": sizes}, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
