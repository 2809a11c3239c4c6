"""Lexical (BM25) scoring for English and Korean text.

One analyzer turns text into index terms, for every storage backend:

* Latin-script words (and digits) are lower-cased, stripped of apostrophes, filtered
  against an English stop-word list and reduced with the Porter stemmer, so "painted",
  "painting" and "paints" meet on "paint".
* Hangul, Han and Kana runs become overlapping character n-grams of length 2 and 3 (a
  single character stays as is). Korean glues particles and endings onto stems
  ("결정했습니다", "결정을"), and the stem "결정" is a bigram of both; a word tokenizer would
  see three unrelated words.

Two scorers share it:

* `BM25` keeps an in-memory inverted index (Okapi BM25, k1=1.2, b=0.75: the textbook
  defaults, also Lucene's and Lance's). Used by the benchmark and for small corpora.
* `LanceLexicalIndex` stores the analyzed terms as a whitespace-joined column of a LanceDB
  table and builds LanceDB's native FTS index on it with a plain whitespace tokenizer, so
  LanceDB serves BM25 over exactly the same terms. Queries are analyzed here the same way.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

ANALYZER_VERSION = "en-porter+cjk-ngram23/1"

# NLTK's English list plus apostrophe-less contractions (the analyzer deletes apostrophes).
_STOP_WORDS_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves
    im ive id ill youre youve youd youll hes shes weve theyre theyve theyd
    theyll dont doesnt didnt isnt arent wasnt werent havent hasnt hadnt wont wouldnt cant
    couldnt shouldnt lets thats theres whats whos hows wheres whens
"""
ENGLISH_STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_APOSTROPHE = re.compile(r"['’]")


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return (
        0xAC00 <= cp <= 0xD7A3  # Hangul syllables
        or 0x1100 <= cp <= 0x11FF  # Hangul jamo
        or 0x3130 <= cp <= 0x318F  # Hangul compatibility jamo
        or 0x3040 <= cp <= 0x30FF  # Hiragana, Katakana
        or 0x3400 <= cp <= 0x4DBF  # Han extension A
        or 0x4E00 <= cp <= 0x9FFF  # Han
        or 0xF900 <= cp <= 0xFAFF  # Han compatibility
    )


def char_ngrams(run: str, low: int = 2, high: int = 3) -> list[str]:
    """Overlapping n-grams of `run` for n in [low, high]; a run shorter than `low` is kept whole."""
    if len(run) < low:
        return [run] if run else []
    grams: list[str] = []
    for n in range(low, high + 1):
        grams.extend(run[i : i + n] for i in range(len(run) - n + 1))
    return grams


@dataclass(frozen=True)
class Analyzer:
    """Text -> index terms. Frozen so one instance can be shared by index and queries."""

    stem: bool = True
    stop_words: frozenset[str] = ENGLISH_STOP_WORDS
    ngram_min: int = 2
    ngram_max: int = 3

    def __call__(self, text: str) -> list[str]:
        return self.analyze(text)

    def analyze(self, text: str) -> list[str]:
        terms: list[str] = []
        text = unicodedata.normalize("NFKC", text).casefold()
        for match in _WORD.finditer(text):
            word = _APOSTROPHE.sub("", match.group())
            for is_cjk, run in _script_runs(word):
                if is_cjk:
                    terms.extend(char_ngrams(run, self.ngram_min, self.ngram_max))
                    continue
                if run in self.stop_words or (len(run) == 1 and not run.isdigit()):
                    continue
                terms.append(porter_stem(run) if self.stem and run.isascii() else run)
        return terms


def _script_runs(word: str) -> Iterable[tuple[bool, str]]:
    """Split a word into maximal runs of CJK / non-CJK characters ("redis를" -> redis, 를)."""
    if word.isascii():  # most words: no CJK, one run
        yield False, word
        return
    start = 0
    for i in range(1, len(word) + 1):
        if i == len(word) or _is_cjk(word[i]) != _is_cjk(word[start]):
            yield _is_cjk(word[start]), word[start:i]
            start = i


DEFAULT_ANALYZER = Analyzer()


