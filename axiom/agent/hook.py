"""One Claude Code hook call, whole: hand the payload over, then the context to print.

`axiom.agent.handoff` does the fast part (POST to the service, else spool). This module
adds the service-down context for SessionStart / UserPromptSubmit: one DuckDB read of the
store, full-text only (`axiom.agent.context`: no model, no LanceDB, no numpy). It imports
DuckDB, so the hook command (`axiom.hooks.run`) loads it only when that read is wanted.

`run_hook(name, stdin_text)` never raises and never blocks for long.
"""

from __future__ import annotations

from typing import Any

from axiom.agent.context import memories_from_store, render, session_start_memories
from axiom.agent.handoff import (
    CONTEXT_EVENTS,
    EVENTS,
    STORE_FILE,
    Handoff,
    hand_over,
    service_url,
)
from axiom.settings import Settings
from axiom.store.db import Database

__all__ = ["EVENTS", "local_context", "context_for", "run_hook", "service_url"]


def local_context(settings: Settings, event: str, payload: dict[str, Any]) -> str:
    """The context block from the DuckDB file alone ("" when there is none)."""
    path = settings.data_dir / STORE_FILE
    if event not in CONTEXT_EVENTS or not path.exists():
        return ""
    with Database(path).read() as conn:
        if event == "SessionStart":
            memories = session_start_memories(conn, payload.get("cwd"))
        else:
            memories = memories_from_store(conn, str(payload.get("prompt") or ""))
    return render(memories, settings.inject_budget)


def context_for(handoff: Handoff, settings: Settings) -> str:
    """What the hook prints: the service's block, else the store's (never an error)."""
    if not handoff.wants_local_context:
        return handoff.context
    try:
        return local_context(settings, handoff.event, handoff.payload)
    except Exception:  # noqa: BLE001 - a locked or broken store gives no context, not an error
        return ""


def run_hook(name: str, stdin_text: str, settings: Settings | None = None) -> str:
    """Handle one hook call; returns what to print (the context block, or "")."""
    settings = settings or Settings.from_env()
    return context_for(hand_over(name, stdin_text, settings), settings)
