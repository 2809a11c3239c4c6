"""``python -m axiom conflicts [--status open|resolved|all] [--json]`` and
``python -m axiom conflicts resolve ID --keep-newer|--keep-older|--keep-both|--reject-both
[--note TEXT] [--who NAME]``.

Exit codes: 0 on success, 1 for an unknown conflict or a refused resolution (one line on
stderr, ``{"error": …}`` on stdout with ``--json``), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import Any

from axiom.conflicts.commands import ConflictCommandError, resolve
from axiom.conflicts.projector import RESOLUTION_CHOICES
from axiom.conflicts.queries import CONFLICT_STATUSES, ConflictRow, list_conflicts
from axiom.store.migrate import open_database
from axiom.store.timepoints import parse_timepoint

__all__ = ["register"]


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))


def _line(c: ConflictRow) -> str:
    settled = f" -> {c.resolution} by {c.resolved_by}" if c.status == "resolved" else ""
    return (
        f"{c.conflict_id} [{c.status}{settled}] {c.older_id} vs {c.newer_id}"
        f" ({c.conflict_type}) subject: {c.subject or '-'}; {c.reason or ''}"
    )


def cmd_conflicts(args: argparse.Namespace) -> int:
    when = parse_timepoint(args.as_of, end_of_day=True) if args.as_of else None
    with open_database().read() as conn:
        found = list_conflicts(conn, args.status, as_of=when)
    if args.json:
        _print_json([c.to_json() for c in found])
    else:
        for c in found:
            print(_line(c))
        print(f"{len(found)} conflict(s)")
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    who = args.who or getpass.getuser()
    try:
        row = resolve(open_database(), args.conflict_id, args.choice, who, args.note or "")
    except ConflictCommandError as exc:
        if args.json:
            _print_json({"error": str(exc)})
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        _print_json(row.to_json())
    else:
        print(_line(row))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("conflicts", help="list conflicts between memories, or resolve one")
    parser.add_argument("--status", choices=CONFLICT_STATUSES, default="open")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--as-of", help="as known then: an ISO date (end of day, UTC) or datetime")
    parser.set_defaults(func=cmd_conflicts)
    actions = parser.add_subparsers(dest="action")
    res = actions.add_parser("resolve", help="settle a conflict")
    res.add_argument("conflict_id")
    choice = res.add_mutually_exclusive_group(required=True)
    for name in RESOLUTION_CHOICES:
        flag = "--" + name.replace("_", "-")
        choice.add_argument(flag, dest="choice", action="store_const", const=name)
    res.add_argument("--note", default="")
    res.add_argument("--who", default="", help="who decides (default: the OS user)")
    res.add_argument("--json", action="store_true")
    res.set_defaults(func=cmd_resolve)
