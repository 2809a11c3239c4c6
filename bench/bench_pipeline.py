"""Memory pipeline throughput against a bare load of the same messages, in one run.

    python bench/bench_pipeline.py [FILES...] [--repeat N] [--quick] [--json OUT] [--profile OUT]

Default input: the LoCoMo dev conversations (`shared/data/locomo-dev/*.json`, found above
the checkout) and the Claude Code sample transcript in `axiom/samples`. `--repeat N`
imports every session N times under new session ids (`<id>~rN`) for a bigger sample.

Two measurements on fresh DuckDB files in a temporary directory:

* **bare load** (the reference): read each file, `json.loads` it (JSON Lines: each line),
  and insert one row per message (session, index, role, text, timestamp) into a DuckDB
  table through one Arrow insert per file and repetition. It takes milliseconds, so one
  run swings with the machine's load: the reference is the median of `BARE_RUNS` runs.
* **pipeline**: what `axiom import` runs with embeddings off: parse, privacy filter,
  `session_ingested` + the projections of the sessions (`ingest_transcripts`, every
  projector), then `process_sessions` (extraction, alignment, validation, graduation, task
  resolution, citations, every projector). Task vectors are off (`AXIOM_EMBEDDER=none`).
  As in `axiom import`, the files are read and prepared shared with a forked child, the
  first chunk is analysed while the sessions are written (`AnalysisAhead`), and the
  analysis is shared with a child, unless `AXIOM_ANALYSIS_CHILD=0` (`axiom.forking`).

Reports messages/s of each and the ratio bare / pipeline (the issue's target: pipeline
>= 2,000 msg/s and within 100x of the bare load), per wall-clock and per CPU second (the
child's CPU included), and checks every exact evidence span reproduces its quote.
`--profile OUT` writes cProfile stats of the pipeline part (the parent's only).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["AXIOM_EMBEDDER"] = "none"  # embeddings and task vectors are another benchmark

from protocol import cpu_model, locomo_dev, result, write_json  # noqa: E402 - bench/protocol.py, beside this script

DEFAULT = [
    *sorted(locomo_dev(ROOT).glob("*.json")),
    *sorted((ROOT / "axiom" / "samples" / "claude_code").rglob("*.jsonl")),
]


BARE_RUNS = 5  # the bare load takes milliseconds: its median over runs is the reference


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def parsed_copies(files: list[Path], repeat: int) -> list[Any]:
    """Every transcript of `files`, `repeat` times, each copy under its own session id."""
    return [t for n in range(repeat) for path in files for t in parsed_copy((path, n))]


def parsed_copy(job: tuple[Path, int]) -> list[Any]:
    """The transcripts of one file as copy `n` (n > 0: session ids `<id>~rN`)."""
    from axiom.ingest.formats import parse_file

    path, n = job
    transcripts = parse_file(path).transcripts
    if n == 0:
        return list(transcripts)
    return [dataclasses.replace(t, session_id=f"{t.session_id}~r{n}") for t in transcripts]


def prepared_copy(job: tuple[Path, int]) -> list[Any]:
    """`parsed_copy`, each transcript prepared as `axiom import` prepares what it reads."""
    from axiom.ingest.importer import prepare_session

    return [prepare_session(t) for t in parsed_copy(job)]


def bare_load(
    files: list[Path], transcripts: list[Any], repeat: int, path: Path
) -> tuple[float, float]:
    """Wall and CPU seconds to JSON-parse the files `repeat` times and Arrow-insert their
    messages."""
    import duckdb
    import pyarrow as pa

    size = len(transcripts) // repeat  # `parsed_copies` lists them round after round
    by_round = [transcripts[n * size : (n + 1) * size] for n in range(repeat)]
    conn = duckdb.connect(str(path))
    conn.execute(
        "CREATE TABLE messages (session_id VARCHAR, message_index INTEGER, role VARCHAR,"
        " text VARCHAR, timestamp VARCHAR)"
    )
    conn.register("warm", pa.table({"x": [1]}))  # loads DuckDB's Arrow support: not timed
    conn.execute("SELECT count(*) FROM warm").fetchone()
    started, cpu = time.perf_counter(), time.process_time()
    for n in range(repeat):
        for file in files:
            data = file.read_bytes()
            if file.suffix == ".jsonl":
                [json.loads(line) for line in data.splitlines() if line.strip()]
            else:
                json.loads(data)
        rows = [(t.session_id, m) for t in by_round[n] for m in t.messages]
        conn.register(
            "batch",
            pa.table(
                {
                    "session_id": [s for s, _ in rows],
                    "message_index": [m.index for _, m in rows],
                    "role": [m.role for _, m in rows],
                    "text": [m.text for _, m in rows],
                    "timestamp": [m.timestamp for _, m in rows],
                }
            ),
        )
        conn.execute("INSERT INTO messages SELECT * FROM batch")
        conn.unregister("batch")
    elapsed = (time.perf_counter() - started, time.process_time() - cpu)
    conn.close()
    return elapsed


def cpu_seconds() -> float:
    """CPU time of this process and of its children that have ended (the pipeline's
    analysis child, `axiom.pipeline.forked`): what the work cost on every core."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def pipeline_run(files: list[Path], repeat: int) -> tuple[tuple[float, float], int, list[str]]:
    """Wall and CPU seconds (children included) for parse + import + process of every copy;
    messages; ids."""
    from axiom.config import AxiomConfig
    from axiom.forking import Failed, map_shared
    from axiom.heap import batch_work
    from axiom.ingest.importer import ingest_transcripts
    from axiom.pipeline.batch import analysis_ahead, process_sessions
    from axiom.projections import all_projectors
    from axiom.settings import Settings
    from axiom.store.db import Database
    from axiom.store.migrate import migrate

    db = Database(AxiomConfig.from_env().duckdb_path)
    migrate(db)
    db.reuse_write_engine()  # as `axiom import` does
    fork = Settings.from_env().analysis_child
    started, cpu = time.perf_counter(), cpu_seconds()
    # read and prepared as `axiom import` does (`import_paths`): shared with a forked child
    jobs = [(path, n) for n in range(repeat) for path in files]
    with batch_work():  # as `import_paths` reads (the collector's batch schedule)
        read = map_shared(prepared_copy, jobs, fork)
    if errors := [r.error for r in read if isinstance(r, Failed)]:
        raise errors[0]
    sessions = [s for r in read for s in r]
    ahead = analysis_ahead()  # the first chunk analysed during the import's write
    try:
        ingest_transcripts(db, sessions, projectors=all_projectors(), before_write=ahead.offer)
        ids = [s.transcript.session_id for s in sessions]
        reports = process_sessions(db, ids, ahead=ahead)
    finally:
        ahead.close()
    elapsed = (time.perf_counter() - started, cpu_seconds() - cpu)
    failed = [r for r in reports if r.status != "success"]
    if failed:
        raise SystemExit(f"{len(failed)} session(s) failed: {failed[0].error}")
    return elapsed, sum(len(s.transcript.messages) for s in sessions), ids


