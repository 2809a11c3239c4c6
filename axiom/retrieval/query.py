"""What a search may ask for: modes, fusions, kinds and limits, checked before any I/O."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Mode = Literal["hybrid", "fts", "vector"]
Fusion = Literal["zscore", "minmax", "rrf"]
MODES: tuple[str, ...] = ("hybrid", "fts", "vector")
FUSIONS: tuple[str, ...] = ("zscore", "minmax", "rrf")
SEARCHABLE_KINDS: tuple[str, ...] = ("entry", "message")
VIEWS = ("lexical_own", "lexical_ctx", "dense_own", "dense_ctx")
MODE_VIEWS: dict[str, tuple[str, ...]] = {
    "hybrid": VIEWS,
    "fts": ("lexical_own", "lexical_ctx"),
    "vector": ("dense_own", "dense_ctx"),
}

MAX_QUERY_CHARS = 2_000
MAX_K = 100


class SearchError(Exception):
    """Base of search errors."""


class QueryError(SearchError, ValueError):
    """The query or a parameter is unusable (empty query, unknown mode, k out of range)."""


class SearchUnavailable(SearchError, RuntimeError):
    """Search cannot run: no LanceDB table yet, an unreadable one, or no embedding model."""


def validate_query(query: object, max_chars: int = MAX_QUERY_CHARS) -> tuple[str, list[str]]:
    """The query to run and warnings; `QueryError` when there is nothing to search for."""
    if not isinstance(query, str):
        raise QueryError(f"the query must be text, got {type(query).__name__}")
    text = " ".join(query.split())
    if not text:
        raise QueryError("the query is empty")
    warnings = []
    if len(text) > max_chars:
        cut = text[:max_chars]
        space = cut.rfind(" ")
        if space > max_chars * 0.8:  # end on a word when one ends near the limit
            cut = cut[:space]
        warnings.append(
            f"the query was {len(text):,} characters; only the first {len(cut):,} were searched"
            f" (limit {max_chars:,})"
        )
        text = cut
    return text, warnings


def validate_options(mode: str, fusion: str, k: object, kinds: Sequence[str]) -> tuple[str, ...]:
    """The kinds to search, once mode, fusion, k and kinds are known to be usable."""
    if mode not in MODES:
        raise QueryError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    if fusion not in FUSIONS:
        raise QueryError(f"unknown fusion {fusion!r}; use one of {', '.join(FUSIONS)}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise QueryError(f"k must be a whole number from 1 to {MAX_K}, got {k!r}")
    unique = tuple(dict.fromkeys(kinds))
    if not unique or any(kd not in SEARCHABLE_KINDS for kd in unique):
        raise QueryError(f"kinds must be among {', '.join(SEARCHABLE_KINDS)}, got {unique}")
    return unique
