"""Task mentions in prose, beyond "need to" / "blocked by": the pieces `rules` uses.

* `clauses(sentence)`: a compound sentence split at ";", ", and then" / "and then" and
  ", so", so "I'm on the retry logic; the export is blocked by OPS-77" and "OPS-55 is
  done, so the deploy is unblocked" are two mentions each, not one task titled with both.
* `status_update(clause)`: "X is still blocked", "X is unblocked" / "no longer blocked",
  "X is done" (finished, merged, fixed, closed, resolved, …) / "Done: X", "X 완료", "X 막힘
  해제" — a status for a task named by its subject. These only update a task that already
  exists (`TaskFields.update_only`): "the pizza is done" creates nothing. When X is a
  blocker instead ("OPS-55 is done"), the task resolver takes it off what it blocks.
* `working_on(clause)`: "I'm working on X" → X, "I'm fixing X" → "Fix X", in progress
  (a fixed set of work verbs; `work_verb` gives the base form).
* `artifacts_in(text)`: ticket keys (OPS-77), issue numbers (#412, owner/repo#12) and URLs,
  so a blocker keeps them even when its text is cut at a parenthesis or a comma.
* `vague_title(title)`: "Fix", "Do it", "Handle that", "Do something about it" name no task.

All patterns are linear: bounded repetitions or literal separators.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from axiom.extract.types import TaskStatus
from axiom.ingest.words import fold, has_any


def _rx(pattern: str, flags: int = re.I) -> re.Pattern[str]:
    return re.compile(pattern.replace("'", "['’]"), flags)


_CLAUSE_BREAK = _rx(r"\s*;\s*|,?\s+and\s+then\s+|,\s+so\s+(?!that\b)|\s+[-–—]\s+(?=\S)")


def _may_break(sentence: str) -> bool:
    """Whether `_CLAUSE_BREAK` may match: each of its separators needs ";", a dash, "then"
    or ", so" (`axiom.ingest.words`)."""
    if ";" in sentence or "-" in sentence or "–" in sentence or "—" in sentence:
        return True
    folded = fold(sentence)
    return "then" in folded or ("," in sentence and "so" in folded)


def clauses(sentence: str) -> list[tuple[int, int]]:
    """(start, end) of each clause of `sentence`, in order, without the separators."""
    if not _may_break(sentence):
        return [(0, len(sentence))]
    out: list[tuple[int, int]] = []
    cursor = 0
    for m in _CLAUSE_BREAK.finditer(sentence):
        if m.start() > cursor:
            out.append((cursor, m.start()))
        cursor = m.end()
    if cursor < len(sentence):
        out.append((cursor, len(sentence)))
    return out or [(0, len(sentence))]


@dataclass(frozen=True)
class StatusUpdate:
    """`clause[start:end]` says task `title` is now `status`."""

    title: str
    status: TaskStatus
    start: int
    end: int


# An optional label first ("Status:", "Good news:"), then the subject.
_SUBJECT = r"(?:[^\W\d][\w ]{0,20}[:：]\s*)?(?P<subj>[^\s,;:!?][^,;:!?]{1,80}?)"
_BE = r"(?:is|are|was|were|has\s+been|have\s+been|got|'s|'re)"
_STATUS_EN: list[tuple[re.Pattern[str], TaskStatus]] = [
    (
        _rx(rf"^[^\w#]*{_SUBJECT}\s+{_BE}\s+(?:still|again)\s+blocked\b(?!\s+(?:by|on)\b)"),
        "blocked",
    ),
    (
        _rx(
            rf"^[^\w#]*{_SUBJECT}\s+{_BE}\s+(?:now\s+|finally\s+)?(?:unblocked|no\s+longer\s+blocked"
            r"|not\s+blocked\s+any\s?more)\b"
        ),
        "in_progress",
    ),
    (
        _rx(
            rf"^[^\w#]*{_SUBJECT}\s+{_BE}\s+(?:now\s+|finally\s+|all\s+|completely\s+)?(?:(?:done"
            r"|finished|complete|completed|merged|shipped)\b|(?:closed|fixed|resolved)"
            # those three also describe things ("the price is fixed at $10"): a report only
            # when the clause ends there
            r"(?=\s*(?:$|[.,;:!?)]|(?:now|already|too|as\s+well|and|so)\b)))"
        ),
        "done",
    ),
    (_rx(r"^\W*(?:done|finished|completed)\s*[:：\-–]\s*(?P<subj>\S[^;!?]{1,80})"), "done"),
]
# A clause holding none of these words matches no status pattern (`axiom.ingest.words`).
_STATUS_WORDS = (
    "blocked",
    "done",
    "finished",
    "complete",
    "merged",
    "shipped",
    "closed",
    "fixed",
    "resolved",
    "완료",
    "막혀",
    "막힘",
)
_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
_KO_SUBJECT = r"(?P<subj>[^\s,.!?][^,.!?]{0,40}?)"
_STATUS_KO: list[tuple[re.Pattern[str], TaskStatus]] = [
    (
        re.compile(
            rf"^\W*{_KO_SUBJECT}\s*(?:은|는|이|가)?\s*(?:막힘\s*해제|더\s*이상\s*막혀\s*있지\s*않)"
        ),
        "in_progress",
    ),
    (
        re.compile(rf"^\W*{_KO_SUBJECT}\s*(?:은|는|이|가)?\s*(?:아직|여전히)\s*막혀"),
        "blocked",
    ),
    (
        re.compile(
            rf"^\W*{_KO_SUBJECT}\s*(?:은|는|이|가|을|를)?\s*완료(?:했|됐|되었|함|입니다|다|\s*$|\s*[.!])"
        ),
        "done",
    ),
]
_SUBJECT_LEAD = _rx(
    r"^(?:(?:so|and|but|ok|okay|also|update|fyi|good\s+news|btw)\W+)*(?:the|our|this|my|a)\s+"
)
_PRONOUN_SUBJECT = _rx(r"^(?:it|that|this|everything|all|which|i|we|you|they|he|she)$")


def status_update(clause: str) -> StatusUpdate | None:
    """The status a clause gives a task named by its subject, or None."""
    if not has_any(fold(clause), _STATUS_WORDS):
        return None
    patterns = [*_STATUS_KO, *_STATUS_EN] if _HANGUL.search(clause) else _STATUS_EN
    for pattern, status in patterns:
        m = pattern.search(clause)
        if m is None:
            continue
        title = _SUBJECT_LEAD.sub("", m.group("subj").strip()).strip(" `'\"*").rstrip(".")
        if not title or _PRONOUN_SUBJECT.match(title) or vague_title(title, allow_noun=True):
            return None
        return StatusUpdate(title, status, m.start(), m.end())
    return None


# "I'm <verb>ing <object>" is current work for these verbs only, so small talk ("I'm
# feeling good", "I'm going for my dreams") is not a task. The code verbs take any object;
# the general ones only one introduced by an article or demonstrative ("I'm updating the
# schema", not "I'm writing all my plans down").
_CODE_VERBS = {
    "fixing": "fix",
    "debugging": "debug",
    "refactoring": "refactor",
    "implementing": "implement",
    "migrating": "migrate",
    "deploying": "deploy",
    "profiling": "profile",
    "benchmarking": "benchmark",
    "bisecting": "bisect",
    "triaging": "triage",
    "patching": "patch",
    "porting": "port",
    "reworking": "rework",
    "rewriting": "rewrite",
    "investigating": "investigate",
}
_GENERAL_VERBS = {
    "adding": "add",
    "building": "build",
    "cleaning up": "clean up",
    "configuring": "configure",
    "documenting": "document",
    "integrating": "integrate",
    "optimizing": "optimize",
    "removing": "remove",
    "renaming": "rename",
    "replacing": "replace",
    "reviewing": "review",
    "setting up": "set up",
    "testing": "test",
    "tracking down": "track down",
    "updating": "update",
    "upgrading": "upgrade",
    "wiring up": "wire up",
    "writing": "write",
}
_WORK_VERB = "|".join(v.replace(" ", r"\s+") for v in sorted({**_CODE_VERBS, **_GENERAL_VERBS}))
_WORKING_ON = _rx(
    r"\b(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:currently\s+|now\s+|still\s+|just\s+)?"
    rf"(?:working\s+on|(?P<verb>{_WORK_VERB}))\s+(?!to\b|for\b|with\b)"
    r"(?P<what>\S[^;!?]{2,120})"
)
_DETERMINER = _rx(r"(?:the|a|an|our|this|that|these|those)\s")


def working_on(clause: str) -> re.Match[str] | None:
    """ "I'm working on the retry logic", "I'm fixing the login bug" → a match whose group
    "what" is the task (group "verb" holds the verb, when it is not "working on")."""
    if "ing" not in fold(clause):
        return None  # "working" and every work verb end in "-ing"
    for m in _WORKING_ON.finditer(clause):
        verb = " ".join((m.group("verb") or "").lower().split())
        if verb in _GENERAL_VERBS and not _DETERMINER.match(m.group("what")):
            continue
        return m
    return None


def work_verb(match: re.Match[str]) -> str | None:
    """The base form of a `working_on` match's verb ("fixing" → "fix"), None for "working on"."""
    verb = " ".join((match.group("verb") or "").lower().split())
    return _CODE_VERBS.get(verb) or _GENERAL_VERBS.get(verb)


