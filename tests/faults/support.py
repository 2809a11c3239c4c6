"""What every fault test checks after recovery, and the input it feeds the processes."""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

from axiom.projections import all_projectors, project_all, rebuild_all
from axiom.store.db import Database

ROOT = Path(__file__).resolve().parents[2]
# Columns holding when a row was written rather than what it says (as tests/pipeline).
WRITTEN_AT = {"created_at", "updated_at", "ingested_at"}


def noise(seed: int, chars: int) -> str:
    """About `chars` characters of seeded random words: text DuckDB cannot compress away
    (a run of one letter takes no room in its blocks, so it never fills a disk)."""
    rng = random.Random(seed)
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < chars:
        words.append("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9))))
    return " ".join(words)


def write_sessions(folder: Path, n: int, messages: int = 6, filler: int = 0) -> list[str]:
    """`n` generic-JSON sessions, each stating a decision and a task the pipeline extracts,
    each turn padded with `filler` characters of `noise`."""
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for i in range(n):
        sid = f"fault-{i:03d}"
        turns = [
            {
                "role": "user" if j % 2 == 0 else "assistant",
                "content": f"Session {i}, turn {j}: we switched the store {i} from MySQL to"
                f" PostgreSQL. TODO: migrate the reports of store {i}. "
                + noise(i * 1000 + j, filler),
                "timestamp": f"2025-03-{1 + i % 28:02d}T10:{j % 60:02d}:00Z",
            }
            for j in range(messages)
        ]
        (folder / f"{sid}.json").write_text(json.dumps({"session_id": sid, "messages": turns}))
        ids.append(sid)
    return ids


def axiom(
    data_dir: Path, *args: str, settings: dict[str, str] | None = None, **popen: Any
) -> subprocess.Popen[bytes]:
    """`python -m axiom ARGS` as a separate process on `data_dir`, no model loaded, with
    `settings` (AXIOM_* variables) on top of this process's environment."""
    env = {**os.environ, "AXIOM_DATA_DIR": str(data_dir), "AXIOM_EMBEDDER": "none"}
    env.update(settings or {})
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.Popen(
        [sys.executable, "-m", "axiom", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


def run_axiom(
    data_dir: Path, *args: str, timeout: float = 300, settings: dict[str, str] | None = None
) -> tuple[int, str, str]:
    process = axiom(data_dir, *args, settings=settings)
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out.decode(), err.decode()


def count(db: Database, sql: str, *params: object) -> int:
    with db.read() as conn:
        return conn.execute(sql, list(params)).fetchone()[0]


def derived_rows(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    tables = [t for p in all_projectors() for t in p.tables]
    out = {}
    with db.read() as conn:
        for table in tables:
            described = conn.execute(f"DESCRIBE {table}").fetchall()
            cols = ", ".join(r[0] for r in described if r[0] not in WRITTEN_AT)
            out[table] = conn.execute(f"SELECT {cols} FROM {table} ORDER BY ALL").fetchall()
    return out


def assert_recovered(db: Database, session_ids: list[str], messages: int) -> None:
    """Nothing lost, nothing twice, and the derived tables, once every projector caught up
    (as the writer's periodic `axiom.project` does), equal a rebuild from events."""
    project_all(db)
    with db.read() as conn:
        ingested = conn.execute(
            "SELECT session_id, count(*) FROM events WHERE event_type = 'session_ingested'"
            " GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        doubled = conn.execute(
            "SELECT event_type, session_id, payload_json::VARCHAR, count(*) FROM events"
            " GROUP BY ALL HAVING count(*) > 1"
        ).fetchall()
        stored = conn.execute(
            "SELECT session_id, count(*) FROM messages GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert ingested == [(sid, 1) for sid in sorted(session_ids)]
    assert doubled == []
    assert count(db, "SELECT count(*) FROM projection_errors") == 0
    assert stored == [(sid, messages) for sid in sorted(session_ids)]
    incremental = derived_rows(db)
    for table, rows in incremental.items():
        assert len(rows) == len(set(rows)), f"{table} holds a row twice"
    rebuild_all(db)
    rebuilt = derived_rows(db)
    differ = {t: (set(rows) ^ set(rebuilt[t])) for t, rows in incremental.items() if rows != rebuilt[t]}  # fmt: skip
    assert not differ, f"a rebuild differs: {differ}"


def assert_processed(db: Database, session_ids: list[str]) -> None:
    """Each session's memory pipeline finished exactly once, successfully."""
    with db.read() as conn:
        builds = conn.execute(
            "SELECT session_id, count(*), min(payload_json->>'status') FROM events"
            " WHERE event_type = 'build_finished' GROUP BY ALL ORDER BY ALL"
        ).fetchall()
    assert builds == [(sid, 1, "success") for sid in sorted(session_ids)]
