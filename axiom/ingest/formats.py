"""Which parser reads which file: auto-detected from the name and content, or forced."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from axiom.ingest.claude_code import ParsedFile, parse_claude_code
from axiom.ingest.issues import InputIssue

Parser = Callable[[Path, bytes], ParsedFile]

PARSERS: dict[str, Parser] = {"claude_code": parse_claude_code}
SUFFIXES = {".jsonl": "claude_code"}


class UnknownFormat(ValueError):
    pass


def detect_format(path: Path, data: bytes) -> str | None:
    return SUFFIXES.get(path.suffix.lower())


def parse_file(path: Path, fmt: str | None = None) -> ParsedFile:
    """Parse one file; unreadable or unrecognised files become issues, not exceptions."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return ParsedFile(issues=[InputIssue(str(path), None, f"cannot read: {exc.strerror}")])
    if not data.strip():
        return ParsedFile(issues=[InputIssue(str(path), None, "file is empty")])
    name = fmt or detect_format(path, data)
    if name is None:
        return ParsedFile(issues=[InputIssue(str(path), None, "unrecognised transcript format")])
    if name not in PARSERS:
        raise UnknownFormat(f"unknown format {name!r}; known: {', '.join(sorted(PARSERS))}")
    return PARSERS[name](path, data)


def discover(paths: Iterable[Path]) -> tuple[list[Path], list[InputIssue]]:
    """Expand folders into the transcript files below them, in a stable order."""
    files: list[Path] = []
    issues: list[InputIssue] = []
    for path in paths:
        if path.is_dir():
            files += sorted(
                p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES
            )
        elif path.is_file():
            files.append(path)
        else:
            issues.append(InputIssue(str(path), None, "no such file or directory"))
    return files, issues
