"""`fold` keeps every ASCII word a case-insensitive pattern can match, so a word test before
a pattern never skips a text the pattern would match."""

from __future__ import annotations

import re
import string
import sys

from axiom.ingest.words import fold, has_any

_ANY_LETTER = re.compile("|".join(string.ascii_lowercase), re.I)


def test_it_folds_every_character_that_ignorecase_matches_to_an_ascii_letter() -> None:
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if _ANY_LETTER.fullmatch(char):
            folded = fold(char)
            assert len(folded) == 1, (hex(code), folded)
            assert re.fullmatch(folded, char, re.I), (hex(code), folded)
            assert folded in string.ascii_lowercase, (hex(code), folded)


def test_it_keeps_words_written_with_odd_cases() -> None:
    # dotless i, dotted capital I, long s and the Kelvin sign all match under re.I
    for text, word in [
        ("WE DECIDED", "decided"),
        ("we decıded", "decided"),
        ("İt WORKS", "it"),
        ("paſſword", "password"),
        ("api_\u212aey", "key"),
    ]:
        assert re.search(word, text, re.I)
        assert word in fold(text)


def test_it_leaves_hangul_as_written() -> None:
    assert fold("결정했습니다 OK") == "결정했습니다 ok"


def test_has_any_says_whether_one_word_occurs() -> None:
    assert has_any("we decided to", ("chose", "decided"))
    assert not has_any("we went home", ("chose", "decided"))
    assert not has_any("anything", ())
