"""When two memories contradict each other: the rule behind `conflict_detected`.

Pure module, no I/O. A new fact or decision (`Fact`) is compared with the believed facts
of the same type from other sessions. Two facts are about the same subject when their
canonical keys are equal or their subjects, normalized, are identical or nearly so
(`SUBJECT_SIMILARITY`, and the same numbers: "web1 port" is not "web2 port"). Then they conflict when

- both carry a value and the values differ (``changed_value``),
- one is negated and the other not, and both make the same claim (``negation``: "no
  longer", "not", "더 이상 … 않"; the same value, or claims sharing half their words: a
  speaker who is "not alone" does not deny everything else the speaker said),
- the new one states a replacement whose old value is the old fact's value
  (``replacement``: "from A to B", "B instead of A", "A에서 B로 바뀌었", previous_value).

Without extracted subjects, a stated replacement still conflicts with an older fact that
mentions the replaced value and shares a topic word with the new one: "use A for the
billing store" and "switched the billing store from A to B". The same subject with the same
value (a restatement) never conflicts: it corroborates.

Within one session (`within_session`) a later statement that contradicts an earlier one
either says it changed (`states_change`: "now", "changed to", "switched", "no longer", "이제",
"바뀌었"), and then it supersedes the earlier one (kept as history), or it does not, and the
two are a conflict like any other.

`divergence` is seed 003's weaker signal (same topic words, little shared content): it
only suggests a possible conflict to a reader and never marks anything contested.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from difflib import SequenceMatcher

CONFLICT_TYPES = ("changed_value", "negation", "replacement")
COMPARED_TYPES = ("fact", "decision")
SUBJECT_SIMILARITY = 0.9
DIVERGENCE_MAX_OVERLAP = 0.3
DIVERGENCE_MIN_TOPIC_WORDS = 2
SAME_CLAIM_OVERLAP = 0.5  # Jaccard of two claims that negate each other
_HANGUL_FIRST, _HANGUL_LAST = 0xAC00, 0xD7A3

_SPACES = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[^\W_]+(?:[.\-][^\W_]+)*")
# Function words, not what a statement is about. The one English list for judging "the
# same topic" by shared words: the extraction eval (`axiom.evaluation.extraction`) uses it.
STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "before",
        "being",
        "but",
        "by",
        "can",
        "could",
        "currently",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "here",
        "him",
        "his",
        "how",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "may",
        "me",
        "might",
        "more",
        "most",
        "my",
        "no",
        "not",
        "now",
        "of",
        "on",
        "or",
        "our",
        "out",
        "really",
        "recently",
        "she",
        "should",
        "so",
        "some",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "up",
        "us",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "while",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
# Words that say a change or a use rather than what changed: left out of topic words too.
_CHANGE_WORDS = frozenset(
    [
        "change",
        "changed",
        "instead",
        "longer",
        "move",
        "moved",
        "per",
        "replace",
        "replaced",
        "switch",
        "switched",
        "use",
        "used",
        "uses",
        "using",
        "went",
    ]
)
_STOP = STOP_WORDS | _CHANGE_WORDS
_KO_PARTICLES = ("에서는", "에서", "으로", "로", "은", "는", "이", "가", "을", "를", "의", "도")
_CHANGE_VERB = (
    r"(?:switch\w*|mov\w*|migrat\w*|chang\w*|replac\w*|went|raised|lowered|increas\w*|"
    r"decreas\w*|bump\w*|upgrad\w*|downgrad\w*|go(?:ing)?|dropp\w*|cut)"
)
_TOKEN = r"[^\s,.;:!?()]+(?:\s+[^\s,.;:!?()]+)?"
_REPLACEMENTS = (
    re.compile(_CHANGE_VERB + r"\b.*?\bfrom\s+(?P<old>" + _TOKEN + r")\s+to\s+", re.I),
    re.compile(r"\binstead\s+of\s+(?P<old>[^\s,.;:!?()]+)", re.I),
    re.compile(
        r"\bno\s+longer\s+(?:use[sd]?\s+|using\s+|on\s+|uses\s+)?(?P<old>[^\s,.;:!?()]+)", re.I
    ),
    re.compile(r"\breplac\w*\s+(?P<old>[^\s,.;:!?()]+)\s+with\b", re.I),
    re.compile(
        r"(?P<old>[^\s,.;:!?()]+?)(?:에서는|에서)\s*\S+?(?:으로|로)\s*(?:바뀌|바꾸|바꿨|변경|교체|전환|옮|이전|갈아)"
    ),
    re.compile(r"(?P<old>[^\s,.;:!?()]+?)\s*대신(?:에)?\s"),
    re.compile(r"더\s*이상\s*(?P<old>[^\s,.;:!?()]+?)(?:을|를|은|는|이|가)?\s"),
)
# A later statement in the same session that says its value changed. "now" alone, not
# "right now" / "for now" / "just now" / "until now" (a moment, not a change).
_STATES_CHANGE = re.compile(
    r"(?<!right )(?<!for )(?<!just )(?<!until )(?<!till )\bnow\b"
    r"|\b(?:chang|switch|mov|migrat)(?:e|ed|es|ing)?\s+(?:\S+\s+){0,3}?(?:to|from)\b"
    r"|\bswitched\b|\bno\s+longer\b|\bfrom\s+now\s+on\b"
    r"|이제|바뀌|바꿨|변경",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:no\s+longer|not|never|don't|doesn't|isn't|aren't|won't|stopped|dropped)\b"
    r"|더\s*이상|않|없|아니|안\s",
    re.I,
)


# A word that only carries the negation ("isn't" -> "isn", "anymore", "않는다", "없다").
_NEGATION_WORD = re.compile(
    r"^(?:isn|aren|wasn|weren|don|doesn|didn|won|can|cannot|never|anymore|stopped|dropped)$"
    r"|^(?:않|없|아니|못)"
)


# Where one clause ends and the next begins: a negation belongs to its own clause.
_CLAUSE = re.compile(
    r"[,;:]|\s[-–—]\s|\s(?:but|and|although|though|while|because|yet|so)\s|(?:지만|는데)\s"
)


@functools.lru_cache(maxsize=1 << 16)  # pure, and called for every pair of believed facts
def normalize(text: str | None) -> str:
    """NFKC, case-folded, whitespace collapsed, sentence punctuation and quotes trimmed."""
    if not text:
        return ""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", text).strip().strip(".!?。;:,\"'`“”‘’").strip()


def _strip_particle(word: str) -> str:
    for particle in _KO_PARTICLES:
        if len(word) > len(particle) + 1 and word.endswith(particle):
            return word[: -len(particle)]
    return word


@functools.lru_cache(maxsize=1 << 16)
def topic_words(text: str) -> frozenset[str]:
    """Content words of `text` (Korean particles stripped), stop words and one-letter words
    left out: what "about the same topic" is judged on."""
    words = (_strip_particle(w) for w in _WORD.findall(normalize(text)))
    return frozenset(w for w in words if len(w) > 1 and w not in _STOP)


@dataclass(frozen=True)
class Fact:
    """What a fact or decision entry says, as conflict detection sees it."""

    entry_id: str
    session_id: str | None
    entry_type: str
    title: str
    content: str = ""
    canonical_key: str | None = None
    subject: str | None = None
    value: str | None = None
    previous_value: str | None = None
    said_at: datetime | None = None

    @property
    def text(self) -> str:
        return f"{self.title}\n{self.content}"

    @property
    def negated(self) -> bool:
        return _negated(self.title)

    def replaced_value(self) -> str | None:
        """The old value this fact says was replaced (previous_value, else read off a
        "from A to B" / "instead of A" / "no longer A" / "A에서 B로" wording)."""
        return _replaced_value(self.text, self.previous_value)


@functools.lru_cache(maxsize=1 << 16)  # asked of both facts of every pair on one subject
def _negated(title: str) -> bool:
    return bool(_NEGATION.search(normalize(title)))


@functools.lru_cache(maxsize=1 << 14)  # asked of the same new fact once per believed fact
def _replaced_value(text: str, previous_value: str | None) -> str | None:
    if previous_value:
        return normalize(previous_value)
    for pattern in _REPLACEMENTS:
        if m := pattern.search(normalize(text)):
            return _strip_particle(normalize(m.group("old")))
    return None


@dataclass(frozen=True)
class Contradiction:
    """`newer` contradicts `older` (an entry id each), and why."""

    older_id: str
    newer_id: str
    conflict_type: str
    subject: str
    reason: str

    def other_of(self, entry_id: str) -> str:
        return self.newer_id if entry_id == self.older_id else self.older_id


def same_subject(a: Fact, b: Fact) -> bool:
    """Canonical keys equal, or subjects identical or nearly so once normalized."""
    if a.canonical_key and a.canonical_key == b.canonical_key:
        return True
    sa, sb = normalize(a.subject), normalize(b.subject)
    if not sa or not sb:
        return False
    # Near-identical names that number different things ("web1 port" / "web2 port", "Q3
    # budget" / "Q4 budget") are different subjects.
    return sa == sb or (_DIGITS.findall(sa) == _DIGITS.findall(sb) and _similar(sa, sb))


@functools.lru_cache(maxsize=1 << 16)  # asked for every pair of believed facts, per build
def _similar(sa: str, sb: str) -> bool:
    """`SequenceMatcher(None, sa, sb).ratio() >= SUBJECT_SIMILARITY`, cheaper: most pairs
    fail one of difflib's exact upper bounds of `ratio()` first (the lengths alone, as
    `real_quick_ratio` computes it, then `quick_ratio`), so the decision is the same."""
    if not _lengths_allow(len(sa), len(sb)):
        return False
    matcher = SequenceMatcher(None, sa, sb)
    return matcher.quick_ratio() >= SUBJECT_SIMILARITY and matcher.ratio() >= SUBJECT_SIMILARITY


def _lengths_allow(la: int, lb: int) -> bool:
    """`real_quick_ratio() >= SUBJECT_SIMILARITY`: the lengths alone allow the ratio."""
    return 2.0 * min(la, lb) / (la + lb) >= SUBJECT_SIMILARITY


def _same_value(a: str, b: str) -> bool:
    na, nb = normalize(a), normalize(b)
    return na == nb or topic_words(na) == topic_words(nb) != frozenset()


def _hangul_stem(word: str) -> str:
    """A Korean word without its last syllable's ending: the last syllable is dropped and
    the final consonant of the one before it too ("한다", "하지" -> "하"), so the forms of
    one predicate compare equal."""
    if len(word) < 2 or not all(_HANGUL_FIRST <= ord(ch) <= _HANGUL_LAST for ch in word):
        return word
    last = ord(word[-2]) - _HANGUL_FIRST
    return word[:-2] + chr(_HANGUL_FIRST + last - last % 28)


def claim_words(fact: Fact, negated_only: bool = False) -> frozenset[str]:
    """What `fact` says about its subject: its title's topic words without the subject's
    words and without the negation markers, Korean predicates stemmed. With
    `negated_only`, only the clauses that carry a negation: what the fact denies."""
    return _claim_words(fact.title, fact.subject, negated_only)


@functools.lru_cache(maxsize=1 << 16)  # asked of both facts of every pair of opposite polarity
def _claim_words(title: str, subject: str | None, negated_only: bool) -> frozenset[str]:
    clauses = _CLAUSE.split(normalize(title))
    if negated_only:
        clauses = [c for c in clauses if _NEGATION.search(c)]
    words = topic_words(" , ".join(clauses)) - topic_words(subject or "")
    return frozenset(_hangul_stem(w) for w in words if not _NEGATION_WORD.search(w))


def _same_claim(a: Fact, b: Fact) -> bool:
    """Both say the same thing up to its polarity: the same value, or (without values) what
    the negated one denies shares at least half its words with what the other states.
    "X is not alone in this" and "X visited the lake" share a subject but not a claim, and
    "it isn't easy, but I want it to work" does not deny "I want it to work"."""
    if a.value and b.value:
        return _same_value(a.value, b.value)
    denied, stated = (a, b) if a.negated else (b, a)
    wa, wb = claim_words(denied, negated_only=True), claim_words(stated)
    return bool(wa and wb) and len(wa & wb) / len(wa | wb) >= SAME_CLAIM_OVERLAP


def _mentions(fact: Fact, value: str) -> bool:
    if not value:
        return False
    haystack = topic_words(f"{fact.text}\n{fact.value or ''}")
    wanted = topic_words(value)
    return bool(wanted) and wanted <= haystack


def contradiction(new: Fact, old: Fact) -> Contradiction | None:
    """How `new` contradicts `old`, or None (unrelated, or a restatement)."""
    if new.entry_type != old.entry_type or new.entry_type not in COMPARED_TYPES:
        return None
    replaced = new.replaced_value()
    subject = new.subject or old.subject or new.title
    if same_subject(new, old):
        if replaced and old.value and _same_value(replaced, old.value):
            return _found(new, old, "replacement", subject, f"{old.value!r} was replaced")
        if new.value and old.value and not _same_value(new.value, old.value):
            reason = f"{old.value!r} became {new.value!r}"
            return _found(new, old, "changed_value", subject, reason)
        if new.negated != old.negated and _same_claim(new, old):
            return _found(new, old, "negation", subject, "one states what the other denies")
        if replaced and _mentions(old, replaced) and not (new.value and old.value):
            return _found(new, old, "replacement", subject, f"{replaced!r} was replaced")
        return None
    if replaced and _mentions(old, replaced):
        shared = (topic_words(new.text) & topic_words(old.text)) - topic_words(replaced)
        if shared:
            reason = f"{replaced!r} was replaced (shared topic: {', '.join(sorted(shared)[:3])})"
            return _found(new, old, "replacement", old.subject or subject, reason)
    return None


def _found(new: Fact, old: Fact, kind: str, subject: str, reason: str) -> Contradiction:
    return Contradiction(old.entry_id, new.entry_id, kind, subject, reason)


def restates(new: Fact, old: Fact) -> bool:
    """`new` says again what `old` says: same type and subject, the same value, the same
    polarity and no contradiction. Such a pair corroborates."""
    return (
        new.entry_type == old.entry_type
        and bool(new.value and old.value)
        and same_subject(new, old)
        and _same_value(new.value or "", old.value or "")
        and new.negated == old.negated
        and contradiction(new, old) is None
    )


def states_change(fact: Fact) -> bool:
    """The fact says its value changed ("The DB port is now 6543", "switched to NATS")."""
    return bool(_STATES_CHANGE.search(normalize(fact.title)))


def within_session(later: Fact, earlier: Fact) -> Contradiction | None:
    """How `later` contradicts `earlier`, said before it in the same session, or None."""
    if later.entry_id == earlier.entry_id:
        return None
    return contradiction(later, earlier)


def _from_another_session(new: Fact, old: Fact) -> bool:
    return old.entry_id != new.entry_id and not (
        old.session_id and old.session_id == new.session_id
    )


def contradictions(new: Fact, believed: list[Fact]) -> list[Contradiction]:
    """Every believed fact from another session that `new` contradicts (each compared)."""
    found = []
    for old in believed:
        if _from_another_session(new, old) and (c := contradiction(new, old)) is not None:
            found.append(c)
    return found


SubjectKey = tuple[tuple[str, ...], int]  # the numbers of a normalized subject, its length


@functools.lru_cache(maxsize=1 << 16)  # asked of every believed fact, once per build
def _subject_key(subject: str | None) -> SubjectKey | None:
    """The numbers and the length of a normalized subject: `same_subject` needs the same
    numbers and lengths `_lengths_allow` (None: no subject)."""
    normalized = normalize(subject)
    return (tuple(_DIGITS.findall(normalized)), len(normalized)) if normalized else None


def _groups(fact: Fact) -> tuple[str, ...]:
    """The groups a believed fact is indexed in: its polarity, and `valued` with a value."""
    polarity = "negated" if fact.negated else "stated"
    return (polarity, "valued") if fact.value else (polarity,)


def _wanted_groups(new: Fact) -> tuple[str, ...]:
    """The groups of believed facts `new` (stating no replacement) can contradict: the other
    polarity (`negation`), and those with a value when it has one (`changed_value`)."""
    polarity = "stated" if new.negated else "negated"
    return (polarity, "valued") if new.value else (polarity,)


class BelievedFacts:
    """Believed facts, indexed so that `contradictions` compares a new fact only with those
    it can contradict, and finds what `contradictions(new, self.facts)` finds, in the same
    order. A new fact stating a replacement may contradict a fact on any subject that
    mentions the replaced value: it is compared with every fact. Without one, `contradiction`
    needs `same_subject` (equal canonical keys, or subjects with the same numbers and
    lengths `_lengths_allow`: both necessary for `_similar`, and met by equal subjects), and
    then both facts with a value (`changed_value`) or opposite polarities (`negation`).
    Comparing each new fact with every believed one cost most of a build's conflict
    detection as the store grew."""

    def __init__(self, facts: list[Fact]) -> None:
        self.facts: list[Fact] = []  # in order read, then added
        # (canonical key, group) -> positions in `facts`
        self._by_key: dict[tuple[str, str], list[int]] = {}
        # (numbers of the subject, group) -> subject length -> positions in `facts`
        self._by_subject: dict[tuple[tuple[str, ...], str], dict[int, list[int]]] = {}
        for fact in facts:
            self.add(fact)

    def add(self, fact: Fact) -> None:
        position, key = len(self.facts), _subject_key(fact.subject)
        self.facts.append(fact)
        for group in _groups(fact):
            if fact.canonical_key:
                self._by_key.setdefault((fact.canonical_key, group), []).append(position)
            if key is not None:
                lengths = self._by_subject.setdefault((key[0], group), {})
                lengths.setdefault(key[1], []).append(position)

    def candidates(self, new: Fact) -> list[Fact]:
        """The facts `new` can contradict (a superset), in order."""
        if new.replaced_value():
            return self.facts
        positions: set[int] = set()
        key = _subject_key(new.subject)
        for group in _wanted_groups(new):
            if new.canonical_key:
                positions.update(self._by_key.get((new.canonical_key, group), ()))
            if key is not None:
                for length, found in self._by_subject.get((key[0], group), {}).items():
                    if _lengths_allow(key[1], length):
                        positions.update(found)
        return [self.facts[p] for p in sorted(positions)]

    def contradictions(self, new: Fact) -> list[Contradiction]:
        """`contradictions(new, self.facts)`, comparing only `candidates(new)`."""
        return contradictions(new, self.candidates(new))


class SessionFacts:
    """One build's facts compared so far, indexed for `within_session`: `pairs(fact)` lists,
    in the order they were added, every fact that could contradict `fact` or be
    contradicted by it, whichever of the two was said later (a superset; `BelievedFacts`
    says why). Without a stated replacement on either side, a contradiction needs the same
    subject and the other polarity or values on both, which holds both ways round; a fact
    stating a replacement may contradict any, so `fact` is compared with every such fact,
    and with every fact when it states one itself. Comparing every pair cost a session of
    thousands of facts most of its build."""

    def __init__(self) -> None:
        self.facts: list[Fact] = []
        self._index = BelievedFacts([])
        self._replacing: list[Fact] = []  # the facts stating a replacement
        self._order: dict[str, int] = {}  # entry id -> position in `facts`

    def add(self, fact: Fact) -> None:
        self._order[fact.entry_id] = len(self.facts)
        self.facts.append(fact)
        self._index.add(fact)
        if fact.replaced_value():
            self._replacing.append(fact)

    def pairs(self, fact: Fact) -> list[Fact]:
        if fact.replaced_value():
            return list(self.facts)
        found = {f.entry_id: f for f in self._index.candidates(fact)}
        found.update((f.entry_id, f) for f in self._replacing)
        return sorted(found.values(), key=lambda f: self._order[f.entry_id])


def divergence(a: Fact, b: Fact) -> float | None:
    """Seed 003's hint: the share of content two facts have in common (Jaccard) when they
    share at least `DIVERGENCE_MIN_TOPIC_WORDS` title words but little content; else None.
    Only a suggestion for a reader, never a conflict."""
    title_a, title_b = topic_words(a.title), topic_words(b.title)
    if len(title_a & title_b) < DIVERGENCE_MIN_TOPIC_WORDS:
        return None
    words_a, words_b = topic_words(a.text), topic_words(b.text)
    jaccard = len(words_a & words_b) / len(words_a | words_b) if words_a | words_b else 1.0
    return round(jaccard, 3) if jaccard < DIVERGENCE_MAX_OVERLAP else None
