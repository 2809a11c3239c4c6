"""Task pages: the list with a status filter, the blocked tasks, one task with its graph.

Same shape as `viewer.views`: one `with db.read()` unit per request through an
`axiom.tasks.queries` function; list pages return only their rows fragment to htmx.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from axiom.tasks.queries import get_task, list_blocked_tasks, list_tasks
from axiom.tasks.state import STATUSES
from config.stores import get_database
from viewer.blocker_graph import build_blocker_graph
from viewer.paging import offset_of, page_number, paged
from viewer.rendering import render_page

TASKS_PER_PAGE = 50


def _list_url(status: str, page: int) -> str:
    """The task list's URL with the status filter (if set) and the page (if not 1)."""
    params: list[tuple[str, str | int]] = [("status", status)] if status else []
    if page > 1:
        params.append(("page", page))
    base = reverse("viewer-tasks")
    return f"{base}?{urlencode(params)}" if params else base


def task_list(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    if status not in STATUSES:  # an unknown status shows every task, like a bad page number
        status = ""
    number = page_number(request.GET.get("page"))
    with get_database().read() as conn:
        rows = list_tasks(
            conn,
            status=status or None,
            limit=TASKS_PER_PAGE + 1,  # one more tells whether a next page exists
            offset=offset_of(number, TASKS_PER_PAGE),
        )
    tasks, pager = paged(rows, number, TASKS_PER_PAGE, lambda n: _list_url(status, n))
    context = {"tasks": tasks, "pager": pager, "status": status, "statuses": STATUSES}
    return render_page(request, "viewer/tasks/list.html", context, fragment="task-rows")


def blocked_tasks(request: HttpRequest) -> HttpResponse:
    with get_database().read() as conn:
        blocked = list_blocked_tasks(conn)
    return render(request, "viewer/tasks/blocked.html", {"blocked": blocked})


def task_detail(request: HttpRequest, task_id: str) -> HttpResponse:
    """A task by id (or an unambiguous id prefix of at least 6 characters)."""
    with get_database().read() as conn:
        detail = get_task(conn, task_id)
    if detail is None:
        raise Http404(f"No task {task_id!r}")
    context = {"detail": detail, "task": detail.task, "graph": build_blocker_graph(detail)}
    return render(request, "viewer/tasks/detail.html", context)
