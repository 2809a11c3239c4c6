"""How each message's text is shown on the session page: Markdown, or escaped text with its
cited spans marked, folded behind a preview when it is long.

A 200 KB message shown whole makes a page tens of thousands of pixels tall; folded, it is
one `<details>` whose summary is the first lines, and the browser lays out the rest only
when it is opened.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.safestring import SafeString

from axiom.ingest.session_queries import MessageRow
from viewer.markdown import render_markdown
from viewer.spans import Segment

FOLD_CHARS = 3000  # longer than about a screenful: folded
FOLD_LINES = 40
PREVIEW_CHARS = 300


@dataclass(frozen=True)
class Body:
    html: SafeString | None  # rendered Markdown; None when the text is shown with its marks
    folded: bool
    preview: str
    size: int  # characters, for the fold's summary


def is_long(text: str) -> bool:
    return len(text) > FOLD_CHARS or text.count("\n") > FOLD_LINES


def preview_of(text: str) -> str:
    """The first lines of `text`, cut at a word near PREVIEW_CHARS."""
    head = "\n".join(text[: PREVIEW_CHARS * 2].splitlines()[:6])
    if len(head) <= PREVIEW_CHARS:
        return head + "…"
    cut = head.rfind(" ", 0, PREVIEW_CHARS)
    return head[: cut if cut > PREVIEW_CHARS // 2 else PREVIEW_CHARS] + "…"


def message_bodies(messages: list[MessageRow], cited: dict[int, list[Segment]]) -> dict[int, Body]:
    """message index → how its text is shown. A cited message keeps its raw text (the marks
    sit at raw offsets) and is never folded shut, so its marks stay visible."""
    out: dict[int, Body] = {}
    for m in messages:
        if not m.text or m.role == "tool_result":
            continue
        marked = m.index in cited
        html = None if marked else render_markdown(m.text)
        folded = is_long(m.text) and not marked
        out[m.index] = Body(html, folded, preview_of(m.text) if folded else "", len(m.text))
    return out
