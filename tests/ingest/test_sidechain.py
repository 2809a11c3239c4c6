"""Sub-agent transcripts (`agent-*.jsonl`, lines carrying the parent's sessionId) imported
next to their main session into a real DuckDB file: nothing is lost or overwritten."""

from __future__ import annotations

import json
from pathlib import Path

from axiom.ingest.importer import import_paths
from axiom.observability.stats import collect_stats
from axiom.projections import project_all, rebuild_all
from axiom.store.db import Database

PARENT = "11111111-2222-3333-4444-555555555555"


def _line(uuid: str, parent: str | None, ts: str, role: str, text: str, **extra: object) -> str:
    obj = {
        "type": role,
        "sessionId": PARENT,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": ts,
        "isSidechain": False,
        "cwd": "/home/u/app",
        "message": {"role": role, "content": text},
    }
    obj.update(extra)
    return json.dumps(obj)


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "-home-u-app"
    folder.mkdir()
    main = [json.dumps({"type": "summary", "summary": "Fix flaky login test", "leafUuid": "m9"})]
    parent = None
    for i in range(10):
        role = "user" if i % 2 == 0 else "assistant"
        main.append(_line(f"m{i}", parent, f"2025-10-01T10:00:{i:02d}Z", role, f"main message {i}"))
        parent = f"m{i}"
    (folder / f"{PARENT}.jsonl").write_text("\n".join(main) + "\n")
    agent = [
        _line("s1", None, "2025-10-01T10:00:03Z", "user", "Find the race", isSidechain=True),
        _line(
            "s2", "s1", "2025-10-01T10:00:04Z", "assistant", "It is in cleanup", isSidechain=True
        ),
    ]
    (folder / "agent-ab12.jsonl").write_text(
        "\n".join(
            line.replace('"isSidechain": true', '"isSidechain": true, "agentId": "ab12"')
            for line in agent
        )
        + "\n"
    )
    return folder


TABLES = ("sessions", "messages", "message_citations")


def test_a_sub_agent_file_becomes_its_own_session_and_the_main_one_is_kept(
    db: Database, tmp_path: Path, table_rows
) -> None:
    folder = _project(tmp_path)
    first = import_paths(db, [folder])
    assert first.issues == []
    with db.read() as conn:
        sessions = conn.execute(
            "SELECT session_id, title, message_count, meta_json->>'parent_session_id',"
            " meta_json->>'agent_id' FROM sessions ORDER BY session_id"
        ).fetchall()
        main_texts = [
            r[0]
            for r in conn.execute(
                "SELECT text FROM messages WHERE session_id = ? ORDER BY message_index", [PARENT]
            ).fetchall()
        ]
        agent_rows = conn.execute(
            "SELECT text, is_sidechain FROM messages WHERE session_id = ? ORDER BY message_index",
            [f"{PARENT}:agent-ab12"],
        ).fetchall()
        before = collect_stats(conn)
    assert sessions == [
        (PARENT, "Fix flaky login test", 10, None, None),
        (f"{PARENT}:agent-ab12", "Find the race", 2, PARENT, "ab12"),
    ]
    assert main_texts == [f"main message {i}" for i in range(10)]
    assert agent_rows == [("Find the race", True), ("It is in cleanup", True)]
    assert before["messages"] == 12

    # The other order (agent file first, then the main file) gives the same tables.
    second = import_paths(db, [folder / "agent-ab12.jsonl", folder / f"{PARENT}.jsonl"])
    assert (second.sessions_new, second.sessions_unchanged) == (0, 2)
    with db.read() as conn:
        assert collect_stats(conn) == before

    project_all(db)  # what the writer does after an ingest
    incremental = table_rows(db, *TABLES)
    assert len(incremental["message_citations"]) == 12
    rebuild_all(db)
    assert table_rows(db, *TABLES) == incremental


def test_sidechain_lines_inside_the_main_file_stay_in_the_main_session(
    db: Database, tmp_path: Path
) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    lines = [
        _line("m0", None, "2025-10-01T10:00:00Z", "user", "main"),
        _line("s0", "m0", "2025-10-01T10:00:01Z", "user", "side", isSidechain=True),
    ]
    (folder / f"{PARENT}.jsonl").write_text("\n".join(lines) + "\n")
    import_paths(db, [folder])
    with db.read() as conn:
        rows = conn.execute(
            "SELECT session_id, text, is_sidechain FROM messages ORDER BY message_index"
        ).fetchall()
    assert rows == [(PARENT, "main", False), (PARENT, "side", True)]
