"""``python -m axiom demote [--policy VERSION] [--at T] [--dry-run] [--json]``: half-life
demotion of memories not restated for a while. ``--dry-run`` shows what a policy version
would demote at T without writing anything; an unknown version or a bad T exits 1."""

from __future__ import annotations

import argparse
import json
import sys

from axiom.entries.demotion import demote
from axiom.graduation.demotion import CURRENT_POLICY, POLICIES, UnknownPolicy
from axiom.store.migrate import open_database
from axiom.store.timepoints import parse_timepoint

__all__ = ["register"]


def cmd_demote(args: argparse.Namespace) -> int:
    try:
        at = parse_timepoint(args.at, end_of_day=True) if args.at else None
        run = demote(open_database(), args.policy, at, dry_run=args.dry_run)
    except UnknownPolicy as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(run.to_json(), indent=2, ensure_ascii=False))
        return 0
    verb = "would demote" if run.dry_run else "demoted"
    for d in run.demotions:
        print(
            f"{d.entry_id} {d.entry_type} {d.from_stage} -> {d.to_stage} (said {d.said_at:%Y-%m-%d})"
        )
    print(
        f"policy {run.policy_version} at {run.computed_for.isoformat()}: {verb}"
        f" {len(run.demotions)} entr{'y' if len(run.demotions) == 1 else 'ies'}"
        + ("" if run.dry_run else f", {run.appended} new event(s)")
    )
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demote", help="half-life demotion of memories not restated")
    p.add_argument("--policy", default=CURRENT_POLICY, help=f"one of {', '.join(sorted(POLICIES))}")
    p.add_argument("--at", default=None, help="ISO date or datetime to compute for (default now)")
    p.add_argument("--dry-run", action="store_true", help="show what it would do; write nothing")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demote)
