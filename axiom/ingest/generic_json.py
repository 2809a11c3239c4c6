"""Parser for generic JSON transcripts, and the whole-file decoding the JSON parsers share.

A file holds one session object or a list of them:

    {"session_id": "s1",           # optional; else the file stem ("<stem>-<i>" in a list)
     "title": "…",                 # optional; else the first line of the first user turn
     "project": "…",               # optional; else the parent folder's name
     "messages": [
        {"role": "user", "content": "text", "timestamp": "2026-01-01T00:00:00Z"},
        {"role": "assistant", "content": [{"type": "text", "text": "…"}]}]}

`content` is a string or a list of blocks; the `text` of `{"type": "text"}` blocks is joined
with a blank line (as the Claude Code parser does) and other block types (images, tool
calls) are skipped. Roles are lower-cased and common aliases mapped: human → user;
ai/bot/model → assistant; developer → system; tool/function → tool_result. `timestamp` may
be ISO text (kept as written) or Unix epoch seconds/milliseconds (turned into ISO UTC); one
that does not parse, leaves year 1-9999 in UTC or is of another type is dropped with a
warning and the message kept (`check_timestamp`, as the Claude Code parser does).
`id`/`uuid` of a message, when a string, becomes its `uuid`.

In a list, `<i>` is the item's 0-based position, so the id names the item `[i]` of the file.

Bad input never raises: a message or session of the wrong shape is reported as an
`InputIssue` whose reason starts with a JSON path (`[1].messages[3]: 'role' is missing`;
line is None because positions are lost once the JSON is parsed) and is skipped, the rest
of the file is kept. A file that is not valid JSON is one issue at the line of the error
with the column in the reason. Bytes that are not valid UTF-8 are reported per line and
decoded with U+FFFD replacements.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from axiom.ingest.claude_code import ParsedFile
from axiom.ingest.issues import InputIssue
from axiom.ingest.privacy.excerpt import first_line
from axiom.ingest.sanitize import UnusableJSON
from axiom.ingest.sanitize import load_json as load_safe_json
from axiom.ingest.timestamps import check_timestamp
from axiom.ingest.transcript import Message, Transcript

ROLE_ALIASES = {
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool_result",
    "function": "tool_result",
    "tool_result": "tool_result",
}


class BadItem(ValueError):
    """One message or session has the wrong shape; reported and skipped."""


def decode_utf8(path: Path, data: bytes, issues: list[InputIssue]) -> str:
    """The whole file as text. Each line holding invalid UTF-8 is reported and decoded with
    U+FFFD replacements; a leading byte-order mark is dropped."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        parts: list[str] = []
        for line_no, raw_line in enumerate(data.splitlines(keepends=True), start=1):
            try:
                parts.append(raw_line.decode("utf-8"))
            except UnicodeDecodeError as exc:
                issues.append(
                    InputIssue(
                        str(path), line_no, f"invalid UTF-8 at byte {exc.start}; kept with U+FFFD"
                    )
                )
                parts.append(raw_line.decode("utf-8", errors="replace"))
        text = "".join(parts)
    return text.removeprefix("\ufeff")


def load_json(path: Path, data: bytes, issues: list[InputIssue]) -> tuple[bool, Any]:
    """(True, document) or (False, None) with the reason appended to `issues`; values
    normalized on the way (`axiom.ingest.sanitize`) are reported too."""
    text = decode_utf8(path, data, issues)
    if not text.strip():
        issues.append(InputIssue(str(path), None, "file is empty"))
        return False, None
    notes: list[str] = []
    try:
        doc = load_safe_json(text, notes)
    except UnusableJSON as exc:
        issues.append(InputIssue(str(path), exc.line, str(exc)))
        return False, None
    issues += [InputIssue(str(path), None, note) for note in dict.fromkeys(notes)]
    return True, doc


def _content_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        if content is None:
            raise BadItem(f"{where}: 'content' is missing")
        raise BadItem(f"{where}: 'content' must be a string or a list of blocks")
    texts: list[str] = []
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            raise BadItem(f"{where}.content[{i}]: block is not an object")
        if block.get("type") != "text":
            continue
        text = block.get("text")
        if not isinstance(text, str):
            raise BadItem(f"{where}.content[{i}]: text block has no string 'text'")
        texts.append(text)
    return "\n\n".join(t for t in texts if t)


