"""Import the Claude Code transcripts where Claude Code keeps them (no path given).

The same discovery as `python -m axiom import` with no path (`axiom.ingest.locations`),
for callers that take no path from anyone — the dashboard's "import your Claude Code
transcripts" button: every file read resolves inside the Claude projects folder (a symlink
pointing elsewhere is skipped), so a request can never make Axiom read another file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from axiom.ingest.importer import ImportReport, import_paths
from axiom.ingest.locations import claude_projects_dir, find_transcripts
from axiom.store.db import Database


@dataclass
class DiscoveryImport:
    root: Path
    found: int = 0
    skipped_outside: list[Path] = field(default_factory=list)
    report: ImportReport | None = None

    def summary(self) -> str:
        if self.report is None:
            return f"no Claude Code transcripts found under {self.root}"
        r = self.report
        return (
            f"{self.found} transcript(s) under {self.root}: {r.sessions_new} new session(s),"
            f" {r.sessions_unchanged} unchanged, {r.sessions_extended} extended,"
            f" {r.messages} message(s),"
            f" {len(r.issues)} problem(s)"
            + (
                f"; {len(self.skipped_outside)} link(s) out of the folder skipped"
                if self.skipped_outside
                else ""
            )
        )


def confined_transcripts(root: Path) -> tuple[list[Path], list[Path]]:
    """(transcripts whose real path is inside `root`, those that point outside it)."""
    real_root = root.resolve()
    inside, outside = [], []
    for path in find_transcripts(root):
        (inside if path.resolve().is_relative_to(real_root) else outside).append(path)
    return inside, outside


def import_claude_transcripts(db: Database, root: Path | None = None) -> DiscoveryImport:
    """Import every transcript under the Claude projects folder (deduplicated: a second
    run stores nothing new)."""
    root = root or claude_projects_dir()
    paths, outside = confined_transcripts(root)
    result = DiscoveryImport(root, len(paths), outside)
    if paths:
        result.report = import_paths(db, paths)
    return result
