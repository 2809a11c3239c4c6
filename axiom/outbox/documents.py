"""What text is embedded and full-text indexed for each entry, message, context and task.

The outbox decides the document text; the LanceDB store (`axiom.vectors.lance_store`) only
stores the rows it is given.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from axiom.ingest.locomo import format_session_day

PREVIOUS_WORDS = 20  # of the previous turn, in the context text a model embeds
MAX_DOCUMENT_CHARS = 16_000  # the embedder reads ~256 tokens; FTS gets the first 16k chars


def _cap(text: str) -> str:
    return text if len(text) <= MAX_DOCUMENT_CHARS else text[:MAX_DOCUMENT_CHARS]


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def document_text_for_entry(title: str, content: str) -> str:
    """`"<title>\\n<content>"`; just the content when it already contains the title (the
    rule extractor often titles an entry with its own first sentence), just the title when
    there is no content."""
    title = " ".join((title or "").split())
    content = (content or "").strip()
    if not content:
        return _cap(title)
    if not title or _squash(title) in _squash(content):
        return _cap(content)
    return _cap(f"{title}\n{content}")


def _day(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    return _session_day(raw)


@functools.lru_cache(maxsize=256)
def _session_day(raw: str) -> str:
    """Every message of a session carries the same date: parsed once (it tries formats)."""
    return format_session_day(raw)


def document_text_for_message(role: str, text: str, meta: Mapping[str, Any] | None) -> str:
    """`"<speaker> (<day>): <text>"`, e.g. `"Caroline (8 May 2023): I went to a LGBTQ support
    group yesterday"`; `"<speaker>: <text>"` without a date.

    The speaker is `meta["speaker"]` (LoCoMo), else `meta["name"]` (generic JSON), else the
    role; the day comes from `meta["session_date"]` ("1:56 pm on 8 May, 2023" → "8 May
    2023"). On the LoCoMo dev set, MiniLM with this text found the evidence turn in the top
    10 for 0.56 of questions (recall@10; MRR 0.34), against 0.45 with the speaker only,
    0.43 with "[8 May 2023] Caroline: …" and 0.24 with the bare turn: questions name people
    and times ("When did Caroline …"). A LoCoMo photo's caption is already in `text`.
    """
    meta = meta or {}
    speaker = next(
        (str(v).strip() for v in (meta.get("speaker"), meta.get("name")) if v and str(v).strip()),
        role,
    )
    day = _day(meta.get("session_date"))
    head = f"{speaker} ({day})" if day else speaker
    return _cap(f"{head}: {text.strip()}")


def document_text_for_context(previous: str | None, own: str) -> str:
    """`"<previous message's document text>\n<own document text>"`; just `own` for the
    first message of a session or after a message without text. On LoCoMo dev, adding
    this view (lexical and dense) to the own-text views raised recall@5 by ~0.06-0.09."""
    return _cap(f"{previous}\n{own}") if previous else own


def embedding_text_for_context(previous: str | None, own: str) -> str:
    """The context text the model embeds: the previous message's speaker and its last
    `PREVIOUS_WORDS` words, then `own` (full-text search keeps the whole previous turn,
    `document_text_for_context`). Why: the context is most of a message's embedding work
    (README, "Session 15 levers")."""
    if not previous:
        return own
    head, sep, body = previous.partition(": ")
    speaker = head.split(" (")[0] if sep else ""
    cut = " ".join((body if sep else previous).split()[-PREVIOUS_WORDS:])
    return _cap(f"{speaker}: {cut}\n{own}" if speaker else f"{cut}\n{own}")


def document_text_for_task(title: str) -> str:
    return _cap(" ".join((title or "").split()))
