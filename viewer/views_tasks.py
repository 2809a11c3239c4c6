"""Task pages: the list with a status filter, the blocked tasks, one task with its graph.

Same shape as `viewer.views`: one `with db.read()` unit per request through an
`axiom.tasks.queries` function; list pages return only their rows fragment to htmx.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers

from axiom.tasks.queries import TaskSummary, get_task, list_blocked_tasks, list_tasks
from axiom.tasks.state import STATUSES
from config.stores import get_database
from viewer.blocker_graph import build_blocker_graph
from viewer.views import _fragment_wanted, _page_number

TASKS_PER_PAGE = 50


@dataclass(frozen=True)
class TaskPage:
    tasks: list[TaskSummary]
    page: int
    has_next: bool
    status: str

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    def url(self, page: int) -> str:
        params: list[tuple[str, str | int]] = [("status", self.status)] if self.status else []
        if page > 1:
            params.append(("page", page))
        base = reverse("viewer-tasks")
        return f"{base}?{urlencode(params)}" if params else base

    @property
    def previous_url(self) -> str:
        return self.url(self.page - 1)

    @property
    def next_url(self) -> str:
        return self.url(self.page + 1)


def task_list(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status", "")
    if status not in STATUSES:  # an unknown status shows every task, like a bad page number
        status = ""
    number = _page_number(request.GET.get("page"))
    with get_database().read() as conn:
        rows = list_tasks(
            conn,
            status=status or None,
            limit=TASKS_PER_PAGE + 1,
            offset=(number - 1) * TASKS_PER_PAGE,
        )
    page = TaskPage(rows[:TASKS_PER_PAGE], number, len(rows) > TASKS_PER_PAGE, status)
    template = "viewer/tasks/list.html"
    if _fragment_wanted(request):
        template += "#task-rows"
    response = render(request, template, {"page": page, "statuses": STATUSES})
    patch_vary_headers(response, ["HX-Request"])
    return response


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
