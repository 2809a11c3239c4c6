"""Helpers shared by the pipeline tests: compare derived tables, count events, a fake LLM."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from axiom.store.db import Database

DERIVED = (
    "sessions",
    "messages",
    "entries",
    "citations",
    "message_citations",
    "build_runs",
    "pipeline_metrics",
    "entities",
    "entity_aliases",
    "edges",
    "vector_outbox",
)
VOLATILE = {"created_at", "updated_at", "ingested_at"}

Snapshot = dict[str, list[tuple]]


def _snapshot(db: Database) -> Snapshot:
    """Every derived table, sorted, without the columns that record wall-clock time."""
    out = {}
    with db.read() as conn:
        for table in DERIVED:
            cols = [
                r[0] for r in conn.execute(f"DESCRIBE {table}").fetchall() if r[0] not in VOLATILE
            ]
            out[table] = conn.execute(
                f"SELECT {', '.join(cols)} FROM {table} ORDER BY ALL"
            ).fetchall()
    return out


def _event_count(db: Database) -> int:
    with db.read() as conn:
        return conn.execute("SELECT count(*) FROM events").fetchone()[0]


@pytest.fixture
def snapshot() -> Callable[[Database], Snapshot]:
    return _snapshot


@pytest.fixture
def event_count() -> Callable[[Database], int]:
    return _event_count


class FakeLLM:
    """An OpenAI-compatible endpoint on 127.0.0.1 whose behaviour a test switches:
    `reply` is the assistant's text, `delay` seconds pass before it is sent."""

    def __init__(self) -> None:
        self.reply = '{"entries": []}'
        self.delay = 0.0
        self.calls = 0
        self.url = ""


@pytest.fixture
def fake_llm() -> Iterator[FakeLLM]:
    fake = FakeLLM()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            fake.calls += 1
            time.sleep(fake.delay)
            message = {"role": "assistant", "content": fake.reply}
            body = json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and left

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    fake.url = f"http://127.0.0.1:{server.server_port}"
    yield fake
    server.shutdown()
    server.server_close()
