"""List questions: a memory entry lifts the turns it was extracted from.

A question asking for several things ("What books has Melanie read?", "Which cities has
Jon visited?", "What activities does Melanie partake in?") is answered by turns of several
sessions, and the turns often do not share the question's words ("we went camping at the
beach") while the fact entries extracted from them do ("Melanie: went camping"). So for a
list question every entry candidate adds `CITED_BOOST` x its score to each message of the
pool it cites as evidence, and a message-only search draws entries into its candidates
for this (they are dropped from the hits afterwards).

A list question, by its form: a wh-word whose head noun is plural and is followed by an
auxiliary ("What books has ...", "Which events did ..."), or a present perfect about
someone ("What has Melanie painted?", "Where has Melanie camped?"). Nothing changes for
any other question (no read, no entry candidates).

Measured on both LoCoMo dev files (README, "Measured: retrieval quality"); a plain boost
(max instead of sum) and the same for every question were measured and lost there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from axiom.retrieval.scoring import MessageKey, Scored

CITED_BOOST = 0.4

_AUX = r"(?:do|does|did|has|have|had|are|were|would|might|can|could|will)"
_PLURAL_ASK = re.compile(
    r"^\W*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[\w+/-]+\s+){0,2}?"
    rf"([^\W\d_]+s)\s+{_AUX}\b",
    re.IGNORECASE,
)
_PERFECT = re.compile(
    r"\b(?:has|have)\s+\w+(?:\s+and\s+\w+)?\s+"
    r"(?:\w+ed|done|made|seen|read|bought|gone|taken|visited|painted|attended)\b",
    re.IGNORECASE,
)
_NOT_PLURAL = frozenset({"is", "was", "has", "does", "this", "his", "its", "status", "news"})


def asks_for_list(query: str) -> bool:
    """Whether the question asks for several things (see the module docstring)."""
    m = _PLURAL_ASK.match(query)
    if m:
        noun = m.group(1).casefold()
        if noun not in _NOT_PLURAL and not noun.endswith("ss"):
            return True
    return bool(_PERFECT.search(query))


def candidate_kinds(query: str, kinds: tuple[str, ...]) -> tuple[str, ...]:
    """The kinds to draw candidates of: a message search for a list question adds
    entries (their cited turns are lifted; the entries themselves are not returned)."""
    if "message" in kinds and "entry" not in kinds and asks_for_list(query):
        return (*kinds, "entry")
    return kinds


def lift_cited_turns(
    scored: list[Scored],
    details: Callable[[list[Scored]], None],
    query: str,
    kinds: Sequence[str],
) -> list[Scored]:
    """For a list question, add `CITED_BOOST` x the best score of the entries citing a
    message to that message's score; drop the kinds not asked for; re-sort. `details`
    reads the entries' evidence (`CachedRead.details`); it is not called otherwise."""
    entries = [i for i in scored if i.hit.kind == "entry"]
    if entries and asks_for_list(query):
        details(entries)
        lift: dict[MessageKey, float] = {}
        for entry in entries:
            for key in entry.fact.evidence:
                lift[key] = max(lift.get(key, 0.0), CITED_BOOST * entry.numbers.final)
        for item in scored:
            key = (str(item.hit.session_id), int(item.hit.message_index or 0))
            if item.hit.kind == "message" and key in lift:
                item.numbers.cited = lift[key]
                item.numbers.final += lift[key]
                item.hit.score = item.numbers.final
    kept = [i for i in scored if i.hit.kind in kinds]
    kept.sort(key=lambda i: -i.hit.score)
    return kept
