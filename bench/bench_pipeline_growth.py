"""Pipeline throughput as the store grows: 39 new sessions into a store already holding N
copies of the pipeline bench's input.

    python bench/bench_pipeline_growth.py [N ...]        (default: 0 3 10)

For each N, a fresh data directory gets N copies of `bench_pipeline.py`'s input (imported
and processed), then the input once more under new session ids, timed: import + pipeline,
embeddings off, as `bench_pipeline.py` measures it. The copies repeat the same texts, so
corroboration and conflict pools grow faster than with real sessions: read it as how the
per-build reads and the checkpoint grow with the store, not as a forecast. `PROF=1` writes
cProfile stats of the timed part to /tmp/growth<N>.prof.
"""

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

from axiom.config import AxiomConfig  # noqa: E402 - after bench_pipeline put the checkout first
from axiom.ingest.importer import ingest_transcripts  # noqa: E402
from axiom.pipeline.batch import process_sessions  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402


def grown(n: int) -> None:
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
    finally:
        shutil.rmtree(tmp)


def main() -> int:
    for n in [int(a) for a in sys.argv[1:]] or [0, 3, 10]:
        grown(n)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