_ARTIFACT = re.compile(
    r"\bhttps?://[^\s<>\"'`)\]]+"
    r"|(?<![\w/.-])[A-Za-z0-9][\w.-]*/[\w.-]+#\d+(?!\w)"
    r"|(?<![\w-])[A-Z][A-Z0-9]{1,9}-[1-9]\d{0,6}(?![\w-])"
    r"|(?<![\w&/#])#\d{1,6}(?!\w)"
)


def artifacts_in(text: str) -> list[str]:
    """Ticket keys, issue numbers and URLs in `text`, in order, once each."""
    found = [m.group().rstrip(".,;:!?'\"") for m in _ARTIFACT.finditer(text)]
    return list(dict.fromkeys(found))


_EMPTY_OBJECT = frozenset(
    [
        "it",
        "that",
        "this",
        "those",
        "these",
        "them",
        "something",
        "anything",
        "everything",
        "stuff",
        "things",
        "thing",
        "about",
        "one",
        "ones",
        "there",
        "here",
        "so",
        "now",
        "again",
        "later",
        "soon",
        "too",
        "please",
    ]
)


def vague_title(title: str, allow_noun: bool = False) -> bool:
    """True for titles that name no task: one bare word ("Fix"; unless `allow_noun`,
    for a subject like "Deploy") or a verb whose object is only pronouns and fillers ("Do
    it", "Handle that", "Do something about it")."""
    words = re.findall(r"[^\W_]+", title.casefold())
    if not words:
        return True
    if not title.isascii():
        return len(title.strip()) < 2
    if len(words) == 1:
        return not allow_noun
    return all(w in _EMPTY_OBJECT for w in words[1:])


def vague_title_sql(column: str) -> str:
    """`vague_title(column)` (allow_noun False) as a DuckDB condition, from the same word
    set, so a listing can hide tasks recorded before the rule existed and still page in
    SQL. ASCII titles only (the byte and character lengths agree); other titles are vague
    when shorter than 2 characters, as in `vague_title`."""
    fillers = "|".join(sorted(_EMPTY_OBJECT))
    pattern = f"[^a-z0-9]*([a-z0-9]+([^a-z0-9]+({fillers}))*[^a-z0-9]*)?"
    return (
        f"(CASE WHEN strlen({column}) = length({column})"
        f" THEN regexp_full_match(lower({column}), '{pattern}')"
        f" ELSE length(trim({column})) < 2 OR NOT regexp_matches({column}, '[\\pL\\pN]') END)"
    )
