"""`POST /api/v1/hooks`: a Claude Code hook hands its payload to the running service.

Body: `{"event": "Stop", "payload": {<Claude Code's hook JSON>}}`. Like every API write it
needs the API token (`Authorization: Bearer <token>`, see `api.auth`). The core
(`axiom.agent.intake.accept`) takes the transcript the payload names and answers with
the context block for SessionStart / UserPromptSubmit.

Under `axiom up` (AXIOM_BROKER_URL set) the import goes to the worker: the payload is
spooled (`axiom.agent.spool`: filtered, fsynced) and `axiom.import_spooled_hooks` queued,
which imports the spooled transcripts and runs the memory pipeline over them. The hook
is answered within its 0.6 s budget even while an import runs, the web process (whose
pages read snapshots while others write) writes nothing to the store for it, and a task
the in-memory broker loses leaves its payload in the spool for the next task or the next
`axiom up` (beat runs the task every minute). With AXIOM_BROKER_URL set, `queued` means
"imported when a worker runs": `axiom up` runs one. With no broker configured, one that does
not answer, or a path the privacy filter would mask in the spool, the import runs in the
request as before.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from api.auth import api_write_auth
from axiom.agent import spool
from axiom.agent.intake import accept
from axiom.retrieval.query import SearchError
from axiom.settings import Settings
from config.queue import QueueUnavailable, send
from config.stores import get_database, search_service
from config.tasks import import_spooled_hooks

log = logging.getLogger(__name__)
router = Router(tags=["hooks"])


class HookIn(Schema):
    event: str
    payload: dict[str, Any]


@router.post("/hooks", auth=api_write_auth)
def receive_hook(request: HttpRequest, body: HookIn) -> dict[str, Any]:
    """Store (or queue for the worker) what a Claude Code hook hands over and return the
    agent's context block."""
    settings = Settings.from_env()
    with ExitStack() as held:
        try:
            search = held.enter_context(search_service())
        except SearchError:
            search = None
        queue = _spool_and_queue(settings, body.event, body.payload)
        budget = settings.inject_budget
        return accept(get_database(), search, body.event, body.payload, budget, queue)


def _spool_and_queue(
    settings: Settings, event: str, payload: dict[str, Any]
) -> Callable[[Path], str | None]:
    """The `queue_import` of this hook call: spool the payload, queue the worker's import
    and return its task id; None (import in the request) without a broker."""

    def queue(path: Path) -> str | None:
        if not settings.broker_url:  # no `axiom up`: no worker is known to listen
            return None
        raw = payload.get("transcript_path")
        if spool.scrub(raw) != raw:  # the filter would mask the path in the spool
            return None
        record = spool.write(settings.data_dir, event, payload)
        try:
            return send(import_spooled_hooks).id
        except QueueUnavailable as exc:
            record.unlink(missing_ok=True)  # imported in the request instead
            log.warning("hook import of %s done in the request: %s", path, exc)
            return None

    return queue
