"""Half-life demotion as events: reproducible by policy version, a dry run writes nothing,
replay rebuilds the demoted stages."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from axiom.entries.demotion import demote
from axiom.entries.queries import entry_history, list_entries
from axiom.projections import rebuild_all
from axiom.store.db import Database
from axiom.store.events import EventStore
from tests.cli_support import run_cli
from tests.conflicts.support import Said, run_sessions

SAID = Said("Use Postgres for the reporting warehouse", when="2025-01-10T09:00:00Z")


def _stage_and_events(db: Database) -> tuple[str, int]:
    with db.read() as conn:
        (entry,) = list_entries(conn)
        return entry.stage, EventStore(conn).count()


def test_demotion_is_reproducible_by_policy_version(db: Database, tmp_path: Path) -> None:
    run_sessions(db, tmp_path, {"a": [SAID]})
    stage, events = _stage_and_events(db)
    assert stage == "verified"

    early = demote(db, "v1", datetime(2025, 6, 1))
    assert early.demotions == () and _stage_and_events(db) == (stage, events)

    at = datetime(2026, 2, 1)
    first = demote(db, "v1", at)
    assert [(d.from_stage, d.to_stage) for d in first.demotions] == [("verified", "candidate")]
    assert first.appended == 1 and _stage_and_events(db) == ("candidate", events + 1)
    again = demote(db, "v1", at)
    assert again.demotions == () and again.appended == 0
    later = demote(db, "v1", datetime(2026, 6, 1))  # v1's floor is candidate
    assert later.demotions == () and _stage_and_events(db) == ("candidate", events + 1)

    with db.read() as conn:
        (entry,) = list_entries(conn)
        (event,) = [e for e in entry_history(conn, entry.entry_id) if e["type"] == "entry_demoted"]
    assert event["payload"]["policy_version"] == "v1"
    assert event["payload"]["computed_for"] == at.isoformat()

    with db.read() as conn:
        before = list_entries(conn)
    rebuild_all(db)
    with db.read() as conn:
        assert list_entries(conn) == before


def test_a_dry_run_shows_what_another_version_would_do_and_writes_nothing(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path, {"a": [SAID]})
    before = _stage_and_events(db)
    shown = run_cli(
        data_dir, "demote", "--policy", "v2-fast", "--at", "2025-08-01", "--dry-run", "--json"
    )
    assert shown.returncode == 0, shown.stderr
    run = json.loads(shown.stdout)
    assert run["dry_run"] is True and run["policy_version"] == "v2-fast"
    assert [(d["from"], d["to"]) for d in run["demotions"]] == [("verified", "working")]
    assert _stage_and_events(db) == before

    unknown = run_cli(data_dir, "demote", "--policy", "v9", "--dry-run")
    assert unknown.returncode == 1 and "unknown demotion policy 'v9'" in unknown.stderr
    done = run_cli(data_dir, "demote", "--policy", "v2-fast", "--at", "2025-08-01")
    assert done.returncode == 0 and "demoted 1 entry, 1 new event(s)" in done.stdout
    assert _stage_and_events(db) == ("working", before[1] + 1)
