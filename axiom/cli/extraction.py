"""CLI: `eval extraction FILE... [--json] [--verbose]` (registered under `eval`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from axiom.evaluation.extraction import ExtractionEvalError, evaluate_files
from axiom.observability.progress import Bar, wanted


def cmd_eval_extraction(args: argparse.Namespace) -> int:
    with Bar(None, "conversation", "eval extraction", wanted(args.quiet)) as bar:

        def announce(name: str, entries: int) -> None:
            bar.advance(1, f"{name}: {entries} entries")

        try:
            report = evaluate_files([Path(p) for p in args.files], on_conversation=announce)
        except ExtractionEvalError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(report.to_json(args.verbose), ensure_ascii=False, indent=2))
    else:
        print(report.render(args.verbose))
    return 0


def register_eval(what: argparse._SubParsersAction) -> None:
    """Add `extraction` to the `eval` sub-commands."""
    q = what.add_parser(
        "extraction",
        help="import each LoCoMo conversation into a fresh data dir, run the offline"
        " extractor, and measure recall/precision of entries against the gold observations",
    )
    q.add_argument("files", nargs="+", help="LoCoMo JSON files (one conversation or a list)")
    q.add_argument("--json", action="store_true", help="print the numbers as JSON")
    q.add_argument("--verbose", action="store_true", help="list missed observations")
    q.add_argument("--quiet", action="store_true", help="no progress bar")
    q.set_defaults(func=cmd_eval_extraction)
