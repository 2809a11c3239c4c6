"""REST endpoints of `api.routers.tasks`, mounted on a test NinjaAPI at ``/v1/`` the way
`api.api` mounts it (with the same NotFound → 404 mapping)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from ninja import NinjaAPI
from ninja.testing import TestClient

from api.errors import NotFound
from api.routers.tasks import router
from axiom.store.db import Database
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.commands import resolve_condition
from axiom.tasks.resolver import TaskMention, TaskResolver
from viewer import db as viewer_db

PROJECT = "axiom"


def tid(title: str) -> str:
    return entity_id_for(task_key(PROJECT, title))


@pytest.fixture
def client(settings, data_dir: Path, db: Database) -> Iterator[TestClient]:
    settings.AXIOM_DATA_DIR = data_dir
    settings.AXIOM_AUTH_TOKEN = ""
    viewer_db.reset()
    api = NinjaAPI(urls_namespace="tasks-api-test")
    api.add_router("/v1/", router)

    def not_found(request, exc):
        return api.create_response(request, {"detail": str(exc)}, status=404)

    api.add_exception_handler(NotFound, not_found)
    with db.write() as conn:
        TaskResolver(conn, PROJECT).resolve(
            [
                TaskMention("e1", "s1", "Ship the release", "blocked", blocked_by=("PLAT-142", "waiting on QA sign-off"), evidence_aligned=True),
                TaskMention("e2", "s2", "ship the release.", "blocked", evidence_aligned=True),
                TaskMention("e3", "s2", "QA sign-off", "in_progress", evidence_aligned=True),
                TaskMention("e4", "s2", "Write notes", "pending", evidence_aligned=True),
            ]
        )  # fmt: skip
    yield TestClient(api)
    viewer_db.reset()


def test_tasks_lists_and_filters_by_status(client) -> None:
    response = client.get("/v1/tasks")
    assert response.status_code == 200
    assert {t["title"] for t in response.json()} == {
        "Ship the release",
        "QA sign-off",
        "Write notes",
    }

    response = client.get("/v1/tasks?status=pending")
    assert [t["title"] for t in response.json()] == ["Write notes"]
    assert response.json()[0]["updated_at"].endswith("Z")

    assert client.get("/v1/tasks?status=sleeping").status_code == 422


def test_blocked_tasks_carry_their_effective_blockers(client) -> None:
    [blocked] = client.get("/v1/tasks/blocked").json()
    assert blocked["task_id"] == tid("Ship the release")
    assert blocked["mention_count"] == 2
    kinds = sorted((b["kind"], b["title"], b["via_resolution"]) for b in blocked["blockers"])
    # "waiting on QA sign-off" became a condition, then the task "QA sign-off" resolved it
    assert kinds == [("artifact", "PLAT-142", False), ("task", "QA sign-off", True)]


def test_task_detail_and_unknown_ids(client) -> None:
    response = client.get(f"/v1/tasks/{tid('Ship the release')}")
    assert response.status_code == 200
    data = response.json()
    assert data["status"] == "blocked"
    assert [e["entry_id"] for e in data["evidence"]] == ["e1", "e2"]
    assert data["history"][0]["event_type"] == "task_created"
    assert all(h["ts"].endswith("Z") for h in data["history"])

    response = client.get("/v1/tasks/tsk_nothinghere")
    assert response.status_code == 404
    assert response.json() == {"detail": "task 'tsk_nothinghere' not found"}


def test_resolved_conditions(client, db: Database) -> None:
    [row] = client.get("/v1/conditions/resolved").json()
    assert row["target_id"] == tid("QA sign-off")
    assert row["blocking"] == [tid("Ship the release")]

    with db.write() as conn:
        notes_blocker = TaskResolver(conn, PROJECT).resolve(
            [TaskMention("e5", "s3", "Write notes", "blocked", blocked_by=("legal review",), evidence_aligned=True)]
        )  # fmt: skip
        cond = next(e for e in notes_blocker if e.event_type == "condition_declared").payload
        resolve_condition(conn, cond["condition_id"], tid("Ship the release"), reason="test")
    assert len(client.get("/v1/conditions/resolved").json()) == 2
