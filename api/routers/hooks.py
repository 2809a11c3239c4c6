"""`POST /api/v1/hooks`: a Claude Code hook hands its payload to the running service.

Body: `{"event": "Stop", "payload": {<Claude Code's hook JSON>}}`. Like every API write it
needs the API token (`Authorization: Bearer <token>`, see `api.auth`). The core
(`axiom.agent.intake.accept`) imports the transcript the payload names and answers with
the context block for SessionStart / UserPromptSubmit.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from api.auth import api_write_auth
from axiom.agent.intake import accept
from axiom.retrieval.query import SearchError
from axiom.settings import Settings
from config.stores import get_database, search_service

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
        return accept(get_database(), search, body.event, body.payload, budget)
