"""Soak: a writer process imports sessions while reader processes request pages over HTTP
from the real web server (`manage.py runserver`), on one real DuckDB file.

Everything runs through `run_soak` in `bench/soak_db.py` (also runnable on its own). The
figures are printed to the terminal even without `-s`, attached to the test report with
`record_property`, and written to `soak.json` in the test's tmp dir. `AXIOM_SOAK_SECONDS`
shortens or lengthens the main run (20 s by default).
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from axiom.store.db import Database

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECONDS = float(os.environ.get("AXIOM_SOAK_SECONDS", "20"))


def load_soak() -> ModuleType:
    spec = importlib.util.spec_from_file_location("soak_db", ROOT / "bench" / "soak_db.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


soak = load_soak()


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class Started:
    """What `run_soak` started, as its `on_started` hook saw it."""

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    def __call__(self, seen: dict[str, Any]) -> None:
        self.seen = seen

    def assert_all_stopped(self) -> None:
        pids = [self.seen["server"], *self.seen["roles"]]
        assert [pid for pid in pids if is_running(pid)] == []
        port = int(self.seen["url"].rsplit(":", 1)[1])
        assert not soak.is_listening(port), f"something still listens on {port}"


def report(result: dict[str, Any], tmp_path: Path, capsys, record_property) -> None:
    (tmp_path / "soak.json").write_text(json.dumps(result, indent=2))
    readers = result["readers"]
    record_property("soak_seconds", result["seconds"])
    record_property("write_latency_ms", json.dumps(result["writer"]["latency_ms"]))
    record_property("page_latency_ms", json.dumps([r["latency_ms"] for r in readers]))
    with capsys.disabled():
        print(
            f"\nsoak {result['seconds']:.0f}s, {len(readers)} reader(s) over HTTP:"
            f" {result['writer']['sessions_written']} sessions written,"
            f" write ms {result['writer']['latency_ms']};"
            f" {[r['pages'] for r in readers]} pages read,"
            f" page ms {[r['latency_ms'] for r in readers]};"
            f" by page {[r['latency_ms_by_page'] for r in readers]}"
            f"\n  {soak.table_row(result)}  -> {tmp_path / 'soak.json'}"
        )


def assert_no_errors(result: dict[str, Any]) -> None:
    writer, readers, server = result["writer"], result["readers"], result["server"]
    assert writer["error_count"] == 0, writer["errors"]
    assert [r["error_count"] for r in readers] == [0] * len(readers), [r["errors"] for r in readers]
    assert server["traceback_count"] == 0, "\n\n".join(server["tracebacks"])
    assert server["non_200_count"] == 0, server["non_200"]
    # every request a reader made reached the server (plus the start-up health check)
    assert server["requests"] == 1 + sum(r["pages"] for r in readers)


def test_it_serves_pages_without_errors_while_a_writer_imports(
    db: Database,
    tmp_path: Path,
    capsys,
    record_property,
) -> None:
    started = Started()
    began = time.monotonic()
    result = soak.run_soak(db.path.parent, SECONDS, 1, 20, on_started=started)
    report(result, tmp_path, capsys, record_property)

    assert time.monotonic() - began >= SECONDS
    started.assert_all_stopped()
    assert_no_errors(result)
    (reader,) = result["readers"]
    assert reader["latency_ms_by_page"]["detail"]["n"] > 0  # session pages were read, too
    assert reader["last_total"] > reader["first_total"]  # the reads saw the imports land
    assert reader["distinct_totals"] >= 3  # ... while they landed, not only at the end
    assert result["writer"]["sessions_written"] >= 5  # the writer was not starved
    with db.read() as conn:
        sessions = conn.execute("SELECT count(*) FROM sessions").fetchone()[0]
    assert sessions == result["writer"]["sessions_written"]


def test_it_lets_the_writer_in_while_two_readers_read_continuously(
    tmp_path: Path,
    capsys,
    record_property,
) -> None:
    seconds = min(SECONDS, 10.0)
    started = Started()
    result = soak.run_soak(tmp_path / "soak", seconds, 2, 20, on_started=started)
    report(result, tmp_path, capsys, record_property)

    started.assert_all_stopped()
    assert_no_errors(result)
    assert all(r["latency_ms_by_page"]["detail"]["n"] > 0 for r in result["readers"])
    # the turnstile in axiom/store/db.py gives a waiting writer priority over new readers
    assert result["writer"]["sessions_written"] >= 5, result["writer"]


def test_it_stops_the_server_and_every_role_when_the_soak_fails(tmp_path: Path) -> None:
    started = Started()

    def fail(seen: dict[str, Any]) -> None:
        started(seen)
        raise RuntimeError("stop here")

    began = time.monotonic()
    with pytest.raises(RuntimeError, match="stop here"):
        soak.run_soak(tmp_path / "soak", 60, 2, 20, on_started=fail)

    assert time.monotonic() - began < 60  # stopped, not waited out
    started.assert_all_stopped()


def test_a_dead_server_counts_as_reader_errors() -> None:
    port = soak.free_port()  # nothing listens there
    result = soak.read_loop(f"http://127.0.0.1:{port}", 0.3)
    assert result["error_count"] > 0
    assert result["pages"] == result["error_count"]


def test_the_server_log_check_finds_tracebacks_and_failed_requests(tmp_path: Path) -> None:
    log = tmp_path / "web.log"
    log.write_text(
        '[01/Jan/2025 10:00:00] "GET /api/v1/health HTTP/1.1" 200 120\n'
        '[01/Jan/2025 10:00:01] "GET /sessions/abc/ HTTP/1.1" 500 145\n'
        "Traceback (most recent call last):\n"
        '  File "viewer/views.py", line 1, in session_detail\n'
        "duckdb.IOException: Conflicting lock is held\n"
    )
    found = soak.check_server_log(log)
    assert found["requests"] == 2
    assert found["non_200"] == ["500 /sessions/abc/"]
    assert found["traceback_count"] == 1
    assert "Conflicting lock" in found["tracebacks"][0]
