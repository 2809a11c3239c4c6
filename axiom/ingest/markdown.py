"""Parser for Markdown and plain-text transcripts (`.md`, `.markdown`, `.txt`).

A turn starts at a marker at the very start of a line (case-insensitive):

* prefix form: `User:`, `Assistant:`, `Human:`, `AI:`, `System:` — optionally bold, as
  `**User:**` or `**User**:`. Text after the marker on the same line begins the turn.
* heading form: a Markdown heading whose whole text is the role, `## User`, `# assistant`,
  `### Human:` (any level, optional trailing colon).

If the file has any heading marker, only headings are markers, so a heading-style turn may
contain lines such as `user: root` verbatim. Markers inside fenced code blocks (``` or ~~~)
never count.

Roles: user/human → `user`, assistant/ai → `assistant`, system → `system`; the word as
written is kept in `meta["label"]` and the 1-based line of the marker in `meta["line"]`.

Text of a turn: exactly the file's characters from just after the marker (and the spaces
or tabs following it) up to the next marker, with leading and trailing whitespace-only
lines removed and the final line break dropped. Everything else — indentation, blank lines
inside the turn, trailing spaces of inner lines, `\\r\\n` line ends — is kept verbatim. A
marker with nothing after it gives a message with empty text.

Session id = file stem, project = parent folder name, title = a `# Title` heading before
the first turn (that is not itself a marker), else the first line of the first user turn.
Non-blank text before the first turn other than that title is reported and skipped. A file
with no marker at all is one issue and no transcript. Invalid UTF-8 is reported per line
and decoded with U+FFFD replacements.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from axiom.ingest.claude_code import ParsedFile
from axiom.ingest.generic_json import decode_utf8
from axiom.ingest.issues import InputIssue
from axiom.ingest.privacy.excerpt import first_line
from axiom.ingest.transcript import Message, Transcript

ROLES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "system": "system",
}
_WORD = r"(?P<label>user|assistant|human|ai|system)"
# `User:`, `**User:**` or `**User**:` — the closing `**` only when there was an opening one.
PREFIX = re.compile(rf"(\*\*)?{_WORD}(?(1)(?::\*\*|\*\*:)|:)[ \t]*", re.IGNORECASE)
HEADING = re.compile(rf"#{{1,6}}[ \t]+{_WORD}[ \t]*:?[ \t]*$", re.IGNORECASE)
FENCE = re.compile(r"[ \t]{0,3}(```|~~~)")
TITLE = re.compile(r"#[ \t]+(?P<title>\S.*?)[ \t]*#*[ \t]*$")
# Lines end at "\n" only (a "\r" before it stays part of the line), unlike str.splitlines,
# which would also break at form feeds and U+2028 inside a turn.
LINE = re.compile(r"[^\n]*\n|[^\n]+")


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line-with-its-ending) for every line of `text`."""
    out: list[tuple[int, str]] = []
    offset = 0
    for line in LINE.findall(text):
        out.append((offset, line))
        offset += len(line)
    return out


def _body(line: str) -> str:
    return line.rstrip("\r\n")


def _find_markers(lines: list[tuple[int, str]]) -> list[tuple[int, str, int]]:
    """(line index, label as written, offset where the turn's text starts)."""
    headings: list[tuple[int, str, int]] = []
    prefixes: list[tuple[int, str, int]] = []
    fence: str | None = None
    for i, (offset, line) in enumerate(lines):
        body = _body(line)
        fence_match = FENCE.match(body)
        if fence_match:
            mark = fence_match.group(1)
            if fence is None:
                fence = mark
            elif mark == fence:
                fence = None
            continue
        if fence is not None:
            continue
        if m := HEADING.match(body):
            headings.append((i, m.group("label"), offset + len(line)))
        elif m := PREFIX.match(body):
            prefixes.append((i, m.group("label"), offset + m.end()))
    return headings or prefixes


def _trim(chunk: str) -> str:
    """Drop whitespace-only lines at both ends and the final line break."""
    kept = LINE.findall(chunk)
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return _body("".join(kept)) if kept else ""


def parse_markdown(path: Path, data: bytes | None = None) -> ParsedFile:
    raw = path.read_bytes() if data is None else data
    result = ParsedFile()
    text = decode_utf8(path, raw, result.issues)
    if not text.strip():
        result.issues.append(InputIssue(str(path), None, "file is empty"))
        return result
    lines = _lines(text)
    markers = _find_markers(lines)
    if not markers:
        result.issues.append(
            InputIssue(
                str(path),
                None,
                "no turn marker found (expected lines starting 'User:', 'Assistant:',"
                " 'Human:', 'AI:', 'System:' or headings such as '## User')",
            )
        )
        return result

    title: str | None = None
    skipped: list[int] = []
    for i, (_, line) in enumerate(lines[: markers[0][0]]):
        body = _body(line)
        if title is None and (m := TITLE.match(body)):
            title = m.group("title")
        elif body.strip():
            skipped.append(i + 1)
    if skipped:
        result.issues.append(
            InputIssue(
                str(path),
                skipped[0],
                f"{len(skipped)} non-blank line(s) before the first turn were skipped",
            )
        )

    messages: list[Message] = []
    for n, (line_index, label, start) in enumerate(markers):
        end = lines[markers[n + 1][0]][0] if n + 1 < len(markers) else len(text)
        meta: dict[str, Any] = {"label": label, "line": line_index + 1}
        messages.append(
            Message(
                index=len(messages),
                role=ROLES[label.lower()],
                text=_trim(text[start:end]),
                meta=meta,
            )
        )
    if title is None:
        first_user = next((m.text for m in messages if m.role == "user" and m.text.strip()), "")
        title = first_line(first_user)  # cut after the privacy filter, not here
    result.transcripts.append(
        Transcript(
            session_id=path.stem,
            project=path.parent.name,
            source="markdown",
            messages=tuple(messages),
            title=title,
            meta={"path": str(path)},
        )
    )
    return result
