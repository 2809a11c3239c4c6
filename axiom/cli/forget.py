"""``python -m axiom forget --session ID | --entry ID | --before DATE [--yes] [--json]``.

``--entry`` also takes a ``mem:`` citation of a memory (search, MCP and `cite` name them so).

Without ``--yes`` it shows what would be forgotten (ids and counts, never the text) and
asks; with no terminal to ask on it refuses. A forget an earlier run recorded but did not
finish (a full disk, a kill) is finished first, and said so. Exit codes: 0 done (or
declined, or nothing to forget), 1 unknown target, bad date or a full disk (the message
says what is recorded and how to finish), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import TextIO

import duckdb

from axiom.config import AxiomConfig
from axiom.evidence.citations import get_citation, normalize_citation_id
from axiom.forgetting.copies import LostTask
from axiom.forgetting.forget import (
    ForgetError,
    ForgetReport,
    ForgetTarget,
    ForgetTargetNotFound,
    finish_pending,
    forget,
    plan,
)
from axiom.store.db import Database
from axiom.store.event_types import REDACTED
from axiom.store.events import EventStore
from axiom.store.migrate import open_database
from axiom.store.timepoints import TimepointError, parse_timepoint

__all__ = ["register"]

TOMBSTONE_NOTE = (
    "A later import of the same session will not restore it (a `redacted` tombstone stays)."
)


def _entry_id(conn: duckdb.DuckDBPyConnection, entry: str | None) -> str | None:
    """`--entry` as given, or the memory a `mem:` citation cites (what search, MCP and the
    `/memory-forget` command hand people)."""
    if entry is None or not entry.startswith("mem:"):
        return entry
    citation = get_citation(conn, entry)
    if citation is None:
        raise ForgetError(f"no citation {normalize_citation_id(entry)!r}")
    if citation.entry_id is None:
        raise ForgetError(
            f"{citation.citation_id} cites a message of session {citation.session_id}, not a"
            f" memory: forget the session with --session {citation.session_id}"
        )
    return citation.entry_id


def _target(args: argparse.Namespace, conn: duckdb.DuckDBPyConnection) -> ForgetTarget:
    before = parse_timepoint(args.before, end_of_day=False) if args.before else None
    entry_id = _entry_id(conn, args.entry)
    return ForgetTarget(session_id=args.session, entry_id=entry_id, before=before)


def cmd_forget(args: argparse.Namespace) -> int:
    db = open_database()
    config = AxiomConfig(data_dir=db.path.parent)
    finished = finish_pending(db, config)  # what re-running a forget cut short asks for
    _say_finished(finished, sys.stderr if args.json else sys.stdout)
    try:
        with db.read() as conn:
            target = _target(args, conn)
            covered = plan(conn, target)
    except ForgetTargetNotFound as exc:
        if _covered_by(finished, args):
            return _nothing(args, finished, "nothing else to forget: the earlier forget did it")
        tombstone = _tombstone(db, args.session) if args.session else None
        if tombstone is not None:
            said = f"session {args.session!r} was forgotten already ({tombstone})"
            return _nothing(args, finished, said)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (ForgetError, TimepointError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if covered.empty:
        return _nothing(args, finished, "nothing to forget")
    summary = f"{len(covered.session_ids)} session(s), {len(covered.entry_ids)} entry(ies)"
    summary += _lost(covered.lost_tasks)
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"would forget {summary}; re-run with --yes to do it", file=sys.stderr)
            return 1
        answer = input(f"Forget {summary} for good? Type 'forget' to confirm: ")
        if answer.strip() != "forget":
            print("nothing forgotten")
            return 0
    try:
        report = forget(db, target, args.who or getpass.getuser(), config)
    except ForgetError as exc:  # another process forgot it meanwhile
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({**report.to_json(), "note": TOMBSTONE_NOTE}, indent=2))
    else:
        print(
            f"forgot {summary} ({report.redaction_id}): {report.events_redacted} event(s)"
            f" redacted, {report.vector_rows_deleted} vector row(s) deleted,"
            f" {report.log_lines_removed} log line(s), {report.spool_payloads_removed} spooled"
            f" payload(s), {report.uploads_removed} kept upload(s) and"
            f" {report.validator_modules_removed} validator module file(s) removed;"
            " database rewritten"
        )
        print(TOMBSTONE_NOTE)
    return 0


def _say_finished(finished: list[ForgetReport], out: TextIO) -> None:
    for report in finished:
        print(
            f"finished an earlier forget ({report.redaction_id}): {len(report.session_ids)}"
            f" session(s), {len(report.entry_ids)} entry(ies)",
            file=out,
        )


def _covered_by(finished: list[ForgetReport], args: argparse.Namespace) -> bool:
    """Whether a forget just finished forgot the session or entry `args` name (by id)."""
    named = {args.session, args.entry} - {None}
    return any(named & {*r.session_ids, *r.entry_ids} for r in finished)


def _tombstone(db: Database, session_id: str) -> str | None:
    """The redaction id of the forget that forgot `session_id`, if one did."""
    with db.read() as conn:
        event = EventStore(conn).tombstone_for_session(session_id, REDACTED)
    return None if event is None else str(event.payload.get("redaction_id"))


def _nothing(args: argparse.Namespace, finished: list[ForgetReport], message: str) -> int:
    """Nothing (more) to forget: `message`, or with `--json` the same as JSON."""
    if args.json:
        earlier = [r.to_json() for r in finished]
        print(json.dumps({"forgotten": False, "message": message, "finished_earlier": earlier}))
    else:
        print(message)
    return 0


def _lost(lost: list[LostTask]) -> str:
    """What goes with the target that kept sessions said: each task they spoke of, in
    their words, and which sessions (so nothing a person told Axiom goes unmentioned)."""
    if not lost:
        return ""
    named = "; ".join(
        f"{', '.join(repr(t) for t in task.titles) or task.task_id} ({', '.join(task.session_ids)})"
        for task in lost
    )
    return (
        f", and {len(lost)} task(s) kept sessions spoke of: {named} — what they said of it"
        " no longer applies (their notes stay as entries)"
    )


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("forget", help="forget a session, an entry or everything before a date")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--session", help="a session id")
    which.add_argument("--entry", help="an entry id, or a mem: citation of one")
    which.add_argument("--before", help="every session started before this date (ISO 8601)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.add_argument("--who", default="", help="who asks (default: the OS user)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_forget)
