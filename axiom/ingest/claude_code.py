"""Parser for Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`).

Each line is a JSON object. Lines of type `user` and `assistant` become messages; `summary`
lines title a session (the one named by `sessionId`, else the one holding the message named
by `leafUuid`, see `_loose_title`); other line types (system notices, snapshots) are skipped. A line
that is not valid JSON is reported as `file:line: reason` and skipped. Bytes that are not
valid UTF-8 are reported and decoded with U+FFFD replacements, so the line is kept; a
byte-order mark before the first line is dropped.

Nothing is changed silently: where a field has the wrong shape but the line is usable, the
value is normalized and a `file:line: reason` warning says how. Content or a text block
that is a number or an object is stored as its JSON text; a bare string in a content list
is kept as text, other non-blocks are skipped; a tool input that is not an object is kept
under 'value' (a missing one becomes {}); a timestamp that is not ISO text is dropped
(a Unix epoch number is accepted and written as ISO text); ids of the wrong type become
text or are dropped; NaN/Infinity, lone surrogates and huge integers are handled as in
`axiom.ingest.sanitize`.

Message text is the message's text blocks joined by a blank line; a `TodoWrite` tool call
adds its list at the call's place (`todo_text`), so the plan can be read and cited.

Sub-agent transcripts. Current Claude Code writes each sub-agent (Task tool) conversation
to its own `agent-<id>.jsonl` next to the main session file, and its lines carry the
PARENT's `sessionId` (with `isSidechain: true`). Every `session_ingested` event describes a
whole session and the projection replaces a session's rows with the newest ingest, so if
both files produced a transcript under the parent's id, whichever was imported last would
win and the other's messages would vanish from the tables. Merging by uuid instead would
make a session's content depend on import order. So a sidechain file becomes a session of
its own: lines whose `sessionId` differs from the file's stem, in a file named `agent-*` or
made only of sidechain lines, form the session `<parent sessionId>:<file stem>`
(`sidechain_session_id`), whose metadata names the parent (`parent_session_id`) and the
agent (`agent_id`). The parent session is untouched, each file maps to a stable id, the
event store stays append-only, and a re-import dedupes as before. Sidechain lines written
inside the main file itself (older Claude Code) stay part of the main session.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from axiom.ingest.issues import InputIssue
from axiom.ingest.privacy.excerpt import first_line
from axiom.ingest.sanitize import UnusableJSON, as_object, as_text, id_text, load_json
from axiom.ingest.timestamps import check_timestamp
from axiom.ingest.transcript import Message, ToolCall, Transcript

MESSAGE_TYPES = {"user", "assistant"}


@dataclass
class ParsedFile:
    transcripts: list[Transcript] = field(default_factory=list)
    issues: list[InputIssue] = field(default_factory=list)


def _decode(raw: bytes, path: Path, line_no: int, issues: list[InputIssue]) -> str:
    if line_no == 1:
        raw = raw.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark, as the JSON parser drops
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        issues.append(
            InputIssue(str(path), line_no, f"invalid UTF-8 at byte {exc.start}; kept with U+FFFD")
        )
        return raw.decode("utf-8", errors="replace")


def _block_text(content: Any, what: str, notes: list[str]) -> str:
    """Text of a tool_result's content, which is a string or a list of text blocks."""
    if isinstance(content, list):
        parts = [
            as_text(b.get("text"), f"'{what}[{i}].text'", notes)
            for i, b in enumerate(content)
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if p)
    return as_text(content, f"'{what}'", notes)


def todo_text(tool_input: dict[str, Any]) -> str | None:
    """A TodoWrite call as message text: ``TodoWrite:`` then ``- [status] content`` per item.

    The list is what the agent planned, said through a tool call; written into the text at
    the call's place, it is shown with the message and its items can be cited like any
    other text (`axiom.extract.rules` quotes them from here). Items without string content
    are left out; the call itself stays in `tool_calls` unchanged.
    """
    todos = tool_input.get("todos")
    if not isinstance(todos, list):
        return None
    lines = []
    for item in todos:
        if isinstance(item, dict) and isinstance(item.get("content"), str):
            status = item.get("status")
            lines.append(f"- [{status if isinstance(status, str) else '?'}] {item['content']}")
    return "TodoWrite:\n" + "\n".join(lines) if lines else None


