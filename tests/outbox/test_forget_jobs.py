"""`forget_jobs`: the jobs of forgotten sessions, entries and tasks leave the outbox; an id
that merely starts like a forgotten one (`s1` and `s10`) keeps its jobs."""

from __future__ import annotations

from datetime import datetime

from axiom.outbox.projector import forget_jobs, job_id
from axiom.store.db import Database


def _jobs(db: Database) -> list[tuple[str, str]]:
    with db.read() as conn:
        return conn.execute(
            "SELECT item_kind, item_id FROM vector_outbox ORDER BY item_kind, item_id"
        ).fetchall()


def test_it_deletes_the_jobs_of_forgotten_items_only(db: Database) -> None:
    items = [
        ("message", "s1:0"), ("message", "s1:1"), ("message", "s10:0"), ("message", "s2:0"),
        ("entry", "ent_a"), ("entry", "ent_b"), ("task", "tsk_a"), ("task", "tsk_b"),
    ]  # fmt: skip
    now = datetime(2026, 1, 1)
    with db.write() as conn:
        for kind, item in items:
            conn.execute(
                "INSERT INTO vector_outbox (job_id, item_kind, item_id, embedding_version,"
                " status, attempts, created_at, updated_at) VALUES (?, ?, ?, 'v', 'done', 1, ?, ?)",
                [job_id(kind, item, "v"), kind, item, now, now],
            )
        assert forget_jobs(conn, ["s1"], ["ent_a", "tsk_b"]) == 4
        assert forget_jobs(conn, [], []) == 0
    assert _jobs(db) == [
        ("entry", "ent_b"), ("message", "s10:0"), ("message", "s2:0"), ("task", "tsk_a"),
    ]  # fmt: skip
