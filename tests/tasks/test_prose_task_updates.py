"""Tasks from prose across sessions, through the real pipeline: compound sentences become
separate tasks, a blocker keeps its ticket key, later sessions saying "still blocked",
"unblocked" or "done" (also "완료") update the same task, and a status report about no
known task or a title without an object creates nothing."""

from __future__ import annotations

from pathlib import Path

from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.store.db import Database
from axiom.store.projection import rebuild
from axiom.tasks.projector import TaskProjector
from axiom.tasks.queries import BlockedTask, get_task, list_blocked_tasks, list_tasks
from axiom.tasks.resolver import TaskMention, TaskResolver


def _run(db: Database, tmp_path: Path, sid: str, *texts: str) -> None:
    transcript = Transcript(
        sid, "shop", "json", tuple(Message(i, "user", t) for i, t in enumerate(texts))
    )
    ingest_transcripts(db, [transcript])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "idris")
    assert process_session(db, sid, pipeline).status == "success"


def _tasks(db: Database) -> dict[str, str]:
    with db.read() as conn:
        return {t.title: t.status for t in list_tasks(conn, project="shop")}


def _blocked(db: Database) -> list[BlockedTask]:
    with db.read() as conn:
        return list_blocked_tasks(conn, project="shop")


def test_a_compound_sentence_gives_two_tasks_and_the_blocker_keeps_its_ticket_key(
    db: Database, tmp_path: Path
) -> None:
    _run(
        db,
        tmp_path,
        "s1",
        "Right now I'm working on the invoice retry logic; the refund report is blocked by OPS-77.",
    )
    tasks = _tasks(db)
    assert tasks == {"Invoice retry logic": "in_progress", "Refund report": "blocked"}
    (blocked,) = _blocked(db)
    assert blocked.task.title == "Refund report"
    assert any("OPS-77" in b.title or "OPS-77" in b.raw_text for b in blocked.blockers)


def test_a_blocker_in_parentheses_still_resolves_to_its_ticket(
    db: Database, tmp_path: Path
) -> None:
    _run(db, tmp_path, "s1", "The CSV importer is blocked by infra (SRE-12) this week.")
    (blocked,) = _blocked(db)
    assert any(b.kind == "artifact" and "SRE-12" in b.title for b in blocked.blockers)


def test_later_sessions_move_the_same_task(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "s1", "The refund report is blocked by OPS-77.")
    _run(db, tmp_path, "s2", "Status: the refund report is still blocked.")
    assert _tasks(db) == {"Refund report": "blocked"}
    (blocked,) = _blocked(db)
    assert blocked.blockers  # "still blocked" keeps the blocker it had
    _run(db, tmp_path, "s3", "Good news: the refund report is unblocked now.")
    assert _tasks(db) == {"Refund report": "in_progress"}
    _run(db, tmp_path, "s4", "The refund report is done.")
    assert _tasks(db) == {"Refund report": "done"}


def test_korean_done_updates_the_task(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "s1", "할 일: 환불 리포트 정리")
    assert _tasks(db) == {"환불 리포트 정리": "pending"}
    _run(db, tmp_path, "s2", "환불 리포트 정리 완료했습니다.")
    assert _tasks(db) == {"환불 리포트 정리": "done"}


def test_status_reports_about_unknown_things_and_vague_titles_create_no_task(
    db: Database, tmp_path: Path
) -> None:
    _run(
        db,
        tmp_path,
        "s1",
        "The pizza is done.",
        "TODO: Fix",
        "Next step: do it.",
        "We need to handle that.",
        "We need to do something about it.",
    )
    assert _tasks(db) == {}


def _blockers_of(db: Database, title: str) -> list[str]:
    with db.read() as conn:
        (task,) = [t for t in list_tasks(conn, project="shop") if t.title == title]
        detail = get_task(conn, task.task_id)
    assert detail is not None
    return [b.title for b in (*detail.blockers, *detail.effective_blockers)]


