"""`POST /api/v1/hooks`: a Claude Code hook hands its payload to the running service.

Body: `{"event": "Stop", "payload": {<Claude Code's hook JSON>}}`. When AXIOM_AUTH_TOKEN
is set, the request must carry `Authorization: Bearer <token>`. The core
(`axiom.agent.intake.accept`) imports the transcript the payload names and answers with
the context block for SessionStart / UserPromptSubmit.
"""

from __future__ import annotations

import hmac
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja import Router, Schema

from axiom.agent.intake import accept
from axiom.retrieval.query import SearchError
from axiom.settings import Settings
from config.stores import get_database, get_search_service

router = Router(tags=["hooks"])


class HookIn(Schema):
    event: str
    payload: dict[str, Any]


class Unauthorized(PermissionError):
    """The hook call did not carry the service's token."""


def _check_token(request: HttpRequest) -> None:
    expected = getattr(settings, "AXIOM_AUTH_TOKEN", "")
    if not expected:
        return
    given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise Unauthorized("a valid token is required (Authorization: Bearer <token>)")


@router.post("/hooks")
def receive_hook(request: HttpRequest, body: HookIn) -> dict[str, Any]:
    """Store what a Claude Code hook hands over and return the agent's context block."""
    _check_token(request)
    try:
        search = get_search_service()
    except SearchError:
        search = None
    budget = Settings.from_env().inject_budget
    return accept(get_database(), search, body.event, body.payload, budget)
