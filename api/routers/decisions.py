"""The decision ledger, mounted at ``/api/v1/``: ``GET /decisions``, oldest first, each
with its evidence (entry id and the stage it had when cited) and the decision it replaced.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema

from axiom.decisions.ledger import list_decisions
from config.stores import get_database

router = Router(tags=["decisions"])


class DecisionEvidenceOut(Schema):
    entry_id: str
    stage: str


class DecisionOut(Schema):
    decision_id: str
    ts: str
    actor: str
    action: str
    supersedes: str | None
    evidence: list[DecisionEvidenceOut]


@router.get("/decisions", response=list[DecisionOut])
def decisions(request: HttpRequest) -> list[dict[str, Any]]:
    """Every recorded decision, oldest first."""
    with get_database().read() as conn:
        return [d.to_json() for d in list_decisions(conn)]
