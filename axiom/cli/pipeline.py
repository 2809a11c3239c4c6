"""CLI commands over the memory pipeline: process, entries, entry, export."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from axiom.cli.agent import drain_spool
from axiom.config import AxiomConfig
from axiom.conflicts.entries_as_of import list_entries_as_of
from axiom.entries.candidate import stored_candidate
from axiom.entries.queries import EntryRow, entry_history, get_entry, list_entries
from axiom.evidence.citation_spans import list_citation_spans_for_entry
from axiom.evidence.citations import Citation, get_citation, normalize_citation_id
from axiom.forgetting.forget import finish_pending
from axiom.graduation.idris import IdrisModule, module_relpath, write_module
from axiom.observability.progress import Bar, wanted
from axiom.pipeline.batch import process_sessions, stored_session_ids, summarize
from axiom.pipeline.export import export_lines
from axiom.pipeline.forked import AnalysisAhead
from axiom.pipeline.process import ProcessReport, UnknownSession
from axiom.store.db import Database
from axiom.store.migrate import open_database
from axiom.store.timepoints import parse_timepoint


def process_with_progress(
    db: Database, ids: list[str], quiet: bool, ahead: AnalysisAhead | None = None
) -> list[ProcessReport]:
    """`process_sessions` with a bar of sessions on a terminal (`import` and `process`)."""
    with Bar(None, "session", "process", wanted(quiet)) as bar:
        return process_sessions(
            db, ids, on_start=bar.set_total, on_session=lambda _s: bar.advance(), ahead=ahead
        )


def cmd_process(args: argparse.Namespace) -> int:
    db = open_database()
    finish_pending(db, AxiomConfig.from_env())
    drain_spool(db)
    ids = args.session_ids or stored_session_ids(db)
    db.publish_before_writing()
    db.reuse_write_engine()
    try:
        reports = process_with_progress(db, ids, args.quiet)
    except UnknownSession as exc:  # a mistyped id: one line, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summarize(reports))
    return 1 if any(r.status != "success" for r in reports) else 0


def cmd_entries(args: argparse.Namespace) -> int:
    when = parse_timepoint(args.as_of, end_of_day=True) if args.as_of else None
    with open_database().read() as conn:
        rows = (
            list_entries(conn, stage=args.stage, entry_type=args.type, status=args.status)
            if when is None
            else list_entries_as_of(
                conn, when, stage=args.stage, entry_type=args.type, status=args.status
            )
        )
    if args.idris_dir is not None:
        return _write_modules(rows, args.idris_dir)
    for row in rows:
        if args.json:
            print(json.dumps(row.to_json(), ensure_ascii=False))
        else:
            print(
                f"{row.entry_id}  {row.stage:<9} {row.status:<10} {row.entry_type:<9} {row.title}"
            )
    if not args.json:
        print(f"{len(rows)} entr{'y' if len(rows) == 1 else 'ies'}", file=sys.stderr)
    return 0


def _write_modules(rows: list[EntryRow], directory: Path) -> int:
    """Each entry's Idris 2 module under `directory` (`Axiom/Entry_<hex>.idr`, where
    `idris2 --check` run in `directory` finds it)."""
    written = 0
    try:
        for row in rows:
            write_module(stored_candidate(row), directory / module_relpath(row.entry_id))
            written += 1
    except OSError as exc:
        print(
            f"error: cannot write the modules under {directory} ({_modules(written)} written"
            f" of {len(rows)}): {exc}",
            file=sys.stderr,
        )
        return 1
    if rows:
        print(f"{_modules(written)} written under {directory}", file=sys.stderr)
    else:
        print("no entry listed: no module written", file=sys.stderr)
    return 0


def _modules(count: int) -> str:
    return f"{count} module{'' if count == 1 else 's'}"


def _folder(value: str) -> Path:
    """A folder argument: an empty one is refused (it would name the working directory
    without saying so)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("needs a folder")
    return Path(value)


