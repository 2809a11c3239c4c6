"""Soak: concurrent ingest, page reads, searches and hook payloads against the real web
server, counting every error and comparing read latency under load with the idle store.

    python bench/soak.py                  # 10 minutes (on demand, not in CI)
    python bench/soak.py --minutes 30
    python bench/soak.py --quick          # 20 seconds (bench/run)
    python bench/soak.py --json out.json  # the bench protocol's JSON
    python bench/soak.py --stack web      # the web alone: hook imports in the request

On a fresh data dir (`AXIOM_EMBEDDER` from the environment, default `none`: full text, so
the web loads no model; AXIOM_IMPORT_ROOTS is the soak's transcript folder) it imports a
seed of sessions, then starts `python -m axiom up --no-sample` (broker, workers, beat, web:
a hook's transcript is queued for the worker, which imports it and runs the memory
pipeline over it) or, with `--stack web`, `manage.py runserver` alone as `axiom up` runs
it (no broker: the web imports a hook's transcript in the request), then:

1. idle, a sixth of the time (at least 5 s): one reader alone — API session list, a page of
   the sessions list, one session page, a search (`/api/v1/search`) — read latency idle;
2. load, the rest: the same reader, plus a writer process appending sessions
   (`ingest_transcripts`, one transaction each) and a hook client posting Claude Code hook
   payloads to `POST /api/v1/hooks` with the service's API token (a UserPromptSubmit, which
   searches for context, then a Stop, which imports the transcript it names; one pair a
   second).

Errors (must be zero): any answer other than 200, a connection error, a torn session page,
a failed write, a traceback in the server's log (under `up`, also a traceback or ERROR line
in the workers' and beat's logs), a hook session not stored within BACKLOG_WAIT_S of the end. Reported: read p95 idle and under load and
their ratio (target: within 3x).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol import p95, result, write_json  # noqa: E402 - beside this script
from soak_db import (  # noqa: E402
    HOST,
    STOP_TIMEOUT,
    Reader,
    check_server_log,
    child_env,
    free_port,
    make_transcript,
    spawn_role,
    start,
    summarize,
    wait_until_up,
)

from axiom.ingest.importer import ingest_transcripts  # noqa: E402
from axiom.outbox.service import configured_writer  # noqa: E402
from axiom.projections import project_all  # noqa: E402
from axiom.store.api_token import ensure_api_token  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402

MESSAGES = 20
# A Stop and a UserPromptSubmit this often: busier than a person with two Claude Code
# sessions open (one turn each every two seconds), and a rate the worker can keep up with.
HOOK_PAIRS_PER_SECOND = 1.0
BACKLOG_WAIT_S = 300  # how long the worker gets after the load to store every hook session
UP_STOP_TIMEOUT = 120  # `up` stops web, beat and both workers in turn, each warm
QUERIES = ("database", "decided", "deploy", "migration", "tests", "retry logic")


class SearchingReader(Reader):
    """soak_db's reader (pages) plus one search per round."""

    def browse_once(self) -> None:
        super().browse_once()
        query = urllib.parse.quote(self.rng.choice(QUERIES))
        self.latencies.setdefault("search", [])
        self.fetch("search", f"/api/v1/search?q={query}&limit=10")

    def reads(self) -> list[float]:
        return [ms for kind in self.latencies.values() for ms in kind]


def read_for(base_url: str, seconds: float) -> SearchingReader:
    reader = SearchingReader(base_url, MESSAGES, seed=1)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reader.browse_once()
    return reader


