"""Task pages: the list with a status filter, the blocked tasks, one task with its graph.

Same shape as `viewer.views`: one `with db.read()` unit per request through an
`axiom.tasks.queries` function; list pages return only their rows fragment to htmx.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import duckdb
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from axiom.tasks.as_of import get_task_as_of, list_blocked_tasks_as_of, list_tasks_as_of
from axiom.tasks.graph import get_blocker_graph
from axiom.tasks.queries import get_task, list_blocked_tasks, list_tasks
from axiom.tasks.state import STATUSES
from config.stores import get_database
from viewer.as_of import as_of
from viewer.blocker_graph import build_blocker_graph
from viewer.paging import offset_of, page_number, paged
from viewer.project_graph import build_project_graph
from viewer.rendering import render_page

TASKS_PER_PAGE = 50


def _list_url(status: str, page: int, when: str = "") -> str:
    """The task list's URL with the status filter and as_of (if set) and the page (if not
    1)."""
    params: list[tuple[str, str | int]] = [("status", status)] if status else []
    if when:
        params.append(("as_of", when))
    if page > 1:
        params.append(("page", page))
    base = reverse("viewer-tasks")
    return f"{base}?{urlencode(params)}" if params else base


def task_list(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    if status not in STATUSES:  # an unknown status shows every task, like a bad page number
        status = ""
    number = page_number(request.GET.get("page"))
    when = as_of(request)
    offset = offset_of(number, TASKS_PER_PAGE)
    # Titles that name nothing ("Fix") are hidden by default, never silently: the page says
    # so and one checkbox (`vague=1`) shows them.
    hide = request.GET.get("vague") != "1"
    with get_database().read() as conn:
        if when.when is None:
            rows = list_tasks(
                conn,
                status=status or None,
                limit=TASKS_PER_PAGE + 1,  # one more tells whether a next page exists
                offset=offset,
                hide_vague=hide,
            )
        else:
            rows = list_tasks_as_of(conn, when.when, status=status or None, hide_vague=hide)
            rows = rows[offset : offset + TASKS_PER_PAGE + 1]
    text = when.text if when.when else ""
    tasks, pager = paged(rows, number, TASKS_PER_PAGE, lambda n: _list_url(status, n, text))
    context = {
        "tasks": tasks,
        "pager": pager,
        "status": status,
        "statuses": STATUSES,
        "as_of": when,
        "hide_vague": hide,
    }
    return render_page(request, "viewer/tasks/list.html", context, fragment="task-rows")


def blocked_tasks(request: HttpRequest) -> HttpResponse:
    when = as_of(request)
    with get_database().read() as conn:
        if when.when is None:
            blocked = list_blocked_tasks(conn)
        else:
            blocked = list_blocked_tasks_as_of(conn, when.when)
    return render(request, "viewer/tasks/blocked.html", {"blocked": blocked, "as_of": when})


def task_detail(request: HttpRequest, task_id: str, error: str = "") -> HttpResponse:
    """A task by id (or an unambiguous id prefix of at least 6 characters); `error` is a
    refused action's reason (`viewer.views_task_actions`), shown with status 422."""
    when = as_of(request)

    def find(conn: duckdb.DuckDBPyConnection) -> Any:
        return (
            get_task(conn, task_id)
            if when.when is None
            else get_task_as_of(conn, task_id, when.when)
        )

    detail = get_database().lookup(find)  # a snapshot that lacks it is not a 404
    if detail is None:
        raise Http404(f"No task {task_id!r}" + (f" as of {when.text}" if when.when else ""))
    context = {
        "detail": detail,
        "task": detail.task,
        "graph": build_blocker_graph(detail),
        "as_of": when,
        "action_error": error,
    }
    status = 422 if error and not request.htmx else 200  # htmx swaps only 2xx answers
    return render(request, "viewer/tasks/detail.html", context, status=status)


def task_graph(request: HttpRequest) -> HttpResponse:
    """Every open task that blocks or is blocked, with its blockers; `?project=` narrows it
    to one project, `?closed=1` adds done and cancelled tasks."""
    project = request.GET.get("project", "").strip()
    closed = request.GET.get("closed") == "1"
    with get_database().read() as conn:
        data = get_blocker_graph(conn, project=project or None, closed=closed)
    context = {
        "graph": build_project_graph(data),
        "projects": data.projects,
        "project": project,
        "closed": closed,
    }
    return render(request, "viewer/tasks/graph.html", context)