class BM25:
    """Okapi BM25 over an in-memory inverted index.

    `scores(query)` returns one float per document (0 where no term matches), in insertion
    order, so it composes with dense scores by position.
    """

    def __init__(
        self,
        documents: Iterable[str] = (),
        *,
        analyzer: Analyzer = DEFAULT_ANALYZER,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.analyzer = analyzer
        self.k1 = k1
        self.b = b
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._lengths: list[int] = []
        self.add(documents)

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, documents: Iterable[str]) -> None:
        for text in documents:
            doc = len(self._lengths)
            counts = Counter(self.analyzer(text))
            self._lengths.append(sum(counts.values()))
            for term, tf in counts.items():
                self._postings.setdefault(term, []).append((doc, tf))

    def idf(self, term: str) -> float:
        """Lucene's non-negative BM25 idf: ln(1 + (N - df + 0.5) / (df + 0.5))."""
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (len(self) - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> np.ndarray:
        # numpy is imported here, not at the top: the analyzer above is on the hook's
        # service-down context path (axiom.agent.context), which must start fast.
        import numpy as np

        out = np.zeros(len(self), dtype=np.float32)
        if not self._lengths:
            return out
        lengths = self._lengths
        avgdl = (sum(lengths) / len(lengths)) or 1.0
        k1, b = self.k1, self.b
        for term, qtf in Counter(self.analyzer(query)).items():
            postings = self._postings.get(term)
            if not postings:
                continue
            weight = self.idf(term) * qtf
            for doc, tf in postings:
                norm = k1 * (1.0 - b + b * lengths[doc] / avgdl)
                out[doc] += weight * tf * (k1 + 1.0) / (tf + norm)
        return out

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        """Top-k `(doc_index, score)` with score > 0, best first (ties by index)."""
        import numpy as np  # lazy, heavy: see `scores`

        scores = self.scores(query)
        hits = np.flatnonzero(scores > 0)
        order = hits[np.lexsort((hits, -scores[hits]))][:k]
        return [(int(i), float(scores[i])) for i in order]


class LanceLexicalIndex:
    """BM25 served by LanceDB's native FTS over a pre-analyzed terms column.

    Write `terms_for(text)` into `column` for every row (the writer owns that), call
    `create(table)` once (and `table.optimize()` after many appends), then `search`.
    """

    def __init__(self, column: str = "lex_terms", analyzer: Analyzer = DEFAULT_ANALYZER):
        self.column = column
        self.analyzer = analyzer

    def terms_for(self, text: str) -> str:
        return " ".join(self.analyzer(text))

    def create(self, table: Any, *, replace: bool = True) -> None:
        from lancedb.index import FTS

        table.create_index(
            self.column,
            config=FTS(
                base_tokenizer="whitespace",
                lower_case=False,
                stem=False,
                remove_stop_words=False,
                ascii_folding=False,
                max_token_length=None,
            ),
            replace=replace,
        )

    def search(
        self, table: Any, query: str, k: int = 10, columns: Sequence[str] = ()
    ) -> list[dict[str, Any]]:
        """Rows (with `_score`) best first; [] when the query has no index terms."""
        terms = self.terms_for(query)
        if not terms:
            return []
        from lancedb.query import MatchQuery

        builder = table.search(MatchQuery(terms, self.column), query_type="fts").limit(k)
        if columns:
            builder = builder.select([*columns, "_score"])
        return builder.to_list()


# --- Porter stemmer (M.F. Porter, 1980, "An algorithm for suffix stripping") -------------


def _cons(w: str, i: int) -> bool:
    ch = w[i]
    if ch in "aeiou":
        return False
    if ch == "y":
        return i == 0 or not _cons(w, i - 1)
    return True


def _measure(stem: str) -> int:
    """m in [C](VC)^m[V]."""
    forms = "".join("c" if _cons(stem, i) else "v" for i in range(len(stem)))
    return len(re.findall("vc+", re.sub("c+", "c", re.sub("v+", "v", forms))))


def _has_vowel(stem: str) -> bool:
    return any(not _cons(stem, i) for i in range(len(stem)))


def _double_cons(w: str) -> bool:
    return len(w) >= 2 and w[-1] == w[-2] and _cons(w, len(w) - 1)


def _cvc(w: str) -> bool:
    return (
        len(w) >= 3
        and _cons(w, len(w) - 3)
        and not _cons(w, len(w) - 2)
        and _cons(w, len(w) - 1)
        and w[-1] not in "wxy"
    )


def _replace(w: str, rules: Sequence[tuple[str, str]], min_m: int) -> str:
    for suffix, repl in rules:
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            return stem + repl if _measure(stem) > min_m else w
    return w


_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"),
    ("izer", "ize"), ("bli", "ble"), ("alli", "al"), ("entli", "ent"), ("eli", "e"),
    ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"), ("ator", "ate"),
    ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"),
    ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)  # fmt: skip
_STEP3 = (
    ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"),
    ("ful", ""), ("ness", ""),
)  # fmt: skip
_STEP4 = (
    "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent",
    "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
)  # fmt: skip


@functools.lru_cache(maxsize=100_000)
def porter_stem(word: str) -> str:
    """Porter-stem a lower-case ASCII word; words of 1-2 letters are returned unchanged.
    Cached: words recur, and stemming one costs ~20 µs of Python (the writer analyzes
    every document it stores, a search every query)."""
    w = word
    if len(w) <= 2 or not w.isalpha():
        return w
    # Step 1a
    if w.endswith(("sses", "ies")):
        w = w[:-2]
    elif w.endswith("ss"):
        pass
    elif w.endswith("s"):
        w = w[:-1]
    # Step 1b
    cleanup = False
    if w.endswith("eed"):
        if _measure(w[:-3]) > 0:
            w = w[:-1]
    elif w.endswith("ed") and _has_vowel(w[:-2]):
        w, cleanup = w[:-2], True
    elif w.endswith("ing") and _has_vowel(w[:-3]):
        w, cleanup = w[:-3], True
    if cleanup:
        if w.endswith(("at", "bl", "iz")):
            w += "e"
        elif _double_cons(w) and w[-1] not in "lsz":
            w = w[:-1]
        elif _measure(w) == 1 and _cvc(w):
            w += "e"
    # Step 1c
    if w.endswith("y") and _has_vowel(w[:-1]):
        w = w[:-1] + "i"
    # Steps 2-3
    w = _replace(w, _STEP2, 0)
    w = _replace(w, _STEP3, 0)
    # Step 4
    for suffix in sorted(_STEP4, key=len, reverse=True):
        if w.endswith(suffix):
            stem = w[: len(w) - len(suffix)]
            if _measure(stem) > 1 and (suffix != "ion" or stem.endswith(("s", "t"))):
                w = stem
            break
    # Step 5a
    if w.endswith("e"):
        stem = w[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _cvc(stem)):
            w = stem
    # Step 5b
    if _measure(w) > 1 and _double_cons(w) and w.endswith("l"):
        w = w[:-1]
    return w