class HookClient:
    """Posts hook payloads the way `axiom.hooks` does when the service is up."""

    def __init__(self, base_url: str, token: str, folder: Path) -> None:
        self.url, self.token, self.folder = f"{base_url}/api/v1/hooks", token, folder
        self.sent, self.errors, self.latencies = 0, [], []
        self.stopped: list[str] = []  # sessions whose Stop the service accepted
        self.next_pair = 0.0
        self.stop = threading.Event()

    def post(self, event: str, payload: dict[str, Any]) -> bool:
        body = json.dumps({"event": event, "payload": payload}).encode()
        request = urllib.request.Request(self.url, body, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Bearer {self.token}")
        started = time.perf_counter()
        ok = False
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()
                ok = True
        except Exception as exc:  # every failure counts, whatever it is
            self.errors.append(f"{event}: {type(exc).__name__}: {exc}")
        self.latencies.append((time.perf_counter() - started) * 1000)
        self.sent += 1
        return ok

    def run(self) -> None:
        n = 0
        while not self.stop.wait(max(0.0, self.next_pair - time.monotonic())):
            self.next_pair = time.monotonic() + 1 / HOOK_PAIRS_PER_SECOND
            sid = f"hook-soak-{n}"
            path = self.folder / f"{sid}.jsonl"
            path.write_text(transcript_lines(sid))
            common = {"session_id": sid, "transcript_path": str(path), "cwd": str(self.folder)}
            self.post("UserPromptSubmit", {**common, "hook_event_name": "UserPromptSubmit", "prompt": "which database holds the events?"})  # fmt: skip
            if self.post("Stop", {**common, "hook_event_name": "Stop"}):
                self.stopped.append(sid)
            n += 1


def transcript_lines(sid: str) -> str:
    """A Claude Code transcript of MESSAGES turns (the reader checks every session shows all)."""
    lines = []
    for i in range(MESSAGES):
        role = "user" if i % 2 == 0 else "assistant"
        lines.append(json.dumps({"type": role, "sessionId": sid, "uuid": f"{sid}-{i}", "parentUuid": f"{sid}-{i - 1}" if i else None, "timestamp": f"2025-10-01T10:00:{i:02d}Z", "message": {"role": role, "content": f"{sid} turn {i}: we decided the database holds the events."}}))  # fmt: skip
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def axiom_up(data_dir: Path, log: Path) -> Iterator[str]:
    """`python -m axiom up --no-sample` with this process's AXIOM_* settings; its children
    log to `<data dir>/logs/`."""
    port = free_port()
    env = {**own_broker_env(), "AXIOM_DATA_DIR": str(data_dir)}
    argv = [sys.executable, "-m", "axiom", "up", "--no-sample", "--port", str(port)]
    with serving("up", argv, env, log, port, UP_STOP_TIMEOUT) as base_url:
        yield base_url


@contextlib.contextmanager
def serving(
    name: str, argv: list[str], env: dict[str, str], log: Path, port: int, stop_timeout: float
) -> Iterator[str]:
    """Start `argv`, yield its base URL once it answers, stop it on the way out."""
    child = start(name, argv, env, log)
    try:
        base_url = f"http://{HOST}:{port}"
        wait_until_up(base_url, child, log)
        yield base_url
    finally:
        child.stop(stop_timeout)


def own_broker_env() -> dict[str, str]:
    """This process's environment without a broker: `up` starts its own, and the web alone
    must not hand hooks to a broker some other Axiom listens on."""
    return {k: v for k, v in child_env().items() if k not in ("AXIOM_BROKER_URL", "AXIOM_RESULT_BACKEND")}  # fmt: skip


def launcher_errors(log: Path) -> list[str]:
    """`up`'s own complaints: an `error:` line, or a broker it had to start again."""
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return [f"up: {line}" for line in text.splitlines() if line.startswith("error:") or line.startswith("warning: the broker exited")]  # fmt: skip


def worker_log_errors(logs: Path) -> list[str]:
    """Tracebacks and ERROR lines in the logs of `up`'s workers and beat."""
    found = []
    for name in ("worker.log", "writer.log", "beat.log"):
        path = logs / name
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        found += [f"{name}: {line}" for line in text.splitlines() if "Traceback" in line or "ERROR/" in line]  # fmt: skip
    return found


def missing_sessions(db: Database, session_ids: list[str], wait_s: float) -> list[str]:
    """The hook sessions not (yet) stored after waiting up to `wait_s` for the worker."""
    deadline = time.monotonic() + wait_s
    while True:
        with db.read() as conn:
            stored = {r[0] for r in conn.execute("SELECT session_id FROM sessions").fetchall()}
        missing = [sid for sid in session_ids if sid not in stored]
        if not missing or time.monotonic() > deadline:
            return missing
        time.sleep(1)


@contextlib.contextmanager
def web_server(data_dir: Path, log: Path) -> Iterator[str]:
    """`manage.py runserver` as `axiom up` runs it, with this process's AXIOM_* settings
    (soak_db's server drops them; here the embedder and import roots matter)."""
    port = free_port()
    env = {**own_broker_env(), "AXIOM_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "config.settings"}  # fmt: skip
    argv = [sys.executable, str(ROOT / "manage.py"), "runserver", f"{HOST}:{port}", "--noreload"]
    with serving("web", argv, env, log, port, STOP_TIMEOUT) as base_url:
        yield base_url


def soak(directory: Path, seconds: float, seed_sessions: int, stack: str) -> dict[str, Any]:
    data_dir, folder = directory / "data", directory / "transcripts"
    folder.mkdir(parents=True)
    os.environ.setdefault("AXIOM_EMBEDDER", "none")
    os.environ["AXIOM_IMPORT_ROOTS"] = str(folder)
    os.environ["AXIOM_DATA_DIR"] = str(data_dir)  # for the outbox writer below
    db = Database(data_dir / "axiom.duckdb")
    migrate(db)
    rng = random.Random(7)
    ingest_transcripts(db, [make_transcript(MESSAGES, rng) for _ in range(seed_sessions)])
    project_all(db)
    configured_writer(db).drain()  # the search index the web reads
    token = ensure_api_token(data_dir)
    idle_s = max(5.0, seconds / 6)
    log = directory / ("up.log" if stack == "up" else "web.log")
    server_cm = axiom_up(data_dir, log) if stack == "up" else web_server(data_dir, log)
    with server_cm as base_url:
        read_for(base_url, 2)  # warm-up: first requests import and cache
        idle = read_for(base_url, idle_s)
        writer_out = directory / "writer.json"
        writer = spawn_role("write", str(db.path), seconds - idle_s, writer_out, messages=MESSAGES)
        hooks = HookClient(base_url, token, folder)
        thread = threading.Thread(target=hooks.run, daemon=True)
        thread.start()
        loaded = read_for(base_url, seconds - idle_s)
        hooks.stop.set()
        thread.join(120)
        code = writer.process.wait(120) if writer.process else 1  # type: ignore[union-attr]
        writer.stop(10)
        waited = time.monotonic()
        lost = missing_sessions(db, hooks.stopped, BACKLOG_WAIT_S if stack == "up" else 0)
        backlog_wait_s = time.monotonic() - waited
    written = json.loads(writer_out.read_text()) if code == 0 else {"error_count": 1, "errors": [f"writer exit {code}"]}  # fmt: skip
    server = check_server_log(data_dir / "logs" / "web.log" if stack == "up" else log)
    server_errors = server["traceback_count"] + server["non_200_count"]
    workers = worker_log_errors(data_dir / "logs") + launcher_errors(log) if stack == "up" else []
    lost_errors = [f"hook session {sid} not stored" for sid in lost]
    errors = idle.errors + loaded.errors + hooks.errors + written.get("errors", []) + workers + lost_errors  # fmt: skip
    count = len(idle.errors) + len(loaded.errors) + len(hooks.errors) + written["error_count"] + server_errors + len(workers) + len(lost_errors)  # fmt: skip
    return {
        "seconds": seconds,
        "idle_s": idle_s,
        "idle": idle.reads(),
        "load": loaded.reads(),
        "search_idle": idle.latencies.get("search", []),
        "search_load": loaded.latencies.get("search", []),
        "hooks": {
            "sent": hooks.sent,
            "stops_accepted": len(hooks.stopped),
            "latency_ms": summarize(hooks.latencies),
            "backlog_wait_s": round(backlog_wait_s, 1),
        },
        "writer": {k: written.get(k) for k in ("sessions_written", "latency_ms", "error_count")},
        "server": server,
        "error_count": count,
        "errors": errors[:20],
    }


def protocol_results(out: dict[str, Any]) -> list[dict[str, Any]]:
    idle_p95, load_p95 = p95(out["idle"]), p95(out["load"])
    ratio = load_p95 / idle_p95
    return [
        result(
            "errors", "count", value=out["error_count"], target="0", met=out["error_count"] == 0
        ),  # fmt: skip
        result("read idle", "ms", out["idle"]),
        result(
            "read under load (p95 vs idle p95)",
            "ms",
            out["load"],
            reference=idle_p95,
            ratio=ratio,
            target="ratio <= 3",
            met=ratio <= 3,
        ),  # fmt: skip
        result(
            "search under load (p95 vs idle p95)",
            "ms",
            out["search_load"],
            reference=p95(out["search_idle"]),
            ratio=p95(out["search_load"]) / p95(out["search_idle"]),
        ),  # fmt: skip
        result("sessions written under load", "sessions", value=out["writer"]["sessions_written"]),
        result("hook payloads posted under load", "payloads", value=out["hooks"]["sent"]),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true", help="20 seconds")
    parser.add_argument("--seed-sessions", type=int, default=50)
    parser.add_argument("--json", type=Path, help="write the bench protocol's JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the data dir and the logs")
    parser.add_argument(
        "--stack",
        choices=("up", "web"),
        default="up",
        help="`axiom up` (default: hook imports queued for the worker) or the web alone",
    )
    args = parser.parse_args(argv)
    seconds = 20.0 if args.quick else args.minutes * 60
    load_before = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="axiom-soak-")
    try:
        out = soak(Path(tmp), seconds, 10 if args.quick else args.seed_sessions, args.stack)
    finally:
        if args.keep:
            print(f"data dir and logs: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    results = protocol_results(out)
    for r in results:
        print(f"{r['metric']:<40} median {r['median']}  p95 {r['p95']}  value {r['value']}  ratio {r['ratio']}  met {r['met']}")  # fmt: skip
    for error in out["errors"]:
        print("error:", error)
    print(f"load average before {load_before}, after {os.getloadavg()} on {os.cpu_count()} cores")
    params = {"stack": args.stack, "seconds": seconds, "idle_seconds": out["idle_s"], "embedder": os.environ["AXIOM_EMBEDDER"], "read_snapshots": os.environ.get("AXIOM_READ_SNAPSHOTS", "on"), "hooks": out["hooks"], "writer": out["writer"]}  # fmt: skip
    write_json(args.json, "soak", params, results)
    return 0 if out["error_count"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
