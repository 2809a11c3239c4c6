"""The last check before a transcript becomes a `session_ingested` event.

Parsers report what they find line by line; transcripts also arrive from elsewhere (the
Celery `axiom.ingest_transcript` task takes any JSON). `check_transcript` normalizes every
field to the type the projections expect; the importer then proves the result, privacy
filtered, projects (`prepare_session`: `session_rows`), so an event the session projector
cannot fold is never appended:

* ids (`session_id` must be non-empty text; message `uuid`/`parent_uuid`, tool call ids and
  names) are text: numbers become their text, other values are dropped;
* `role` and `text` are text (a non-text text is stored as its JSON, with a note);
* timestamps that do not parse (or leave the range once moved to UTC) are dropped;
* message indexes are renumbered 0..n-1 when they are not already;
* every string is valid Unicode (lone surrogates → U+FFFD) and every number valid JSON
  (NaN/Infinity → null), in metadata and tool inputs too; nesting is bounded.

It returns the normalized transcript and one note per change; running it again on its
output changes nothing. Anything it cannot normalize raises `ValueError`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from axiom.ingest.sanitize import as_object, as_text, clean_json, id_text
from axiom.ingest.timestamps import check_timestamp
from axiom.ingest.transcript import Message, ToolCall, Transcript


def _message(m: Message, position: int, notes: list[str]) -> Message:
    where = f"message {position}"
    if m.role is None or m.text is None:
        raise ValueError(f"{where} has no {'role' if m.role is None else 'text'}")
    timestamp, dropped = check_timestamp(m.timestamp)
    if dropped:
        notes.append(f"{where}: {dropped}")
    calls = tuple(
        ToolCall(
            tool_use_id=id_text(c.tool_use_id, f"{where}: tool call id", notes) or "",
            name=id_text(c.name, f"{where}: tool name", notes) or "",
            input=as_object(c.input, f"{where}: tool input", notes),
        )
        for c in m.tool_calls
    )
    return Message(
        index=position,
        role=as_text(m.role, f"{where}: role", notes),
        text=as_text(m.text, f"{where}: text", notes),
        timestamp=timestamp,
        uuid=id_text(m.uuid, f"{where}: uuid", notes),
        parent_uuid=id_text(m.parent_uuid, f"{where}: parent_uuid", notes),
        is_sidechain=m.is_sidechain is True,
        tool_calls=calls,
        meta=as_object(m.meta, f"{where}: meta", notes),
    )


def check_transcript(transcript: Transcript) -> tuple[Transcript, list[str]]:
    """(normalized transcript, notes); raises ValueError when it cannot be normalized
    (`prepare_session` then proves it projects)."""
    notes: list[str] = []
    # Through JSON first: the event stores exactly this, and the walk fixes every string
    # and number in it (metadata and tool inputs included).
    try:
        data = json.loads(json.dumps(transcript.to_json(), ensure_ascii=False))
    except RecursionError as exc:
        raise ValueError("nested too deeply to store") from exc
    data = clean_json(data, notes)
    raw_messages = data.get("messages") or []
    if [m.get("index") if isinstance(m, dict) else None for m in raw_messages] != list(
        range(len(raw_messages))
    ):
        notes.append("message indexes renumbered 0..n-1")
    messages = []
    for i, m in enumerate(raw_messages):
        if not isinstance(m, dict):
            raise ValueError(f"message {i} is not an object")
        messages.append(_message(_raw_message(m, i), i, notes))
    sid = id_text(data.get("session_id"), "session_id", notes)
    if not sid:
        raise ValueError("session_id is missing or empty")
    started_at, dropped = check_timestamp(data.get("started_at"))
    if dropped:
        notes.append(f"started_at: {dropped}")
    title = data.get("title")
    checked = replace(
        transcript,
        session_id=sid,
        project=as_text(data.get("project") or "", "project", notes),
        source=as_text(data.get("source") or "unknown", "source", notes),
        messages=tuple(messages),
        started_at=started_at,
        title=None if title is None else as_text(title, "title", notes),
        meta=as_object(data.get("meta"), "meta", notes),
    )
    return checked, list(dict.fromkeys(notes))


def _raw_message(data: dict[str, Any], index: int) -> Message:
    """A message built field by field without coercion (`Message.from_json` would
    `str()` a role or text silently), for `_message` to check and report."""
    calls = tuple(
        ToolCall(tool_use_id=c.get("tool_use_id"), name=c.get("name"), input=c.get("input") or {})
        for c in data.get("tool_calls") or ()
        if isinstance(c, dict)
    )
    return Message(
        index=index,
        role=data.get("role"),  # type: ignore[arg-type]
        text=data.get("text"),  # type: ignore[arg-type]
        timestamp=data.get("timestamp"),
        uuid=data.get("uuid"),
        parent_uuid=data.get("parent_uuid"),
        is_sidechain=data.get("is_sidechain") is True,
        tool_calls=calls,
        meta=data.get("meta") or {},
    )
