"""Applies the privacy filter to every string a transcript carries before it is stored.

Not only message text: tool-call inputs, tool results, thinking and titles can hold secrets
too, so every string anywhere in the transcript goes through the filter.

A private region can span turns: the message texts are filtered in the order they are
stored, and a region left open at the end of one message goes on in the next, so
``<private>`` in message 3 and ``</private>`` in message 6 hide the end of 3, all of 4
and 5, and the start of 6; a region nothing closes hides the rest of the session (fail
safe). A message touched by such a region (it starts or ends inside it) also has its
tool-call inputs and the content in its metadata (thinking, tool results, captions)
replaced by ``[PRIVATE]``: what is kept is structure (`STRUCTURAL_META`, tool names and
ids). Such a region is counted once in ``private_tag`` (and ``private_unclosed`` when it
never closes).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from axiom.ingest.privacy.excerpt import TITLE_MAX_CHARS
from axiom.ingest.privacy.filter import PRIVATE_MARKER, OpenRegion, PrivacyFilter
from axiom.ingest.transcript import Message, ToolCall, Transcript

# Metadata that describes a message rather than saying anything: kept in hidden messages.
STRUCTURAL_META = frozenset(
    {
        "tool_use_id",
        "is_error",
        "cwd",
        "model",
        "speaker",
        "dia_id",
        "session_date",
        "role",
        "name",
        "label",
        "line",
        "item",
        "parent_session_id",
        "agent_id",
    }
)


def _hidden(value: Any, keep: frozenset[str] = frozenset()) -> Any:
    """`value` with every string replaced by the marker (dict keys in `keep` untouched)."""
    if isinstance(value, str):
        return PRIVATE_MARKER if value else value
    if isinstance(value, dict):
        return {k: v if k in keep else _hidden(v, keep) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_hidden(v, keep) for v in value]
    return value


class _Scrubber:
    def __init__(self) -> None:
        self.filter = PrivacyFilter()
        self.counts: Counter[str] = Counter()
        self.open: OpenRegion | None = None  # a private region still open after a message
        self.hidden_texts: list[str] = []  # raw texts of messages that began inside one

    def text(self, value: str) -> str:
        result = self.filter.apply(value)
        if result.counts:  # most texts hide nothing (and Counter.update costs)
            self.counts.update(result.counts)
        return result.text

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def message(self, message: Message) -> Message:
        started_inside = self.open is not None
        if started_inside and message.text.strip():
            self.hidden_texts.append(message.text)
        result = self.filter.apply(message.text, inside=self.open, carry=True)
        if result.counts:
            self.counts.update(result.counts)
        self.open = result.open_region
        if started_inside or self.open is not None:
            return replace(
                message,
                text=result.text,
                tool_calls=tuple(
                    ToolCall(c.tool_use_id, c.name, _hidden(c.input)) for c in message.tool_calls
                ),
                meta=_hidden(message.meta, STRUCTURAL_META),
            )
        return replace(
            message,
            text=result.text,
            tool_calls=tuple(
                ToolCall(c.tool_use_id, c.name, self.value(c.input)) for c in message.tool_calls
            ),
            meta=self.value(message.meta),
        )

    def finish(self) -> None:
        """A region still open after the last message ran to the end of the session."""
        if self.open is not None:
            self.counts.update({"private_tag": 1, "private_unclosed": 1})
            self.open = None


def filter_transcript(transcript: Transcript) -> Transcript:
    """The transcript with private regions and secrets removed; counts in `meta["privacy"]`."""
    scrub = _Scrubber()
    messages = tuple(scrub.message(m) for m in transcript.messages)
    scrub.finish()
    title = transcript.title
    if title and any(title.strip() in text for text in scrub.hidden_texts):
        title = PRIVATE_MARKER  # taken from a message inside a region that spans turns
    elif title and any(title.strip() in m.text for m in transcript.messages):
        title = scrub.filter.apply(title).text  # a copy of message text: counted there
    elif title:
        title = scrub.text(title)
    if title and len(title) > TITLE_MAX_CHARS:
        title = title[:TITLE_MAX_CHARS]  # cut only now: a secret cut in half escapes the filter
    meta = {k: v for k, v in transcript.meta.items() if k != "privacy"}
    meta["privacy"] = dict(sorted(scrub.counts.items()))
    return replace(transcript, messages=messages, title=title, meta=meta)
