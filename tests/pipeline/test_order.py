"""Sessions imported together are processed oldest first, whatever their file names, so the
final task state does not depend on how Claude Code happened to name the files."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from axiom.ingest.importer import PreparedSession, import_paths
from axiom.pipeline.batch import process_sessions
from axiom.pipeline.order import chronological, payload_order, session_starts
from axiom.store.db import Database
from axiom.store.migrate import migrate
from axiom.tasks.queries import list_tasks
from tests.cli_support import run_cli

# Three Claude Code sessions on 1, 2 and 3 March 2025; each day's TodoWrite list moves the
# work on ("Publish the package" in progress, then completed; the release notes a day later).
SESSIONS = sorted((Path(__file__).parent / "data" / "todo_sessions").glob("day*.jsonl"))
SESSION_IDS = [
    "aaaa1111-0000-4000-8000-000000000001",
    "bbbb2222-0000-4000-8000-000000000002",
    "cccc3333-0000-4000-8000-000000000003",
]
PROJECT_DIR = "-home-dev-shop"


def write_folder(root: Path, names: list[str], sources: list[Path] = SESSIONS) -> Path:
    """`sources` (default: the three sessions, oldest first) copied under the file names
    `names` into a project folder below `root`; returns `root`."""
    folder = root / PROJECT_DIR
    folder.mkdir(parents=True)
    for name, source in zip(names, sources, strict=True):
        shutil.copy(source, folder / f"{name}.jsonl")
    return root


def _task_states(db: Database) -> list[tuple[str, str, str, int, int]]:
    with db.read() as conn:
        return sorted(
            (t.task_id, t.title, t.status, t.blocker_count, t.mention_count)
            for t in list_tasks(conn)
        )


# Newest session under the name that sorts first, and the other way round.
NEWEST_FIRST = ["ffffffff-oldest", "55555555-middle", "00000000-newest"]
OLDEST_FIRST = ["00000000-oldest", "55555555-middle", "ffffffff-newest"]


@pytest.mark.parametrize(
    "names", [NEWEST_FIRST, OLDEST_FIRST], ids=["newest-first", "oldest-first"]
)
def test_file_names_do_not_change_the_final_task_state(
    tmp_path: Path, data_dir: Path, names: list[str]
) -> None:
    reference = Database(tmp_path / "reference.duckdb")
    migrate(reference)
    # The reference: one session per import run, oldest first.
    for i, (sid, source) in enumerate(zip(SESSION_IDS, SESSIONS, strict=True)):
        folder = write_folder(tmp_path / f"one-{i}", [sid], [source])
        process_sessions(reference, import_paths(reference, [folder]).session_ids)

    db = Database(data_dir / "axiom.duckdb")
    migrate(db)
    report = import_paths(db, [write_folder(tmp_path / "folder", names)])
    assert sorted(report.session_ids) == SESSION_IDS
    reports = process_sessions(db, report.session_ids)

    assert [r.session_id for r in reports] == SESSION_IDS  # oldest first
    states = _task_states(db)
    assert {(title, status) for _, title, status, _, _ in states} == {
        ("Publish the package", "done"),
        ("Write the release notes", "done"),
    }
    assert states == _task_states(reference)


def _axiom(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = run_cli(data, *args, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_the_cli_import_gives_the_same_state_for_either_naming(tmp_path: Path) -> None:
    results = []
    for label, names in (("a", NEWEST_FIRST), ("b", OLDEST_FIRST)):
        data = tmp_path / f"data-{label}"
        _axiom(data, "import", str(write_folder(tmp_path / f"src-{label}", names)), "--quiet")
        listed = json.loads(_axiom(data, "tasks", "--json").stdout)
        results.append(sorted((t["task_id"], t["status"]) for t in listed))
    assert results[0] == results[1]
    assert {status for _, status in results[0]} == {"done"}


def test_chronological_order_ties_by_path_and_puts_unknown_times_last(
    tmp_path: Path, db: Database
) -> None:
    folder = tmp_path / "s"
    folder.mkdir()
    same_time = "2025-03-01T09:00:00Z"
    docs = {
        "b-late.json": ("late", "2025-03-05T09:00:00+02:00"),  # 07:00 UTC
        "z-early.json": ("early", "2025-03-05T06:59:59Z"),
        "d-tie.json": ("tie-d", same_time),
        "c-tie.json": ("tie-c", same_time),
        "a-untimed.json": ("untimed", None),
    }
    for name, (sid, ts) in docs.items():
        message = {"role": "user", "content": f"hello from {sid}"}
        if ts:
            message["timestamp"] = ts
        (folder / name).write_text(json.dumps({"session_id": sid, "messages": [message]}))
    offered: list[PreparedSession] = []
    report = import_paths(db, [folder], before_write=offered.extend)
    in_memory = payload_order([(p.transcript.session_id, p.payload) for p in offered])
    assert [offered[i].transcript.session_id for i in in_memory] == [
        "tie-c",
        "tie-d",
        "early",
        "late",
        "untimed",
    ]  # what `chronological` reads from the store, from the payloads before they are stored
    with db.read() as conn:
        order = chronological(conn, [*report.session_ids, "never-ingested", "late"])
        starts = session_starts(conn, ["late", "untimed"])
    assert order == ["tie-c", "tie-d", "early", "late", "untimed", "never-ingested"]
    assert starts["untimed"][0] is None
    assert str(starts["late"][0]) == "2025-03-05 07:00:00"
