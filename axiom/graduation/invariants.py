"""The invariants an entry must satisfy to become verified: the one list both checkers use.

Each `Invariant` carries its rule twice, side by side: a Python predicate (run by the
built-in checker) and an Idris 2 Bool expression (emitted as a ``So`` proof obligation by
`axiom.graduation.idris`). Both read the same facts, computed once by `entry_facts` and
`span_facts`, so the two checkers judge identical data with rules kept in one table.

Validator ``v1`` (`VALIDATOR_VERSION`):

Entry invariants
  1. ``type_allowed``: the type is one of fact, decision, insight, task_note, reference,
     error.
  2. ``title_present``: the title is not blank (length counted after stripping whitespace).
  3. ``title_max_length``: the stripped title is at most 200 characters.
  4. ``evidence_present``: there is at least one evidence item.
  5. ``content_required``: decision and error entries have non-blank content (the choice
     made and the error seen are the point of such entries; a title alone is not enough).
  6. ``task_title_required``: a task_note names its task (non-blank task title).

Evidence invariants (each evidence item)
  7. ``evidence_aligned``: the aligner placed the quote, by method exact, normalized or
     fuzzy.
  8. ``span_start_nonnegative``: 0 <= span_start (a missing span counts as -1 and fails).
  9. ``span_ordered``: span_start <= span_end.
 10. ``confidence_min``: confidence >= 0.85.
 11. ``confidence_max``: confidence <= 1.0.
 12. ``quote_hash_present``: the quote hash is not empty.

Confidence is compared in whole basis points (1/10000), floored from the float's shortest
decimal form: 0.85 is 8500 and passes, 0.8499999 is 8499 and fails, a missing or
non-finite confidence is -1 ("missing" in messages) and fails. Idris gets the same
integers, so the two checkers cannot disagree about rounding. Lengths are Python ``str``
lengths (code points).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any, Literal

from axiom.graduation.candidate import CandidateEntry, EvidenceSpan

VALIDATOR_VERSION = "v1"

ALLOWED_ENTRY_TYPES: tuple[str, ...] = (
    "fact",
    "decision",
    "insight",
    "task_note",
    "reference",
    "error",
)
CONTENT_REQUIRED_TYPES: tuple[str, ...] = ("decision", "error")
TASK_TITLE_REQUIRED_TYPES: tuple[str, ...] = ("task_note",)
ALIGN_METHODS: tuple[str, ...] = ("exact", "normalized", "fuzzy")
TITLE_MAX_CHARS = 200
BASIS_POINTS = 10_000
MIN_CONFIDENCE_BP = 8_500
MAX_CONFIDENCE_BP = BASIS_POINTS
MISSING = -1  # stands for a missing span offset or confidence in the facts


@dataclass(frozen=True)
class EntryFacts:
    """What the entry invariants read. Emitted into the Idris module as constants."""

    entry_id: str
    entry_type: str
    title_length: int
    content_length: int
    task_title_length: int
    evidence_count: int


@dataclass(frozen=True)
class SpanFacts:
    """What the evidence invariants read. All but ``failure_reason`` are emitted to Idris;
    ``failure_reason`` only makes error messages readable."""

    session_id: str
    message_index: int
    span_start: int
    span_end: int
    aligned: bool
    method: str
    confidence_bp: int
    quote_hash: str
    failure_reason: str | None


def confidence_to_bp(confidence: float | None) -> int:
    """Floor of confidence × 10000, via the float's shortest decimal form; -1 if missing."""
    if confidence is None or not math.isfinite(confidence):
        return MISSING
    scaled = Decimal(repr(float(confidence))) * BASIS_POINTS
    return int(scaled.to_integral_value(rounding=ROUND_FLOOR))


def entry_facts(candidate: CandidateEntry) -> EntryFacts:
    return EntryFacts(
        entry_id=candidate.entry_id,
        entry_type=candidate.entry_type,
        title_length=len(candidate.title.strip()),
        content_length=len(candidate.content.strip()),
        task_title_length=len((candidate.task_title or "").strip()),
        evidence_count=len(candidate.evidence),
    )


def span_facts(span: EvidenceSpan) -> SpanFacts:
    return SpanFacts(
        session_id=span.session_id,
        message_index=span.message_index,
        span_start=MISSING if span.span_start is None else span.span_start,
        span_end=MISSING if span.span_end is None else span.span_end,
        aligned=span.aligned,
        method=span.method or "",
        confidence_bp=confidence_to_bp(span.confidence),
        quote_hash=span.quote_hash,
        failure_reason=span.failure_reason,
    )


