"""`/forget/?session=ID` or `?entry=ID`: what would be forgotten (ids and counts), and a
CSRF-protected POST form to confirm. Works without JavaScript."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from axiom.forgetting.forget import ForgetError, ForgetTarget, forget, plan
from config.stores import get_database, reset


def _target(data: dict) -> ForgetTarget:
    return ForgetTarget(session_id=data.get("session") or None, entry_id=data.get("entry") or None)


def forget_page(request: HttpRequest) -> HttpResponse:
    data = request.POST if request.method == "POST" else request.GET
    try:
        target = _target(data)
        with get_database().read(fresh=True) as conn:  # never a snapshot: it may lack the target
            covered = plan(conn, target)
    except ForgetError as exc:
        return render(request, "viewer/forget.html", {"error": str(exc)}, status=422)
    context = {"target": target, "plan": covered, "report": None}
    if request.method == "POST" and data.get("confirm") == "yes":
        user = getattr(request, "user", None)
        who = user.get_username() if user is not None and user.is_authenticated else "viewer"
        context["report"] = forget(get_database(), target, who)
        reset()
    return render(request, "viewer/forget.html", context)
