"""A search hit's snippet: a window of its text around the first query term it contains,
as (text, matched) pieces.

The pieces are plain text: a page escapes each piece and wraps the matched ones in a mark,
so highlighting never touches markup. A word is matched when the analyzer turns it into a
term of the query (the same stems and CJK n-grams search used), so "painting" lights up
for the query "paint". Only the first `SCAN_CHARS` of a text are scanned: a 10 MB message
must not cost a search its budget.
"""

from __future__ import annotations

import re
from collections.abc import Set
from functools import lru_cache

from axiom.vectors.lexical import Analyzer

SNIPPET_CHARS = 220
SCAN_CHARS = 20_000
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

Piece = tuple[str, bool]


@lru_cache(maxsize=1 << 16)
def _word_terms(analyzer: Analyzer, word: str) -> frozenset[str]:
    """The terms of one word, kept: a search snippets up to 100 hits of chat text, the
    same few thousand words again and again, and analyzing each anew was a sizeable share
    of a k=100 search (README, retrieval, session 15)."""
    return frozenset(analyzer(word))


def forget_words() -> None:
    """Drop the kept words (`forget` calls it through the web's store reset): words of
    forgotten messages should not linger in the process either."""
    _word_terms.cache_clear()


def _matches(text: str, query_terms: Set[str], analyzer: Analyzer) -> list[tuple[int, int]]:
    """(start, end) of every word of `text` whose analyzed terms meet the query's."""
    if not query_terms:
        return []
    return [
        (m.start(), m.end())
        for m in _WORD.finditer(text)
        if not query_terms.isdisjoint(_word_terms(analyzer, m.group()))
    ]


def _window(text: str, first: int | None, width: int) -> tuple[int, int]:
    """A window of about `width` characters starting a little before `first`, cut at
    spaces where one is near."""
    if first is None or len(text) <= width:
        return 0, min(len(text), width)
    start = max(0, first - width // 4)
    space = text.rfind(" ", max(0, start - 20), start + 1)
    start = space + 1 if space >= 0 and start > 0 else start
    end = min(len(text), start + width)
    space = text.rfind(" ", end - 20, end)
    end = space if space > start and end < len(text) else end
    return start, end


def snippet(
    text: str, query_terms: Set[str], analyzer: Analyzer, width: int = SNIPPET_CHARS
) -> list[Piece]:
    """`text` cut to about `width` characters around its first match, whitespace squashed,
    as pieces; "…" marks a cut at either end."""
    head = " ".join(text[:SCAN_CHARS].split())
    spans = _matches(head, query_terms, analyzer)
    start, end = _window(head, spans[0][0] if spans else None, width)
    pieces: list[Piece] = [("…", False)] if start > 0 else []
    at = start
    for s, e in spans:
        if e <= start or s >= end:
            continue
        s, e = max(s, start), min(e, end)
        if s > at:
            pieces.append((head[at:s], False))
        pieces.append((head[s:e], True))
        at = e
    if at < end:
        pieces.append((head[at:end], False))
    if end < len(head):
        pieces.append(("…", False))
    return pieces
