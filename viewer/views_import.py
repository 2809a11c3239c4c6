"""The dashboard's "import your Claude Code transcripts" button (POST, CSRF-protected).

It takes no path from the request: `axiom.agent.discovery` reads only what sits inside
the Claude projects folder, exactly as `python -m axiom import` with no path does.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from axiom.agent.discovery import import_claude_transcripts
from axiom.observability.stats import collect_stats
from config.stores import get_database


@require_POST
def import_claude(request: HttpRequest) -> HttpResponse:
    db = get_database()
    outcome = import_claude_transcripts(db)
    with db.read() as conn:
        stats = collect_stats(conn)
    return render(
        request,
        "viewer/dashboard.html",
        {"stats": stats, "import_summary": outcome.summary()},
    )
