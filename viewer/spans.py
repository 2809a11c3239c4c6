"""Cut a message's text at its cited spans, so a template can mark them (auto-escaped).

Overlapping spans cannot both be marked with flat `<mark>` elements: the one that starts
first (the longer one on a tie) wins and the others are skipped; every citation still has
its own page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from axiom.evidence.citation_spans import CitationSpan


@dataclass(frozen=True)
class Segment:
    text: str
    citation_id: str | None = None  # set on a cited part


def cited_segments(text: str, spans: Iterable[CitationSpan]) -> list[Segment]:
    """`text` as plain and cited segments in order; joined they give `text` back exactly."""
    segments: list[Segment] = []
    position = 0
    for span in sorted(spans, key=lambda s: (s.span_start, -s.span_end, s.citation_id)):
        start, end = span.span_start, span.span_end
        if start < position or not 0 <= start < end <= len(text):
            continue  # overlaps a span already marked, or does not fit this text
        if start > position:
            segments.append(Segment(text[position:start]))
        segments.append(Segment(text[start:end], span.citation_id))
        position = end
    if position < len(text):
        segments.append(Segment(text[position:]))
    return segments


def segments_by_message(
    texts: dict[int, str], spans: Iterable[CitationSpan]
) -> dict[int, list[Segment]]:
    """message index → segments, for the messages that have at least one markable span."""
    grouped: dict[int, list[CitationSpan]] = {}
    for span in spans:
        grouped.setdefault(span.message_index, []).append(span)
    out = {}
    for index, group in grouped.items():
        segments = cited_segments(texts.get(index, ""), group)
        if any(s.citation_id for s in segments):
            out[index] = segments
    return out
