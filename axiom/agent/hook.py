"""One Claude Code hook call: read the payload, hand it over, print context, exit 0.

`run_hook(event, stdin_text)` never raises and never blocks for long:

1. the payload (Claude Code's hook JSON: session_id, transcript_path, cwd,
   hook_event_name, prompt, ...) is POSTed to the running service (`POST /api/v1/hooks` on
   127.0.0.1:AXIOM_PORT, with the token of `auth_token`) within `POST_TIMEOUT`; the service
   imports the transcript and answers with the context block;
2. when the service does not answer, the payload goes to the spool (`axiom.agent.spool`,
   privacy-filtered) for the next `up`/`import`/`process`, and SessionStart /
   UserPromptSubmit get their context from one DuckDB read (`axiom.agent.context`,
   full-text only: no model, no LanceDB).

A payload the service accepted and the spool also holds (a reply lost to the timeout) is
stored once: imports dedupe. This module is on the hook's hot path: it imports only the
standard library, settings, the spool and the light context readers.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any

from axiom.agent import spool
from axiom.agent.context import memories_from_store, render, session_start_memories
from axiom.settings import Settings, env_str
from axiom.store.db import Database

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
TOKEN_FILE = "token"


def auth_token(settings: Settings) -> str | None:
    """The API token: AXIOM_AUTH_TOKEN, else the `token` file in the data directory.
    (The one place that knows where the token lives.)"""
    token = env_str(os.environ, "AXIOM_AUTH_TOKEN", "")
    if token:
        return token
    try:
        return (settings.data_dir / TOKEN_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def service_url(settings: Settings) -> str:
    return f"http://127.0.0.1:{settings.port}"


def post_to_service(
    settings: Settings, event: str, payload: dict[str, Any], timeout: float = POST_TIMEOUT
) -> dict[str, Any] | None:
    """The service's answer, or None when it is down, slow or refuses."""
    body = json.dumps({"event": event, "payload": payload}).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    token = auth_token(settings)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        service_url(settings) + HOOKS_PATH, data=body, headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            answer = json.loads(response.read().decode("utf-8"))
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) and answer.get("accepted") else None


def parse_payload(stdin_text: str) -> dict[str, Any]:
    try:
        payload = json.loads(stdin_text) if stdin_text.strip() else {}
    except ValueError:
        return {}
    return payload if isinstance(payload, dict) else {}


def local_context(settings: Settings, event: str, payload: dict[str, Any]) -> str:
    """The context block from the DuckDB file alone ("" when there is none)."""
    path = settings.data_dir / "axiom.duckdb"
    if event not in CONTEXT_EVENTS or not path.exists():
        return ""
    with Database(path).read() as conn:
        if event == "SessionStart":
            memories = session_start_memories(conn, payload.get("cwd"))
        else:
            memories = memories_from_store(conn, str(payload.get("prompt") or ""))
    return render(memories, settings.inject_budget)


def run_hook(name: str, stdin_text: str, settings: Settings | None = None) -> str:
    """Handle one hook call; returns what to print (the context block, or "")."""
    settings = settings or Settings.from_env()
    event = EVENTS.get(name, name)
    payload = parse_payload(stdin_text)
    event = str(payload.get("hook_event_name") or event)
    answer = post_to_service(settings, event, payload)
    if answer is not None:
        return str(answer.get("context") or "")
    if payload.get("transcript_path"):
        spool.write(settings.data_dir, event, payload)
    if settings.inject_budget <= 0:
        return ""
    try:
        return local_context(settings, event, payload)
    except Exception:  # noqa: BLE001 - a locked or broken store gives no context, not an error
        return ""
