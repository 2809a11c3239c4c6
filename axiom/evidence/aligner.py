"""EvidenceAligner V2: find where an extractor's quote sits in its source message.

Extractors (rules or an LLM) only say *which message* and *what it said*
(`EvidenceQuote(message_index, quote)`); the span is computed here and never trusted from
an extractor. Three steps, the first that succeeds wins:

1. **exact** — the quote is a substring of the message (`str.find`). Confidence 1.0. If it
   occurs more than once the first occurrence is taken and the result is `ambiguous`, with
   `alternatives` = how many other (possibly overlapping) occurrences there are.
2. **normalized** — both texts are normalized (NFKC, case-fold, curly quotes and dashes made
   ASCII, invisible format characters such as ZWSP/ZWJ/soft hyphen dropped, whitespace runs
   collapsed, ends trimmed) and searched again. Every normalized character remembers the
   original characters it came from, so the span covers the *original* text, whole
   characters and combining sequences included. A match must start and end on such
   boundaries (``ß`` folds to ``ss``: a quote ending in the first ``s`` does not count).
   Confidence 0.99 when only whitespace differed, 0.97 otherwise.
3. **fuzzy** — rapidfuzz ``partial_ratio_alignment`` on the normalized texts. Its window
   has the quote's length, so the ends are refined: each end is shifted a few characters
   either way, word boundaries are tried, and the best `fuzz.ratio` wins. `similarity` is
   that ratio in [0, 1]; at or above `fuzzy_threshold` the confidence is scaled into
   0.85–0.95. Below it the result fails, with the best similarity kept: ``below_threshold``
   when that passage is a near miss (similarity ≥ `NEAR_MISS`, 0.6: the quote is there,
   misquoted), else ``not_found`` (any quote shares some letters with a long message; that
   is not finding it). A quote shorter than `FUZZY_MIN_CHARS` (10) normalized characters
   is not matched fuzzily at all: one changed letter in "the cat" gives "the car" at
   0.86, so a short quote must be there exactly or normalized, else ``not_found``.

Failures never raise: ``empty_quote`` (empty or whitespace-only or invisible-only quote),
``message_index_out_of_range`` (negative, too large, or not an int), ``not_found`` (nothing
like the quote), ``below_threshold`` (a near miss).

**Offsets** (`span_start`, `span_end`) are Python ``str`` indices — Unicode code points —
into the message text exactly as stored (CRLF kept, nothing normalized), so
``message[span_start:span_end]`` is the evidence. They are not UTF-8 byte offsets and not
JavaScript UTF-16 offsets: an emoji counts 1, a CRLF 2, a decomposed "é" 2.

Normalization is applied per character, or per base character plus the combining marks
(and Hangul vowel/final jamo) that follow it, rather than to the whole string at once, so
every normalized character maps back to a definite piece of the original. Pure module: no
I/O, no Django.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from rapidfuzz import fuzz

from axiom.settings import DEFAULT_FUZZY_THRESHOLD  # AXIOM_FUZZY_THRESHOLD overrides it

Method = Literal["exact", "normalized", "fuzzy"]
FailureReason = Literal["empty_quote", "message_index_out_of_range", "not_found", "below_threshold"]

CONFIDENCE_EXACT = 1.0
CONFIDENCE_NORMALIZED_WHITESPACE = 0.99
CONFIDENCE_NORMALIZED = 0.97
CONFIDENCE_FUZZY_MIN = 0.85
CONFIDENCE_FUZZY_MAX = 0.95
MAX_ALTERNATIVES = 1000  # counting stops here; a quote found 1000 times is ambiguous enough
NEAR_MISS = 0.6  # a failed fuzzy match at least this similar is `below_threshold`
FUZZY_MIN_CHARS = 10  # shorter quotes (normalized) must match exactly or normalized


def quote_hash(quote: str) -> str:
    """sha256 hex of the quote's UTF-8 bytes (lone surrogates from bad JSON kept as-is)."""
    return hashlib.sha256(quote.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class EvidenceQuote:
    """What an extractor claims: message `message_index` of the session says `quote`."""

    message_index: int
    quote: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvidenceQuote:
        """Accepts ``message_index`` or the extractor spelling ``messageIndex``."""
        index = data.get("message_index", data.get("messageIndex"))
        return cls(message_index=index, quote=data.get("quote"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class AlignedEvidence:
    """The outcome of aligning one quote; `aligned` is False exactly when it failed."""

    message_index: int
    quote: str
    quote_hash: str
    aligned: bool
    method: Method | None
    span_start: int | None
    span_end: int | None
    confidence: float
    similarity: float | None
    ambiguous: bool
    alternatives: int
    failure_reason: FailureReason | None

    def to_json(self) -> dict[str, Any]:
        """What `dataclasses.asdict` gives, written out (every field holds a plain value):
        asdict's generic walk was most of the cost of recording a build's evidence."""
        return {
            "message_index": self.message_index,
            "quote": self.quote,
            "quote_hash": self.quote_hash,
            "aligned": self.aligned,
            "method": self.method,
            "span_start": self.span_start,
            "span_end": self.span_end,
            "confidence": self.confidence,
            "similarity": self.similarity,
            "ambiguous": self.ambiguous,
            "alternatives": self.alternatives,
            "failure_reason": self.failure_reason,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AlignedEvidence:
        def opt_int(key: str) -> int | None:
            value = data.get(key)
            return None if value is None else int(value)

        similarity = data.get("similarity")
        return cls(
            message_index=int(data["message_index"]),
            quote=str(data["quote"]),
            quote_hash=str(data["quote_hash"]),
            aligned=bool(data["aligned"]),
            method=data.get("method"),
            span_start=opt_int("span_start"),
            span_end=opt_int("span_end"),
            confidence=float(data["confidence"]),
            similarity=None if similarity is None else float(similarity),
            ambiguous=bool(data.get("ambiguous", False)),
            alternatives=int(data.get("alternatives", 0)),
            failure_reason=data.get("failure_reason"),
        )


# --------------------------------------------------------------------------------------
# Normalization with a map back to the original
# --------------------------------------------------------------------------------------

_UNIFY = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′‵", "'"),
        **dict.fromkeys("“”„‟″‶«»", '"'),
        **dict.fromkeys("‐‑‒–—―−﹘﹣－", "-"),
        # invisible format characters an extractor is likely to drop
        **dict.fromkeys("\u200b\u200c\u200d\u2060\ufeff\u00ad", None),
    }
)


def _fold(s: str) -> str:
    s = unicodedata.normalize("NFKC", s)
    s = unicodedata.normalize("NFKC", s.casefold()).translate(_UNIFY)
    if not s.isascii() or not s.isprintable():
        s = "".join(" " if c.isspace() else c for c in s)
    return s


def _joins_previous(ch: str) -> bool:
    o = ord(ch)
    return unicodedata.combining(ch) != 0 or 0x1160 <= o <= 0x11FF or 0xD7B0 <= o <= 0xD7FF


def _attaches(ch: str, folded: str) -> bool:
    """True if `ch` belongs with the character before it: a combining mark, a Hangul
    vowel/final jamo, or anything that folds to one (compatibility jamo ㅏ → ᅡ)."""
    return _joins_previous(ch) or (bool(folded) and _joins_previous(folded[0]))


# Per-character facts, filled lazily and shared by all aligners (characters do not change).
# A character is "simple" when it folds to exactly one character and ``ch.lower()`` folds
# the same way; then a whole text can be folded with C-speed ``str.lower()`` followed by a
# substitution of the few characters that still differ. Anything else needs its own piece.
_FOLD: dict[str, str] = {}  # fold of every character seen
_SPECIAL: dict[str, str] = {}  # "attach" | "length" for characters that need their own piece
_NOT_SPACE_WHITESPACE = re.compile(r"[^\S ]")
# Runs of characters known to fold to themselves (checked by a test); removing them first
# makes collecting a text's distinct characters cheap for Korean, CJK and English prose.
_PLAIN = re.compile(
    "[a-z0-9 .,!?;:()\\[\\]{}<>/@#%&*+=_|~^$'\"\\-\uac00-\ud7a3\u4e00-\u9fff"
    "\u3041-\u3096\u30a1-\u30fa]+"
)


def _fold_char(ch: str) -> str:
    folded = _FOLD.get(ch)
    if folded is None:
        folded = _FOLD[ch] = _fold(ch)
        if _attaches(ch, folded):
            _SPECIAL[ch] = "attach"
        elif (
            len(folded) != 1
            or len(ch.lower()) != 1
            or _fold(ch.lower()) != folded
            or ch == "\u03a3"  # str.lower() makes Σ final ς or σ by context
        ):
            _SPECIAL[ch] = "length"
    return folded


for _c in map(chr, range(128)):
    _fold_char(_c)
_ASCII_TABLE = {ord(c): f for c, f in _FOLD.items() if f != c}


def _fold_simple(text: str, chars: set[str]) -> str:
    """Length-preserving fold, right at every position that holds a simple character."""
    lowered = text.lower()
    if len(lowered) != len(text):  # İ grows under lower(); fold char by char instead
        return "".join(c if c in _SPECIAL else _FOLD[c] for c in text)
    lowered = _NOT_SPACE_WHITESPACE.sub(" ", lowered)
    fixes = {}
    for c in {c.lower() for c in chars if c not in _SPECIAL}:
        folded = _fold_char(c)
        if folded != c and not c.isspace():
            fixes[c] = folded
    for c, folded in fixes.items():  # a handful of characters: str.replace is C-speed
        lowered = lowered.replace(c, folded)
    return lowered


_MULTISPACE = re.compile(" {2,}")


class NormalizedText:
    """A normalized string plus the map from its characters back to the original.

    Two stages: a per-piece fold (``_m1_start``/``_m1_end``: for each folded character, the
    original [start, end) of the piece it came from; None when the fold kept lengths), then
    whitespace collapsing and trimming (kept as breakpoints: a normalized index plus the
    offset to add from there on).
    """

    __slots__ = ("text", "_m1_start", "_m1_end", "_folded_len", "_bps", "_offs")

    def __init__(self, original: str) -> None:
        folded, self._m1_start, self._m1_end = self._fold_with_map(original)
        self._folded_len = len(folded)
        core = folded.strip(" ")
        lead = len(folded) - len(folded.lstrip(" ")) if core else 0
        self._bps = [0]
        self._offs = [lead]
        cum = lead
        for m in _MULTISPACE.finditer(core):
            s, e = m.start() + lead, m.end() + lead
            cum_next = cum + (e - s - 1)
            self._bps.append(s - cum + 1)
            self._offs.append(cum_next)
            cum = cum_next
        self.text = _MULTISPACE.sub(" ", core) if len(self._bps) > 1 else core

    @staticmethod
    def _fold_with_map(text: str) -> tuple[str, list[int] | None, list[int] | None]:
        if text.isascii():
            return text.translate(_ASCII_TABLE), None, None
        chars = set(_PLAIN.sub("", text))
        for ch in chars:
            _fold_char(ch)
        attach = [ch for ch in chars if _SPECIAL.get(ch) == "attach"]
        length = [ch for ch in chars if _SPECIAL.get(ch) == "length"]
        simple = _fold_simple(text, chars)
        if not attach and not length:
            return simple, None, None
        alternatives = []
        if attach:
            alternatives.append("(?s:.)?[" + "".join(map(re.escape, attach)) + "]+")
        if length:
            alternatives.append("[" + "".join(map(re.escape, length)) + "]")
        pieces: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        pos = 0
        for m in re.finditer("|".join(alternatives), text):
            a, b = m.span()
            if a > pos:
                pieces.append(simple[pos:a])
                starts.extend(range(pos, a))
                ends.extend(range(pos + 1, a + 1))
            out = _fold(m.group())
            pieces.append(out)
            starts.extend([a] * len(out))
            ends.extend([b] * len(out))
            pos = b
        if pos < len(text):
            pieces.append(simple[pos:])
            starts.extend(range(pos, len(text)))
            ends.extend(range(pos + 1, len(text) + 1))
        return "".join(pieces), starts, ends

    def _folded_index(self, k: int) -> int:
        if len(self._bps) == 1:
            return k + self._offs[0]
        return k + self._offs[bisect_right(self._bps, k) - 1]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Original [start, end) covering the normalized span [start, end), end > start."""
        i = self._folded_index(start)
        j = self._folded_index(end - 1)
        if self._m1_start is None or self._m1_end is None:
            return i, j + 1
        return self._m1_start[i], self._m1_end[j]

    def on_boundaries(self, start: int, end: int) -> bool:
        """True if the span neither starts nor ends inside one original piece's expansion."""
        starts = self._m1_start
        if starts is None:
            return True
        i = self._folded_index(start)
        j = self._folded_index(end - 1)
        return (i == 0 or starts[i - 1] != starts[i]) and (
            j == self._folded_len - 1 or starts[j + 1] != starts[j]
        )


def normalize(text: str) -> str:
    """The normalized form used for matching (see the module docstring)."""
    return NormalizedText(text).text


# --------------------------------------------------------------------------------------
# The aligner
# --------------------------------------------------------------------------------------


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


class EvidenceAligner:
    """Aligns quotes to messages: exact → normalized → fuzzy (see the module docstring)."""

    def __init__(self, fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD) -> None:
        if not 0.0 < fuzzy_threshold <= 1.0:
            raise ValueError(f"fuzzy_threshold must be in (0, 1], got {fuzzy_threshold!r}")
        self.fuzzy_threshold = fuzzy_threshold

    def align(self, messages: Sequence[str], quote: EvidenceQuote) -> AlignedEvidence:
        return self._align(messages, quote, {})

    def align_all(
        self, messages: Sequence[str], quotes: Sequence[EvidenceQuote]
    ) -> list[AlignedEvidence]:
        """Aligns each quote; a message is normalized at most once for the whole batch."""
        cache: dict[int, NormalizedText] = {}
        return [self._align(messages, q, cache) for q in quotes]

    # -- steps ----------------------------------------------------------------------------

    def _align(
        self, messages: Sequence[str], item: EvidenceQuote, cache: dict[int, NormalizedText]
    ) -> AlignedEvidence:
        quote = item.quote if isinstance(item.quote, str) else ""
        index = item.message_index
        if isinstance(index, bool) or not isinstance(index, int):
            index = -1
        base = {"message_index": index, "quote": quote, "quote_hash": quote_hash(quote)}

        if not quote.strip():
            return _failed(base, "empty_quote")
        if messages is None:
            messages = ()
        if not 0 <= index < len(messages):
            return _failed(base, "message_index_out_of_range")
        message = messages[index]
        if not isinstance(message, str):
            message = ""

        start = message.find(quote)
        if start >= 0:
            others = _count_others(message, quote, start)
            return _found(base, "exact", start, start + len(quote), CONFIDENCE_EXACT, others)

        norm_quote = NormalizedText(quote).text
        if not norm_quote:
            return _failed(base, "empty_quote")
        norm = cache.get(index)
        if norm is None:
            norm = cache[index] = NormalizedText(message)

        hit = self._normalized(norm, norm_quote)
        if hit is not None:
            s, e, others = hit
            same_words = message[s:e].split() == quote.split()
            confidence = CONFIDENCE_NORMALIZED_WHITESPACE if same_words else CONFIDENCE_NORMALIZED
            return _found(base, "normalized", s, e, confidence, others)

        return self._fuzzy(base, message, norm, norm_quote)

    @staticmethod
    def _normalized(norm: NormalizedText, needle: str) -> tuple[int, int, int] | None:
        hay = norm.text
        first: tuple[int, int] | None = None
        others = 0
        pos = hay.find(needle)
        while pos >= 0 and others < MAX_ALTERNATIVES:
            end = pos + len(needle)
            if norm.on_boundaries(pos, end):
                if first is None:
                    first = norm.to_original(pos, end)
                else:
                    others += 1
            pos = hay.find(needle, pos + 1)
        if first is None:
            return None
        return first[0], first[1], others

    def _fuzzy(
        self, base: dict[str, Any], message: str, norm: NormalizedText, needle: str
    ) -> AlignedEvidence:
        hay = norm.text
        if not hay:
            return _failed(base, "not_found", similarity=0.0)
        if len(needle) < FUZZY_MIN_CHARS:
            return _failed(base, "not_found")
        if len(needle) <= len(hay):
            hit = fuzz.partial_ratio_alignment(needle, hay)
            if hit is None or hit.score <= 0:
                return _failed(base, "not_found", similarity=0.0)
            start, end = hit.dest_start, hit.dest_end
        else:  # the quote is longer than the whole message: compare against all of it
            start, end = 0, len(hay)
        start, end, score = _refine(needle, hay, start, end)
        if score <= 0 or end <= start:
            return _failed(base, "not_found", similarity=0.0)
        s, e = norm.to_original(start, end)
        # Score what is returned: the span covers whole original characters, which may
        # normalize to a little more than the window did (a quote ending inside "ß").
        if norm.on_boundaries(start, end):
            similarity = round(score / 100.0, 4)
        else:
            similarity = round(fuzz.ratio(needle, normalize(message[s:e])) / 100.0, 4)
        if similarity < self.fuzzy_threshold:
            reason: FailureReason = "below_threshold" if similarity >= NEAR_MISS else "not_found"
            return _failed(base, reason, similarity=similarity)
        threshold = self.fuzzy_threshold
        scale = 1.0 if threshold >= 1.0 else (similarity - threshold) / (1.0 - threshold)
        confidence = CONFIDENCE_FUZZY_MIN + (CONFIDENCE_FUZZY_MAX - CONFIDENCE_FUZZY_MIN) * scale
        confidence = round(min(CONFIDENCE_FUZZY_MAX, max(CONFIDENCE_FUZZY_MIN, confidence)), 4)
        return _found(base, "fuzzy", s, e, confidence, 0, similarity=similarity)


def _refine(needle: str, hay: str, start: int, end: int) -> tuple[int, int, float]:
    """Best (start, end, ratio) near the window rapidfuzz found.

    partial_ratio's window is as long as the quote, so when the source has extra or
    missing characters the window's ends are off by about that many. Each end is moved
    up to `reach` characters (two rounds of coordinate search), then word-boundary variants
    of the result are tried; the best ratio wins, ties going to boundary-aligned spans.
    """
    n = len(hay)
    reach = max(4, len(needle) // 8)

    def score(a: int, b: int) -> float:
        return fuzz.ratio(needle, hay[a:b]) if b > a else 0.0

    best = score(start, end)
    for _ in range(2):
        moved = False
        for b in range(max(start + 1, end - reach), min(n, end + reach) + 1):
            sc = score(start, b)
            if sc > best:
                best, end, moved = sc, b, True
        for a in range(max(0, start - reach), min(end - 1, start + reach) + 1):
            sc = score(a, end)
            if sc > best:
                best, start, moved = sc, a, True
        if not moved:
            break

    def aligned(a: int, b: int) -> int:
        left = a == 0 or not (_is_word(hay[a - 1]) and _is_word(hay[a]))
        right = b == n or not (_is_word(hay[b - 1]) and _is_word(hay[b]))
        return int(left) + int(right) - (hay[a] == " ") - (hay[b - 1] == " ")

    candidates_start = _snap_points(hay, start, reach, forward=True)
    candidates_end = _snap_points(hay, end, reach, forward=False)
    best_key = (best, aligned(start, end))
    for a in candidates_start:
        for b in candidates_end:
            if b <= a:
                continue
            key = (score(a, b), aligned(a, b))
            if key > best_key:
                best_key, start, end = key, a, b
    # never start or end on the collapsed space between words
    while start < end and hay[start] == " ":
        start += 1
    while end > start and hay[end - 1] == " ":
        end -= 1
    return start, end, score(start, end)


def _snap_points(hay: str, pos: int, reach: int, *, forward: bool) -> list[int]:
    """`pos` plus the nearest word boundaries on either side of it within `reach`."""
    n = len(hay)

    def boundary(p: int) -> bool:
        return p in (0, n) or not (_is_word(hay[p - 1]) and _is_word(hay[p]))

    left = pos
    while not boundary(left) and pos - left < reach:
        left -= 1
    right = pos
    while not boundary(right) and right - pos < reach:
        right += 1
    points = [pos]
    for p in (left, right):
        if not boundary(p):
            continue
        # a start sits on a word's first character, an end just after a word's last one
        if forward:
            while p < n and hay[p] == " ":
                p += 1
        else:
            while p > 0 and hay[p - 1] == " ":
                p -= 1
        if p not in points:
            points.append(p)
    return points


def _count_others(hay: str, needle: str, first: int) -> int:
    others = 0
    pos = hay.find(needle, first + 1)
    while pos >= 0 and others < MAX_ALTERNATIVES:
        others += 1
        pos = hay.find(needle, pos + 1)
    return others


def _found(
    base: dict[str, Any],
    method: Method,
    start: int,
    end: int,
    confidence: float,
    others: int,
    similarity: float | None = None,
) -> AlignedEvidence:
    return AlignedEvidence(
        **base,
        aligned=True,
        method=method,
        span_start=start,
        span_end=end,
        confidence=confidence,
        similarity=1.0 if similarity is None else similarity,
        ambiguous=others > 0,
        alternatives=others,
        failure_reason=None,
    )


def _failed(
    base: dict[str, Any], reason: FailureReason, similarity: float | None = None
) -> AlignedEvidence:
    return AlignedEvidence(
        **base,
        aligned=False,
        method=None,
        span_start=None,
        span_end=None,
        confidence=0.0,
        similarity=similarity,
        ambiguous=False,
        alternatives=0,
        failure_reason=reason,
    )
