"""A person settles a conflict: `conflict_resolved`, then the entries' new statuses.

`keep_newer` / `keep_older`: the entry not kept becomes `superseded` (by the kept one);
`keep_both` (not a real conflict): both `active` again; `reject_both`: both `deprecated`.
A kept entry still in another open conflict stays `contested`; one that is `active` again
graduates as if it had never been contested (`axiom.conflicts.graduate`). One write unit through
`write_projecting`, so search (which reads statuses from `entries`) follows at once.
"""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb

from axiom.conflicts.graduate import graduate_kept
from axiom.conflicts.projector import RESOLUTION_CHOICES, ConflictProjector
from axiom.conflicts.queries import ConflictRow, get_conflict, list_conflicts
from axiom.entries.projector import EntryProjector
from axiom.entries.queries import get_entry
from axiom.store.db import Database
from axiom.store.event_types import CONFLICT_RESOLVED, ENTRY_STATUS_CHANGED
from axiom.store.events import EventStore, NewEvent
from axiom.store.projection import run_projector, write_projecting

MAX_NOTE_CHARS = 2000


class ConflictCommandError(ValueError):
    """A resolution that cannot be recorded (bad choice, already resolved)."""


class ConflictNotFound(ConflictCommandError, LookupError):
    """No conflict has this id."""


def _outcome(conflict: ConflictRow, choice: str) -> dict[str, tuple[str, str | None]]:
    """entry id -> (status wanted, superseded_by) for a choice."""
    older, newer = conflict.older_id, conflict.newer_id
    return {
        "keep_newer": {older: ("superseded", newer), newer: ("active", None)},
        "keep_older": {newer: ("superseded", older), older: ("active", None)},
        "keep_both": {older: ("active", None), newer: ("active", None)},
        "reject_both": {older: ("deprecated", None), newer: ("deprecated", None)},
    }[choice]


def resolve_conflict(
    conn: duckdb.DuckDBPyConnection, conflict_id: str, choice: str, who: str, note: str = ""
) -> ConflictRow:
    """Record the resolution inside the caller's write transaction (see `resolve`)."""
    if choice not in RESOLUTION_CHOICES:
        raise ConflictCommandError(
            f"choice must be one of {', '.join(RESOLUTION_CHOICES)}; got {choice!r}"
        )
    if len(note) > MAX_NOTE_CHARS:
        raise ConflictCommandError(f"note is longer than {MAX_NOTE_CHARS} characters")
    who = who.strip() or "user"
    for projector in (EntryProjector(), ConflictProjector()):
        run_projector(conn, projector)
    conflict = get_conflict(conn, conflict_id)
    if conflict is None:
        raise ConflictNotFound(f"unknown conflict {conflict_id!r}")
    if conflict.status != "open":
        raise ConflictCommandError(f"conflict {conflict_id} is already resolved")
    store = EventStore(conn)
    resolved = store.append(
        NewEvent(
            CONFLICT_RESOLVED,
            {
                "conflict_id": conflict_id,
                "choice": choice,
                "who": who,
                "note": note,
                "older_id": conflict.older_id,
                "newer_id": conflict.newer_id,
                "decided_at": datetime.now(UTC).isoformat(),
            },
            dedupe_key=f"{CONFLICT_RESOLVED}:{conflict_id}",
            actor=f"person:{who}",
        )
    ).event
    for entry_id, (wanted, superseded_by) in _outcome(conflict, choice).items():
        others = [c for c in list_conflicts(conn, "open", entry_id) if c.conflict_id != conflict_id]
        if wanted == "active" and others:
            wanted = "contested"
        entry = get_entry(conn, entry_id)
        was = entry.status if entry else "contested"
        if was == wanted:
            continue
        store.append(
            NewEvent(
                ENTRY_STATUS_CHANGED,
                {
                    "entry_id": entry_id,
                    "from": was,
                    "to": wanted,
                    "superseded_by": superseded_by,
                    "reason": f"conflict {conflict_id} resolved: {choice}",
                    "conflict_id": conflict_id,
                },
                dedupe_key=f"{ENTRY_STATUS_CHANGED}:{entry_id}:{wanted}:{resolved.event_id}",
                session_id=entry.session_id if entry else None,
                actor=f"person:{who}",
            )
        )
    for projector in (EntryProjector(), ConflictProjector()):
        run_projector(conn, projector)
    kept = [eid for eid, (wanted, _) in _outcome(conflict, choice).items() if wanted == "active"]
    graduate_kept(conn, kept, f"conflict {conflict_id} resolved: {choice}")
    run_projector(conn, EntryProjector())
    return get_conflict(conn, conflict_id)  # type: ignore[return-value]


def resolve(db: Database, conflict_id: str, choice: str, who: str, note: str = "") -> ConflictRow:
    """Settle a conflict in one write unit (the entry point for the CLI, API and viewer)."""
    return write_projecting(db, lambda conn: resolve_conflict(conn, conflict_id, choice, who, note))