def _parse_content(
    content: Any, notes: list[str]
) -> tuple[str, list[ToolCall], dict[str, Any], bool]:
    """Split message content into (text, tool calls, extra meta, is_only_tool_results)."""
    if isinstance(content, str):
        return content, [], {}, False
    if not isinstance(content, list):
        if content is None:
            notes.append("'message.content' is missing; stored as empty text")
        return as_text(content, "'message.content'", notes), [], {}, False
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[dict[str, Any]] = []
    thinking: list[str] = []
    for i, block in enumerate(content):
        where = f"message.content[{i}]"
        if isinstance(block, str):
            notes.append(f"'{where}' is a bare string, not a block; kept as text")
            texts.append(block)
            continue
        if not isinstance(block, dict):
            notes.append(f"'{where}' is not a block ({type(block).__name__}); skipped")
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(as_text(block.get("text"), f"'{where}.text'", notes))
        elif kind == "tool_use":
            calls.append(
                ToolCall(
                    tool_use_id=str(block.get("id", "")),
                    name=str(block.get("name", "")),
                    input=as_object(block.get("input"), f"'{where}.input'", notes),
                )
            )
            if calls[-1].name == "TodoWrite" and (todo := todo_text(calls[-1].input)):
                texts.append(todo)
        elif kind == "tool_result":
            results.append(
                {
                    "tool_use_id": block.get("tool_use_id"),
                    "is_error": bool(block.get("is_error", False)),
                    "text": _block_text(block.get("content"), f"{where}.content", notes),
                }
            )
        elif kind == "thinking":
            thinking.append(as_text(block.get("thinking"), f"'{where}.thinking'", notes))
    meta: dict[str, Any] = {}
    if results:
        meta["tool_results"] = results
    if thinking:
        meta["thinking"] = "\n\n".join(thinking)
    only_results = bool(results) and not texts and not calls
    if only_results:
        texts = [r["text"] for r in results]
    return "\n\n".join(t for t in texts if t), calls, meta, only_results


def _message_from_line(obj: dict[str, Any], index: int, notes: list[str]) -> Message:
    message = obj.get("message")
    if not isinstance(message, dict):
        raise ValueError("'message' is missing or not an object")
    role = message.get("role") or obj["type"]
    if not isinstance(role, str):
        notes.append(f"'message.role' is a {type(role).__name__}; used the line type")
        role = obj["type"]
    text, calls, meta, only_results = _parse_content(message.get("content"), notes)
    if only_results:
        role = "tool_result"
    if obj.get("cwd"):
        meta["cwd"] = obj["cwd"]
    if message.get("model"):
        meta["model"] = message["model"]
    timestamp, dropped = check_timestamp(obj.get("timestamp"))
    if dropped:
        notes.append(dropped)
    return Message(
        index=index,
        role=role,
        text=text,
        timestamp=timestamp,
        uuid=id_text(obj.get("uuid"), "'uuid'", notes),
        parent_uuid=id_text(obj.get("parentUuid"), "'parentUuid'", notes),
        is_sidechain=obj.get("isSidechain") is True,
        tool_calls=tuple(calls),
        meta=meta,
    )


# Claude Code names a project folder after the working directory, every character that is
# not a letter or digit made "-": "/home/me/app" → "-home-me-app", "C:\\me\\app" → "C--me-app".
_CLAUDE_FOLDER = re.compile(r"^(?:-|[A-Za-z]--)")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")


def project_from_path(path: Path, cwd: object = None) -> str:
    """The project folder's name where Claude Code named it; elsewhere (an upload under a
    random folder, a copy in a backup folder) the name Claude Code gives the session's
    working directory, so the session joins the project it was recorded in."""
    folder = path.parent.name
    if _CLAUDE_FOLDER.match(folder) or not isinstance(cwd, str) or not cwd.strip():
        return folder
    return _NOT_ALNUM.sub("-", cwd.strip())


def is_sidechain_file(path: Path, session_id: str, objs: list[dict[str, Any]]) -> bool:
    """Lines of another session (`session_id` is not the file's stem) in a sub-agent file:
    named `agent-*`, or holding only sidechain lines."""
    if session_id == path.stem:
        return False
    return path.stem.startswith("agent-") or all(o.get("isSidechain") is True for o in objs)


def sidechain_session_id(parent_session_id: str, path: Path) -> str:
    """The session a sub-agent file becomes: stable per (parent session, file)."""
    return f"{parent_session_id}:{path.stem}"