def cmd_entry(args: argparse.Namespace) -> int:
    shown = not args.idris  # the module needs the row alone
    with open_database().read() as conn:
        row = get_entry(conn, args.entry_id)
        history = entry_history(conn, args.entry_id) if row and shown else []
        spans = list_citation_spans_for_entry(conn, args.entry_id) if row and shown else []
        cited = [s.citation_id for s in spans]
    if row is None:
        print(f"error: no entry {args.entry_id!r}", file=sys.stderr)
        return 1
    if args.idris:  # the module the validator checks, which it writes only for idris2
        sys.stdout.write(IdrisModule.emit(stored_candidate(row)) + "\n")
        return 0
    data = {**row.to_json(), "citations": cited, "history": history}
    if args.json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return 0
    print(f"{row.entry_id}  [{row.entry_type}] {row.title}")
    print(f"stage {row.stage}, status {row.status}, session {row.session_id}")
    print(row.content)
    for ev in row.evidence:
        where = f"message {ev['message_index']} [{ev.get('span_start')}:{ev.get('span_end')}]"
        state = ev.get("method") or f"not aligned: {ev.get('failure_reason')}"
        print(f"  evidence {where} {state}: {ev.get('quote')!r}")
    if cited:
        print(f"  citations (open with `cite`): {' '.join(cited)}")
    for h in history:
        print(f"  {h['ts']} {h['type']} {json.dumps(h['payload'], ensure_ascii=False)[:160]}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    for line in export_lines(open_database()):
        sys.stdout.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
    return 0


def cmd_cite(args: argparse.Namespace) -> int:
    with open_database().read() as conn:
        citation = get_citation(conn, args.citation_id)
    if citation is None:
        print(f"error: no citation {normalize_citation_id(args.citation_id)!r}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(citation.to_json(), ensure_ascii=False, indent=2))
        return 0
    print(f"[{citation.citation_id}] {_cited(citation)}")
    print(
        f"session {citation.session_id}, message {citation.message_index} ({citation.role}),"
        f" chars {citation.span_start}-{citation.span_end}, {citation.method}"
    )
    if citation.outdated:
        print(
            "note: the session was re-imported with changed text; this is the message as it read then"
        )
    print(f"...{citation.before}>>>{citation.quote}<<<{citation.after}...")
    return 0


def _cited(citation: Citation) -> str:
    """What a citation points at: its memory, or (a message citation has no memory) the
    message itself, by speaker and session."""
    if citation.entry_id is not None:
        return citation.entry_title or citation.entry_id
    speaker = f"{citation.role} message" if citation.role else "message"
    return f"{speaker} {citation.message_index} of session {citation.session_id}"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cite", help="open a citation: the cited span in its message")
    p.add_argument("citation_id", help="mem:XXXXXX (the mem: prefix is optional)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_cite)

    p = sub.add_parser(
        "process", help="run the memory pipeline over sessions, oldest first (default: all)"
    )
    p.add_argument("session_ids", nargs="*")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_process)

    p = sub.add_parser("entries", help="list memory entries")
    p.add_argument("--stage", choices=["raw", "working", "candidate", "verified", "certified"])
    p.add_argument("--type")
    p.add_argument("--status")
    p.add_argument("--as-of", help="as known then: an ISO date (end of day, UTC) or datetime")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object per line")
    out.add_argument(
        "--idris-dir",
        metavar="DIR",
        type=_folder,
        help="write each listed entry's Idris 2 module under DIR instead (DIR/Axiom/Entry_<hex>"
        ".idr: run `idris2 --check Axiom/Entry_<hex>.idr` in DIR)",
    )
    p.set_defaults(func=cmd_entries)

    p = sub.add_parser("entry", help="show one entry with its evidence and history")
    p.add_argument("entry_id")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument(
        "--idris",
        action="store_true",
        help="print the entry's Idris 2 module instead (save it as the file its `module`"
        " line names, Axiom/Entry_<hex>.idr, then `idris2 --check` it)",
    )
    p.set_defaults(func=cmd_entry)

    p = sub.add_parser("export", help="export sessions, messages and entries as JSON lines")
    p.add_argument("--json", action="store_true", help="JSON lines (the only format)")
    p.set_defaults(func=cmd_export)
