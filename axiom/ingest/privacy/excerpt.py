"""Mask before cutting: every shortened text made from input goes through here.

A secret cut in half no longer has the shape the privacy filter recognises, so a title,
a note quoting a bad value or an error message is filtered whole first and only then cut
(`masked_excerpt`). Cutting filtered text can only cut a marker, never expose a secret.
"""

from __future__ import annotations

from axiom.ingest.privacy.filter import PrivacyFilter

TITLE_MAX_CHARS = 120  # a session title made from its first user line


def masked(text: str) -> str:
    """`text` with private regions and secrets removed."""
    return PrivacyFilter().apply(text).text


def masked_excerpt(text: str, limit: int) -> str:
    """At most `limit` characters of `text`, taken after the privacy filter ran over all of
    it."""
    return masked(text)[:limit]


def first_line(text: str) -> str | None:
    """The first line of `text` (stripped), uncut: the title it gives once filtered and cut
    (`axiom.ingest.privacy.transcript.filter_transcript`)."""
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else None
