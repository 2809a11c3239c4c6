"""Tasks, blockers and resolved conditions, mounted at ``/api/v1/``.

All reads, plus three writes: ``POST /conditions/{cond_id}/resolve`` records that a
condition resolves to a task, artifact or other condition (`resolve_condition_in`, one
`Database.write()` unit); ``POST /tasks/{task_id}/actions`` marks a task done or cancels
it and ``POST /tasks/{task_id}/blockers`` links a blocker (`axiom.tasks.actions`). Unknown ids are 404, a resolution the graph forbids (to
itself, a cycle) 409 and malformed requests 422 (mapped in `api.api`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Path as PathParam
from ninja import Query, Router

from api.auth import api_write_auth
from api.errors import NotFound
from api.schemas import NOT_BLANK, AsOf, responses
from api.schemas_tasks import (
    BlockedTaskOut,
    LinkBlockerIn,
    ResolveConditionIn,
    ResolvedConditionOut,
    TaskActionIn,
    TaskActionOut,
    TaskDetailOut,
    TaskListParams,
    TaskOut,
)
from axiom.store.timepoints import parse_timepoint
from axiom.tasks.actions import ActionResult, act_on_task, link_blocker
from axiom.tasks.as_of import get_task_as_of, list_blocked_tasks_as_of, list_tasks_as_of
from axiom.tasks.commands import resolve_condition_in
from axiom.tasks.queries import get_task, list_blocked_tasks, list_resolved_conditions, list_tasks
from config.stores import get_database

router = Router(tags=["tasks"])


def _when(as_of: str | None) -> datetime | None:
    """`?as_of=` read as the CLI's `--as-of` (a bad one is a 422, mapped in `api.api`)."""
    return parse_timepoint(as_of, end_of_day=True) if as_of else None


@router.get("/tasks", response=responses(list[TaskOut]))
def tasks(request: HttpRequest, params: Query[TaskListParams]) -> list[dict[str, Any]]:
    """Tasks, most recently changed first, optionally filtered by status and project;
    with `as_of`, as the task events said by then left them (`axiom.tasks.as_of`)."""
    when = _when(params.as_of)
    with get_database().read() as conn:
        if when is not None:
            found = list_tasks_as_of(conn, when, status=params.status, project=params.project)
            found = found[params.offset : params.offset + params.limit]
        else:
            found = list_tasks(
                conn,
                status=params.status,
                project=params.project,
                limit=params.limit,
                offset=params.offset,
            )
    return [t.to_json() for t in found]


@router.get("/tasks/blocked", response=responses(list[BlockedTaskOut]))
def blocked_tasks(
    request: HttpRequest, project: str | None = None, as_of: AsOf = None
) -> list[dict[str, Any]]:
    """Blocked tasks, each with its effective blockers (resolved conditions expanded);
    with `as_of`, those blocked then, with the blockers named by then."""
    when = _when(as_of)
    with get_database().read() as conn:
        if when is not None:
            found = list_blocked_tasks_as_of(conn, when, project=project)
        else:
            found = list_blocked_tasks(conn, project=project)
    return [b.to_json() for b in found]


@router.get("/tasks/{task_id}", response=responses(TaskDetailOut, 404))
def task_detail(request: HttpRequest, task_id: str, as_of: AsOf = None) -> dict[str, Any]:
    """One task: state, declared/effective/suggested blockers, evidence, full history;
    with `as_of`, as it stood then (404 if it did not exist yet)."""
    when = _when(as_of)
    detail = get_database().lookup(
        lambda conn: (
            get_task(conn, task_id) if when is None else get_task_as_of(conn, task_id, when)
        )
    )
    if detail is None:
        raise NotFound(f"task {task_id!r} not found" + (f" as of {as_of}" if when else ""))
    return detail.to_json()


@router.get("/conditions/resolved", response=responses(list[ResolvedConditionOut]))
def resolved_conditions(request: HttpRequest) -> list[dict[str, Any]]:
    """Conditions that resolve to another entity, newest first."""
    with get_database().read() as conn:
        found = list_resolved_conditions(conn)
    return [r.to_json() for r in found]


@router.post(
    "/conditions/{cond_id}/resolve",
    response=responses(ResolvedConditionOut, 409, write=True),
    auth=api_write_auth,
)
def resolve_condition(
    request: HttpRequest,
    body: ResolveConditionIn,
    cond_id: str = PathParam(..., pattern=NOT_BLANK),
) -> dict[str, Any]:
    """Record that the condition is the same thing as `target_id` (a task, an artifact or
    another condition); blocked tasks then show the target as their effective blocker.
    The answer is the condition as it now resolves (`event_id`: the event just appended)."""
    _, view = resolve_condition_in(
        get_database(), cond_id, body.target_id, note=body.note, actor="api"
    )
    return view.to_json()


def _action_out(result: ActionResult) -> dict[str, Any]:
    return {
        "task_id": result.task_id,
        "status": result.status,
        "event_ids": [e.event_id for e in result.events],
    }


@router.post(
    "/tasks/{task_id}/actions",
    response=responses(TaskActionOut, write=True),
    auth=api_write_auth,
)
def task_action(
    request: HttpRequest, body: TaskActionIn, task_id: str = PathParam(..., pattern=NOT_BLANK)
) -> dict[str, Any]:
    """Mark the task done or cancel it, as a person would (a closed task is reopened first);
    recorded as `task_status_changed` events with `source: person`."""
    result = act_on_task(get_database(), task_id, body.action, note=body.note, actor="api")
    return _action_out(result)


@router.post(
    "/tasks/{task_id}/blockers",
    response=responses(TaskActionOut, write=True),
    auth=api_write_auth,
)
def task_link_blocker(
    request: HttpRequest, body: LinkBlockerIn, task_id: str = PathParam(..., pattern=NOT_BLANK)
) -> dict[str, Any]:
    """Link a blocker (task id or title, ticket key, URL or text); an open task becomes
    blocked."""
    result = link_blocker(get_database(), task_id, body.blocker, note=body.note, actor="api")
    return _action_out(result)
