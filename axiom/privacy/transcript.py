"""Applies the privacy filter to every string a transcript carries before it is stored.

Not only message text: tool-call inputs, tool results, thinking and titles can hold secrets
too, so every string anywhere in the transcript goes through the filter.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from axiom.ingest.transcript import Message, ToolCall, Transcript
from axiom.privacy.filter import PrivacyFilter


class _Scrubber:
    def __init__(self) -> None:
        self.filter = PrivacyFilter()
        self.counts: Counter[str] = Counter()

    def text(self, value: str) -> str:
        result = self.filter.apply(value)
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
        return replace(
            message,
            text=self.text(message.text),
            tool_calls=tuple(
                ToolCall(c.tool_use_id, c.name, self.value(c.input)) for c in message.tool_calls
            ),
            meta=self.value(message.meta),
        )


def filter_transcript(transcript: Transcript) -> Transcript:
    """The transcript with private regions and secrets removed; counts in `meta["privacy"]`."""
    scrub = _Scrubber()
    messages = tuple(scrub.message(m) for m in transcript.messages)
    title = scrub.text(transcript.title) if transcript.title else transcript.title
    meta = {k: v for k, v in transcript.meta.items() if k != "privacy"}
    meta["privacy"] = dict(sorted(scrub.counts.items()))
    return replace(transcript, messages=messages, title=title, meta=meta)
