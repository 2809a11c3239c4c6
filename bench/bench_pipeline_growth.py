"""Pipeline throughput as the store grows: 39 new sessions into a store already holding N
copies of the pipeline bench's input.

    python bench/bench_pipeline_growth.py [N ...] [--quick] [--json OUT]

Sizes N: those given, else 0 3 10 (`--quick`: 0 3).

For each N, a fresh data directory gets N copies of `bench_pipeline.py`'s input (imported
and processed), then the input once more under new session ids, timed: import + pipeline,
embeddings off, as `bench_pipeline.py` measures it. The copies repeat the same texts, so
corroboration and conflict pools grow faster than with real sessions: read it as how the
per-build reads and the checkpoint grow with the store, not as a forecast. `PROF=FILE` writes
cProfile stats of the timed part to the file PROF names. The timed part runs in a fresh
process, so caches warmed by the copies' identical texts do not flatter it.
"""

import argparse
import cProfile
import dataclasses
import json
import os
import shutil
import subprocess
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


def _processed(db: Database, transcripts: list) -> None:
    ingest_transcripts(db, transcripts)
    failed = [r for r in process_sessions(db, [t.session_id for t in transcripts]) if r.error]
    if failed:
        raise SystemExit(f"{len(failed)} session(s) failed: {failed[0].error}")


def fill(n: int) -> None:
    """The store of this data directory with `n` copies of the input, processed."""
    db = Database(AxiomConfig.from_env().duckdb_path)
    migrate(db)
    if n:
        _processed(db, bp.parsed_copies(bp.DEFAULT, n))


def timed() -> None:
    """Import and process the input once more under new ids; print sessions, messages,
    wall and CPU seconds as JSON (a fresh process: no cache warmed by the copies)."""
    db = Database(AxiomConfig.from_env().duckdb_path)
    new = [
        dataclasses.replace(t, session_id=t.session_id + "~new")
        for t in bp.parsed_copies(bp.DEFAULT, 1)
    ]
    profiler = cProfile.Profile() if os.environ.get("PROF") else None
    started, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    _processed(db, new)
    if profiler:
        profiler.disable()
        profiler.dump_stats(os.environ["PROF"])
    wall, used = time.perf_counter() - started, time.process_time() - cpu
    messages = sum(len(t.messages) for t in new)
    print(json.dumps({"sessions": len(new), "messages": messages, "wall": wall, "cpu": used}))


def grown(n: int) -> tuple[int, float, float]:
    """(sessions before, messages per second, per CPU second) of the new sessions into a
    store of `n` copies; each step in its own process."""
    tmp = tempfile.mkdtemp()
    env = {**os.environ, "AXIOM_DATA_DIR": tmp}
    try:
        subprocess.run([sys.executable, __file__, "--fill", str(n)], env=env, check=True)
        out = subprocess.run(
            [sys.executable, __file__, "--timed"], env=env, check=True, capture_output=True
        )
        got = json.loads(out.stdout.decode().strip().splitlines()[-1])
        before = n * got["sessions"]
        rate, per_cpu = got["messages"] / got["wall"], got["messages"] / got["cpu"]
        print(
            f"store with {before} sessions: {rate:.0f} msg/s, {per_cpu:.0f} msg per CPU second"
            f" (load {os.getloadavg()[0]:.2f})"
        )
        return before, rate, per_cpu
    finally:
        shutil.rmtree(tmp)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int)
    parser.add_argument("--quick", action="store_true", help="sizes 0 and 3")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--fill", type=int, help=argparse.SUPPRESS)  # one step (a process)
    parser.add_argument("--timed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.fill is not None:
        fill(args.fill)
        return 0
    if args.timed:
        timed()
        return 0
    sizes = args.sizes or ([0, 3] if args.quick else [0, 3, 10])
    rates = {n: grown(n) for n in sizes}
    rows = [
        result(f"pipeline into a store of {before} sessions", "msg/s", value=round(rate, 1))
        for before, rate, _ in rates.values()
    ]
    largest = max(sizes)
    if largest and 0 in rates:
        slower = rates[0][1] / rates[largest][1]
        rows.append(
            result(f"empty store / {rates[largest][0]} sessions", "x", value=round(slower, 2))
        )
    write_json(args.json, "pipeline_growth", {"sizes": sizes}, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
