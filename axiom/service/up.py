"""`python -m axiom up`: the whole of Axiom on one machine, from one command.

It migrates the database, starts a Redis-compatible broker (unless AXIOM_BROKER_URL names
one), then runs as child processes:

* `worker`: a Celery worker for the `default` queue (ingest and pipeline work);
* `writer`: a second Celery worker that alone consumes the `writer` queue, with
  `--concurrency 1`, so projections and LanceDB have exactly one writer;
* `beat`: Celery beat (its schedule file lives in the data dir);
* `web`: Django's server on 127.0.0.1 only.

It then sends the bundled sample transcript through the queue (`axiom.ingest_path`), waits
until the web answers, prints the address, and runs until Ctrl-C or SIGTERM, when it stops
the children (web first, writer last) and the broker. If any child dies, it stops the rest
and exits non-zero with the end of that child's log; if the broker it started exits, it
starts it again on the same socket and says what was lost. Logs go to `<data dir>/logs/`.

This module starts processes by command line only: it imports neither Django nor Celery.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from axiom.agent.drain import drain
from axiom.config import AxiomConfig
from axiom.forgetting.forget import finish_pending
from axiom.ingest.formats import discover, parse_file
from axiom.ingest.session_queries import get_session
from axiom.service.broker import Broker, BrokerUnavailable, die_with_parent, start_broker
from axiom.settings import Settings
from axiom.store.db import Database
from axiom.store.migrate import migrate

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "axiom" / "samples" / "claude_code"
HOST = "127.0.0.1"
STOP_TIMEOUT = 20.0  # seconds a child gets to finish its current task before SIGKILL


class Stop(Exception):
    """Raised by the SIGTERM handler so shutdown runs the same path as Ctrl-C."""


@dataclass
class Child:
    name: str
    argv: list[str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def start(self, env: dict[str, str]) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.argv,
                cwd=ROOT,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Own process group: a terminal's Ctrl-C reaches only us, and we stop the
                # children in order. die_with_parent covers the launcher being SIGKILLed.
                process_group=0,
                preexec_fn=die_with_parent,
            )

    @property
    def exit_code(self) -> int | None:
        return None if self.process is None else self.process.poll()

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM (Celery's warm shutdown), then SIGKILL the whole group after `timeout`."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=timeout)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # stragglers, e.g. pool children
        self.process.wait()

    def log_tail(self, lines: int = 25) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


def plan(data_dir: Path, port: int, concurrency: int) -> list[Child]:
    """The children in start order (they are stopped in reverse)."""
    logs = data_dir / "logs"
    celery = [sys.executable, "-m", "celery", "-A", "config.celery"]
    worker_flags = ["--without-mingle", "--without-gossip", "--loglevel", "INFO"]
    return [
        Child(
            "writer",
            celery + ["worker", "-Q", "writer", "--concurrency", "1", "-n", "writer@%h"] + worker_flags,
            logs / "writer.log",
        ),
        Child(
            "worker",
            celery + ["worker", "-Q", "default", "--concurrency", str(concurrency), "-n", "default@%h"] + worker_flags,
            logs / "worker.log",
        ),
        Child(
            "beat",
            celery + ["beat", "--schedule", str(data_dir / "celerybeat-schedule"), "--loglevel", "INFO"],
            logs / "beat.log",
        ),
        Child(
            "web",
            # --insecure: serve static/ (vendored htmx, CSS) while DEBUG is off.
            [sys.executable, str(ROOT / "manage.py"), "runserver", f"{HOST}:{port}", "--noreload", "--insecure"],
            logs / "web.log",
        ),
    ]  # fmt: skip


def child_env(data_dir: Path, broker_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        AXIOM_DATA_DIR=str(data_dir),
        AXIOM_BROKER_URL=broker_url,
        DJANGO_SETTINGS_MODULE=env.get("DJANGO_SETTINGS_MODULE", "config.settings"),
        PYTHONUNBUFFERED="1",
    )
    return env


def check_port_free(port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as runserver does
        try:
            probe.bind((HOST, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise SystemExit(
                    f"port {port} on {HOST} is already in use: stop what runs there,"
                    " or choose another port with AXIOM_PORT=8001 (or --port)"
                ) from None
            raise


def web_status(port: int) -> int | None:
    """The HTTP status of `/`, or None while nothing answers."""
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/", timeout=2) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (urllib.error.URLError, OSError):
        return None


class ChildDied(Exception):
    """A child process exited while it should be running."""

    def __init__(self, child: Child) -> None:
        super().__init__(child.name)
        self.child = child


def first_dead(children: list[Child]) -> Child | None:
    return next((c for c in children if c.exit_code is not None), None)


def wait_until(
    check: Callable[[], object], children: list[Child], timeout: float, every: float = 0.2
) -> object:
    """Poll `check` until truthy; raise ChildDied if a child exits meanwhile; None on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = first_dead(children)
        if dead is not None:
            raise ChildDied(dead)
        value = check()
        if value:
            return value
        time.sleep(every)
    return None


def sample_session_ids() -> list[str]:
    files, _ = discover([SAMPLES])
    return [t.session_id for path in files for t in parse_file(path).transcripts]


def send_sample(env: dict[str, str], log: Path) -> None:
    """Queue the bundled sample for the default worker, as any other ingest would be."""
    with open(log, "ab") as out:
        subprocess.run(
            [sys.executable, "-m", "celery", "-A", "config.celery", "call", "axiom.ingest_path",
             "--args", json.dumps([str(SAMPLES)])],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            check=True, timeout=60,
        )  # fmt: skip


