"""`python -m axiom …`: the command-line driver over the core."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from axiom.cli.agent import drain_spool, transcript_paths
from axiom.cli.agent import register as register_agent_commands
from axiom.cli.arguments import Parser, attach_dash_values
from axiom.cli.conflicts import register as register_conflict_commands
from axiom.cli.decisions import register as register_decision_commands
from axiom.cli.demote import register as register_demote_command
from axiom.cli.forget import register as register_forget_command
from axiom.cli.outbox import register as register_outbox_commands
from axiom.cli.pipeline import process_with_progress
from axiom.cli.pipeline import register as register_pipeline_commands
from axiom.cli.retrieval import register as register_retrieval_commands
from axiom.cli.tasks import register as register_task_commands
from axiom.cli.token import register as register_token_command
from axiom.config import AxiomConfig
from axiom.ingest.formats import PARSERS, discover
from axiom.ingest.importer import ImportReport, import_paths
from axiom.observability.progress import Bar, wanted
from axiom.observability.stats import collect_stats
from axiom.pipeline.batch import analysis_ahead, summarize
from axiom.projections import all_projectors, rebuild_all
from axiom.service.up import register as register_up_command
from axiom.settings import Settings, SettingsError
from axiom.store.db import Database, OutOfSpace, is_interrupt
from axiom.store.migrate import migrate, open_database
from axiom.store.rewrite import rewrite_database
from axiom.store.timepoints import TimepointError


def cmd_migrate(args: argparse.Namespace) -> int:
    config = AxiomConfig.from_env()
    applied = migrate(Database(config.duckdb_path))
    print(f"applied {len(applied)} migration(s) to {config.duckdb_path}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    db = open_database()
    drained = drain_spool(db)
    try:
        paths = transcript_paths(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not paths:
        return 0 if drained.payloads else 1
    db.publish_before_writing()
    db.reuse_write_engine()
    files, problems = discover(paths)
    if not files and not problems:  # (a path that is not there is reported as such)
        where = ", ".join(str(p) for p in paths)
        print(f"no transcript files found in {where}", file=sys.stderr)
    # the first sessions are analysed while they are written (`AnalysisAhead`)
    ahead = None if args.no_process else analysis_ahead()
    try:
        with Bar(len(files), "file", "import", wanted(args.quiet)) as bar:
            report = import_paths(
                db,
                paths,
                fmt=args.format,
                on_file=lambda _p: bar.advance(),
                fork=Settings.from_env().analysis_child,
                projectors=all_projectors(),
                before_write=ahead.offer if ahead else None,
            )
        _print_import(report)
        new_ids = list(dict.fromkeys([*drained.session_ids, *report.session_ids]))
        processed = []
        if new_ids and not args.no_process:
            processed = process_with_progress(db, new_ids, args.quiet, ahead)
            print(summarize(processed))
    finally:
        if ahead is not None:
            ahead.close()
    failed = any(r.status != "success" for r in processed)  # stored; `process` retries them
    return 0 if report.imported_anything and not failed else 1


def _print_import(report: ImportReport) -> None:
    for issue in report.issues:
        print(issue, file=sys.stderr)
    print(
        f"{report.files} file(s): {report.sessions_new} new session(s),"
        f" {report.sessions_unchanged} unchanged, {report.sessions_merged} merged,"
        f" {report.sessions_extended} extended,"
        f" {report.messages} message(s) ({report.messages_added} added,"
        f" {report.messages_changed} changed), {len(report.issues)} problem(s)"
    )


def cmd_stats(args: argparse.Namespace) -> int:
    db = open_database()
    with db.read() as conn:
        stats = collect_stats(conn)
    if args.json:
        print(json.dumps(stats, indent=2, sort_keys=True))
    else:
        for key, value in stats.items():
            print(f"{key}: {value}")
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    db = open_database()
    with Bar(len(all_projectors()), "projector", "rebuild", wanted(args.quiet)) as bar:
        counts = rebuild_all(db, on_projector=bar.step)
    print(json.dumps(counts, sort_keys=True))
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    db = open_database()
    before = db.path.stat().st_size
    after = rewrite_database(db)
    print(f"compacted {db.path}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m axiom", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("migrate", help="create or upgrade the DuckDB schema").set_defaults(
        func=cmd_migrate
    )

    p = sub.add_parser(
        "import",
        help="import transcript files or folders (none: Claude Code's, ~/.claude/projects)",
    )
    p.add_argument("paths", nargs="*")
    p.add_argument(
        "--project",
        help="only this Claude Code project: its folder name (--project=-home-me-shop) or cwd",
    )
    p.add_argument("--since", help="only transcripts changed since this ISO date")
    p.add_argument(
        "--format",
        default=None,
        choices=sorted(PARSERS),
        help="force a format instead of detecting it",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-process",
        action="store_true",
        help="only store the sessions; skip the memory pipeline",
    )
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("stats", help="counts of events, sessions, messages, entries, outbox")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_stats)

    sub.add_parser(
        "compact",
        help="rewrite the DuckDB file with only its live data (space freed by deletes and"
        " rebuilds, or left by DuckDB 1.4.4)",
    ).set_defaults(func=cmd_compact)

    p = sub.add_parser("rebuild", help="drop derived tables and replay every event")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_rebuild)
    register_up_command(sub)
    register_pipeline_commands(sub)
    register_task_commands(sub)
    register_retrieval_commands(sub)
    register_outbox_commands(sub)
    register_agent_commands(sub)
    register_conflict_commands(sub)
    register_forget_command(sub)
    register_decision_commands(sub)
    register_token_command(sub)
    register_demote_command(sub)
    return parser


# Commands that read or change what is stored: on a data dir with no store they stop with
# a message instead of creating an empty one (a command run from the wrong folder would
# otherwise answer "nothing found" from a fresh ./data). The others create the store or
# never open it (`process` may create it: it drains hooks spooled before one existed).
NEEDS_STORE = frozenset(
    {
        "blocked", "cite", "compact", "conditions", "conflicts", "decisions", "demote",
        "entries", "entry", "export", "forget", "outbox", "rebuild", "reconcile",
        "search", "stats", "task", "tasks",
    }
)  # fmt: skip


def missing_store(command: str) -> str | None:
    """Why `command` cannot run here, or None: there is no store in the data dir."""
    if command not in NEEDS_STORE:
        return None
    path = AxiomConfig.from_env().duckdb_path
    if path.exists():
        return None
    return (
        f"no Axiom store at {path} (the data dir is AXIOM_DATA_DIR, or ./data under the"
        f" current folder, {os.getcwd()}, when unset). Run this where you ran"
        " `python -m axiom up` or `import`, or point AXIOM_DATA_DIR at that data dir;"
        " `python -m axiom import` creates a new store"
    )


INTERRUPTED = 130  # what a shell reports for a command Ctrl-C stopped (128 + SIGINT)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(attach_dash_values(sys.argv[1:] if argv is None else argv))
    try:
        missing = missing_store(args.command)
        if missing is not None:
            print(f"error: {missing}", file=sys.stderr)
            return 1
        return int(args.func(args))
    except BrokenPipeError:
        # The reader left (`axiom entries --json | head -1`): stop quietly. stdout now
        # points at /dev/null so the interpreter's final flush cannot fail again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except SettingsError as exc:  # a bad AXIOM_* variable: one line naming it
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except TimepointError as exc:  # a bad --as-of / --at / --before: one line, exit 1
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OutOfSpace as exc:  # a full disk: what to do, in one line, no traceback
        print(f"error: {exc.strerror}", file=sys.stderr)
        return 1
    except (Exception, KeyboardInterrupt) as exc:
        if not is_interrupt(exc):  # (Ctrl-C inside a DuckDB query is an error caused by it)
            raise
        print("interrupted", file=sys.stderr)  # one line, no traceback (`axiom.__main__` exits)
        return INTERRUPTED
