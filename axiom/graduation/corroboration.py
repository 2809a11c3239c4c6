"""When two entries state the same memory: the test behind verified → certified.

Corroboration means the same memory backed by evidence from two sessions. Identical
normalized titles (the entry's canonical key) always count. A memory is often restated in
other words, though ("My goal is to give kids a loving home" / "My dream is to create a
safe and loving home for these kids"), so two entries also count as the same memory when

- they have the same entry type,
- they name the same speaker (the ``Name:`` prefix extractors put on personal facts), or
  both name none, and
- their titles share at least `MIN_SHARED_WORDS` (3) content words and the Dice overlap of
  their content-word sets, 2·|A∩B| / (|A|+|B|), is at least `MIN_OVERLAP` (0.6).

Content words: the title NFKC-normalized and case-folded, split into words, minus stop
words (function words, fillers, pronouns, auxiliaries and time words such as "yesterday"
or "last week", which differ between sessions without changing the fact), minus words of
one or two letters, with a crude suffix strip (-ing, -ed, -es, -s) so that "paintings" and
"painting" meet.

Why not rapidfuzz's token_set_ratio: it scores 100 whenever one title's words are a subset
of the other's, so a short title ("Melanie: Yeah, I love to") matched most of the titles
by the same speaker at 77-88 on LoCoMo dev. The two thresholds were read off every
same-speaker pair of the 99 LoCoMo dev entries: the restatements scored 0.67-0.73 with 4
shared words; the closest different facts ("putting together an LGBTQ art show" / "a
talent show for the kids") 0.55 with 3, as did one loose restatement ("goal ... loving
home" / "dream ... loving home for these kids"), which is left uncertified rather than
letting noise in. Pure module: no I/O.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from axiom.extract.types import normalize_title

MIN_SHARED_WORDS = 3
MIN_OVERLAP = 0.6

_STOP_WORDS = """
    a an the and or but if of to in on at for with from by about as into than then so too
    very just really also even still yeah yes yup oh wow hey hi ok okay well like that this
    these those there here it its i me my mine we our us you your he she they them their
    his her is are was were be been being am do does did done have has had having can
    could will would should may might must shall not no nope what which who whom when where
    why how all any some much many more most such own get got go going went gonna wanna lot
    lots thing things something anything everything one yesterday today tonight tomorrow
    last next week weeks weekend month months year years ago day days time monday tuesday
    wednesday thursday friday saturday sunday now soon recently i'm i've i'd i'll we're
    we've you're it's that's there's here's