@dataclass(frozen=True)
class Invariant:
    """One rule, in Python and in Idris.

    ``idris`` is a Bool expression. Entry invariants may use the module constants
    ``entryType``, ``titleLength``, ``contentLength``, ``taskTitleLength``, ``evidence``,
    the lists ``allowedTypes``, ``contentRequiredTypes``, ``taskTitleRequiredTypes``,
    ``alignMethods`` and the helpers ``isOneOf``, ``hasItems``. Evidence invariants read
    the span ``s`` through ``aligned``, ``method``, ``spanStart``, ``spanEnd``,
    ``confidenceBp``, ``quoteHash``.
    """

    code: str
    scope: Literal["entry", "evidence"]
    rule: str
    idris: str
    holds: Callable[[Any], bool]
    observed: Callable[[Any], str]

    @functools.cached_property
    def idris_name(self) -> str:
        """camelCase of the code, used for the Idris record field (every module names
        every invariant several times: worked out once)."""
        head, *rest = self.code.split("_")
        return head + "".join(part.capitalize() for part in rest)


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        code="type_allowed",
        scope="entry",
        rule="type is one of " + ", ".join(ALLOWED_ENTRY_TYPES),
        idris="isOneOf entryType allowedTypes",
        holds=lambda f: f.entry_type in ALLOWED_ENTRY_TYPES,
        observed=lambda f: f"type={f.entry_type!r}",
    ),
    Invariant(
        code="title_present",
        scope="entry",
        rule="title is not blank",
        idris="titleLength > 0",
        holds=lambda f: f.title_length > 0,
        observed=lambda f: f"title length {f.title_length}",
    ),
    Invariant(
        code="title_max_length",
        scope="entry",
        rule=f"title is at most {TITLE_MAX_CHARS} characters",
        idris=f"titleLength <= {TITLE_MAX_CHARS}",
        holds=lambda f: f.title_length <= TITLE_MAX_CHARS,
        observed=lambda f: f"title length {f.title_length}",
    ),
    Invariant(
        code="evidence_present",
        scope="entry",
        rule="at least one evidence item",
        idris="hasItems evidence",
        holds=lambda f: f.evidence_count > 0,
        observed=lambda f: f"{f.evidence_count} evidence items",
    ),
    Invariant(
        code="content_required",
        scope="entry",
        rule=" and ".join(CONTENT_REQUIRED_TYPES) + " entries have non-blank content",
        idris="not (isOneOf entryType contentRequiredTypes) || contentLength > 0",
        holds=lambda f: f.entry_type not in CONTENT_REQUIRED_TYPES or f.content_length > 0,
        observed=lambda f: f"type={f.entry_type!r}, content length {f.content_length}",
    ),
    Invariant(
        code="task_title_required",
        scope="entry",
        rule=" and ".join(TASK_TITLE_REQUIRED_TYPES) + " entries name their task",
        idris="not (isOneOf entryType taskTitleRequiredTypes) || taskTitleLength > 0",
        holds=lambda f: f.entry_type not in TASK_TITLE_REQUIRED_TYPES or f.task_title_length > 0,
        observed=lambda f: f"type={f.entry_type!r}, task title length {f.task_title_length}",
    ),
    Invariant(
        code="evidence_aligned",
        scope="evidence",
        rule="quote aligned (method " + " | ".join(ALIGN_METHODS) + ")",
        idris="aligned s && isOneOf (method s) alignMethods",
        holds=lambda s: s.aligned and s.method in ALIGN_METHODS,
        observed=lambda s: (
            f"aligned={s.aligned}, method={s.method or None!r}"
            + (f", failure={s.failure_reason}" if s.failure_reason else "")
        ),
    ),
    Invariant(
        code="span_start_nonnegative",
        scope="evidence",
        rule="0 <= span_start",
        idris="spanStart s >= 0",
        holds=lambda s: s.span_start >= 0,
        observed=lambda s: f"span_start={s.span_start}",
    ),
    Invariant(
        code="span_ordered",
        scope="evidence",
        rule="span_start <= span_end",
        idris="spanStart s <= spanEnd s",
        holds=lambda s: s.span_start <= s.span_end,
        observed=lambda s: f"span_start={s.span_start}, span_end={s.span_end}",
    ),
    Invariant(
        code="confidence_min",
        scope="evidence",
        rule=f"confidence >= {MIN_CONFIDENCE_BP / BASIS_POINTS}",
        idris=f"confidenceBp s >= {MIN_CONFIDENCE_BP}",
        holds=lambda s: s.confidence_bp >= MIN_CONFIDENCE_BP,
        observed=lambda s: f"confidence={_confidence(s.confidence_bp)}",
    ),
    Invariant(
        code="confidence_max",
        scope="evidence",
        rule=f"confidence <= {MAX_CONFIDENCE_BP / BASIS_POINTS}",
        idris=f"confidenceBp s <= {MAX_CONFIDENCE_BP}",
        holds=lambda s: s.confidence_bp <= MAX_CONFIDENCE_BP,
        observed=lambda s: f"confidence={_confidence(s.confidence_bp)}",
    ),
    Invariant(
        code="quote_hash_present",
        scope="evidence",
        rule="quote hash is not empty",
        idris='quoteHash s /= ""',
        holds=lambda s: s.quote_hash != "",
        observed=lambda s: f"quote_hash={s.quote_hash!r}",
    ),
)

ENTRY_INVARIANTS: tuple[Invariant, ...] = tuple(i for i in INVARIANTS if i.scope == "entry")
EVIDENCE_INVARIANTS: tuple[Invariant, ...] = tuple(i for i in INVARIANTS if i.scope == "evidence")


def check_invariants(candidate: CandidateEntry) -> tuple[str, ...]:
    """The built-in checker: one message per broken invariant, in table order; () if valid.

    Messages look like ``title_present: title is not blank (got title length 0)`` and
    ``evidence 2 of 3: span_ordered: span_start <= span_end (got span_start=9, span_end=4)``.
    """
    errors: list[str] = []
    facts = entry_facts(candidate)
    for invariant in ENTRY_INVARIANTS:
        if not invariant.holds(facts):
            errors.append(f"{invariant.code}: {invariant.rule} (got {invariant.observed(facts)})")
    total = len(candidate.evidence)
    for position, span in enumerate(candidate.evidence, start=1):
        item = span_facts(span)
        for invariant in EVIDENCE_INVARIANTS:
            if not invariant.holds(item):
                errors.append(
                    f"evidence {position} of {total}: {invariant.code}: {invariant.rule} "
                    f"(got {invariant.observed(item)})"
                )
    return tuple(errors)


def _confidence(bp: int) -> str:
    return "missing" if bp == MISSING else f"{bp / BASIS_POINTS:.4f}"
