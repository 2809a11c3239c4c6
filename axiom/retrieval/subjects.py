"""Rerank levers that read the question itself: who it is about, and whether it asks when.

* **Subject.** A question that names a person ("What did Caroline research?") is answered
  by what that person said or what a memory says about them. The names are the query's
  capitalized words that do not open a sentence (English capitalizes names; a sentence's
  first word is capitalized anyway). A candidate is *about* a name when its speaker is
  that name (a message's `meta["speaker"]` / `meta["name"]`) or the subject of the fact
  entry is (`entries.subject`, "Melanie" or "Melanie's kids"). Those candidates' scores
  are multiplied by `1 + SUBJECT_BOOST`; nothing changes when no candidate is about a
  named subject. On LoCoMo dev, of the evidence turns of questions naming one of the two
  speakers, 95 % were said by that speaker.
* **Time.** A question asking *when* (or how long, what year/month/date; 언제, 얼마나 오래)
  is answered by a turn that places the event in time ("last Friday", "two years ago",
  "in 2022", "어제"): candidates whose text holds a time expression get `1 + TIME_BOOST`.

Both are multiplicative factors of the rerank (step 3), recorded in the breakdown. Each
was measured on the LoCoMo dev files (README, "Measured: retrieval quality").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import duckdb

from axiom.entries.queries import entry_subjects
from axiom.ingest.session_queries import message_texts
from axiom.retrieval.scoring import MessageKey, Scored

SUBJECT_BOOST = 0.3
TIME_BOOST = 0.2

_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)[\"'“‘(]*([^\W\d_][\w'’-]*)")
# Capitalized words that are not names when they open a clause or stand alone.
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)  # fenced blocks, inline code
# ends a sentence (a full-width one whatever follows: CJK puts no space after it)
_ASKING = re.compile(r"？|[?](?=$|[\s\"'”’)\]!?？…])")
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'd", "i'll", "ok", "okay"})
_WHEN = re.compile(
    r"^\W*(?:when\b|how\s+long\b|how\s+many\s+(?:years|months|weeks|days)\b"
    r"|what\s+(?:year|month|date|day|time)\b|since\s+when\b)|언제|얼마나\s*오래",
    re.IGNORECASE,
)
_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_TIME_EXPRESSION = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|last|next|since|recently|lately|weekend"
    rf"|(?:days?|weeks?|months?|years?)|{_MONTHS}|{_DAYS}|summer|winter|spring|autumn"
    r"|(?:19|20)\d\d)\b"
    r"|어제|오늘|내일|그저께|지난|다음\s*주|작년|올해|내년|주말|\d+\s*(?:년|월|일|주)\s*(?:전|후)?",
    re.IGNORECASE,
)


def named_subjects(query: str) -> frozenset[str]:
    """The casefolded names a query mentions: capitalized words not opening a sentence,
    possessives cut ("Melanie's" → "melanie")."""
    return frozenset(name for _start, _end, name in name_spans(query))


def name_spans(query: str) -> list[tuple[int, int, str]]:
    """Where the query names someone: (start, end, name) of each name word, the word
    with its possessive ("Melanie's"), the name casefolded without it ("melanie")."""
    openers = {m.start(1) for m in _SENTENCE_START.finditer(query)}
    spans = []
    for m in _WORD.finditer(query):
        word = m.group(0)
        if m.start() in openers or not word[0].isupper():
            continue
        name = subject_key(word)
        if name and name not in _NOT_NAMES:
            spans.append((m.start(), m.end(), name))
    return spans


def subject_key(subject: str | None) -> str:
    """The name a subject is linked by: its first word, casefolded, possessive cut
    ("Melanie's kids" → "melanie")."""
    first = (subject or "").split(maxsplit=1)
    if not first:
        return ""
    word = re.split(r"['’]", first[0], maxsplit=1)[0]
    return word.strip('"“”()[],.:;!?').casefold()


def about_named(subjects: Iterable[str | None], names: frozenset[str]) -> bool:
    """Whether any of a candidate's subjects (speaker, entry subject) is a named one."""
    return any(subject_key(s) in names for s in subjects if s)


def asks_when(query: str) -> bool:
    """Whether the question asks for a time (when, how long, what year, 언제, ...)."""
    return bool(_WHEN.search(query))


def places_in_time(text: str | None) -> bool:
    """Whether a text holds a time expression (last week, in 2022, ago, 어제, ...)."""
    return bool(text and _TIME_EXPRESSION.search(text))


def asks_something(text: str | None) -> bool:
    """Whether a text asks a question: a question mark that ends a sentence, outside code
    (one inside a URL's query, `user?.name` or a fenced block asks nothing)."""
    if not text or ("?" not in text and "？" not in text):
        return False
    return bool(_ASKING.search(_CODE.sub(" ", text)))


def apply_question_cues(
    connect: Callable[[], duckdb.DuckDBPyConnection], scored: list[Scored], query: str
) -> None:
    """Multiply the scores of candidates about a named subject and, for a *when* question,
    of those that say when; note which turns ask a question themselves (for the cue
    blend); then re-sort `scored`. Reads nothing (`connect` is not called) when the query
    names no one and does not ask when (most searches)."""
    names, when = named_subjects(query), asks_when(query)
    if not scored or not (names or when):
        return
    conn = connect()
    keys: dict[MessageKey, Scored] = {
        (str(i.hit.session_id), int(i.hit.message_index)): i
        for i in scored
        if i.hit.kind == "message" and i.hit.message_index is not None
    }
    texts = message_texts(conn, list(keys))
    subjects = entry_subjects(conn, [i.hit.entry_id for i in scored if i.hit.entry_id])
    for key, item in keys.items():
        message = texts.get(key)
        if message is None:
            continue
        speaker = message.meta.get("speaker") or message.meta.get("name")
        if names and about_named([speaker if isinstance(speaker, str) else None], names):
            item.numbers.subject = 1.0 + SUBJECT_BOOST
        if when and places_in_time(message.text):
            item.numbers.time = 1.0 + TIME_BOOST
        item.numbers.asks = asks_something(message.text)
    for item in scored:
        if item.hit.entry_id and names and about_named([subjects.get(item.hit.entry_id)], names):
            item.numbers.subject = 1.0 + SUBJECT_BOOST
        item.numbers.final *= item.numbers.subject * item.numbers.time
        item.hit.score = item.numbers.final
    scored.sort(key=lambda i: -i.hit.score)
