"""Importing from the viewer: the dashboard's Claude Code button, and the import page.

The button takes no path from the request: `axiom.agent.discovery` reads only what sits
inside the Claude projects folder, exactly as `python -m axiom import` with no path does.

The import page (`/import/`) takes an uploaded file (kept under `<data dir>/uploads/`) or a
path, which must lie under `AXIOM_IMPORT_ROOTS` (`confine_to_import_roots`). Either is sent
to the worker as the `axiom.ingest_path` task, the same one `axiom up` sends the sample
through, and the browser is redirected to the task's status page: htmx polls its progress
fragment every second; without JavaScript the page refreshes itself until the import ends.
While the broker does not answer, both pages say so with a 503 (`config.queue`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from axiom.agent.discovery import import_claude_transcripts
from axiom.ingest.import_roots import PathOutsideImportRoots, confine_to_import_roots
from axiom.ingest.uploads import UploadTooLarge, abandon_upload, store_upload
from axiom.observability.stats import collect_stats
from axiom.settings import Settings
from config.queue import QueueUnavailable, send, task_result
from config.stores import get_database
from config.tasks import ingest_path
from viewer.rendering import render_page

TASK_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


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


class ImportRefused(ValueError):
    """The form named nothing importable; the message says why (`status` the HTTP code)."""

    def __init__(self, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.status = status


@require_http_methods(["GET", "POST"])
def import_page(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _form(request)
    try:
        source, within = _source(request)
    except ImportRefused as exc:
        return _form(request, str(exc), exc.status)
    try:
        started = send(ingest_path, str(source), within=within)
    except QueueUnavailable as exc:
        abandon_upload(Path(settings.AXIOM_DATA_DIR), source)  # no raw copy left behind
        return _form(request, str(exc), 503)
    return redirect("viewer-import-status", task_id=started.id)


def _form(request: HttpRequest, error: str = "", status: int = 200) -> HttpResponse:
    context = {
        "error": error,
        "path": request.POST.get("path", ""),
        "roots": Settings.from_env().import_roots,
        "max_mb": settings.AXIOM_IMPORT_MAX_MB,
    }
    return render(request, "viewer/import/page.html", context, status=status)


def _source(request: HttpRequest) -> tuple[Path, list[str] | None]:
    """The uploaded file (stored), else the confined path with the roots that confine it
    (links inside a folder are checked against them too); `ImportRefused` otherwise."""
    upload = request.FILES.get("file")
    typed = request.POST.get("path", "").strip()
    if upload is not None:
        limit = settings.AXIOM_IMPORT_MAX_MB * 1_000_000
        if upload.size is not None and upload.size > limit:
            raise ImportRefused(f"The file is larger than {settings.AXIOM_IMPORT_MAX_MB} MB.", 413)
        data_dir = Path(settings.AXIOM_DATA_DIR)
        try:
            return store_upload(data_dir, upload.name or "", upload.chunks(), limit), None
        except UploadTooLarge as exc:
            raise ImportRefused(f"Refused: {exc}.", 413) from None
    if not typed:
        raise ImportRefused("Choose a file to upload, or type a path to import.", 400)
    try:
        path = confine_to_import_roots(typed)
    except PathOutsideImportRoots as exc:
        raise ImportRefused(f"Refused: {exc}.", 403) from None
    if not path.exists():
        raise ImportRefused(f"Nothing at {typed!r}: no such file or folder.")
    return path, [str(root) for root in Settings.from_env().import_roots]


def import_status(request: HttpRequest, task_id: str) -> HttpResponse:
    """The import's state: waiting, reading (files done), done with its summary, failed."""
    if not TASK_ID.match(task_id):
        raise Http404("No such import")
    try:
        context = {"task_id": task_id, **_state(*task_result(task_id))}
    except QueueUnavailable as exc:  # the page keeps polling until the broker is back
        context = {"task_id": task_id, "done": False, "queue_down": str(exc)}
        # htmx swaps no 4xx/5xx answer, so its poll gets the message with a 200
        status = 200 if request.headers.get("HX-Request") else 503
        return render_page(request, "viewer/import/status.html", context, fragment="progress", status=status)  # fmt: skip
    return render_page(request, "viewer/import/status.html", context, fragment="progress")


def _state(state: str, result: Any) -> dict[str, Any]:
    info = result if isinstance(result, dict) else {}
    if state == "SUCCESS":
        return {"done": True, "summary": info}
    if state == "FAILURE":
        return {"done": True, "failure": f"{type(result).__name__}: {result}"}
    return {"done": False, "state": state, "files_done": info.get("files_done", 0)}