def check_spans(db_path: Path) -> dict[str, int]:
    """Entries by stage, exact spans checked and how many do not reproduce their quote."""
    import duckdb

    conn = duckdb.connect(str(db_path), read_only=True)
    texts = {
        (s, i): t
        for s, i, t in conn.execute(
            "SELECT session_id, message_index, text FROM messages"
        ).fetchall()
    }
    rows = conn.execute("SELECT stage, evidence_json FROM entries").fetchall()
    conn.close()
    out = {"entries": len(rows), "exact_spans": 0, "mismatched": 0}
    for _stage, evidence in rows:
        for ev in json.loads(evidence):
            if ev.get("method") == "exact":
                out["exact_spans"] += 1
                text = texts[(ev["session_id"], ev["message_index"])]
                out["mismatched"] += text[ev["span_start"] : ev["span_end"]] != ev["quote"]
    return out


def ratio_row(metric: str, bare: float, pipe: float) -> dict[str, Any]:
    ratio = round(bare / pipe, 1)
    return result(
        metric,
        "x",
        value=ratio,
        reference=round(bare, 1),
        ratio=ratio,
        target="<= 100x",
        met=ratio <= 100,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one repetition")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--profile", type=Path, help="write cProfile stats of the pipeline")
    args = parser.parse_args()
    repeat = 1 if args.quick else args.repeat
    load_before = load()

    with tempfile.TemporaryDirectory() as tmp:
        os.environ["AXIOM_DATA_DIR"] = tmp
        transcripts = parsed_copies(args.files, repeat)
        messages = sum(len(t.messages) for t in transcripts)
        runs = [
            bare_load(args.files, transcripts, repeat, Path(tmp) / f"bare{n}.duckdb")
            for n in range(BARE_RUNS)
        ]
        bare_s = (median(r[0] for r in runs), median(r[1] for r in runs))
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        pipe_s, pipe_messages, ids = pipeline_run(args.files, repeat)
        if profiler:
            profiler.disable()
            profiler.dump_stats(str(args.profile))
        from axiom.config import AxiomConfig

        spans = check_spans(AxiomConfig.from_env().duckdb_path)

    assert pipe_messages == messages
    bare, pipe = messages / bare_s[0], messages / pipe_s[0]
    bare_cpu, pipe_cpu = messages / bare_s[1], messages / pipe_s[1]
    params = {
        "files": [str(f) for f in args.files],
        "repeat": repeat,
        "sessions": len(ids),
        "messages": messages,
        "machine": f"{os.cpu_count()} cores, {cpu_model()}, Python {platform.python_version()}",
        "load_before": load_before,
        "load_after": load(),
        **spans,
    }
    results = [
        result("bare load (JSON parse + Arrow insert)", "msg/s", value=round(bare, 1)),
        result(
            "pipeline (import + extract + align + graduate + tasks)",
            "msg/s",
            value=round(pipe, 1),
            target=">= 2000 msg/s",
            met=pipe >= 2000,
        ),
        ratio_row("bare load / pipeline (wall clock)", bare, pipe),
        result("bare load, per CPU second", "msg/s", value=round(bare_cpu, 1)),
        result("pipeline, per CPU second", "msg/s", value=round(pipe_cpu, 1)),
        ratio_row(
            "bare load / pipeline (CPU time: steadier on a loaded machine)", bare_cpu, pipe_cpu
        ),
    ]
    for key, value in params.items():
        print(f"{key:>12}: {value}")
    for row in results:
        met = "" if row["met"] is None else f"  (target {row['target']}: {row['met']})"
        print(f"{row['metric']:>62}: {row['value']} {row['unit']}{met}")
    write_json(args.json, "pipeline", params, results)
    return 1 if spans["mismatched"] else 0


if __name__ == "__main__":
    sys.exit(main())
