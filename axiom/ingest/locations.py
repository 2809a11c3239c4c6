"""Where Claude Code keeps its transcripts, and which of them an import should read.

Claude Code writes one JSONL file per session under `<config>/projects/<project folder>/`,
where `<config>` is `$CLAUDE_CONFIG_DIR` or `~/.claude` and the folder is named after the
working directory (every non-alphanumeric character becomes `-`). Sub-agent files sit in
the same folders and are picked up with their session.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from axiom.settings import claude_projects_dir as settings_claude_projects_dir


def claude_projects_dir() -> Path:
    """Claude Code's transcripts folder (one rule, in `axiom.settings`)."""
    return settings_claude_projects_dir(os.environ)


def folder_for_cwd(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def session_cwd(path: Path, max_lines: int = 50) -> str | None:
    """The working directory the session recorded (first line that has one)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for _, line in zip(range(max_lines), fh, strict=False):
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if isinstance(obj, dict) and isinstance(obj.get("cwd"), str):
                    return obj["cwd"]
    except OSError:
        return None
    return None


def matches_project(path: Path, project: str) -> bool:
    """`project` names the folder, or the session's working directory (or its last part)."""
    folder = path.parent.name
    if folder in (project, folder_for_cwd(project)):
        return True
    cwd = session_cwd(path)
    if cwd is None:
        return False
    return project in (cwd, Path(cwd).name) or Path(project).expanduser() == Path(cwd)


def parse_since(raw: str) -> datetime:
    """An ISO date or date-time (naive means UTC); ValueError names the expected form."""
    try:
        value = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise ValueError(f"--since {raw!r}: expected an ISO date like 2025-01-31") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def find_transcripts(
    root: Path | None = None, project: str | None = None, since: datetime | None = None
) -> list[Path]:
    """Claude Code transcript files under `root`, filtered by project and last change."""
    root = root or claude_projects_dir()
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.glob("*/**/*.jsonl")):
        if since is not None:
            changed = datetime.fromtimestamp(path.stat().st_mtime, UTC)
            if changed < since:
                continue
        if project is not None and not matches_project(path, project):
            continue
        found.append(path)
    return found