def sessions_present(db: Database, session_ids: list[str]) -> bool:
    with db.read() as conn:
        return all(get_session(conn, sid) is not None for sid in session_ids)


def run(port: int, sample: bool = True, concurrency: int = 1, out: TextIO = sys.stdout) -> int:
    def say(message: str) -> None:
        print(message, file=out, flush=True)

    config = AxiomConfig.from_env()
    data_dir = config.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    check_port_free(port)
    db = prepare_store(config, say)
    try:
        broker, broker_url = start_or_use_broker(data_dir, say)
    except BrokerUnavailable as exc:
        say(f"error: {exc}")
        return 1
    env = child_env(data_dir, broker_url)
    children = plan(data_dir, port, concurrency)
    # Explicit handlers: a shell that starts us in the background leaves SIGINT ignored.
    previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        for child in children:
            child.start(env)
            assert child.process is not None
            say(f"started {child.name} (pid {child.process.pid}), log: {child.log_path}")
        if sample:
            import_sample(db, env, data_dir, children, say)
        if not web_answers(port, data_dir, children, say):
            return 1
        say(f"Axiom is running at http://{HOST}:{port}/  (Ctrl-C to stop)")
        watch(children, broker, say)
    except ChildDied as died:
        child = died.child
        say(f"error: {child.name} exited with code {child.exit_code}; end of {child.log_path}:")
        say(child.log_tail())
        return 1
    except BrokerUnavailable as exc:
        say(f"error: the broker stopped and could not be started again: {exc}")
        return 1
    except (KeyboardInterrupt, Stop):
        say("stopping…")
        return 0
    finally:
        for sig in previous:  # a second Ctrl-C must not cut the shutdown short
            signal.signal(sig, signal.SIG_IGN)
        for child in reversed(children):
            child.stop()
        if broker is not None:
            broker.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        say("stopped")
    return 0  # not reached: `watch` returns only by raising


def prepare_store(config: AxiomConfig, say: Callable[[str], None]) -> Database:
    """Migrate the store, finish what an interrupted `forget` left, and take in the hook
    payloads spooled while nothing was running."""
    db = Database(config.duckdb_path)
    applied = migrate(db)
    say(f"data: {config.data_dir} ({len(applied)} migration(s) applied)")
    for finished in finish_pending(db, config):
        say(f"forget {finished.redaction_id}: finished what an interrupted run left")
    drained = drain(db, config.data_dir)
    if drained.payloads:
        say(drained.summary())
    return db


def start_or_use_broker(data_dir: Path, say: Callable[[str], None]) -> tuple[Broker | None, str]:
    """The broker named by AXIOM_BROKER_URL, else an embedded one started here (returned,
    so it is stopped with the rest)."""
    broker_url = Settings.from_env().broker_url
    if broker_url:
        say(f"broker: {broker_url} (from AXIOM_BROKER_URL)")
        return None, broker_url
    broker = start_broker(data_dir / "broker")
    say(f"broker: {broker.kind} (pid {broker.process.pid}) at {broker.url}")
    return broker, broker.url


def import_sample(
    db: Database,
    env: dict[str, str],
    data_dir: Path,
    children: list[Child],
    say: Callable[[str], None],
) -> None:
    """Send the sample session through the queue and wait for it to land."""
    send_sample(env, data_dir / "logs" / "launcher.log")
    sample_ids = sample_session_ids()
    if wait_until(lambda: sessions_present(db, sample_ids), children, 60):
        say(f"sample: imported {SAMPLES.relative_to(ROOT)} through the queue")
    else:
        say("warning: the sample session has not appeared after 60 s; see the worker logs")


def web_answers(
    port: int, data_dir: Path, children: list[Child], say: Callable[[str], None]
) -> bool:
    """Whether the web answered within 60 s (a 5xx answer is a warning, not a failure)."""
    status = wait_until(lambda: web_status(port), children, 60)
    if status is None:
        say(f"error: the web did not answer within 60 s; see {data_dir / 'logs' / 'web.log'}")
        return False
    if status >= 500:
        say(f"warning: / answered HTTP {status}; see {data_dir / 'logs' / 'web.log'}")
    return True


def watch(children: list[Child], broker: Broker | None, say: Callable[[str], None]) -> None:
    """Until stopped: a child that exits ends the run (`ChildDied`); the broker is restarted."""
    while True:
        dead = first_dead(children)
        if dead is not None:
            raise ChildDied(dead)
        if broker is not None and broker.process.poll() is not None:
            restart_broker(broker, say)
        time.sleep(0.5)


def restart_broker(broker: Broker, say: Callable[[str], None]) -> None:
    """Start the broker that exited again on its socket: the workers, beat and the web
    reconnect to it by themselves. What it held is gone (it keeps nothing on disk)."""
    code = broker.process.returncode
    broker.restart()
    say(
        f"warning: the broker exited (code {code}); started it again (pid {broker.process.pid})."
        " The work queued in it is lost: send any import that was running again (it stores"
        " nothing twice); beat's periodic project and drain catch the rest up."
    )


def _raise_stop(signum: int, frame: object) -> None:
    raise Stop


def cmd_up(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    return run(
        port=settings.port if args.port is None else args.port,
        sample=not args.no_sample,
        concurrency=settings.worker_concurrency if args.concurrency is None else args.concurrency,
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("up", help="run everything locally: broker, workers, beat and the web")
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help="web port on 127.0.0.1 (default: AXIOM_PORT or 8000)",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="processes of the default-queue worker (default: AXIOM_WORKER_CONCURRENCY or 1);"
        " the writer always has exactly one",
    )
    p.add_argument("--no-sample", action="store_true", help="do not import the bundled sample")
    p.set_defaults(func=cmd_up)
