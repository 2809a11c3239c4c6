"""Near-identical subjects: the cheap path decides exactly as difflib's full ratio does."""

from __future__ import annotations

import random
from difflib import SequenceMatcher

from axiom.conflicts.detector import SUBJECT_SIMILARITY, Fact, normalize, same_subject

SUBJECTS = [
    "upload max size",
    "upload maximum size",
    "the upload max size",
    "billing ledger store",
    "billing ledger stores",
    "billing-ledger store",
    "업로드 최대 크기",
    "업로드 최대크기",
    "melanie's favourite hobby",
    "melanie's favorite hobby",
    "caroline's job",
    "carolines job",
    "x",
    "xy",
]


def _fact(subject: str) -> Fact:
    return Fact("e", "s", "fact", subject, subject=subject)


def _variants(rng: random.Random, count: int) -> list[str]:
    """Random strings and one-edit variants of them: many pairs sit near the threshold."""
    out = []
    for _ in range(count):
        base = "".join(rng.choice("abcde ") for _ in range(rng.randint(1, 30))).strip() or "a"
        out.append(base)
        i = rng.randrange(len(base) + 1)
        out.append(base[:i] + rng.choice("abcdez") + base[i + 1 :])
        out.append(base[:i] + rng.choice("xyz") + base[i:])
    return out


def test_same_subject_decides_as_the_full_ratio_does() -> None:
    rng = random.Random(15)
    subjects = SUBJECTS + _variants(rng, 60)
    near = 0
    for a in subjects:
        for b in subjects:
            na, nb = normalize(a), normalize(b)
            full = na == nb or SequenceMatcher(None, na, nb).ratio() >= SUBJECT_SIMILARITY
            near += na != nb and full
            assert same_subject(_fact(a), _fact(b)) == full, (a, b)
    assert near > 50  # the sample does exercise the full ratio, not only the bounds


def test_subjects_numbering_different_things_are_different_subjects() -> None:
    """ "service12 port" and "service13 port" are one edit apart (ratio 0.93) but name two
    services: a session listing ports must not contradict itself."""
    pairs = [("service12 port", "service13 port"), ("billing db replica1", "billing db replica2")]
    for a, b in pairs:
        assert SequenceMatcher(None, a, b).ratio() >= SUBJECT_SIMILARITY
        assert not same_subject(_fact(a), _fact(b))
    assert same_subject(_fact("service12 port"), _fact("service12 ports"))
    assert same_subject(_fact("service12 port"), _fact("Service12 Port"))
