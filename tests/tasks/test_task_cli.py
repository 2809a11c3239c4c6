"""`python -m axiom blocked | task show | tasks | conditions resolved`, on the bundled
sample session run through the rule extractor and the task resolver."""

from __future__ import annotations

import argparse
import json
import subprocess
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest

from axiom.cli.tasks import register
from axiom.extract.rules import RuleExtractor
from axiom.ingest.claude_code import parse_claude_code
from axiom.store.db import Database
from axiom.store.events import EventStore, NewEvent
from axiom.store.migrate import migrate
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.commands import resolve_condition, resolve_condition_in
from axiom.tasks.projector import TaskProjector
from axiom.tasks.queries import list_resolved_conditions
from axiom.tasks.resolver import TaskMention, TaskResolver
from tests.cli_support import run_cli


def main(argv: Sequence[str]) -> int:
    """`python -m axiom` restricted to the task commands (`axiom.cli.build_parser` adds
    them with the same `register`)."""
    parser = argparse.ArgumentParser(prog="python -m axiom")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return int(args.func(args))


def _when(stamp: str | None) -> datetime | None:
    return datetime.fromisoformat(stamp) if stamp else None


def process_sample(db: Database, path: Path) -> tuple[str, int]:
    """What the pipeline does for tasks: extract, build mentions, resolve in one write unit."""
    transcript = parse_claude_code(path).transcripts[0]
    result = RuleExtractor().extract(transcript)
    mentions = [
        TaskMention.from_entry(
            entry,
            transcript.session_id,
            evidence_aligned=True,
            observed_at=_when(transcript.messages[entry.evidence[0].message_index].timestamp),
        )
        for entry in result.entries
        if entry.task is not None
    ]
    with db.write() as conn:
        appended = TaskResolver(conn, transcript.project).resolve([m for m in mentions if m])
    return transcript.project, len(appended)


@pytest.fixture
def sample(db: Database, sample_session: Path) -> str:
    project, appended = process_sample(db, sample_session)
    assert appended > 0
    return project


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_blocked_lists_each_blocked_task_with_its_effective_blockers(sample, capsys) -> None:
    code, out, _ = run(capsys, "blocked")
    assert code == 0
    blocks = [b for b in out.split("\ntsk_") if b]
    publishing = next(b for b in blocks if "Publish the package" in b)
    assert "blocked by artifact" in publishing and "PLAT-142" in publishing
    korean = next(b for b in blocks if "배포" in b)
    assert "blocked by condition" in korean and "레지스트리 인증서 교체" in korean

    code, out, _ = run(capsys, "blocked", "--json")
    data = json.loads(out)
    assert {t["title"] for t in data} == {"Publish the package to the internal index", "배포"}
    assert all(t["status"] == "blocked" and t["blockers"] for t in data)


def test_task_show_prints_the_full_event_history(sample, capsys) -> None:
    task_id = entity_id_for(task_key(sample, "Write the events migration"))
    code, out, _ = run(capsys, "task", "show", task_id)
    assert code == 0
    assert "status:    done" in out
    for expected in (
        "task_created",
        "task_status_changed",
        "in_progress -> done",
        "task_mentioned",
        "history (",
    ):
        assert expected in out

    code, out, _ = run(capsys, "task", "show", task_id[:10], "--json")
    data = json.loads(out)
    assert data["task_id"] == task_id
    assert [h["event_type"] for h in data["history"]][0] == "task_created"
    assert len(data["evidence"]) == 2


def test_task_show_of_an_unknown_id_is_a_clear_error(sample, capsys) -> None:
    code, out, err = run(capsys, "task", "show", "tsk_doesnotexist")
    assert code == 1
    assert "unknown task id 'tsk_doesnotexist'" in err


def test_tasks_filters_by_status(sample, capsys) -> None:
    code, out, _ = run(capsys, "tasks", "--status", "done")
    assert code == 0 and "Write the events migration" in out
    assert "Build the Claude Code importer" not in out

    code, out, _ = run(capsys, "tasks", "--status", "in_progress", "--json")
    assert [t["title"] for t in json.loads(out)] == ["Build the Claude Code importer"]

    with pytest.raises(SystemExit):
        main(["tasks", "--status", "sleeping"])


