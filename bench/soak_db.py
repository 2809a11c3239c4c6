"""Soak the DuckDB lock discipline: one process imports sessions while others read pages.

    python bench/soak_db.py [--seconds 30] [--readers 2] [--messages 20] [--out soak.json]

It starts the real web server (`manage.py runserver 127.0.0.1:<free port> --noreload`,
`DJANGO_SETTINGS_MODULE=config.settings`, `AXIOM_DATA_DIR` = a fresh data dir) and waits
until it answers. Then, each in its own OS process:

* the writer appends generated sessions (distinct ids, `--messages` each) one transaction
  at a time through `ingest_transcripts`, the same path `python -m axiom import` takes;
* each reader requests pages over HTTP in a tight loop (a worst case: a browser waits for
  each page): `GET /api/v1/sessions` (the total), `GET /sessions/?page=<random>` and
  `GET /sessions/<id>/` of a session that list showed. Any status but 200 (redirects
  included), connection error, timeout, or a detail page without all of its messages
  counts as an error; every request's latency is recorded.

At the end every process is stopped (also when something fails), the server's log is
checked for tracebacks and non-200 request lines, and the summary is printed as JSON on
stdout, with one line in the README table's format on stderr. The exit code is 1 when
anything saw an error.

`tests/store/test_concurrency.py` runs `run_soak` and asserts that nobody saw an error.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from axiom.ingest.importer import ingest_transcripts  # noqa: E402
from axiom.ingest.transcript import Message, Transcript  # noqa: E402
from axiom.service.up import Child  # noqa: E402
from axiom.store.db import Database  # noqa: E402
from axiom.store.migrate import migrate  # noqa: E402

HOST = "127.0.0.1"
REQUEST_TIMEOUT = 60.0  # seconds; a page slower than this is an error
START_TIMEOUT = 60.0  # seconds for runserver to answer
STOP_TIMEOUT = 10.0  # seconds a process gets after SIGTERM before its group is SIGKILLed

WORDS = [
    "decided", "blocked", "lock", "duckdb", "writer", "reader",
    "celery", "redis", "session", "memory", "proof", "span",
]  # fmt: skip

SESSION_LINK = re.compile(r'href="/sessions/([^"?]+)/"')
MESSAGE_ITEM = re.compile(r'<li id="m-\d+"')
REQUEST_LINE = re.compile(r'"[A-Z]+ (\S+) HTTP/[\d.]+" (\d{3}) ')


class SoakError(Exception):
    """The soak could not run (the server did not start, a role process failed)."""


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


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect (e.g. to the login page) is an answer other than the page: an error."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# No proxy: an http_proxy in the environment must not carry requests for 127.0.0.1.
_opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


class PageError(Exception):
    pass


def get(url: str) -> str:
    """The body of a 200 answer to GET `url`; PageError for any other outcome."""
    try:
        with _opener.open(url, timeout=REQUEST_TIMEOUT) as response:
            body = response.read().decode("utf-8")
            status = response.status
    except urllib.error.HTTPError as exc:
        raise PageError(f"HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:  # refused, reset, timed out
        raise PageError(f"{type(exc).__name__}: {exc}") from None
    if status != 200:
        raise PageError(f"HTTP {status}")
    return body


class Reader:
    """One browsing reader: every request's latency by kind, and every error."""

    def __init__(self, base_url: str, n_messages: int, seed: int) -> None:
        self.base_url = base_url.rstrip("/")
        self.n_messages = n_messages
        self.rng = random.Random(seed)
        self.latencies: dict[str, list[float]] = {"api": [], "list": [], "detail": []}
        self.errors: list[str] = []
        self.totals: list[int] = []

    def fetch(self, kind: str, path: str) -> str | None:
        started = time.perf_counter()
        try:
            return get(self.base_url + path)
        except PageError as exc:
            self.errors.append(f"GET {path}: {exc}")
            return None
        finally:
            self.latencies[kind].append((time.perf_counter() - started) * 1000)

    def browse_once(self) -> None:
        """The total from the API, a random page of the list, one session it showed."""
        body = self.fetch("api", "/api/v1/sessions?page=1&per_page=25")
        if body is None:
            return
        total = int(json.loads(body)["total"])
        self.totals.append(total)
        page = self.rng.randint(1, max(1, -(-total // 25)))
        html = self.fetch("list", f"/sessions/?page={page}")
        ids = SESSION_LINK.findall(html or "")
        if not ids:
            return
        session_id = urllib.parse.unquote(self.rng.choice(ids))
        detail = self.fetch("detail", f"/sessions/{urllib.parse.quote(session_id)}/")
        if detail is not None:
            shown = len(MESSAGE_ITEM.findall(detail))
            if shown != self.n_messages:
                self.errors.append(
                    f"torn read of {session_id}: {shown} of {self.n_messages} messages shown"
                )

    def result(self) -> dict[str, Any]:
        every = [ms for kind in self.latencies.values() for ms in kind]
        return {
            "role": "reader",
            "pages": len(every),
            "first_total": self.totals[0] if self.totals else None,
            "last_total": self.totals[-1] if self.totals else None,
            "distinct_totals": len(set(self.totals)),
            "errors": self.errors[:20],
            "error_count": len(self.errors),
            "latency_ms": summarize(every),
            "latency_ms_by_page": {kind: summarize(ms) for kind, ms in self.latencies.items()},
        }


def read_loop(base_url: str, seconds: float, n_messages: int = 20) -> dict[str, Any]:
    reader = Reader(base_url, n_messages, seed=os.getpid() + 1)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reader.browse_once()
    return reader.result()


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def is_listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((HOST, port)) == 0


def child_env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "PYTHONUNBUFFERED": "1",
    }


def start(name: str, argv: list[str], env: dict[str, str], log: Path) -> Child:
    """A child as `axiom up` starts its own: own process group, output to `log`, and it
    dies with us even if we are SIGKILLed; `Child.stop` is SIGTERM, then SIGKILL."""
    child = Child(name, argv, log)
    child.start(env)
    return child


def start_server(data_dir: Path, port: int, log: Path) -> Child:
    """`manage.py runserver` on `port` for `data_dir`, as `axiom up` runs the web."""
    env = {k: v for k, v in child_env().items() if not k.startswith("AXIOM_")}
    env.update(
        AXIOM_DATA_DIR=str(data_dir),
        AXIOM_DEBUG="0",
        DJANGO_SETTINGS_MODULE="config.settings",
    )
    argv = [sys.executable, str(ROOT / "manage.py"), "runserver", f"{HOST}:{port}", "--noreload"]
    return start("web", argv, env, log)


def running(child: Child) -> subprocess.Popen[bytes]:
    assert child.process is not None, f"{child.name} was never started"
    return child.process


def pid(child: Child) -> int:
    return running(child).pid


def wait_until_up(base_url: str, server: Child, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.exit_code is not None:
            raise SoakError(f"runserver exited with {server.exit_code}:\n{tail(log)}")
        with contextlib.suppress(PageError):
            get(f"{base_url}/api/v1/health")
            return
        time.sleep(0.2)
    raise SoakError(f"runserver did not answer within {START_TIMEOUT:.0f} s:\n{tail(log)}")


def tail(log: Path, lines: int = 40) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def check_server_log(log: Path) -> dict[str, Any]:
    """Tracebacks and request lines whose status is not 200 in the server's log."""
    text = log.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    tracebacks = [
        "\n".join(lines[i : i + 30]) for i, line in enumerate(lines) if "Traceback" in line
    ]
    requests = REQUEST_LINE.findall(text)
    not_ok = [f"{status} {path}" for path, status in requests if status != "200"]
    return {
        "log": str(log),
        "requests": len(requests),
        "tracebacks": tracebacks[:5],
        "traceback_count": len(tracebacks),
        "non_200": not_ok[:20],
        "non_200_count": len(not_ok),
    }


def spawn_role(role: str, target: str, seconds: float, out: Path, **extra: Any) -> Child:
    argv = [sys.executable, str(Path(__file__).resolve()), role, target, str(seconds), str(out)]
    argv += [f"--{k}={v}" for k, v in extra.items()]
    return start(role, argv, child_env(), out.with_suffix(".log"))


@contextlib.contextmanager
def web_server(data_dir: Path, log: Path) -> Iterator[tuple[str, Child]]:
    """The running server's base URL; stopped on the way out, whatever happened."""
    port = free_port()
    server = start_server(data_dir, port, log)
    try:
        base_url = f"http://{HOST}:{port}"
        wait_until_up(base_url, server, log)
        yield base_url, server
    finally:
        server.stop(STOP_TIMEOUT)


def run_soak(
    directory: Path,
    seconds: float,
    readers: int,
    n_messages: int,
    on_started: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """The web server on a fresh data dir `directory`, one writer process and `readers`
    reader processes requesting pages from it; every process is stopped before this
    returns or raises. `on_started` (tests) sees the server's and roles' pids and port."""
    directory.mkdir(parents=True, exist_ok=True)
    db = Database(directory / "axiom.duckdb")
    migrate(db)
    log = directory / "web.log"
    outs = [directory / "writer.json"] + [directory / f"reader-{i}.json" for i in range(readers)]
    procs: list[Child] = []
    with web_server(directory, log) as (base_url, server):
        try:
            procs.append(spawn_role("write", str(db.path), seconds, outs[0], messages=n_messages))
            procs += [
                spawn_role("read", base_url, seconds, out, messages=n_messages) for out in outs[1:]
            ]
            if on_started is not None:
                on_started(
                    {"server": pid(server), "roles": [pid(p) for p in procs], "url": base_url}
                )
            codes = [running(p).wait(seconds + 2 * REQUEST_TIMEOUT) for p in procs]
        finally:
            for proc in procs:
                proc.stop(STOP_TIMEOUT)
        if any(codes):
            logs = "\n".join(
                f"{o.with_suffix('.log')}:\n{tail(o.with_suffix('.log'))}" for o in outs
            )
            raise SoakError(f"a soak process failed: exit codes {codes}\n{logs}")
    results = [json.loads(out.read_text()) for out in outs]
    return {
        "seconds": seconds,
        "messages_per_session": n_messages,
        "machine": machine(),
        "server": {"url": base_url, "pid": pid(server), **check_server_log(log)},
        "writer": results[0],
        "readers": results[1:],
    }


def error_count(result: dict[str, Any]) -> int:
    server = result["server"]
    return (
        result["writer"]["error_count"]
        + sum(r["error_count"] for r in result["readers"])
        + server["traceback_count"]
        + server["non_200_count"]
    )


def table_row(result: dict[str, Any]) -> str:
    """The README table's row: readers | sessions | write p50/p95/max | pages | page p50/p95/max | errors."""

    def span(values: list[float]) -> str:
        low, high = round(min(values)), round(max(values))
        return f"{low}" if low == high else f"{low}–{high}"

    w = result["writer"]["latency_ms"]
    readers = [r["latency_ms"] for r in result["readers"]]
    pages = " + ".join(str(r["pages"]) for r in result["readers"])
    read = " / ".join(span([r[k] for r in readers]) for k in ("p50", "p95")) if readers else "—"
    top = max((r["max"] for r in readers), default=0)
    return (
        f"| {len(readers)} | {result['writer']['sessions_written']}"
        f" | {w['p50']:.0f} / {w['p95']:.0f} / {w['max']:.0f} ms | {pages}"
        f" | {read} / {top:.0f} ms | {error_count(result)} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="role")
    for role, target in (("write", "the DuckDB file"), ("read", "the server's base URL")):
        p = sub.add_parser(role)
        p.add_argument("target", help=target)
        p.add_argument("seconds", type=float)
        p.add_argument("out", type=Path)
        p.add_argument("--messages", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)

    if args.role == "write":
        result = write_loop(Path(args.target), args.seconds, args.messages)
    elif args.role == "read":
        result = read_loop(args.target, args.seconds, args.messages)
    else:
        with tempfile.TemporaryDirectory(prefix="axiom-soak-") as tmp:
            result = run_soak(Path(tmp), args.seconds, args.readers, args.messages)
        text = json.dumps(result, indent=2)
        print(text)
        if args.out:
            args.out.write_text(text + "\n")
        print(table_row(result), file=sys.stderr)
        return 1 if error_count(result) else 0
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
