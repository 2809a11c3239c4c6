"""`POST /api/v1/hooks`: a Claude Code hook hands its payload to the running service.

Body: `{"event": "Stop", "payload": {<Claude Code's hook JSON>}}`. Like every API write it
needs the API token (`Authorization: Bearer <token>`, see `api.auth`). The core
(`axiom.agent.intake.accept`) takes the transcript the payload names and answers with
the context block for SessionStart / UserPromptSubmit.

Under `axiom up` (AXIOM_BROKER_URL set) the transcript's import is queued for the worker
(`axiom.ingest_path`, which also runs the memory pipeline over it): the hook is answered
within its 0.6 s budget even while an import runs, and the web process, whose pages read
snapshots while others write, writes nothing itself. With no broker configured, or one
that does not answer, the import runs in the request as before: nothing is lost.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from api.auth import api_write_auth
from axiom.agent.intake import accept
from axiom.retrieval.query import SearchError
from axiom.settings import Settings
from config.queue import QueueUnavailable, send
from config.stores import get_database, search_service
from config.tasks import ingest_path

log = logging.getLogger(__name__)
router = Router(tags=["hooks"])


class HookIn(Schema):
    event: str
    payload: dict[str, Any]


@router.post("/hooks", auth=api_write_auth)
def receive_hook(request: HttpRequest, body: HookIn) -> dict[str, Any]:
    """Store what a Claude Code hook hands over and return the agent's context block."""
    budget = Settings.from_env().inject_budget
    with ExitStack() as held:
        try:
            search = held.enter_context(search_service())
        except SearchError:
            search = None
        return accept(get_database(), search, body.event, body.payload, budget, _queue_import)


def _queue_import(path: Path) -> str | None:
    """The id of the worker's import of `path`, or None: import it in the request."""
    settings = Settings.from_env()
    if not settings.broker_url:  # no `axiom up`: no worker is known to listen
        return None
    roots = [str(root) for root in settings.import_roots]
    try:
        return send(ingest_path, str(path), within=roots).id
    except QueueUnavailable as exc:
        log.warning("hook import of %s done in the request: %s", path, exc)
        return None