def test_conditions_resolved_lists_resolutions(db, sample, capsys) -> None:
    code, out, _ = run(capsys, "conditions", "resolved")
    assert code == 0 and "no resolved conditions" in out

    with db.write() as conn:
        condition = conn.execute(
            "SELECT entity_id FROM entities WHERE entity_type = 'condition' AND title = ?",
            ["레지스트리 인증서 교체"],
        ).fetchone()[0]
        target = entity_id_for(task_key(sample, "Publish the package to the internal index"))
        resolve_condition(conn, condition, target, reason="the certificate swap is that task")

    code, out, _ = run(capsys, "conditions", "resolved", "--json")
    [row] = json.loads(out)
    assert (row["condition_id"], row["target_id"]) == (condition, target)
    assert row["blocking"] == [entity_id_for(task_key(sample, "배포"))]

    code, out, _ = run(capsys, "blocked")
    korean = next(b for b in out.split("\ntsk_") if "배포" in b)
    assert "Publish the package to the internal index" in korean and "via condition" in korean


def test_processing_the_sample_twice_creates_nothing(db, sample, sample_session) -> None:
    with db.read() as conn:
        before = conn.execute("SELECT count(*) FROM events").fetchone()[0]
        edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
    assert process_sample(db, sample_session)[1] == 0
    with db.read() as conn:
        assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == before
        assert conn.execute("SELECT count(*) FROM edges").fetchone()[0] == edges


def test_the_axiom_cli_has_the_task_commands() -> None:
    from axiom.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["blocked", "--json"]).json is True
    assert parser.parse_args(["task", "show", "tsk_1"]).task_id == "tsk_1"
    assert parser.parse_args(["tasks", "--status", "blocked"]).status == "blocked"
    assert parser.parse_args(["conditions", "resolved"]).func.__name__ == "cmd_conditions_resolved"
    resolve = parser.parse_args(["conditions", "resolve", "cnd_1", "tsk_2", "--note", "n"])
    assert (resolve.condition_id, resolve.target_id, resolve.note) == ("cnd_1", "tsk_2", "n")


def _korean_condition(db: Database) -> str:
    with db.read() as conn:
        return conn.execute(
            "SELECT entity_id FROM entities WHERE entity_type = 'condition' AND title = ?",
            ["레지스트리 인증서 교체"],
        ).fetchone()[0]


def _events(db: Database, event_type: str) -> int:
    with db.read() as conn:
        return conn.execute(
            "SELECT count(*) FROM events WHERE event_type = ?", [event_type]
        ).fetchone()[0]


def test_conditions_resolve_records_the_resolution_and_blocked_shows_the_target(
    db, sample, capsys
) -> None:
    condition = _korean_condition(db)
    target = entity_id_for(task_key(sample, "Publish the package to the internal index"))
    korean_task = entity_id_for(task_key(sample, "배포"))

    code, out, err = run(
        capsys,
        "conditions",
        "resolve",
        condition,
        target,
        "--note",
        "인증서 교체 = 배포 작업",
        "--json",
    )

    assert code == 0, err
    row = json.loads(out)
    assert (row["condition_id"], row["target_id"], row["target_type"]) == (
        condition,
        target,
        "task",
    )
    assert row["reason"] == "인증서 교체 = 배포 작업"
    assert row["blocking"] == [korean_task]
    with db.read() as conn:
        (payload,) = conn.execute(
            "SELECT payload_json FROM events WHERE event_id = ?", [row["event_id"]]
        ).fetchone()
    assert json.loads(payload)["target_id"] == target

    code, out, _ = run(capsys, "blocked", "--json")
    [korean] = [t for t in json.loads(out) if t["task_id"] == korean_task]
    [effective] = korean["blockers"]
    assert (effective["entity_id"], effective["kind"]) == (target, "task")
    assert effective["via_resolution"] and effective["declared_id"] == condition

    code, out, _ = run(capsys, "conditions", "resolve", condition, target)
    assert code == 0 and f"now resolves to task {target}" in out
    assert _events(db, "condition_resolved_to") == 2  # an explicit repeat is its own event