def test_a_ticket_reported_done_unblocks_the_task_it_blocked(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "s1", "The deploy is blocked by OPS-55.")
    _run(db, tmp_path, "s2", "OPS-55 is done.")
    assert _tasks(db) == {"Deploy": "pending"}
    assert _blocked(db) == [] and _blockers_of(db, "Deploy") == []


def test_a_ticket_done_takes_off_only_that_blocker(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "s1", "The deploy is blocked by OPS-55 and OPS-56.")
    _run(db, tmp_path, "s2", "OPS-55 was merged.")
    (blocked,) = _blocked(db)
    assert [b.title for b in blocked.blockers] == ["OPS-56"]
    _run(db, tmp_path, "s3", "OPS-56 is closed, so the deploy is unblocked.")
    assert _tasks(db) == {"Deploy": "in_progress"}
    assert _blockers_of(db, "Deploy") == []


def test_unblocked_clears_the_blocker_edges(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "s1", "The release is blocked by OPS-88.")
    _run(db, tmp_path, "s2", "The release is unblocked now.")
    assert _tasks(db) == {"Release": "in_progress"}
    assert _blockers_of(db, "Release") == []
    with db.read() as conn:
        edges = conn.execute("SELECT count(*) FROM edges WHERE rel_type = 'blocked_by'").fetchone()
    assert edges == (0,)


def test_unblocking_survives_a_rebuild(db: Database, tmp_path: Path, table_rows) -> None:
    _run(
        db,
        tmp_path,
        "s1",
        "The deploy is blocked by OPS-55 and OPS-56.",
        "The release is blocked by OPS-88.",
    )
    _run(db, tmp_path, "s2", "OPS-55 is done.", "The release is unblocked now.")
    tables = ("entities", "entity_aliases", "edges")
    incremental = table_rows(db, *tables)
    with db.write() as conn:
        rebuild(conn, [TaskProjector()])
    assert table_rows(db, *tables) == incremental
    assert _tasks(db) == {"Deploy": "blocked", "Release": "in_progress"}


def test_a_done_report_resolved_again_appends_nothing(db: Database, tmp_path: Path) -> None:
    _run(db, tmp_path, "s1", "The deploy is blocked by OPS-55.")
    mention = TaskMention("ent_done", "s2", "OPS-55", status="done", update_only=True)
    with db.write() as conn:
        first = TaskResolver(conn, "shop").resolve([mention])
        again = TaskResolver(conn, "shop").resolve([mention])
    assert [e.event_type for e in first] == ["task_status_changed", "task_blockers_set"]
    assert again == []
    assert _tasks(db) == {"Deploy": "pending"}


def test_first_person_work_in_progress_becomes_a_task_small_talk_does_not(
    db: Database, tmp_path: Path
) -> None:
    _run(
        db,
        tmp_path,
        "s1",
        "I'm fixing the login bug; the deploy is blocked by OPS-99.",
        "We're refactoring the billing module.",
        "I'm feeling good about it.",
        "I'm writing all my plans down.",
        "I'm fixing to head out.",
        "I'm going for my dreams.",
    )
    assert _tasks(db) == {
        "Fix the login bug": "in_progress",
        "Refactor the billing module": "in_progress",
        "Deploy": "blocked",
    }


def test_an_issue_number_or_a_condition_reported_done_unblocks_too(
    db: Database, tmp_path: Path
) -> None:
    _run(
        db,
        tmp_path,
        "s1",
        "The export is blocked by #412.",
        "The upload is blocked by the security review.",
    )
    _run(db, tmp_path, "s2", "#412 was closed.", "The security review is done.")
    assert _tasks(db) == {"Export": "pending", "Upload": "pending"}


def test_a_task_that_is_done_unblocks_the_tasks_it_blocked(db: Database, tmp_path: Path) -> None:
    _run(
        db,
        tmp_path,
        "s1",
        "TODO: rotate the certificates.",
        "The deploy is blocked by rotate the certificates.",
    )
    assert _tasks(db) == {"Rotate the certificates": "pending", "Deploy": "blocked"}
    _run(db, tmp_path, "s2", "Rotate the certificates is done.")
    assert _tasks(db) == {"Rotate the certificates": "done", "Deploy": "pending"}
    assert _blocked(db) == []
