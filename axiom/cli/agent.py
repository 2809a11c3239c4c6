"""`python -m axiom hooks|hook|mcp`: Claude Code hooks, slash commands and the MCP server;
and the import of transcripts from where Claude Code keeps them."""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from axiom.agent import spool
from axiom.agent.drain import DrainReport, drain
from axiom.agent.handoff import EVENTS, LOCAL_OPENER, service_url
from axiom.agent.hook import run_hook
from axiom.hooks import install as installer
from axiom.ingest.locations import claude_projects_dir, find_transcripts, parse_since
from axiom.mcp.client_config import client_config, server_argv
from axiom.settings import Settings
from axiom.store.db import Database


def transcript_paths(args: argparse.Namespace) -> list[Path]:
    """The paths an `import` reads: those given, else Claude Code's transcripts."""
    since = parse_since(args.since) if args.since else None
    given = [Path(p) for p in args.paths]
    if given and since is None and args.project is None:
        return given
    roots = given or [claude_projects_dir()]
    found = [
        f
        for p in roots
        for f in (find_transcripts(p, args.project, since) if p.is_dir() or not given else [p])
    ]
    if not found:
        print(nothing_found(roots, args), file=sys.stderr)
    return found


def nothing_found(roots: list[Path], args: argparse.Namespace) -> str:
    """Why an import found nothing: no transcripts at all, or none the filters let through."""
    where = ", ".join(str(r) for r in roots)
    total = sum(len(find_transcripts(r)) for r in roots if r.is_dir())
    if total == 0:
        return f"no Claude Code transcripts found under {where}"
    filters = " ".join(
        f"--{name}={value}"
        for name, value in (("project", args.project), ("since", args.since))
        if value is not None
    )
    return f"{total} Claude Code transcript(s) found under {where}, but none matched {filters}"


def drain_spool(db: Database) -> DrainReport:
    """Import what hooks spooled while the service was down; say so when there was any."""
    report = drain(db, Settings.from_env().data_dir)
    if report.payloads:
        print(report.summary(), file=sys.stderr)
    return report


def service_answers(settings: Settings) -> bool:
    try:
        with LOCAL_OPENER.open(service_url(settings) + "/api/v1/health", timeout=1):
            return True
    except urllib.error.HTTPError:
        return True  # it answered, if only to say no
    except (urllib.error.URLError, OSError):
        return False


def cmd_hooks(args: argparse.Namespace) -> int:
    path = Path(args.settings).expanduser() if args.settings else installer.default_settings_path()
    settings = Settings.from_env()
    try:
        if args.action == "install":
            change = installer.install(path, settings.data_dir, port=settings.port)
            verb = "installed" if change.changed else "already installed"
            print(f"{verb}: {len(installer.EVENT_COMMANDS)} hooks in {path}")
            print(
                f"slash commands in {installer.commands_dir(path)}: /memory-search,"
                " /memory-forget, /memory-stats"
            )
        elif args.action == "uninstall":
            change = installer.uninstall(path)
            print(
                (
                    "removed Axiom's hooks and commands from "
                    if change.changed
                    else "nothing of Axiom's in "
                )
                + str(path)
            )
        else:
            return hooks_status(path, settings)
    except installer.SettingsFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def hooks_status(path: Path, settings: Settings) -> int:
    events = installer.installed_events(installer.load(path))
    print(f"settings: {path}")
    for event in installer.EVENT_COMMANDS:
        print(f"  {event:<17} {'installed' if event in events else 'not installed'}")
    folder = installer.commands_dir(path)
    names = (
        [
            p.stem
            for p in sorted(folder.glob("memory-*.md"))
            if installer.COMMAND_MARKER in p.read_text(encoding="utf-8")
        ]
        if folder.is_dir()
        else []
    )
    print(f"slash commands: {', '.join('/' + n for n in names) or 'none'} ({folder})")
    up = service_answers(settings)
    print(f"service: {service_url(settings)} {'answers' if up else 'does not answer'}")
    print(
        f"spool: {spool.count(settings.data_dir)} payload(s) waiting in"
        f" {spool.spool_dir(settings.data_dir)}"
    )
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    out = run_hook(args.event, sys.stdin.read())
    if out:
        print(out)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    if args.action == "config":
        print(json.dumps(client_config(Settings.from_env().data_dir), indent=2))
        return 0
    # A fresh interpreter with the server's imports: every other command starts without
    # the MCP SDK. `execv` keeps this process's stdin/stdout, which the client talks over.
    argv = server_argv()
    os.execv(argv[0], argv)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hooks", help="Claude Code hooks and slash commands")
    p.add_argument("action", choices=["install", "uninstall", "status"])
    p.add_argument("--settings", help="Claude Code settings file (default ~/.claude/settings.json)")
    p.set_defaults(func=cmd_hooks)

    p = sub.add_parser("hook", help="run one hook (reads Claude Code's hook JSON on stdin)")
    p.add_argument("event", choices=sorted(EVENTS))
    p.set_defaults(func=cmd_hook)

    p = sub.add_parser("mcp", help="the MCP server on stdio; `mcp config` prints client config")
    p.add_argument("action", nargs="?", choices=["serve", "config"], default="serve")
    p.set_defaults(func=cmd_mcp)
