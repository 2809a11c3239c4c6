"""Which parser reads which file: auto-detected from the name and content, or forced.

Detection (`detect_format`):

* `.jsonl` → `claude_code`
* `.md`, `.markdown`, `.txt` → `markdown`
* `.json` → sniffed from the parsed document: a LoCoMo conversation (an object with a
  `conversation` holding `speaker_a`, or the flat form with `speaker_a` and `session_N`
  keys), or a list with one → `locomo`; an object with `messages`, or a list with one →
  `json`; anything else → None ("unrecognised transcript format", followed for a `.json`
  file by the shapes that are read, and a ChatGPT export named as such). A `.json` file that is
  not valid JSON goes to `json`, whose parser reports the line and column of the error.
* any other suffix → None.

`--format` forces one of `PARSERS` (claude_code, json, markdown, locomo) for every file;
an unknown name raises `UnknownFormat`, whose message lists the known names.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from axiom.ingest.claude_code import ParsedFile, parse_claude_code
from axiom.ingest.generic_json import parse_generic_json
from axiom.ingest.import_roots import PathOutsideImportRoots, confine_to_import_roots
from axiom.ingest.issues import InputIssue
from axiom.ingest.locomo import looks_like_locomo, parse_locomo
from axiom.ingest.markdown import parse_markdown

Parser = Callable[[Path, bytes], ParsedFile]

PARSERS: dict[str, Parser] = {
    "claude_code": parse_claude_code,
    "json": parse_generic_json,
    "markdown": parse_markdown,
    "locomo": parse_locomo,
}
SUFFIXES = {
    ".jsonl": "claude_code",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "markdown",
}
SNIFFED_SUFFIXES = {".json"}
TRANSCRIPT_SUFFIXES = frozenset(SUFFIXES) | SNIFFED_SUFFIXES
OUTSIDE_ROOTS = "not read: a link to a file outside the import roots"
UNRECOGNISED = "unrecognised transcript format"
JSON_SHAPES = 'a JSON transcript is an object with "messages", a list of them, or LoCoMo'
CHATGPT_HINT = 'a ChatGPT export (conversations with a "mapping") is not a format Axiom reads'


class UnknownFormat(ValueError):
    pass


def check_format(name: str) -> str:
    """`name` if a parser has it, else `UnknownFormat` naming the known formats."""
    if name not in PARSERS:
        raise UnknownFormat(f"unknown format {name!r}; known: {', '.join(sorted(PARSERS))}")
    return name


def _sniff_json(doc: Any) -> str | None:
    if looks_like_locomo(doc):
        return "locomo"
    items = doc if isinstance(doc, list) else [doc]
    if any(isinstance(item, dict) and "messages" in item for item in items):
        return "json"
    return None


def _load_json(data: bytes) -> Any:
    """The parsed document; `ValueError` (or `RecursionError`) where it is not JSON."""
    return json.loads(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))


def detect_format(path: Path, data: bytes) -> str | None:
    suffix = path.suffix.lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    if suffix not in SNIFFED_SUFFIXES:
        return None
    try:
        doc = _load_json(data)
    except (ValueError, RecursionError):
        return "json"  # its parser reports where and why the JSON breaks
    return _sniff_json(doc)


def unrecognised(path: Path, data: bytes) -> str:
    """Why a file has no parser, saying for a JSON file which shapes are read (and naming a
    ChatGPT export, the JSON people try first): only called once detection failed."""
    if path.suffix.lower() not in SNIFFED_SUFFIXES:
        return UNRECOGNISED
    doc = _load_json(data)  # detection parsed it already, so it is JSON
    items = doc if isinstance(doc, list) else [doc]
    if any(isinstance(item, dict) and "mapping" in item for item in items):
        return f"{UNRECOGNISED}: {CHATGPT_HINT}; {JSON_SHAPES}"
    return f"{UNRECOGNISED}: {JSON_SHAPES}"


def parse_file(path: Path, fmt: str | None = None) -> ParsedFile:
    """Parse one file; unreadable or unrecognised files become issues, not exceptions.

    Only a forced `fmt` that names no parser raises (`UnknownFormat`)."""
    if fmt is not None:
        check_format(fmt)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return ParsedFile(issues=[InputIssue(str(path), None, f"cannot read: {exc.strerror}")])
    if not data.strip():
        return ParsedFile(issues=[InputIssue(str(path), None, "file is empty")])
    name = fmt or detect_format(path, data)
    if name is None:
        return ParsedFile(issues=[InputIssue(str(path), None, unrecognised(path, data))])
    return PARSERS[name](path, data)


def discover(
    paths: Iterable[Path], within: Sequence[Path] | None = None
) -> tuple[list[Path], list[InputIssue]]:
    """Expand folders into the transcript files below them, in a stable order.

    Files named explicitly are taken whatever their suffix; inside folders only
    `TRANSCRIPT_SUFFIXES` (.jsonl, .json, .md, .markdown, .txt) are picked up. With
    `within` (a folder sent to the server), a file in it that is a link to somewhere
    outside those roots is skipped with an issue, never read."""
    files: list[Path] = []
    issues: list[InputIssue] = []
    for path in paths:
        if path.is_dir():
            for p in sorted(path.rglob("*")):
                if not (p.is_file() and p.suffix.lower() in TRANSCRIPT_SUFFIXES):
                    continue
                if within is not None and not _inside(p, within):
                    issues.append(InputIssue(str(p), None, OUTSIDE_ROOTS))
                    continue
                files.append(p)
        elif path.is_file():
            files.append(path)
        else:
            issues.append(InputIssue(str(path), None, "no such file or directory"))
    return files, issues


def _inside(path: Path, roots: Sequence[Path]) -> bool:
    try:
        confine_to_import_roots(path, roots)
    except PathOutsideImportRoots:
        return False
    return True
