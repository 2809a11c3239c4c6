"""REST endpoints of `api.routers.tasks`, mounted on a test NinjaAPI at ``/v1/`` the way
`api.api` mounts it (with the same NotFound → 404 mapping)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from ninja import NinjaAPI
from ninja.testing import TestClient

from api.errors import NotFound
from api.routers.tasks import router
from axiom.store.db import Database
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.commands import resolve_condition
from axiom.tasks.resolver import TaskMention, TaskResolver
from config import stores

PROJECT = "axiom"


def tid(title: str) -> str:
    return entity_id_for(task_key(PROJECT, title))


@pytest.fixture
def client(settings, data_dir: Path, db: Database) -> Iterator[TestClient]:
    settings.AXIOM_DATA_DIR = data_dir
    settings.AXIOM_AUTH_TOKEN = ""
    stores.reset()
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
    stores.reset()


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


# --------------------------------------------------------------------------- resolve (write)


@pytest.fixture
def web(site: Database) -> Client:
    """The whole site (`api.api`, with its error mapping) over this test's database."""
    with site.write() as conn:
        TaskResolver(conn, PROJECT).resolve(
            [
                TaskMention("w1", "s1", "Deploy the API", "blocked", blocked_by=("waiting on the DNS change",), evidence_aligned=True),
                TaskMention("w2", "s1", "Move DNS to the new provider", "in_progress", evidence_aligned=True),
            ]
        )  # fmt: skip
    return Client(headers={"Authorization": f"Bearer {stores.get_api_token()}"})


def _condition(db: Database, text: str) -> str:
    with db.read() as conn:
        return conn.execute(
            "SELECT entity_id FROM entities WHERE entity_type = 'condition' AND title = ?", [text]
        ).fetchone()[0]


def _resolve(web: Client, cond: str, body: object):  # type: ignore[no-untyped-def]
    return web.post(
        f"/api/v1/conditions/{cond}/resolve", json.dumps(body), content_type="application/json"
    )


def test_resolving_a_condition_through_the_api_expands_the_blocker(web: Client, site) -> None:
    cond = _condition(site, "the DNS change")
    dns = tid("Move DNS to the new provider")

    response = _resolve(web, cond, {"target_id": dns, "note": "the DNS change is that task"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["condition_id"], body["target_id"], body["target_type"]) == (cond, dns, "task")
    assert body["reason"] == "the DNS change is that task"
    assert body["blocking"] == [tid("Deploy the API")] and body["event_id"]
    with site.read() as conn:
        actor = conn.execute(
            "SELECT actor FROM events WHERE event_id = ?", [body["event_id"]]
        ).fetchone()[0]
    assert actor == "api"
    [blocked] = web.get("/api/v1/tasks/blocked").json()
    [effective] = blocked["blockers"]
    assert (effective["entity_id"], effective["via_resolution"], effective["declared_id"]) == (
        dns,
        True,
        cond,
    )


@pytest.mark.parametrize(
    ("cond", "body", "status", "detail"),
    [
        ("cnd_000000000000", {"target_id": "TASK"}, 404, "unknown condition 'cnd_000000000000'"),
        ("COND", {"target_id": "tsk_000000000000"}, 404, "unknown entity 'tsk_000000000000'"),
        ("COND", {"target_id": "COND"}, 409, "a condition cannot resolve to itself"),
        ("COND", {"target_id": "  "}, 422, None),  # blank
        ("COND", {"target_id": "\x1e"}, 422, None),  # blank to str.strip()
        ("COND", {}, 422, None),  # no target_id
        ("COND", {"target_id": 7}, 422, None),
        ("COND", {"target_id": ""}, 422, None),
        ("COND", {"target_id": "TASK", "note": "x" * 2001}, 422, None),
        ("COND", ["not", "an", "object"], 422, None),
    ],
)
def test_bad_resolutions_are_4xx_and_write_nothing(  # type: ignore[no-untyped-def]
    web: Client, site, cond: str, body, status: int, detail: str | None
) -> None:
    ids = {"COND": _condition(site, "the DNS change"), "TASK": tid("Move DNS to the new provider")}
    cond = ids.get(cond, cond)
    if isinstance(body, dict):
        body = {k: ids.get(v, v) if isinstance(v, str) else v for k, v in body.items()}

    response = _resolve(web, cond, body)

    assert response.status_code == status, response.content
    if detail is not None:
        assert response.json() == {"detail": detail}
    with site.read() as conn:
        count = conn.execute(
            "SELECT count(*) FROM events WHERE event_type = 'condition_resolved_to'"
        ).fetchone()[0]
    assert count == 0


def test_a_resolution_cycle_is_refused(web: Client, site) -> None:
    cond = _condition(site, "the DNS change")
    with site.write() as conn:
        events = TaskResolver(conn, PROJECT).resolve(
            [TaskMention("w3", "s2", "Cut over", "blocked", blocked_by=("registrar approval",), evidence_aligned=True)]
        )  # fmt: skip
    other = next(e for e in events if e.event_type == "condition_declared").payload["condition_id"]
    assert _resolve(web, cond, {"target_id": other}).status_code == 200
    response = _resolve(web, other, {"target_id": cond})
    assert response.status_code == 409
    assert "cycle" in response.json()["detail"]
