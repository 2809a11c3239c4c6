"""Recording a decision: it cites only verified or certified entries (anything less is
refused with the reason), its evidence must predate it, and a decision that replaces an
earlier one names it (`supersedes`). `decision_recorded` events fold into `decisions` and
`decision_evidence` (owned here, rebuildable by replay)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from axiom.entries.queries import get_entry
from axiom.store.event_types import DECISION_RECORDED
from axiom.store.events import EventStore, NewEvent, StoredEvent
from axiom.store.projection import run_projector

CITABLE_STAGES = ("verified", "certified")


class DecisionRefused(ValueError):
    """A decision the ledger will not record, with the reason."""


@dataclass(frozen=True)
class DecisionRow:
    decision_id: str
    ts: datetime
    actor: str
    action: str
    supersedes: str | None
    evidence: list[tuple[str, str]]  # (entry id, stage when cited)

    def to_json(self) -> dict[str, Any]:
        return {
            "decision_id": self.decision_id,
            "ts": self.ts.isoformat(),
            "actor": self.actor,
            "action": self.action,
            "supersedes": self.supersedes,
            "evidence": [{"entry_id": e, "stage": s} for e, s in self.evidence],
        }


class DecisionProjector:
    name = "decisions"
    event_types = (DECISION_RECORDED,)
    tables = ("decisions", "decision_evidence")

    def apply(self, conn: duckdb.DuckDBPyConnection, event: StoredEvent) -> None:
        p = event.payload
        conn.execute(
            "INSERT INTO decisions (decision_id, ts, actor, action, outcome_json)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (decision_id) DO NOTHING",
            [
                p["decision_id"],
                p["decided_at"],
                event.actor,
                p["action"],
                json.dumps({"supersedes": p.get("supersedes")}),
            ],
        )
        for number, item in enumerate(p["evidence"]):
            conn.execute(
                "INSERT INTO decision_evidence (id, decision_id, evidence_kind, evidence_id,"
                " evidence_stage, role) VALUES (?, ?, 'entry', ?, ?, 'supports')"
                " ON CONFLICT (id) DO NOTHING",
                [f"{p['decision_id']}:{number}", p["decision_id"], item["entry_id"], item["stage"]],
            )


def _refusal(conn: duckdb.DuckDBPyConnection, entry_id: str, decided_at: datetime) -> str | None:
    entry = get_entry(conn, entry_id)
    if entry is None:
        return f"unknown entry {entry_id!r}"
    if entry.stage not in CITABLE_STAGES:
        return (
            f"entry {entry_id} is {entry.stage}: decisions cite only verified or certified evidence"
        )
    if entry.status != "active":
        return f"entry {entry_id} is {entry.status}"
    if entry.created_ts > decided_at:
        return f"entry {entry_id} was recorded after the decision ({entry.created_ts.isoformat()})"
    return None


def record_decision(
    conn: duckdb.DuckDBPyConnection,
    action: str,
    evidence_ids: list[str],
    who: str,
    decided_at: datetime | None = None,
    supersedes: str | None = None,
) -> DecisionRow:
    """Check and record a decision inside the caller's write transaction."""
    decided_at = decided_at or datetime.now(UTC).replace(tzinfo=None)
    if not action.strip():
        raise DecisionRefused("a decision needs an action")
    if not evidence_ids:
        raise DecisionRefused("a decision needs evidence: at least one verified entry")
    reasons = [r for e in evidence_ids if (r := _refusal(conn, e, decided_at))]
    if reasons:
        raise DecisionRefused("; ".join(reasons))
    run_projector(conn, DecisionProjector())
    if supersedes is not None and get_decision(conn, supersedes) is None:
        raise DecisionRefused(f"unknown decision {supersedes!r} to supersede")
    evidence = [{"entry_id": e, "stage": get_entry(conn, e).stage} for e in evidence_ids]  # type: ignore[union-attr]
    key = json.dumps([action, sorted(evidence_ids), supersedes], ensure_ascii=False)
    decision_id = "dec_" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    EventStore(conn).append(
        NewEvent(
            DECISION_RECORDED,
            {
                "decision_id": decision_id,
                "action": action,
                "evidence": evidence,
                "supersedes": supersedes,
                "decided_at": decided_at.isoformat(),
            },
            dedupe_key=f"{DECISION_RECORDED}:{decision_id}",
            actor=f"person:{who}",
        )
    )
    run_projector(conn, DecisionProjector())
    return get_decision(conn, decision_id)  # type: ignore[return-value]


def list_decisions(conn: duckdb.DuckDBPyConnection) -> list[DecisionRow]:
    rows = conn.execute(
        "SELECT decision_id, ts, actor, action, outcome_json FROM decisions ORDER BY ts, decision_id"
    ).fetchall()
    evidence: dict[str, list[tuple[str, str]]] = {}
    for did, eid, stage in conn.execute(
        "SELECT decision_id, evidence_id, evidence_stage FROM decision_evidence ORDER BY id"
    ).fetchall():
        evidence.setdefault(did, []).append((eid, stage))
    return [
        DecisionRow(
            r[0],
            r[1],
            r[2],
            r[3],
            json.loads(r[4] or "{}").get("supersedes"),
            evidence.get(r[0], []),
        )
        for r in rows
    ]


def get_decision(conn: duckdb.DuckDBPyConnection, decision_id: str) -> DecisionRow | None:
    found = [d for d in list_decisions(conn) if d.decision_id == decision_id]
    return found[0] if found else None
