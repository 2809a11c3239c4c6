"""A kept entry graduates once its conflict is resolved, as if it had never been
contested: the promotions are events, so a rebuild gives the same stages."""

from __future__ import annotations

from pathlib import Path

from axiom.conflicts.commands import resolve
from axiom.conflicts.queries import list_conflicts
from axiom.entries.queries import get_entry, list_entries
from axiom.pipeline.approval import approve_entry
from axiom.projections import rebuild_all
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_PROMOTED
from axiom.store.events import EventStore
from tests.conflicts.support import Said, run_sessions

OLD = Said("Export jobs may run 40 requests each minute", "fact", "export rate cap", "40/min")
NEW = Said("The export rate cap is 75 per minute from now on", "fact", "Export rate cap", "75/min")


def _conflict(db: Database, tmp_path: Path):
    run_sessions(db, tmp_path, {"s1": [OLD], "s2": [NEW]})
    with db.read() as conn:
        (conflict,) = list_conflicts(conn, "open")
        assert get_entry(conn, conflict.newer_id).stage == "raw"  # held back while contested
    return conflict


def _stages(db: Database) -> dict[str, tuple[str, str]]:
    with db.read() as conn:
        return {e.entry_id: (e.stage, e.status) for e in list_entries(conn)}


def _promotions(db: Database, entry_id: str) -> list[str]:
    with db.read() as conn:
        events = EventStore(conn).about_any("entry_id", [entry_id], (ENTRY_PROMOTED,))
    return [e.payload["to"] for e in events]


def test_it_graduates_the_kept_entry_when_a_conflict_is_resolved(
    db: Database, tmp_path: Path, table_rows
) -> None:
    conflict = _conflict(db, tmp_path)
    older = _promotions(db, conflict.older_id)
    resolve(db, conflict.conflict_id, "keep_newer", "tester")
    assert _promotions(db, conflict.newer_id) == ["working", "candidate", "verified"]
    assert _promotions(db, conflict.older_id) == older  # superseded: not promoted further
    with db.read() as conn:
        kept = get_entry(conn, conflict.newer_id)
        assert (kept.stage, kept.status) == ("verified", "active")
    approval = approve_entry(db, conflict.newer_id, "tester")
    assert approval.certified_now and approval.stage == "certified"
    before = table_rows(db, "conflicts"), _stages(db)
    rebuild_all(db)
    assert (table_rows(db, "conflicts"), _stages(db)) == before


def test_keep_both_graduates_both_entries(db: Database, tmp_path: Path) -> None:
    conflict = _conflict(db, tmp_path)
    resolve(db, conflict.conflict_id, "keep_both", "tester")
    with db.read() as conn:
        assert {get_entry(conn, e).stage for e in conflict.entry_ids} == {"verified"}


def test_rejected_entries_are_not_promoted(db: Database, tmp_path: Path) -> None:
    conflict = _conflict(db, tmp_path)
    resolve(db, conflict.conflict_id, "reject_both", "tester")
    assert _promotions(db, conflict.newer_id) == []
