"""Task subcommands of ``python -m axiom``: blocked, task show, tasks, conditions resolved,
conditions resolve.

Every command accepts ``--json``. The reading ones read through one `Database.read()`
unit; ``conditions resolve COND_ID TARGET_ID [--note TEXT]`` records that a condition is
(from now on) the same thing as a task, artifact or other condition
(``condition_resolved_to``, through `resolve_condition_in`: one `Database.write()` unit),
after which ``blocked`` shows the target as the effective blocker. Exit codes: 0 on
success, 1 when the thing asked for does not exist (unknown task, condition or target id)
or the request is refused (a condition resolving to itself, a cycle, a note too long),
2 for bad arguments (argparse). Errors are one line on stderr (and ``{"error": …}`` on
stdout with ``--json``), never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from axiom.config import AxiomConfig
from axiom.store.db import Database, is_interrupt
from axiom.store.migrate import migrate
from axiom.store.timepoints import parse_timepoint
from axiom.tasks.as_of import get_task_as_of, list_blocked_tasks_as_of, list_tasks_as_of
from axiom.tasks.commands import TaskCommandError, resolve_condition_in
from axiom.tasks.queries import (
    BlockerView,
    get_task,
    list_blocked_tasks,
    list_resolved_conditions,
    list_tasks,
)
from axiom.tasks.state import STATUSES

__all__ = ["register"]


def _database() -> Database:
    db = Database(AxiomConfig.from_env().duckdb_path)
    migrate(db)
    return db


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True))


def _blocker_line(b: BlockerView) -> str:
    line = f"{b.kind} {b.entity_id}: {b.title}"
    if b.status:
        line += f" [{b.status}]"
    if b.auto_placeholder:
        line += " (auto placeholder: blocker not known)"
    if b.via_resolution:
        line += f" (via condition {b.declared_id}: {b.declared_title})"
    return line


def cmd_blocked(args: argparse.Namespace) -> int:
    when = parse_timepoint(args.as_of, end_of_day=True) if args.as_of else None
    with _database().read() as conn:
        if when is None:
            blocked = list_blocked_tasks(conn, project=args.project)
        else:
            blocked = list_blocked_tasks_as_of(conn, when, project=args.project)
    if args.json:
        _print_json([b.to_json() for b in blocked])
        return 0
    if not blocked:
        print("no blocked tasks")
        return 0
    for item in blocked:
        t = item.task
        priority = f" [{t.priority}]" if t.priority else ""
        print(f"{t.task_id}{priority} {t.title}  (project {t.project})")
        for b in item.blockers:
            print(f"    blocked by {_blocker_line(b)}")
        if not item.blockers:
            print("    blocked by (no blocker recorded)")
    return 0


def cmd_task_show(args: argparse.Namespace) -> int:
    when = parse_timepoint(args.as_of, end_of_day=True) if args.as_of else None
    with _database().read() as conn:
        if when is None:
            detail = get_task(conn, args.task_id)
        else:
            detail = get_task_as_of(conn, args.task_id, when)
    if detail is None:
        message = f"unknown task id {args.task_id!r} (see `python -m axiom tasks`)"
        if args.json:
            _print_json({"error": message})
        print(message, file=sys.stderr)
        return 1
    if args.json:
        _print_json(detail.to_json())
        return 0
    t = detail.task
    print(f"{t.task_id}  {t.title}")
    print(f"  status:    {t.status}")
    print(f"  priority:  {t.priority or '-'}")
    print(f"  project:   {t.project}")
    print(f"  key:       {t.canonical_key}")
    print(f"  stage:     {t.stage}   mentions: {t.mention_count}")
    if t.aliases:
        print(f"  also seen as: {'; '.join(t.aliases)}")
    for label, items in (
        ("blocked by", detail.blockers),
        ("effective blockers", detail.effective_blockers),
        ("suggested blockers", detail.suggested_blockers),
    ):
        if items:
            print(f"  {label}:")
            for b in items:
                print(f"    - {_blocker_line(b)}")
    if detail.blocking:
        print("  blocks:")
        for other in detail.blocking:
            print(f"    - {other.task_id} {other.title} [{other.status}]")
    if detail.evidence:
        print("  evidence:")
        for ev in detail.evidence:
            title = f" {ev.entry_title}" if ev.entry_title else ""
            print(f"    - {ev.entry_id} (session {ev.session_id or '?'}){title}")
    print(f"  history ({len(detail.history)} events):")
    for h in detail.history:
        print(
            f"    {h.ts.isoformat(timespec='seconds')}  {h.event_id}  {h.event_type:<26} {h.summary()}"
        )
    return 0


def cmd_tasks(args: argparse.Namespace) -> int:
    when = parse_timepoint(args.as_of, end_of_day=True) if args.as_of else None
    with _database().read() as conn:
        if when is None:
            tasks = list_tasks(conn, status=args.status, project=args.project, limit=args.limit)
        else:
            tasks = list_tasks_as_of(conn, when, status=args.status, project=args.project)
            tasks = tasks[: args.limit] if args.limit is not None else tasks
    if args.json:
        _print_json([t.to_json() for t in tasks])
        return 0
    if not tasks:
        print("no tasks" + (f" with status {args.status}" if args.status else ""))
        return 0
    for t in tasks:
        priority = t.priority or "-"
        print(f"{t.task_id}  {t.status:<11} {priority:<6}  {t.title}")
    return 0


def cmd_conditions_resolved(args: argparse.Namespace) -> int:
    with _database().read() as conn:
        resolved = list_resolved_conditions(conn)
    if args.json:
        _print_json([r.to_json() for r in resolved])
        return 0
    if not resolved:
        print("no resolved conditions")
        return 0
    for r in resolved:
        print(
            f"{r.condition_id} {r.condition_text!r} -> {r.target_type or '?'} {r.target_id}:"
            f" {r.target_title or '?'}"
        )
        if r.reason:
            print(f"    reason: {r.reason}")
        if r.blocking:
            print(f"    blocks: {', '.join(r.blocking)}")
    return 0


def _fail(message: str, as_json: bool) -> int:
    if as_json:
        _print_json({"error": message})
    print(f"error: {message}", file=sys.stderr)
    return 1


def cmd_conditions_resolve(args: argparse.Namespace) -> int:
    try:
        _, view = resolve_condition_in(
            _database(), args.condition_id, args.target_id, note=args.note, actor="cli"
        )
    except TaskCommandError as exc:
        hint = (
            " (see `python -m axiom blocked` and `task show`)"
            if isinstance(exc, LookupError)
            else ""
        )
        return _fail(f"{exc}{hint}", args.json)
    except RuntimeError as exc:  # recorded, but the projection could not apply it
        if is_interrupt(exc):  # Ctrl-C during a query (`axiom.cli.main` reports it)
            raise
        return _fail(str(exc), args.json)
    if args.json:
        _print_json(view.to_json())
        return 0
    print(
        f"{view.condition_id} {view.condition_text!r} now resolves to"
        f" {view.target_type or '?'} {view.target_id}: {view.target_title or '?'}"
    )
    if view.blocking:
        print(f"    tasks it blocks: {', '.join(view.blocking)}")
    return 0


def register(subparsers: Any) -> None:
    """Add ``blocked``, ``task show``, ``tasks``, ``conditions resolved`` and
    ``conditions resolve``."""
    p = subparsers.add_parser("blocked", help="blocked tasks with their effective blockers")
    p.add_argument("--project", default=None, help="only this (normalized) project")
    p.add_argument(
        "--as-of", default=None, help="ISO date or datetime: the blocked tasks as they stood then"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_blocked)

    p = subparsers.add_parser("task", help="one task")
    task_sub = p.add_subparsers(dest="task_command", required=True)
    show = task_sub.add_parser("show", help="a task's state, blockers, evidence and full history")
    show.add_argument("task_id", help="task id (tsk_…) or an unambiguous prefix of it")
    show.add_argument("--as-of", default=None, help="ISO date or datetime: the task then")
    show.add_argument("--json", action="store_true")
    show.set_defaults(func=cmd_task_show)

    p = subparsers.add_parser("tasks", help="list tasks")
    p.add_argument("--status", choices=STATUSES, default=None)
    p.add_argument("--project", default=None)
    p.add_argument("--limit", type=int, default=None)
    p.add_argument(
        "--as-of", default=None, help="ISO date or datetime: the tasks as they stood then"
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tasks)

    p = subparsers.add_parser("conditions", help="blocker conditions")
    cond_sub = p.add_subparsers(dest="conditions_command", required=True)
    resolved = cond_sub.add_parser("resolved", help="conditions that resolve to another entity")
    resolved.add_argument("--json", action="store_true")
    resolved.set_defaults(func=cmd_conditions_resolved)
    resolve = cond_sub.add_parser(
        "resolve",
        help="record that a condition is the same thing as a task, artifact or condition",
    )
    resolve.add_argument("condition_id", help="the condition (cnd_…)")
    resolve.add_argument(
        "target_id", help="what it resolves to: a task (tsk_…), artifact or condition id"
    )
    resolve.add_argument("--note", default="", help="why (kept as the event's reason)")
    resolve.add_argument("--json", action="store_true")
    resolve.set_defaults(func=cmd_conditions_resolve)
