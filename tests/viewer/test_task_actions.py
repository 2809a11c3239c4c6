"""Task actions through the viewer's forms and the API (token required, like every write)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from axiom.store.db import Database
from axiom.tasks.canonical import entity_id_for, task_key
from axiom.tasks.queries import get_task
from axiom.tasks.resolver import TaskMention, TaskResolver

TASK = entity_id_for(task_key("axiom", "Publish the package"))


@pytest.fixture
def task(site: Database) -> str:
    with site.write() as conn:
        TaskResolver(conn, "axiom").resolve([TaskMention("e1", "s1", "Publish the package")])
    return TASK


def status_of(db: Database, task_id: str) -> str:
    with db.read() as conn:
        return get_task(conn, task_id).task.status


def test_the_task_page_has_the_action_forms(client, task):
    html = client.get(reverse("viewer-task", args=[task])).content.decode()
    assert f'action="/tasks/{task}/act"' in html
    assert f'hx-post="/tasks/{task}/act"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert 'value="done">Mark done</button>' in html
    assert f'action="/tasks/{task}/blockers"' in html


def test_mark_done_posts_and_redirects_to_the_task(client, site, task):
    response = client.post(
        reverse("viewer-task-act", args=[task]), {"action": "done", "actor": "Ana"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("viewer-task", args=[task])
    assert status_of(site, task) == "done"
    html = client.get(response["Location"]).content.decode()
    assert "person:Ana" in html  # the history names who did it


def test_linking_a_ticket_blocks_the_task(client, site, task):
    response = client.post(
        reverse("viewer-task-link-blocker", args=[task]), {"blocker": "PLAT-142"}
    )
    assert response.status_code == 302
    assert status_of(site, task) == "blocked"


def test_a_refused_action_shows_the_reason(client, task):
    response = client.post(reverse("viewer-task-link-blocker", args=[task]), {"blocker": " "})
    assert response.status_code == 422
    assert (
        "a blocker (task id, title, ticket, URL or text) is required" in response.content.decode()
    )


def test_the_forms_need_the_csrf_token(site, task):
    strict = Client(enforce_csrf_checks=True)
    response = strict.post(reverse("viewer-task-act", args=[task]), {"action": "done"})
    assert response.status_code == 403
    assert status_of(site, task) == "pending"


def test_the_api_needs_the_token(site, task, api_auth):
    url = f"/api/v1/tasks/{task}/actions"
    strict = Client(enforce_csrf_checks=True)
    denied = strict.post(url, {"action": "cancel"}, content_type="application/json")
    assert denied.status_code == 401
    ok = strict.post(url, {"action": "cancel"}, content_type="application/json", **api_auth)
    assert ok.status_code == 200, ok.content
    assert ok.json()["status"] == "cancelled" and len(ok.json()["event_ids"]) == 1
    blocker = strict.post(
        f"/api/v1/tasks/{task}/blockers", {"blocker": "#412"}, content_type="application/json",
        **api_auth,
    )  # fmt: skip
    assert blocker.status_code == 200, blocker.content
    assert blocker.json()["status"] == "cancelled"  # closed: the blocker is a suggestion
    unknown = strict.post(
        "/api/v1/tasks/tsk_nope/actions", {"action": "done"}, content_type="application/json",
        **api_auth,
    )  # fmt: skip
    assert unknown.status_code == 404
