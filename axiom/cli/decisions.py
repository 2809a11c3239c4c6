"""``python -m axiom decisions [--json]`` and ``python -m axiom decisions record ACTION
--evidence ENTRY_ID [...] [--supersedes DECISION_ID] [--who NAME] [--json]``: the decision
ledger. A recorded decision prints one line (its JSON with ``--json``); a refused one prints
the reason on stderr and exits 1."""

from __future__ import annotations

import argparse
import getpass
import json
import sys

from axiom.decisions.ledger import DecisionRefused, DecisionRow, list_decisions, record_decision
from axiom.store.migrate import open_database

__all__ = ["register"]


def cmd_decisions(args: argparse.Namespace) -> int:
    with open_database().read() as conn:
        found = list_decisions(conn)
    if args.json:
        print(json.dumps([d.to_json() for d in found], indent=2, ensure_ascii=False))
        return 0
    for d in found:
        print(_line(d))
    print(f"{len(found)} decision(s)")
    return 0


def _line(d: DecisionRow) -> str:
    cited = ", ".join(f"{e} ({s})" for e, s in d.evidence)
    replaced = f" supersedes {d.supersedes}" if d.supersedes else ""
    return f"{d.decision_id} {d.ts:%Y-%m-%d %H:%M} {d.action}{replaced} [evidence: {cited}]"


def cmd_record(args: argparse.Namespace) -> int:
    db = open_database()
    try:
        with db.write() as conn:
            row = record_decision(
                conn,
                args.action,
                args.evidence,
                args.who or getpass.getuser(),
                supersedes=args.supersedes,
            )
    except DecisionRefused as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 1
    if args.json or args.record_json:
        print(json.dumps(row.to_json(), indent=2, ensure_ascii=False))
    else:
        print(f"recorded {_line(row)}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("decisions", help="the decision ledger")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_decisions)
    actions = p.add_subparsers(dest="action_name")
    rec = actions.add_parser("record", help="record a decision citing verified entries")
    rec.add_argument("action")
    rec.add_argument("--evidence", nargs="+", required=True, help="entry ids (verified or better)")
    rec.add_argument("--supersedes", help="the decision this one replaces")
    rec.add_argument("--who", default="")
    # Its own dest: a subparser's default would overwrite `decisions --json record ...`.
    rec.add_argument("--json", action="store_true", dest="record_json", help="print JSON")
    rec.set_defaults(func=cmd_record)
