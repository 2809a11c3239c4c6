"""CLI: `search QUERY [-k N] [--mode hybrid|fts|vector] [--budget T] [--json]` and
`eval locomo FILE... [--json]`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from axiom.cli.extraction import register_eval as register_extraction_eval
from axiom.config import AxiomConfig
from axiom.evaluation.retrieval import ConversationEval, EvalError, run_eval
from axiom.observability.progress import wanted
from axiom.retrieval.confidence import relevance
from axiom.retrieval.disclosure import disclose
from axiom.retrieval.query import MAX_K, MODES, QueryError, SearchUnavailable
from axiom.retrieval.search import SearchService
from axiom.store.migrate import open_database


def cmd_search(args: argparse.Namespace) -> int:
    config = AxiomConfig.from_env()
    open_database(config)  # migrated, so the read below never meets an old schema
    try:
        service = SearchService.from_config(config)
        result = service.search(" ".join(args.query), k=args.k, mode=args.mode)
        pack = disclose(service.db, result, args.budget) if args.budget else None
    except QueryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except SearchUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if notice := result.unindexed_notice():
        print(f"note: {notice}", file=sys.stderr)
    if args.json:
        data = result.to_json()
        if pack is not None:
            data["disclosure"] = pack.to_json()
        print(json.dumps(data, ensure_ascii=False, indent=2, default=str))
        return 0
    if pack is not None:
        print(pack.render())
        return 0
    if not result.hits:
        print("no results")
        return 0
    for hit in result.hits:
        cite = f" [{hit.citation}]" if hit.citation else ""
        where = hit.stage if hit.kind == "entry" else "message"
        # As the search page: the relevance (the one rule) beside the match it comes
        # from; the rank score only orders the hits (a 0.906 beside "none" read as high).
        print(
            f"{relevance(hit):<9} match {hit.match:.2f}  rank {hit.score:.3f}  {where:<9}"
            f" {hit.id}{cite}"
        )
        print(f"       {hit.summary}")
    total = result.timings_ms.get("total", 0.0)
    print(
        f"{len(result.hits)} hit(s) of {result.candidates} candidates in {total:.0f} ms",
        file=sys.stderr,
    )
    return 0


def cmd_eval_locomo(args: argparse.Namespace) -> int:
    progress = wanted(args.quiet)

    def announce(conv: ConversationEval) -> None:
        if progress and not args.json:
            print(f"{conv.name}: {conv.questions} questions evaluated", file=sys.stderr)

    try:
        report = run_eval(
            [Path(p) for p in args.files], progress=progress, on_conversation=announce
        )
    except EvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        print(report.render())
    return 0


def _k(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if not 1 <= k <= MAX_K:
        raise argparse.ArgumentTypeError(f"k must be from 1 to {MAX_K}")
    return k


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="hybrid search over memories and messages")
    p.add_argument("query", nargs="+", help="what to look for (words are joined)")
    p.add_argument("-k", type=_k, default=10, help=f"hits to return (1-{MAX_K}, default 10)")
    p.add_argument("--mode", choices=MODES, default="hybrid")
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        help="token budget: show index lines, details and timelines that fit (progressive disclosure)",
    )
    p.add_argument("--json", action="store_true", help="hits with score breakdowns as JSON")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("eval", help="retrieval evaluation")
    what = p.add_subparsers(dest="eval_set", required=True)
    q = what.add_parser(
        "locomo",
        help="import each LoCoMo conversation into a fresh data dir and measure hit@k,"
        " recall@k and MRR of its questions' evidence turns, and the citation precision@1/@5"
        " of the top hits, for fts, vector and hybrid (fts only with AXIOM_EMBEDDER=none)",
    )
    q.add_argument("files", nargs="+", help="LoCoMo JSON files (one conversation or a list)")
    q.add_argument("--json", action="store_true", help="print the numbers as JSON")
    q.add_argument("--quiet", action="store_true", help="no progress bars")
    q.set_defaults(func=cmd_eval_locomo)
    register_extraction_eval(what)
