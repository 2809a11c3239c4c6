"""The in-memory shape every transcript source is parsed into.

Parsers (Claude Code JSONL, generic JSON, Markdown, LoCoMo) all produce `Transcript`s, so
the rest of the pipeline never needs to know where a session came from.
"""

from __future__ import annotations

from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """A tool invocation made by the assistant inside a message (e.g. TodoWrite, Bash)."""

    tool_use_id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Message:
    """One turn of a transcript.

    `text` is the human-readable text of the turn exactly as stored; evidence spans are
    Python `str` indices into this string.
    """

    index: int
    role: str  # user | assistant | tool_result | system
    text: str
    timestamp: str | None = None
    uuid: str | None = None
    parent_uuid: str | None = None
    is_sidechain: bool = False
    tool_calls: tuple[ToolCall, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """What `dataclasses.asdict` gives (fields in order, nested values copied), written
        out: asdict's generic walk was a sixth of an import's time."""
        return {
            "index": self.index,
            "role": self.role,
            "text": self.text,
            "timestamp": self.timestamp,
            "uuid": self.uuid,
            "parent_uuid": self.parent_uuid,
            "is_sidechain": self.is_sidechain,
            "tool_calls": [
                {"tool_use_id": c.tool_use_id, "name": c.name, "input": deepcopy(c.input)}
                for c in self.tool_calls
            ],
            "meta": deepcopy(self.meta) if self.meta else {},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        calls = tuple(ToolCall(**call) for call in data.get("tool_calls") or ())
        return cls(
            index=int(data["index"]),
            role=str(data["role"]),
            text=str(data["text"]),
            timestamp=data.get("timestamp"),
            uuid=data.get("uuid"),
            parent_uuid=data.get("parent_uuid"),
            is_sidechain=bool(data.get("is_sidechain", False)),
            tool_calls=calls,
            meta=dict(data.get("meta") or {}),
        )


@dataclass(frozen=True)
class Transcript:
    """A whole session: its identity, where it came from and its ordered messages."""

    session_id: str
    project: str
    source: str  # claude_code | json | markdown | locomo
    messages: tuple[Message, ...]
    started_at: str | None = None
    title: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "project": self.project,
            "source": self.source,
            "started_at": self.started_at,
            "title": self.title,
            "meta": self.meta,
            "messages": [m.to_json() for m in self.messages],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Transcript:
        return cls(
            session_id=str(data["session_id"]),
            project=str(data.get("project") or ""),
            source=str(data.get("source") or "unknown"),
            messages=tuple(Message.from_json(m) for m in data.get("messages") or ()),
            started_at=data.get("started_at"),
            title=data.get("title"),
            meta=dict(data.get("meta") or {}),
        )
