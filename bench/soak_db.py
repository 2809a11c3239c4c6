"""Soak the DuckDB lock discipline: one process imports sessions while others read pages.

    python bench/soak_db.py [--seconds 30] [--readers 2] [--messages 20] [--out soak.json]

The writer appends generated sessions (distinct ids, `--messages` each) one transaction at
a time through `ingest_transcripts`, the same path `python -m axiom import` takes. Each
reader renders what the sessions pages need, one `Database.read()` per page view:
`list_sessions` + `get_session` + `list_messages`, in a tight loop (a worst case: a browser
waits for each page). Every role runs in its own OS process and reports its latencies and
any exception; the summary is printed as JSON.

`tests/store/test_concurrency.py` runs the same roles (`write` and `read` sub-commands) and
asserts that nobody saw an error.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from axiom.ingest.importer import ingest_transcripts  # noqa: E402
from axiom.ingest.session_queries import get_session, list_messages, list_sessions  # noqa: E402
from axiom.ingest.transcript import Message, Transcript  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402

WORDS = [
    "decided", "blocked", "lock", "duckdb", "writer", "reader",
    "celery", "redis", "session", "memory", "proof", "span",
]  # fmt: skip


def make_transcript(n_messages: int, rng: random.Random) -> Transcript:
    start = datetime.now(UTC).replace(tzinfo=None)
    messages = tuple(
        Message(
            index=i,
            role="user" if i % 2 == 0 else "assistant",
            text=" ".join(rng.choices(WORDS, k=rng.randint(20, 80))),
            timestamp=(start + timedelta(seconds=i)).isoformat() + "Z",
            uuid=str(uuid.uuid4()),
        )
        for i in range(n_messages)
    )
    return Transcript(
        session_id=str(uuid.uuid4()),
        project="soak",
        source="json",
        messages=messages,
        title=f"soak {start:%H:%M:%S.%f}",
    )


def summarize(latencies_ms: list[float]) -> dict[str, float]:
    if not latencies_ms:
        return {"n": 0}
    ordered = sorted(latencies_ms)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 2)

    return {
        "n": len(ordered),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "p99": pct(0.99),
        "max": round(ordered[-1], 2),
        "mean": round(statistics.fmean(ordered), 2),
    }


def write_loop(db_path: Path, seconds: float, n_messages: int = 20) -> dict[str, Any]:
    db = Database(db_path)
    rng = random.Random(os.getpid())
    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        transcript = make_transcript(n_messages, rng)
        started = time.perf_counter()
        try:
            (result,) = ingest_transcripts(db, [transcript], actor="soak")
            if not result.created:
                errors.append(f"{transcript.session_id}: not created")
        except Exception as exc:  # the point is to count every failure, whatever it is
            errors.append(f"{type(exc).__name__}: {exc}")
        latencies.append((time.perf_counter() - started) * 1000)
    return {
        "role": "writer",
        "sessions_written": len(latencies) - len(errors),
        "errors": errors[:20],
        "error_count": len(errors),
        "latency_ms": summarize(latencies),
        "lock_wait_ms": round(db.lock_wait_ms, 1),
    }


def read_page(db: Database, rng: random.Random) -> int:
    """One sessions page and one session detail, as the viewer renders them; returns the
    number of sessions the page reported."""
    with db.read() as conn:
        first = list_sessions(conn, page=1, per_page=25)
        last_page = max(1, -(-first.total // 25))
        page = list_sessions(conn, page=rng.randint(1, last_page), per_page=25)
        if page.sessions:
            chosen = rng.choice(page.sessions)
            session = get_session(conn, chosen.session_id)
            messages = list_messages(conn, chosen.session_id)
            if session is None or len(messages) != session.message_count:
                raise AssertionError(f"torn read of {chosen.session_id}")
        return first.total


def read_loop(db_path: Path, seconds: float) -> dict[str, Any]:
    db = Database(db_path)
    rng = random.Random(os.getpid() + 1)
    latencies: list[float] = []
    totals: list[int] = []
    errors: list[str] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            totals.append(read_page(db, rng))
        except Exception as exc:  # the point is to count every failure, whatever it is
            errors.append(f"{type(exc).__name__}: {exc}")
        latencies.append((time.perf_counter() - started) * 1000)
    return {
        "role": "reader",
        "pages": len(latencies),
        "first_total": totals[0] if totals else None,
        "last_total": totals[-1] if totals else None,
        "distinct_totals": len(set(totals)),
        "errors": errors[:20],
        "error_count": len(errors),
        "latency_ms": summarize(latencies),
        "lock_wait_ms": round(db.lock_wait_ms, 1),
    }


def machine() -> dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        model = platform.processor()
    return {"cpus": os.cpu_count(), "cpu_model": model, "python": platform.python_version()}


def spawn(role: str, db_path: Path, seconds: float, out: Path, **extra: Any) -> subprocess.Popen:
    args = [
        sys.executable,
        str(Path(__file__).resolve()),
        role,
        str(db_path),
        str(seconds),
        str(out),
    ]
    args += [f"--{k}={v}" for k, v in extra.items()]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(args, env=env, stdin=subprocess.DEVNULL)


def run_soak(directory: Path, seconds: float, readers: int, n_messages: int) -> dict[str, Any]:
    """Writer and `readers` reader processes against a fresh database in `directory`."""
    db = Database(directory / "axiom.duckdb")
    migrate(db)
    outs = [directory / "writer.json"] + [directory / f"reader-{i}.json" for i in range(readers)]
    procs = [spawn("write", db.path, seconds, outs[0], messages=n_messages)]
    procs += [spawn("read", db.path, seconds, out) for out in outs[1:]]
    codes = [p.wait() for p in procs]
    if any(codes):
        raise SystemExit(f"a soak process failed: exit codes {codes}")
    results = [json.loads(out.read_text()) for out in outs]
    return {
        "seconds": seconds,
        "messages_per_session": n_messages,
        "machine": machine(),
        "writer": results[0],
        "readers": results[1:],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="role")
    for role in ("write", "read"):
        p = sub.add_parser(role)
        p.add_argument("db", type=Path)
        p.add_argument("seconds", type=float)
        p.add_argument("out", type=Path)
        p.add_argument("--messages", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    if args.role == "write":
        result = write_loop(args.db, args.seconds, args.messages)
    elif args.role == "read":
        result = read_loop(args.db, args.seconds)
    else:
        with tempfile.TemporaryDirectory(prefix="axiom-soak-") as tmp:
            result = run_soak(Path(tmp), args.seconds, args.readers, args.messages)
        text = json.dumps(result, indent=2)
        print(text)
        if args.out:
            args.out.write_text(text + "\n")
        return 0
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