"""
_STOP = frozenset(_STOP_WORDS.split())
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_SPEAKER = re.compile(r"^(?P<speaker>[^:\n]{1,40}):\s")
_SUFFIXES = ("ing", "ed", "es", "s")
T = TypeVar("T")


@dataclass(frozen=True)
class MemoryWords:
    """What two entries are compared on: type, speaker and content words of the title."""

    entry_type: str
    speaker: str
    words: frozenset[str]

    @classmethod
    def of(cls, entry_type: str, title: str) -> MemoryWords:
        text = normalize_title(title).replace("’", "'")
        speaker = ""
        if m := _SPEAKER.match(text):
            speaker, text = m.group("speaker"), text[m.end() :]
        words = frozenset(_stem(w) for w in _WORD.findall(text) if len(w) > 2 and w not in _STOP)
        return cls(entry_type, speaker, words)


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def overlap(a: MemoryWords, b: MemoryWords) -> float:
    """Dice overlap of the content words, 0 when type or speaker differ."""
    if a.entry_type != b.entry_type or a.speaker != b.speaker or not a.words or not b.words:
        return 0.0
    return 2 * len(a.words & b.words) / (len(a.words) + len(b.words))


def same_memory(a: MemoryWords, b: MemoryWords) -> bool:
    """True when `a` and `b` restate one memory (see the module docstring)."""
    return len(a.words & b.words) >= MIN_SHARED_WORDS and overlap(a, b) >= MIN_OVERLAP


class MemoryIndex(Generic[T]):
    """Items by canonical key and by content word: `matching` finds the items that state
    the same memory as a title (same key, or `same_memory`) without comparing it with every
    item, only with those sharing at least `MIN_SHARED_WORDS` content words."""

    def __init__(self, items: Iterable[tuple[T, str | None, MemoryWords]]) -> None:
        self._items: list[tuple[T, MemoryWords]] = []
        self._by_key: dict[str | None, list[int]] = defaultdict(list)
        self._by_word: dict[str, list[int]] = defaultdict(list)
        for position, (item, canonical_key, words) in enumerate(items):
            self._items.append((item, words))
            self._by_key[canonical_key].append(position)
            for word in words.words:
                self._by_word[word].append(position)

    def matching(self, canonical_key: str, words: MemoryWords) -> list[T]:
        """The items with `canonical_key` or restating `words`, in the order given."""
        found = _matches(
            self._by_key, self._by_word, lambda p: self._items[p][1], canonical_key, words
        )
        return [self._items[p][0] for p in sorted(found)]


K = TypeVar("K")


def _matches(
    by_key: Mapping[str | None, Collection[K]],
    by_word: Mapping[str, Collection[K]],
    words_at: Callable[[K], MemoryWords],
    canonical_key: str,
    words: MemoryWords,
) -> set[K]:
    """The items with `canonical_key`, and those sharing at least `MIN_SHARED_WORDS`
    content words with `words` that restate it (`same_memory`)."""
    found = set(by_key.get(canonical_key, ()))
    shared = Counter(k for w in words.words for k in by_word.get(w, ()))
    found.update(
        k
        for k, count in shared.items()
        if count >= MIN_SHARED_WORDS and k not in found and same_memory(words, words_at(k))
    )
    return found


PoolRow = tuple[str, str, str, str, str | None]  # entry_id, session_id, stage, title, key
Sibling = tuple[str, str, str]  # entry_id, session_id, stage


def pool_index(
    entry_type: str,
    rows: Sequence[PoolRow],
    words_of: Callable[[str, str], MemoryWords] = MemoryWords.of,
) -> MemoryIndex[Sibling]:
    """The corroboration pool (`axiom.entries.queries.corroboration_pool` rows) indexed for
    `matching`, each item (entry_id, session_id, stage): the pipeline and a conflict's
    resolution find corroboration the same way."""
    return MemoryIndex(((r[0], r[1], r[2]), r[4], words_of(entry_type, r[3])) for r in rows)


class SessionPool:
    """A corroboration pool kept for every session at once and changed in place: the
    pool a write transaction's builds share (`axiom.pipeline.pool_view`). `matching` finds
    what `pool_index(...).matching` finds over the same rows less those of one session
    (`corroboration_pool` leaves the build's own session out), in entry id order, the
    order `corroboration_pool` returns its rows in."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[Sibling, str | None, MemoryWords]] = {}
        self._by_key: dict[str | None, set[str]] = defaultdict(set)
        self._by_word: dict[str, set[str]] = defaultdict(set)

    def put(self, sibling: Sibling, canonical_key: str | None, words: MemoryWords) -> None:
        """Add the entry, or change its stage (the other fields of an entry never change)."""
        entry_id = sibling[0]
        if entry_id in self._items:
            _, key, known = self._items[entry_id]
            self._items[entry_id] = (sibling, key, known)
            return
        self._items[entry_id] = (sibling, canonical_key, words)
        self._by_key[canonical_key].add(entry_id)
        for word in words.words:
            self._by_word[word].add(entry_id)

    def discard(self, entry_id: str) -> None:
        """Take the entry out of the pool (it left the stages or statuses that corroborate)."""
        item = self._items.pop(entry_id, None)
        if item is None:
            return
        self._by_key[item[1]].discard(entry_id)
        for word in item[2].words:
            self._by_word[word].discard(entry_id)

    def member(self, entry_id: str, excluding: str | None) -> Sibling | None:
        """The entry's (entry_id, session_id, stage) when it is in the pool of a build of
        session `excluding`."""
        item = self._items.get(entry_id)
        return item[0] if item is not None and item[0][1] != excluding else None

    def matching(
        self, canonical_key: str, words: MemoryWords, excluding: str | None
    ) -> list[Sibling]:
        """`MemoryIndex.matching` over the pool of a build of session `excluding`."""
        found = _matches(
            self._by_key, self._by_word, lambda i: self._items[i][2], canonical_key, words
        )
        items = (self._items[i][0] for i in sorted(found))
        return [s for s in items if s[1] != excluding]
