"""Half-life demotion, applied: `entry_demoted` events for the active entries the policy
(`axiom.graduation.demotion`) says have aged out of their stage at a given time.

Each event names the policy version and the time it was computed for, and carries the
stage reached, so replay reproduces the stages without reading a clock. Running a policy
again appends nothing until another half-life passes (the loss counts from the peak stage,
the stage check sees what the first run did, and the dedupe key names entry, version,
stage reached and time). A dry run plans without writing, to see what another version would do.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb

from axiom.entries.projector import EntryProjector
from axiom.entries.queries import ageing_entries
from axiom.graduation.demotion import DemotionPolicy, demotion_target, get_policy
from axiom.graduation.stages import STAGES, Stage
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_DEMOTED
from axiom.store.events import EventStore, NewEvent
from axiom.store.projection import run_projector, write_projecting


@dataclass(frozen=True)
class Demotion:
    entry_id: str
    entry_type: str
    from_stage: str
    to_stage: str
    said_at: datetime

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "entry_type": self.entry_type,
            "from": self.from_stage,
            "to": self.to_stage,
            "said_at": self.said_at.isoformat(),
        }


@dataclass(frozen=True)
class DemotionRun:
    policy_version: str
    computed_for: datetime
    dry_run: bool
    demotions: tuple[Demotion, ...]
    appended: int

    def to_json(self) -> dict[str, Any]:
        return {
            "policy_version": self.policy_version,
            "computed_for": self.computed_for.isoformat(),
            "dry_run": self.dry_run,
            "demotions": [d.to_json() for d in self.demotions],
            "appended": self.appended,
        }


def plan_demotions(
    conn: duckdb.DuckDBPyConnection, policy: DemotionPolicy, at: datetime
) -> list[Demotion]:
    """The demotions `policy` makes at `at`, oldest entry first; writes nothing."""
    above_floor = [str(s) for s in STAGES if s.rank > policy.floor.rank]
    plan = []
    for entry in ageing_entries(conn, above_floor):
        target = demotion_target(
            policy, entry.entry_type, Stage(entry.stage), Stage(entry.peak_stage), entry.said_at, at
        )
        if target is not None:
            plan.append(
                Demotion(entry.entry_id, entry.entry_type, entry.stage, target, entry.said_at)
            )
    return plan


def demote_entries(
    conn: duckdb.DuckDBPyConnection, policy_version: str, at: datetime
) -> DemotionRun:
    """Append the demotions inside the caller's write transaction and project them."""
    policy = get_policy(policy_version)
    run_projector(conn, EntryProjector())
    plan = plan_demotions(conn, policy, at)
    store, appended = EventStore(conn), 0
    for d in plan:
        result = store.append(
            NewEvent(
                ENTRY_DEMOTED,
                {
                    "entry_id": d.entry_id,
                    "from": d.from_stage,
                    "to": d.to_stage,
                    "policy_version": policy.version,
                    "computed_for": at.isoformat(),
                },
                dedupe_key=(
                    f"{ENTRY_DEMOTED}:{d.entry_id}:{policy.version}:{d.to_stage}:{at.isoformat()}"
                ),
                actor=f"policy:demotion:{policy.version}",
            )
        )
        appended += int(result.created)
    run_projector(conn, EntryProjector())
    return DemotionRun(policy.version, at, False, tuple(plan), appended)


def demote(
    db: Database, policy_version: str, at: datetime | None = None, dry_run: bool = False
) -> DemotionRun:
    """Run (or with `dry_run`, only plan) a demotion policy version at `at` (default now)."""
    at = at or datetime.now(UTC).replace(tzinfo=None)
    if dry_run:
        policy = get_policy(policy_version)
        with db.read() as conn:
            plan = plan_demotions(conn, policy, at)
        return DemotionRun(policy.version, at, True, tuple(plan), 0)
    return write_projecting(db, lambda conn: demote_entries(conn, policy_version, at))