def _loose_title(
    loose: list[tuple[str, object]], uuids: set[str], sessions_in_file: int
) -> str | None:
    """The title a summary line without sessionId gives a session: the last one whose
    `leafUuid` is one of the session's messages (Claude Code also writes summaries of other,
    earlier sessions at the top of a file; their leaf is not in it); a summary with no
    `leafUuid` only when the file holds one session."""
    by_leaf = [text for text, leaf in loose if isinstance(leaf, str) and leaf in uuids]
    if by_leaf:
        return by_leaf[-1]
    unanchored = [text for text, leaf in loose if leaf is None]
    return unanchored[0] if unanchored and sessions_in_file == 1 else None


def parse_claude_code(path: Path, data: bytes | None = None) -> ParsedFile:
    raw = path.read_bytes() if data is None else data
    result = ParsedFile()
    lines = _read_lines(path, raw, result.issues)
    if not lines.by_session:
        result.issues.append(InputIssue(str(path), None, "no user or assistant messages found"))
    for group_id, objs in lines.by_session.items():
        transcript = _transcript(path, group_id, objs, lines, result.issues)
        if transcript is not None:
            result.transcripts.append(transcript)
    return result


@dataclass
class _Lines:
    """A file's message lines grouped by session, and the summaries that may title them."""

    by_session: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    summaries: dict[str, str] = field(default_factory=dict)
    loose_summaries: list[tuple[str, object]] = field(default_factory=list)  # (summary, leafUuid)


def _read_lines(path: Path, raw: bytes, issues: list[InputIssue]) -> _Lines:
    """Each JSONL line that parses, by session; every line that does not is an issue."""
    lines = _Lines()
    for line_no, raw_line in enumerate(raw.splitlines(), start=1):
        if not raw_line.strip():
            continue
        text = _decode(raw_line, path, line_no, issues)
        notes: list[str] = []
        try:
            obj = load_json(text, notes)
        except UnusableJSON as exc:
            issues.append(InputIssue(str(path), line_no, str(exc)))
            continue
        issues += [InputIssue(str(path), line_no, n) for n in dict.fromkeys(notes)]
        if not isinstance(obj, dict):
            issues.append(InputIssue(str(path), line_no, "line is not a JSON object"))
            continue
        kind = obj.get("type")
        if kind == "summary":
            if obj.get("summary"):
                sid = obj.get("sessionId")
                if isinstance(sid, str) and sid:
                    lines.summaries[sid] = str(obj["summary"])
                else:
                    lines.loose_summaries.append((str(obj["summary"]), obj.get("leafUuid")))
            continue
        if kind not in MESSAGE_TYPES:
            continue
        obj["_line"] = line_no
        sid = obj.get("sessionId")
        if sid is not None and not isinstance(sid, str):
            reason = f"'sessionId' is a {type(sid).__name__}, not a string; used the file name"
            issues.append(InputIssue(str(path), line_no, reason))
            sid = None
        lines.by_session[sid or path.stem].append(obj)
    return lines


def _transcript(
    path: Path,
    group_id: str,
    objs: list[dict[str, Any]],
    lines: _Lines,
    issues: list[InputIssue],
) -> Transcript | None:
    """One session's transcript (None when none of its lines is a usable message)."""
    session_id = group_id
    meta: dict[str, Any] = {"path": str(path)}
    if is_sidechain_file(path, group_id, objs):
        session_id = sidechain_session_id(group_id, path)
        agent = next((o["agentId"] for o in objs if isinstance(o.get("agentId"), str)), None)
        meta["parent_session_id"] = group_id
        meta["agent_id"] = agent or path.stem.removeprefix("agent-")
    messages: list[Message] = []
    for obj in objs:
        notes: list[str] = []
        try:
            messages.append(_message_from_line(obj, len(messages), notes))
        except (ValueError, KeyError, TypeError) as exc:
            notes.append(str(exc))
        issues += [InputIssue(str(path), obj["_line"], n) for n in dict.fromkeys(notes)]
    if not messages:
        return None
    title = lines.summaries.get(group_id) or _loose_title(
        lines.loose_summaries,
        {o["uuid"] for o in objs if isinstance(o.get("uuid"), str)},
        len(lines.by_session),
    )
    if title is None:
        first_user = next((m.text for m in messages if m.role == "user" and m.text), "")
        title = first_line(first_user)  # cut after the privacy filter, not here
    cwd = next((m.meta.get("cwd") for m in messages if m.meta.get("cwd")), None)
    return Transcript(
        session_id=session_id,
        project=project_from_path(path, cwd),
        source="claude_code",
        messages=tuple(messages),
        started_at=messages[0].timestamp,
        title=title,
        meta={**meta, "cwd": cwd},
    )