def _message(obj: Any, index: int, where: str, notes: list[str]) -> Message:
    if not isinstance(obj, dict):
        raise BadItem(f"{where}: message is not an object")
    raw_role = obj.get("role")
    if not isinstance(raw_role, str) or not raw_role.strip():
        raise BadItem(f"{where}: 'role' is missing or not a string")
    role = ROLE_ALIASES.get(raw_role.strip().lower())
    if role is None:
        raise BadItem(f"{where}: unknown role {raw_role!r}")
    text = _content_text(obj.get("content"), where)
    timestamp, dropped = check_timestamp(obj.get("timestamp"))
    if dropped:
        notes.append(f"{where}: {dropped}")
    uuid = obj.get("uuid", obj.get("id"))
    meta: dict[str, Any] = {}
    if raw_role != role:
        meta["role"] = raw_role
    if isinstance(obj.get("name"), str):
        meta["name"] = obj["name"]
    return Message(
        index=index,
        role=role,
        text=text,
        timestamp=timestamp,
        uuid=uuid if isinstance(uuid, str) else None,
        meta=meta,
    )


def _first_user_line(messages: list[Message]) -> str | None:
    first_user = next((m.text for m in messages if m.role == "user" and m.text.strip()), "")
    return first_line(first_user)  # cut after the privacy filter, not here


def _session(path: Path, obj: Any, item: int | None, issues: list[InputIssue]) -> Transcript | None:
    prefix = f"[{item}]" if item is not None else ""
    if not isinstance(obj, dict):
        issues.append(InputIssue(str(path), None, f"{prefix or '$'}: session is not an object"))
        return None
    raw_messages = obj.get("messages")
    if not isinstance(raw_messages, list):
        issues.append(
            InputIssue(str(path), None, f"{prefix}.messages: missing or not a list".lstrip("."))
        )
        return None
    messages: list[Message] = []
    for i, raw in enumerate(raw_messages):
        where = f"{prefix}.messages[{i}]".lstrip(".")
        notes: list[str] = []
        try:
            messages.append(_message(raw, len(messages), where, notes))
        except BadItem as exc:
            issues.append(InputIssue(str(path), None, str(exc)))
        issues.extend(InputIssue(str(path), None, note) for note in notes)
    if not messages:
        where = f"{prefix}.messages".lstrip(".")
        issues.append(InputIssue(str(path), None, f"{where}: no usable messages"))
        return None

    raw_id = obj.get("session_id")
    if isinstance(raw_id, str) and raw_id.strip():
        session_id = raw_id.strip()
    elif isinstance(raw_id, int) and not isinstance(raw_id, bool):
        session_id = str(raw_id)
    else:
        session_id = path.stem if item is None else f"{path.stem}-{item}"
    title = obj.get("title") if isinstance(obj.get("title"), str) else None
    project = obj.get("project") if isinstance(obj.get("project"), str) else None
    started_at = obj.get("started_at") if isinstance(obj.get("started_at"), str) else None
    meta: dict[str, Any] = {"path": str(path)}
    if item is not None:
        meta["item"] = item
    return Transcript(
        session_id=session_id,
        project=project or path.parent.name,
        source="json",
        messages=tuple(messages),
        started_at=started_at or next((m.timestamp for m in messages if m.timestamp), None),
        title=title or _first_user_line(messages),
        meta=meta,
    )


def parse_generic_json(path: Path, data: bytes | None = None) -> ParsedFile:
    raw = path.read_bytes() if data is None else data
    result = ParsedFile()
    ok, doc = load_json(path, raw, result.issues)
    if not ok:
        return result
    if isinstance(doc, dict):
        items: list[tuple[int | None, Any]] = [(None, doc)]
    elif isinstance(doc, list):
        items = list(enumerate(doc))
        if not items:
            result.issues.append(InputIssue(str(path), None, "the list holds no sessions"))
    else:
        result.issues.append(
            InputIssue(str(path), None, "top level must be a session object or a list of them")
        )
        return result
    seen: dict[str, str] = {}
    for item, obj in items:
        transcript = _session(path, obj, item, result.issues)
        if transcript is None:
            continue
        where = f"[{item}]" if item is not None else "$"
        if transcript.session_id in seen:
            result.issues.append(
                InputIssue(
                    str(path),
                    None,
                    f"{where}: duplicate session_id {transcript.session_id!r}"
                    f" (first at {seen[transcript.session_id]}); skipped",
                )
            )
            continue
        seen[transcript.session_id] = where
        result.transcripts.append(transcript)
    return result
