"""The decision ledger page, `/decisions/`: each decision with its evidence citations and
the decision it replaces (a link to that decision's row on the same page)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from axiom.decisions.ledger import list_decisions
from config.stores import get_database


def decision_list(request: HttpRequest) -> HttpResponse:
    with get_database().read() as conn:
        decisions = list_decisions(conn)
    return render(request, "viewer/decisions.html", {"decisions": decisions})
