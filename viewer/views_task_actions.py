"""The task page's forms: mark done, cancel, link a blocker (POST, CSRF-protected).

Each calls one `axiom.tasks.actions` function and redirects back to the task (post,
redirect, get: a reload does not post again). htmx posts the same forms and swaps `<main>`
from the page it is redirected to. A refused action shows the task page again with the
reason, status 422.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from axiom.tasks.actions import act_on_task, link_blocker
from axiom.tasks.commands import TaskCommandError, UnknownEntity
from config.stores import get_database
from viewer.views_tasks import task_detail

MAX_NAME = 200


def _actor(request: HttpRequest) -> str:
    name = request.POST.get("actor", "").strip()[:MAX_NAME]
    return f"person:{name}" if name else "person"


@require_POST
def task_act(request: HttpRequest, task_id: str) -> HttpResponse:
    """`action=done` or `action=cancel`, with an optional `note`."""
    note = request.POST.get("note", "")
    action = request.POST.get("action", "")
    try:
        result = act_on_task(get_database(), task_id, action, note=note, actor=_actor(request))
    except UnknownEntity:
        raise Http404(f"No task {task_id!r}") from None
    except TaskCommandError as exc:
        return task_detail(request, task_id, error=str(exc))
    return HttpResponseRedirect(reverse("viewer-task", args=[result.task_id]))


@require_POST
def task_link_blocker(request: HttpRequest, task_id: str) -> HttpResponse:
    """`blocker`: a task id or title, a ticket key, a URL or any text."""
    blocker = request.POST.get("blocker", "")
    try:
        result = link_blocker(
            get_database(), task_id, blocker, note=request.POST.get("note", ""),
            actor=_actor(request),
        )  # fmt: skip
    except UnknownEntity:
        raise Http404(f"No task {task_id!r}") from None
    except TaskCommandError as exc:
        return task_detail(request, task_id, error=str(exc))
    return HttpResponseRedirect(reverse("viewer-task", args=[result.task_id]))
