"""Contradictions across sessions become open conflicts; restatements corroborate."""

from __future__ import annotations

from pathlib import Path

from axiom.conflicts.commands import resolve
from axiom.conflicts.queries import list_conflicts
from axiom.entries.queries import list_entries
from axiom.projections import rebuild_all
from axiom.store.db import Database
from tests.conflicts.support import Said, run_sessions

DB_CHOICE = "Use Postgres as the primary store for the billing ledger service"
DB_SWITCH = (
    "We moved the billing ledger service off Postgres; it runs on CockroachDB now,"
    " having migrated from Postgres to CockroachDB last sprint"
)
RAISED = "업로드 최대 크기를 50MB로 늘렸다"
KOREAN_SESSIONS = {  # a replaced decision and a changed value: two conflicts
    "ko1": [
        Said("알림 서비스의 메시지 큐는 RabbitMQ를 쓰기로 했다"),
        Said("업로드 파일 최대 크기는 20MB이다", "fact", "업로드 최대 크기", "20MB"),
    ],
    "ko2": [
        Said("알림 서비스 메시지 큐를 RabbitMQ에서 NATS로 옮기기로 정했다"),
        Said(RAISED, "fact", "업로드 최대 크기", "50MB"),
    ],
}


def _entries(db: Database) -> dict[str, tuple[str, str]]:
    with db.read() as conn:
        return {e.title: (e.stage, e.status) for e in list_entries(conn)}


def _open(db: Database) -> list:
    with db.read() as conn:
        return list_conflicts(conn, "open")


def test_a_replaced_decision_without_subjects_yields_an_open_conflict(
    db: Database, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path, {"march": [Said(DB_CHOICE)], "april": [Said(DB_SWITCH)]})
    (conflict,) = _open(db)
    assert conflict.conflict_type == "replacement" and "postgres" in conflict.reason
    found = _entries(db)
    assert found[DB_CHOICE][1] == found[DB_SWITCH][1] == "contested"
    assert "certified" not in {stage for stage, _ in found.values()}


def test_a_changed_value_of_the_same_subject_conflicts(db: Database, tmp_path: Path) -> None:
    run_sessions(
        db,
        tmp_path,
        {
            "s1": [
                Said(
                    "Export jobs may run 40 requests each minute",
                    "fact",
                    "export rate cap",
                    "40/min",
                )
            ],
            "s2": [
                Said(
                    "The export rate cap is 75 per minute from now on",
                    "fact",
                    "Export rate cap",
                    "75/min",
                )
            ],
        },
    )
    (conflict,) = _open(db)
    assert conflict.conflict_type == "changed_value"
    assert conflict.subject.casefold() == "export rate cap"
    assert {s for _, s in _entries(db).values()} == {"contested"}


def test_korean_contradictions_conflict(db: Database, tmp_path: Path) -> None:
    run_sessions(
        db,
        tmp_path,
        KOREAN_SESSIONS,
    )
    kinds = sorted(c.conflict_type for c in _open(db))
    assert kinds == ["changed_value", "replacement"]
    assert _entries(db)[RAISED][1] == "contested"


def test_a_restatement_in_a_later_session_corroborates_and_does_not_conflict(
    db: Database, tmp_path: Path, table_rows
) -> None:
    run_sessions(
        db,
        tmp_path,
        {
            "one": [
                Said(
                    "The audit log keeps entries for 90 days",
                    "fact",
                    "audit log retention",
                    "90 days",
                )
            ],
            "two": [
                Said(
                    "Audit log retention stays at 90 days, as before",
                    "fact",
                    "Audit log retention",
                    "90 days",
                )
            ],
            "three": [Said(DB_CHOICE)],
        },
    )
    assert _open(db) == []
    found = _entries(db)
    assert found["The audit log keeps entries for 90 days"] == ("certified", "active")
    assert found["Audit log retention stays at 90 days, as before"] == ("certified", "active")
    before = table_rows(db, "conflicts", "conflict_facts"), _entries(db)
    rebuild_all(db)
    assert (table_rows(db, "conflicts", "conflict_facts"), _entries(db)) == before


def test_a_contradiction_never_certifies_its_opponent(db: Database, tmp_path: Path) -> None:
    """The issue's case: 'use A' and 'switched from A to B' share enough words to count as
    a restatement; once they conflict, neither certifies the other."""
    choice = "Use DuckDB for the event store of the ingest service"
    switch = "Switched the event store of the ingest service from DuckDB to SQLite"
    run_sessions(db, tmp_path, {"a": [Said(choice)], "b": [Said(switch)]})
    found = _entries(db)
    assert found[choice] == ("verified", "contested")
    assert found[switch][1] == "contested" and found[switch][0] != "certified"


def test_conflicts_survive_a_rebuild_unchanged(db: Database, tmp_path: Path, table_rows) -> None:
    run_sessions(db, tmp_path, {"march": [Said(DB_CHOICE)], "april": [Said(DB_SWITCH)]})
    before = table_rows(db, "conflicts", "conflict_facts"), _entries(db)
    rebuild_all(db)
    assert (table_rows(db, "conflicts", "conflict_facts"), _entries(db)) == before


def test_listing_filters_by_status_and_keeps_the_newest_within_a_limit(
    db: Database, tmp_path: Path
) -> None:
    run_sessions(
        db,
        tmp_path,
        KOREAN_SESSIONS,
    )
    both = _open(db)
    with db.read() as conn:
        assert list_conflicts(conn, "open", limit=1) == both[:1]
    resolve(db, both[0].conflict_id, "keep_both", "tester")
    with db.read() as conn:
        assert [c.conflict_id for c in list_conflicts(conn, "open", limit=5)] == [
            both[1].conflict_id
        ]
        assert [c.conflict_id for c in list_conflicts(conn, "resolved")] == [both[0].conflict_id]
        assert len(list_conflicts(conn, "all")) == 2
