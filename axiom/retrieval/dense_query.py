"""The dense views' query: the question without the names of the people it is about.

In the hybrid z-score ranking the subject cue (`axiom.retrieval.subjects`,
`axiom.retrieval.cue_blend`: +10 for a candidate said by, or about, a person the question
names) already ranks that person's turns first. Left in the text that is embedded, the
name pulls the dense views towards turns that *mention* it — mostly the other speaker
addressing the person ("Wow, Caroline! …") — and away from what the person said in other
words. So the query embedded for the dense views leaves out each name the question
mentions that is both a session's named speaker and the subject of some entry of the
store (the people the memory has facts about); the full-text views and the cues still see
the whole question, and any other name stays in: one the store does not know ("LGBTQ",
"Paris", "June"), and the things entries are about ("Redis port", "Docker", "GitHub
Actions": in a coding session the speakers are no people, so nothing is cut).

A *when* question (`subjects.asks_when`) keeps its names: it asks for the time of one
event, and with the names cut the dense views found the dating turn less often (recall@5
of the when questions fell on both LoCoMo dev files). A question that would be left with
no word keeps its names too.

Measured on both LoCoMo dev files (README, "Measured: retrieval quality", session 16).
Cost: no read for a question that names no one or asks when; otherwise the entries'
distinct subjects and the sessions' speakers, read once per generation of the store and at most once per
`REFRESH_SECONDS` (`KnownSubjects`).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable

from axiom.entries.queries import subject_names
from axiom.ingest.session_queries import named_speakers
from axiom.retrieval.subjects import asks_when, name_spans, subject_key
from axiom.store.db import Database

_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]")


REFRESH_SECONDS = 30.0  # during an import the store changes with every write


class KnownSubjects:
    """The people (`subject_key`) the store's entries are about, read again when the store
    has changed (`Database.generation`), at most once per `REFRESH_SECONDS`: the read
    scans every entry, and a person's name new to the store for a few seconds only leaves
    it in the embedded question, as before this cue existed. Safe to share between
    threads."""

    def __init__(self, db: Database, clock: Callable[[], float] = time.monotonic) -> None:
        self.db = db
        self.clock = clock
        self._lock = threading.Lock()
        self._cached: tuple[str, float, frozenset[str]] | None = None

    def names(self) -> frozenset[str]:
        cached = self._cached
        if cached is not None and (
            cached[0] == self.db.generation() or self.clock() - cached[1] < REFRESH_SECONDS
        ):
            return cached[2]
        with self._lock, self.db.read() as conn:
            generation = self.db.generation()  # the token of the data this read sees
            people = set(filter(None, map(subject_key, named_speakers(conn))))
            names = frozenset(people & set(map(subject_key, subject_names(conn))))
        self._cached = (generation, self.clock(), names)
        return names


def dense_query(query: str, known: Callable[[], frozenset[str]]) -> str:
    """The text to embed for `query`: without the names it mentions that are among
    `known()` (called only when the query names someone and does not ask when);
    `query` itself when nothing is cut or nothing would be left."""
    spans = name_spans(query)
    if not spans or asks_when(query):
        return query
    people = known()
    cut = [(start, end) for start, end, name in spans if name in people]
    if not cut:
        return query
    pieces, last = [], 0
    for start, end in cut:
        pieces.append(query[last:start])
        last = end
    pieces.append(query[last:])
    text = _SPACES.sub(" ", "".join(pieces)).strip()
    return text if _WORD.search(text) else query
