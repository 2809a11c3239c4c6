"""Cheap word tests that let a text skip patterns it cannot match.

Most extraction rules (`axiom.extract`) and some privacy-filter patterns are
case-insensitive and start at a word boundary, which Python's regex engine tries at every
position: a dozen of them per sentence were most of the extractor's time. Each such pattern
needs some literal word to match ("decided", "instead", "token"), so a text without any of
its words is skipped. `fold(text)` makes that test a plain substring test: under
`re.IGNORECASE` an ASCII letter also matches its other case and four other characters
(İ ı → i, ſ → s, the Kelvin sign → k), and `fold` maps each of those to the lower-case ASCII
letter, one character for one, so every lower-case ASCII word such a pattern matches in
`text` is a substring of `fold(text)`. A test only ever skips a pattern that could not have
matched: results are the same as running every pattern. It lives in the ingest package,
which extraction already imports (the other way round would be a cycle).
"""

from __future__ import annotations

# Characters that `re.IGNORECASE` matches to an ASCII letter but that `str.lower` does not
# turn into that letter (İ lowers to two characters, the others stay or are not ASCII).
_ODD_CASES = {"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}


def fold(text: str) -> str:
    """`text` lower-cased such that an ASCII word a case-insensitive pattern matches in
    `text` is a substring of the result (other characters may change freely)."""
    if not text.isascii():
        for odd, letter in _ODD_CASES.items():
            if odd in text:
                text = text.replace(odd, letter)
    return text.lower()


def has_any(text: str, words: tuple[str, ...]) -> bool:
    """Whether one of `words` occurs in `text` (for case-insensitive patterns: lower-case
    words in a `fold` result)."""
    for word in words:  # noqa: SIM110 - a plain loop: any() over a generator costs twice this
        if word in text:
            return True
    return False
