"""The hook's hot path: POST the payload to the running service, else spool it.

Claude Code runs a hook command for every prompt, tool call and stop, and waits for it, so
this module imports only the standard library, `axiom.settings` and the spool (whose
privacy filter is `re` only): no DuckDB, numpy, LanceDB, Django or model. `python -X
importtime -m axiom.hooks.run stop` shows it; tests/agent/test_hook_speed.py guards it.

`hand_over(name, stdin_text)`:

1. POSTs Claude Code's hook JSON (session_id, transcript_path, cwd, hook_event_name,
   prompt, ...) to `POST /api/v1/hooks` on 127.0.0.1:AXIOM_PORT with the token of
   `auth_token`, within `POST_TIMEOUT`; the service stores the transcript and answers with
   the context block, which is what SessionStart / UserPromptSubmit print;
2. when the service does not answer, writes the payload to the spool (privacy-filtered)
   for the next `up`/`import`/`process`, and says whether a context event still wants
   the store's full-text read (`Handoff.wants_local_context`, done by `axiom.agent.hook`
   in the same process only then, so only that path loads DuckDB).

A payload the service accepted and the spool also holds (a reply lost to the timeout) is
stored once: imports dedupe.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from axiom.agent import spool
from axiom.settings import Settings
from axiom.store.api_token import api_token_path

# hook command name -> Claude Code's hook_event_name
EVENTS: dict[str, str] = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "post-tool-use": "PostToolUse",
    "stop": "Stop",
    "session-end": "SessionEnd",
}
CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit"})
POST_TIMEOUT = 0.6  # seconds: the whole hook must finish within one
HOOKS_PATH = "/api/v1/hooks"
STORE_FILE = "axiom.duckdb"
# Answers that refuse the payload itself (malformed, too large, a transcript_path outside
# AXIOM_IMPORT_ROOTS): sending it again later would be refused again, so it is not spooled.
# (Not 400: Django answers it for a Host it does not allow, a setting to fix, not the payload.)
REFUSED_STATUSES = frozenset({413, 415, 422})
# The service is on 127.0.0.1: an http_proxy in the agent's environment must not carry it.
LOCAL_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class Handoff:
    """What one hook call did: where the payload went and what to print."""

    event: str
    payload: dict[str, Any] = field(default_factory=dict)
    delivered: bool = False  # the service accepted it
    spooled: bool = False
    context: str = ""  # the service's context block
    wants_local_context: bool = False  # service down, context event, a store to read
    refused: str = ""  # why the service refused the payload (not spooled)
    malformed: str = ""  # why stdin is no hook payload (not sent, not spooled)


class MalformedPayload(ValueError):
    """The hook's stdin is not a JSON object: nothing to hand over."""


class ServiceRefused(Exception):
    """The service answered that this payload is not acceptable (a 4xx in
    `REFUSED_STATUSES`); the message is its reason."""


def auth_token(settings: Settings) -> str | None:
    """The API token: AXIOM_AUTH_TOKEN (or its _FILE), else the token the service generated
    into the data directory (`axiom.store.api_token`; `python -m axiom token` prints it).
    Only read here: a hook never creates the token."""
    if settings.auth_token:
        return settings.auth_token
    try:
        return api_token_path(settings.data_dir).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def service_url(settings: Settings) -> str:
    return f"http://127.0.0.1:{settings.port}"


def post_to_service(
    settings: Settings, event: str, payload: dict[str, Any], timeout: float = POST_TIMEOUT
) -> dict[str, Any] | None:
    """The service's answer, or None when it is down, slow or not authorised;
    `ServiceRefused` when it rejects the payload itself."""
    body = json.dumps({"event": event, "payload": payload}).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    token = auth_token(settings)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        service_url(settings) + HOOKS_PATH, data=body, headers=headers, method="POST"
    )
    try:
        with LOCAL_OPENER.open(request, timeout=timeout) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as error:
        if error.code in REFUSED_STATUSES:
            raise ServiceRefused(f"HTTP {error.code}: {_detail(error)}") from None
        return None
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) and answer.get("accepted") else None


def _detail(error: urllib.error.HTTPError) -> str:
    """The API's JSON `detail`, else the HTTP reason."""
    try:
        detail = json.loads(error.read().decode("utf-8")).get("detail")
    except (OSError, ValueError, AttributeError):
        detail = None
    return str(detail or error.reason)[:300]


def parse_payload(stdin_text: str) -> dict[str, Any]:
    """Claude Code's hook JSON (empty stdin: an empty payload); `MalformedPayload` when
    it is not a JSON object, so the hook refuses it instead of handing over nothing."""
    if not stdin_text.strip():
        return {}
    try:
        payload = json.loads(stdin_text)
    except ValueError as exc:
        raise MalformedPayload(f"stdin is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise MalformedPayload(f"stdin is not a JSON object (a {type(payload).__name__})")
    return payload


def hand_over(name: str, stdin_text: str, settings: Settings) -> Handoff:
    """POST the payload, else spool it; never raises for a bad payload or a down service
    (a malformed one is only marked: `Handoff.malformed`)."""
    try:
        payload = parse_payload(stdin_text)
    except MalformedPayload as exc:
        return Handoff(EVENTS.get(name, name), malformed=str(exc))
    event = str(payload.get("hook_event_name") or EVENTS.get(name, name))
    handoff = Handoff(event, payload)
    try:
        answer = post_to_service(settings, event, payload)
    except ServiceRefused as refusal:
        handoff.refused = str(refusal)
        return handoff
    if answer is not None:
        handoff.delivered = True
        handoff.context = str(answer.get("context") or "")
        return handoff
    if payload.get("transcript_path"):
        spool.write(settings.data_dir, event, payload)
        handoff.spooled = True
    handoff.wants_local_context = (
        event in CONTEXT_EVENTS
        and settings.inject_budget > 0
        and (settings.data_dir / STORE_FILE).exists()
    )
    return handoff
