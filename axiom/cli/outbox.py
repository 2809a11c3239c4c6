"""CLI over the vector outbox: `outbox drain`, `outbox status`, `reconcile`."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from axiom.observability.progress import Bar, wanted
from axiom.outbox.service import configured_writer, outbox_status
from axiom.outbox.writer import RECONCILE_STEPS, DrainReport
from axiom.projections import project_all
from axiom.store.migrate import open_database
from axiom.vectors.config import vectors_enabled


def cmd_drain(args: argparse.Namespace) -> int:
    db = open_database()
    project_all(db)  # queue jobs for anything imported with --no-process or not yet projected
    writer = configured_writer(db, batch_size=args.batch_size, foreground=True)
    total = writer.pending_count()
    if args.max is not None:
        total = min(total, args.max)
    seen = 0
    with Bar(total, "job", "outbox drain", wanted(args.quiet)) as bar:

        def progress(report: DrainReport) -> None:
            nonlocal seen
            bar.advance(report.claimed - seen, f"done={report.done}, failed={report.failed}")
            seen = report.claimed

        report = writer.drain(args.max, on_batch=progress)
    if args.json:
        print(json.dumps(report.to_json(), sort_keys=True))
    elif report.busy:
        print("another outbox writer is running; nothing done")
    else:
        print(
            f"{report.done} done, {report.failed} failed ({report.missing} item(s) gone),"
            f" {report.remaining} pending; {report.rows_upserted} row(s) written in"
            f" {report.seconds:.1f}s ({_rate(report)})"
        )
    if report.error:
        print(f"error: {report.error}", file=sys.stderr)
    return 1 if report.error or report.busy else 0


def _rate(report: DrainReport) -> str:
    """The embedding rate, only when a model embedded something: AXIOM_EMBEDDER=none writes
    a constant vector at memory speed, which is no rate to report."""
    if not vectors_enabled():
        return "no embedding model: AXIOM_EMBEDDER=none"
    if not report.texts_per_second:
        return "nothing embedded"
    return f"{report.texts_per_second:.0f} texts/s embedding"


def cmd_status(args: argparse.Namespace) -> int:
    print(json.dumps(outbox_status(open_database()), indent=2, ensure_ascii=False))
    return 0


def cmd_reconcile(args: argparse.Namespace) -> int:
    writer = configured_writer(open_database(), load_model=False)
    with Bar(len(RECONCILE_STEPS), "step", "reconcile", wanted(args.quiet)) as bar:
        report = writer.reconcile(
            max_attempts=args.max_attempts, stuck_after_s=args.stuck_after, on_step=bar.step
        )
    print(json.dumps(report.to_json(), sort_keys=True))
    return 1 if report.error else 0


def register(sub: Any) -> None:
    p = sub.add_parser("outbox", help="the vector outbox: embed queued items into LanceDB")
    outbox = p.add_subparsers(dest="outbox_command", required=True)

    d = outbox.add_parser("drain", help="embed pending jobs and write them to LanceDB")
    d.add_argument("--max", type=int, default=None, help="claim at most N jobs")
    d.add_argument("--batch-size", type=int, default=None, help="jobs per batch")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    d.add_argument("--quiet", action="store_true", help="no progress bar")
    d.set_defaults(func=cmd_drain)

    s = outbox.add_parser("status", help="jobs by status, LanceDB rows, top errors")
    s.set_defaults(func=cmd_status)

    r = sub.add_parser(
        "reconcile",
        help="re-queue outbox jobs left processing by a dead writer, failed ones with"
        " attempts left, and done ones whose vector is missing",
    )
    r.add_argument("--max-attempts", type=int, default=5)
    r.add_argument(
        "--stuck-after", type=float, default=300, help="seconds before processing counts as stuck"
    )
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.set_defaults(func=cmd_reconcile)
