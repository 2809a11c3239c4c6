"""A person's approval: the other road from verified to certified.

Approval is an event (`entry_approved`), so it is audited and survives a rebuild. Approving
a verified entry certifies it at once; approving an entry below verified records the
approval, and the pipeline certifies the entry when it reaches verified.
"""

from __future__ import annotations

from dataclasses import dataclass

from axiom.entries.queries import get_entry
from axiom.projections import all_projectors
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_APPROVED, ENTRY_PROMOTED
from axiom.store.events import EventStore, NewEvent
from axiom.store.projection import run_projectors


class EntryNotFound(LookupError):
    pass


class ApprovalRejected(ValueError):
    pass


@dataclass(frozen=True)
class ApprovalResult:
    entry_id: str
    approved_by: str
    stage: str
    certified_now: bool
    reason: str


def approve_entry(db: Database, entry_id: str, approved_by: str, note: str = "") -> ApprovalResult:
    approver = approved_by.strip()
    if not approver:
        raise ApprovalRejected("approved_by must name the person approving")
    with db.write() as conn:
        entry = get_entry(conn, entry_id)
        if entry is None:
            raise EntryNotFound(f"entry {entry_id!r} not found")
        if entry.status != "active":
            raise ApprovalRejected(f"entry is {entry.status}: resolve that before approving")
        store = EventStore(conn)
        store.append(
            NewEvent(
                ENTRY_APPROVED,
                {"entry_id": entry_id, "approved_by": approver, "note": note},
                dedupe_key=f"entry_approved:{entry_id}:{approver}",
                session_id=entry.session_id,
                actor=f"person:{approver}",
            )
        )
        certified_now = entry.stage == "verified"
        if certified_now:
            store.append(
                NewEvent(
                    ENTRY_PROMOTED,
                    {
                        "entry_id": entry_id,
                        "from": "verified",
                        "to": "certified",
                        "reason": f"approved by {approver}",
                    },
                    dedupe_key=f"{ENTRY_PROMOTED}:{entry_id}:certified",
                    session_id=entry.session_id,
                    actor=f"person:{approver}",
                )
            )
            reason = f"certified: approved by {approver}"
        elif entry.stage == "certified":
            reason = "already certified; approval recorded"
        else:
            reason = f"approval recorded; the entry is {entry.stage} and is certified once verified"
        run_projectors(conn, all_projectors())
        stage = "certified" if certified_now else entry.stage
    return ApprovalResult(entry_id, approver, stage, certified_now, reason)
