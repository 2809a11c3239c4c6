"""Page and search latency on the idle store, then while `python -m axiom import` runs.

    python bench/bench_reads_during_writes.py [--quick] [--json OUT]
        [--seconds 20] [--sessions 300] [--messages 20] [--seed-entries 5000]
        [--snapshots on|off]

Issue 15's target: the p95 of page and search reads while an import runs is at most 3x
their p95 on the idle store, in the same run. In a fresh data dir:

1. seed: `--seed-entries` synthetic entries straight into DuckDB and LanceDB (as
   bench_search.py does, random vectors, FTS index) and 40 sessions through
   `ingest_transcripts`, so pages and searches have something to show;
2. start the real web server (`manage.py runserver`, as bench/soak_db.py does) with the
   configured embedder (e5 by default) and warm it up (the model loads on the first search);
3. idle: for `--seconds`, one client requests in turn `/api/v1/sessions`, `/sessions/?page=N`,
   `/sessions/<id>/` (pages) and `/search/?q=<3-5 words>` (search), over HTTP;
4. import: `python -m axiom import DIR` in another process on `--sessions` generated
   generic-JSON transcripts (`--messages` turns each, with decisions, errors and tasks for
   the extractor), import + memory pipeline as a user runs it; the same client loop runs
   for `--seconds` or until the import ends (the import is stopped then);
5. a probe thread polls the lock file every millisecond (a shared, non-blocking flock on
   `axiom.duckdb.lock`, released at once) and records how long the writer held it
   exclusively at a stretch, and the share of the time it did: what readers wait for;
   it also lists the read snapshots the writer publishes (`axiom.store.snapshots`);
6. before the server starts, the cost of one snapshot copy of the seeded file (ms vs MB).

`--snapshots` sets AXIOM_READ_SNAPSHOTS for the server and the importer (default on), so
the same bench measures reads that wait for the writer (`off`) and reads served from
snapshots (`on`).

Results: page and search p50/p95 idle and during the import, the ratios of the p95s
(target <= 3), the writer's exclusive holds (count, p50/p95/max, share of time), how many
sessions the import stored, and the machine and its load average. Searches include the
query embedding, which on a loaded machine dominates their latency.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
for p in (str(ROOT), str(BENCH)):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench_search import VOCABULARY, synthetic_entries, write_duckdb, write_lance  # noqa: E402
from protocol import result  # noqa: E402 - bench/protocol.py, beside this script
from soak_db import (  # noqa: E402
    SESSION_LINK,
    PageError,
    child_env,
    get,
    machine,
    make_transcript,
    start,
    summarize,
    tail,
    web_server,
)

from axiom.config import AxiomConfig  # noqa: E402
from axiom.ingest.importer import ingest_transcripts  # noqa: E402
from axiom.store import snapshots  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402
from axiom.vectors.config import configured_dim, configured_embedding_version  # noqa: E402
from axiom.vectors.lance_store import LanceStore  # noqa: E402

TARGET_RATIO = 3.0
LINES = [
    "Decision: we will use {a} for the {b} because {c} was too slow.",
    "The {a} job failed with TimeoutError in {b}; fixed by raising the {c} limit.",
    "TODO: migrate {a} to {b} before the {c} release.",
    "I looked at {a} and {b}; the {c} numbers look fine now.",
    "We decided to keep {a} and drop {b} since {c} covers it.",
    "See https://github.com/acme/{a}/issues/{n} for the {b} bug.",
]


def transcript_json(i: int, n_messages: int, rng: random.Random) -> dict[str, Any]:
    """One generic-JSON session whose turns give the rule extractor work to do."""
    words = VOCABULARY[:300]
    messages = []
    for m in range(n_messages):
        line = rng.choice(LINES).format(
            a=rng.choice(words), b=rng.choice(words), c=rng.choice(words), n=rng.randint(1, 999)
        )
        filler = " ".join(rng.choices(words, k=rng.randint(10, 40)))
        messages.append(
            {
                "role": "user" if m % 2 == 0 else "assistant",
                "content": f"{line} {filler}",
                "timestamp": f"2026-02-{1 + i % 28:02d}T{m % 24:02d}:{i % 60:02d}:00Z",
            }
        )
    return {"session_id": f"bench-{i:05d}", "project": "bench", "messages": messages}


def write_transcripts(folder: Path, sessions: int, n_messages: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(5)
    for i in range(sessions):
        doc = transcript_json(i, n_messages, rng)
        (folder / f"bench-{i:05d}.json").write_text(json.dumps(doc), encoding="utf-8")


def seed(data_dir: Path, entries: int) -> None:
    """Entries and vectors for search, 40 sessions for the pages."""
    config = AxiomConfig(data_dir=data_dir)
    db = Database(config.duckdb_path)
    migrate(db)
    rows = synthetic_entries(entries)
    write_duckdb(db, rows)
    write_lance(
        LanceStore(config.lancedb_dir, configured_embedding_version(), configured_dim()), rows
    )
    rng = random.Random(3)
    ingest_transcripts(db, [make_transcript(20, rng) for _ in range(40)], actor="bench")


class LockProbe(threading.Thread):
    """Polls the lock file: how long the writer holds it exclusively at a stretch."""

    def __init__(self, lock_path: Path, every_s: float = 0.001) -> None:
        super().__init__(daemon=True)
        self.lock_path, self.every_s = lock_path, every_s
        self.db_file = lock_path.with_name(lock_path.name.removesuffix(".lock"))
        self.published: set[str] = set()  # snapshot file names seen
        self.holds_ms: list[float] = []
        self.stop_event = threading.Event()
        self.started_at = self.stopped_at = 0.0
        self.held = False

    def run(self) -> None:
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        held_since: float | None = None
        self.started_at = time.perf_counter()
        try:
            while not self.stop_event.is_set():
                now = time.perf_counter()
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    self.held = False
                    if held_since is not None:
                        self.holds_ms.append((now - held_since) * 1000)
                        held_since = None
                except BlockingIOError:
                    held_since = held_since if held_since is not None else now
                    self.held = True
                if int(now * 20) != int((now - self.every_s) * 20):  # every 50 ms
                    self.published.update(s.path.name for s in snapshots.snapshots(self.db_file))
                time.sleep(self.every_s)
        finally:
            os.close(fd)
            self.stopped_at = time.perf_counter()

    def result(self) -> dict[str, Any]:
        span_ms = max(1e-9, (self.stopped_at - self.started_at) * 1000)
        return {
            "exclusive_holds": summarize(self.holds_ms),
            "exclusive_share": round(sum(self.holds_ms) / span_ms, 3),
            "snapshots_published": len(self.published),
        }


class Client:
    """One browsing client: pages and searches in turn, latencies by kind."""

    def __init__(self, base_url: str, seed_: int) -> None:
        self.base_url = base_url
        self.rng = random.Random(seed_)
        self.latencies: dict[str, list[float]] = {"page": [], "search": []}
        self.errors: list[str] = []
        self.session_ids: list[str] = []

    def fetch(self, kind: str, path: str) -> str | None:
        started = time.perf_counter()
        try:
            body = get(self.base_url + path)
        except PageError as exc:
            self.errors.append(f"GET {path}: {exc}")
            return None
        self.latencies[kind].append((time.perf_counter() - started) * 1000)
        return body

    def once(self) -> None:
        self.fetch("page", "/api/v1/sessions?page=1&per_page=25")
        html = self.fetch("page", f"/sessions/?page={self.rng.randint(1, 2)}") or ""
        self.session_ids = SESSION_LINK.findall(html) or self.session_ids
        if self.session_ids:
            self.fetch("page", f"/sessions/{self.rng.choice(self.session_ids)}/")
        words = " ".join(self.rng.choices(VOCABULARY[:2000], k=self.rng.randint(3, 5)))
        self.fetch("search", "/search/?" + urllib.parse.urlencode({"q": words}))

    def loop(self, seconds: float, until: threading.Event | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until and until.is_set()):
            self.once()
        return {kind: summarize(ms) for kind, ms in self.latencies.items()} | {
            "errors": self.errors[:10],
            "error_count": len(self.errors),
        }


def run_import(data_dir: Path, folder: Path, log: Path, seconds: float) -> dict[str, Any]:
    """`python -m axiom import` in its own process while a client reads; probe the lock."""
    env = {k: v for k, v in child_env().items() if not k.startswith("AXIOM_")}
    env.update(
        AXIOM_DATA_DIR=str(data_dir), AXIOM_READ_SNAPSHOTS=os.environ["AXIOM_READ_SNAPSHOTS"]
    )
    argv = [sys.executable, "-m", "axiom", "import", str(folder), "--quiet"]
    probe = LockProbe(data_dir / "axiom.duckdb.lock")
    probe.start()
    importer = start("import", argv, env, log)
    started = time.perf_counter()
    ended = threading.Event()
    threading.Thread(target=lambda: (importer.process.wait(), ended.set()), daemon=True).start()
    return {"importer": importer, "probe": probe, "ended": ended, "started": started}


def copy_cost(data_dir: Path, times: int = 5) -> dict[str, Any]:
    """What one snapshot costs the writer: the copy of the seeded file (under the shared
    lock), by file size; the copies are deleted again."""
    db = Database(data_dir / "axiom.duckdb", use_snapshots=True)
    snapshots.delete_all(db.path)  # any the seeding published
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        published = db.publish_snapshot()
        spent.append((time.perf_counter() - started) * 1000)
        assert published is not None
        snapshots.delete_all(db.path)  # so the next one copies again
    return {"file_mb": round(db.path.stat().st_size / 2**20, 1), "copy_ms": summarize(spent)}


def result_row(metric: str, idle: dict, busy: dict) -> dict[str, Any]:
    ratio = round(busy["p95"] / idle["p95"], 2) if idle.get("p95") else None
    return result(
        f"{metric} p95 during import / idle",
        "x",
        percentiles=(busy.get("p50"), busy.get("p95")),
        reference=idle.get("p95"),
        ratio=ratio,
        target=f"ratio <= {TARGET_RATIO:g}",
        met=ratio is not None and ratio <= TARGET_RATIO,
    )


def summary_row(metric: str, ms: dict[str, Any], value: float) -> dict[str, Any]:
    """A row of milliseconds (a `summarize` dict) with one more figure as its value."""
    return result(metric, "ms", percentiles=(ms.get("p50"), ms.get("p95")), value=value)


def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    data_dir = tmp / "data"
    t0 = time.perf_counter()
    seed(data_dir, args.seed_entries)
    write_transcripts(tmp / "import", args.sessions, args.messages)
    print(f"seeded in {time.perf_counter() - t0:.1f}s", flush=True)
    copy = copy_cost(data_dir)
    print(f"snapshot copy: {json.dumps(copy)}", flush=True)
    with web_server(data_dir, tmp / "web.log") as (base_url, _server):
        client = Client(base_url, 1)
        for _ in range(3):  # warm-up: the model loads on the first search
            client.once()
        client.latencies = {"page": [], "search": []}
        idle = client.loop(args.seconds)
        print(f"idle: {json.dumps(idle)}", flush=True)
        client.latencies = {"page": [], "search": []}
        job = run_import(data_dir, tmp / "import", tmp / "import.log", args.seconds)
        try:
            while not (job["probe"].holds_ms or job["probe"].held or job["ended"].is_set()):
                time.sleep(0.01)  # the importer starts up (imports, parsing) before writing
            busy = client.loop(args.seconds, until=job["ended"])
        finally:
            elapsed = time.perf_counter() - job["started"]
            finished = job["ended"].is_set()  # on its own, before we stop it
            job["importer"].stop(10)
            job["probe"].stop_event.set()
            job["probe"].join()
        print(f"during import: {json.dumps(busy)}", flush=True)
    with Database(data_dir / "axiom.duckdb").read() as conn:
        (sessions,) = conn.execute("SELECT count(*) FROM sessions").fetchone()
    writer = {
        "import_seconds": round(elapsed, 1),
        "import_finished": finished,
        "sessions_stored": int(sessions) - 40,
        **job["probe"].result(),
    }
    print(f"writer: {json.dumps(writer)}", flush=True)
    if finished and job["importer"].exit_code:
        print(f"the import failed:\n{tail(tmp / 'import.log')}", flush=True)
    return {
        "benchmark": "reads_during_writes",
        "params": {
            "seconds": args.seconds,
            "sessions": args.sessions,
            "messages": args.messages,
            "seed_entries": args.seed_entries,
            "read_snapshots": os.environ.get("AXIOM_READ_SNAPSHOTS", "on"),
            "embedder": configured_embedding_version(),
            "machine": machine(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
        "idle": idle,
        "during_import": busy,
        "writer": writer,
        "results": [
            result_row("page", idle["page"], busy["page"]),
            result_row("search", idle["search"], busy["search"]),
            summary_row(
                "writer exclusive hold", writer["exclusive_holds"], writer["exclusive_share"]
            ),
            summary_row(
                "snapshot copy of the seeded file (value: MB)", copy["copy_ms"], copy["file_mb"]
            ),
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 s phases, 60 sessions, 1,000 entries")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--sessions", type=int, default=300)
    ap.add_argument("--messages", type=int, default=20)
    ap.add_argument("--seed-entries", type=int, default=5000)
    ap.add_argument("--snapshots", choices=("on", "off"), default="on")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    os.environ["AXIOM_READ_SNAPSHOTS"] = args.snapshots  # the server and the importer
    if args.quick:
        args.seconds, args.sessions, args.seed_entries = 5, 60, 1000
    with tempfile.TemporaryDirectory(prefix="axiom-rdw-") as tmp:
        out = run(args, Path(tmp))
    print(f"\nload average {out['params']['load_average']}")
    for r in out["results"][:2]:
        print(
            f"{r['metric']}: idle p95 {r['reference']} ms, during {r['p95']} ms,"
            f" ratio {r['ratio']} (target <= {TARGET_RATIO:g}): {'met' if r['met'] else 'NOT met'}"
        )
    holds = out["writer"]["exclusive_holds"]
    print(
        f"writer held the lock {out['writer']['exclusive_share']:.0%} of the time,"
        f" holds p50 {holds.get('p50')} / p95 {holds.get('p95')} / max {holds.get('max')} ms,"
        f" {out['writer']['snapshots_published']} snapshot(s) published"
    )
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