@pytest.mark.parametrize(
    ("which", "message"),
    [
        ("condition", "unknown condition 'cnd_000000000000'"),
        ("target", "unknown entity 'tsk_000000000000'"),
        ("task as condition", "unknown condition"),
        ("itself", "cannot resolve to itself"),
    ],
)
def test_conditions_resolve_refuses_bad_ids_with_a_clear_error(
    db, sample, capsys, which: str, message: str
) -> None:
    condition = _korean_condition(db)
    task = entity_id_for(task_key(sample, "배포"))
    condition_arg, target_arg = {
        "condition": ("cnd_000000000000", task),
        "target": (condition, "tsk_000000000000"),
        "task as condition": (task, condition),
        "itself": (condition, condition),
    }[which]

    code, out, err = run(capsys, "conditions", "resolve", condition_arg, target_arg)
    assert code == 1
    assert message in err and "Traceback" not in err and out == ""
    code, out, err = run(capsys, "conditions", "resolve", condition_arg, target_arg, "--json")
    assert code == 1 and message in json.loads(out)["error"]
    assert _events(db, "condition_resolved_to") == 0


def test_conditions_resolve_through_the_real_cli_process(
    tmp_path: Path, sample_session: Path
) -> None:
    data = tmp_path / "cli"
    data.mkdir()
    db = Database(data / "axiom.duckdb")
    migrate(db)
    project, _ = process_sample(db, sample_session)
    condition = _korean_condition(db)
    target = entity_id_for(task_key(project, "Publish the package to the internal index"))

    def axiom(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(data, *args)

    bad = axiom("conditions", "resolve", "cnd_nope", target)
    assert bad.returncode == 1
    assert bad.stderr.strip() == (
        "error: unknown condition 'cnd_nope' (see `python -m axiom blocked` and `task show`)"
    )
    good = axiom("conditions", "resolve", condition, target, "--note", "same work")
    assert good.returncode == 0, good.stderr
    blocked = axiom("blocked")
    korean = next(b for b in blocked.stdout.split("\ntsk_") if "배포" in b)
    assert "Publish the package to the internal index" in korean and "via condition" in korean


@pytest.fixture
def aborting_task_projector(monkeypatch: pytest.MonkeyPatch) -> None:
    """The task projector fails in DuckDB (aborting the transaction) on events marked
    ``poison``, as on an event it cannot apply."""
    apply = TaskProjector.apply

    def poisoned(self, conn, event) -> None:  # type: ignore[no-untyped-def]
        if event.payload.get("poison") or event.payload.get("reason") == "poison":
            conn.execute("SELECT CAST('poison' AS INTEGER)").fetchone()
        apply(self, conn, event)

    monkeypatch.setattr(TaskProjector, "apply", poisoned)


def _projection_errors(db: Database) -> list[tuple[str, str]]:
    with db.read() as conn:
        return conn.execute("SELECT projector_name, event_type FROM projection_errors").fetchall()


def test_a_poison_task_event_does_not_block_resolving_a_condition(
    db, sample, capsys, aborting_task_projector
) -> None:
    with db.write() as conn:  # appended by another path that projects later
        EventStore(conn).append(NewEvent("condition_resolved_to", {"poison": True}))
    condition = _korean_condition(db)
    target = entity_id_for(task_key(sample, "Publish the package to the internal index"))

    code, out, err = run(capsys, "conditions", "resolve", condition, target, "--json")

    assert code == 0, err
    assert json.loads(out)["target_id"] == target
    assert _projection_errors(db) == [("tasks", "condition_resolved_to")]


def test_a_resolution_the_projection_cannot_apply_is_recorded_and_reported(
    db, sample, aborting_task_projector
) -> None:
    condition = _korean_condition(db)
    target = entity_id_for(task_key(sample, "Publish the package to the internal index"))

    with pytest.raises(RuntimeError, match="could not apply it"):
        resolve_condition_in(db, condition, target, note="poison")

    assert _events(db, "condition_resolved_to") == 1
    assert _projection_errors(db) == [("tasks", "condition_resolved_to")]
    with db.read() as conn:
        assert list_resolved_conditions(conn) == []
