"""The web's side of the queue, for when the broker does not answer.

Asked to queue a task while Redis is down, Celery retries its result subscription for
~20 s, then raises "The Celery application must be restarted" (it need not be: the next
call reconnects); reading a task's state raises at once. A page must neither hang nor
answer a bare 500, so `send` checks the broker first and fails within a second, and both
raise `QueueUnavailable`, whose message says what to do.
"""

from __future__ import annotations

from typing import Any

from celery import Task
from celery.result import AsyncResult

from config.celery import BROKER_DOWN, app

# Seconds the broker gets to answer before a page says it is down.
CONNECT_TIMEOUT = 2.0


class QueueUnavailable(RuntimeError):
    """The broker does not answer: nothing was queued or read."""

    def __init__(self, cause: Exception, consequence: str) -> None:
        super().__init__(
            f"The queue does not answer ({cause}), so {consequence}."
            " `python -m axiom up` restarts its broker within seconds: try again shortly."
            " If Axiom is not running, start it with `python -m axiom up`; with your own Redis"
            " (AXIOM_BROKER_URL), start that server."
        )


def send(task: Task, *args: Any, **kwargs: Any) -> AsyncResult:
    """Queue `task`, or raise `QueueUnavailable` at once."""
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=CONNECT_TIMEOUT)
        return task.delay(*args, **kwargs)
    except BROKER_DOWN as exc:
        raise QueueUnavailable(exc, "nothing was sent to the worker") from exc


def task_result(task_id: str) -> tuple[str, Any]:
    """A task's state and result (or progress info), or raise `QueueUnavailable`."""
    result = AsyncResult(task_id, app=app)
    try:
        return result.state, result.info
    except BROKER_DOWN as exc:
        raise QueueUnavailable(exc, "the state of this work cannot be read") from exc
