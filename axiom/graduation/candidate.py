"""What graduation looks at: an entry and its aligned evidence, nothing from the database.

The pipeline builds a `CandidateEntry` from an extracted entry and the aligner's output.
This module does not import the extractor or the aligner; `EvidenceSpan.from_alignment`
reads any object with the aligner's attribute names, so the two sides can change
independently as long as those names hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from axiom.graduation.stages import Status, parse_status


@dataclass(frozen=True)
class EvidenceSpan:
    """One evidence item after alignment.

    Offsets are Python ``str`` indices into the original text of message
    ``message_index`` of session ``session_id``; ``span_end`` is exclusive. A quote the
    aligner could not place has ``aligned=False``, no span, no method, and a
    ``failure_reason`` such as ``not_found`` or ``message_out_of_range``.
    """

    session_id: str
    message_index: int
    span_start: int | None
    span_end: int | None
    aligned: bool
    method: str | None
    confidence: float | None
    quote_hash: str
    failure_reason: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.session_id, str):
            raise ValueError(f"session_id must be a string, got {self.session_id!r}")
        if not _is_int(self.message_index):
            raise ValueError(f"message_index must be an int, got {self.message_index!r}")
        for name in ("span_start", "span_end"):
            value = getattr(self, name)
            if value is not None and not _is_int(value):
                raise ValueError(f"{name} must be an int or None, got {value!r}")
        if not isinstance(self.aligned, bool):
            raise ValueError(f"aligned must be a bool, got {self.aligned!r}")
        if self.method is not None and not isinstance(self.method, str):
            raise ValueError(f"method must be a string or None, got {self.method!r}")
        if self.confidence is not None and (
            isinstance(self.confidence, bool) or not isinstance(self.confidence, int | float)
        ):
            raise ValueError(f"confidence must be a number or None, got {self.confidence!r}")
        if not isinstance(self.quote_hash, str):
            raise ValueError(f"quote_hash must be a string, got {self.quote_hash!r}")
        if self.failure_reason is not None and not isinstance(self.failure_reason, str):
            raise ValueError(
                f"failure_reason must be a string or None, got {self.failure_reason!r}"
            )

    @classmethod
    def from_alignment(cls, session_id: str, alignment: Any) -> EvidenceSpan:
        """Adapt an aligner result (anything with the aligner's attribute names)."""
        return cls(
            session_id=session_id,
            message_index=alignment.message_index,
            span_start=alignment.span_start,
            span_end=alignment.span_end,
            aligned=bool(alignment.aligned),
            method=alignment.method,
            confidence=alignment.confidence,
            quote_hash=alignment.quote_hash,
            failure_reason=getattr(alignment, "failure_reason", None),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "message_index": self.message_index,
            "span_start": self.span_start,
            "span_end": self.span_end,
            "aligned": self.aligned,
            "method": self.method,
            "confidence": self.confidence,
            "quote_hash": self.quote_hash,
            "failure_reason": self.failure_reason,
        }


@dataclass(frozen=True)
class CandidateEntry:
    """An entry as graduation sees it.

    ``entry_type`` is kept as given (not checked here) so that an unknown type reaches the
    validator and is reported there, instead of failing construction. ``task_title`` is
    the title of the task a ``task_note`` is about (None for other types). ``status`` may be
    given as a string and is stored as a `Status`.
    """

    entry_id: str
    entry_type: str
    title: str
    content: str
    session_id: str
    evidence: tuple[EvidenceSpan, ...]
    status: Status = Status.ACTIVE
    task_title: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.entry_id, str) or not self.entry_id:
            raise ValueError("entry_id must be a non-empty string")
        for name in ("entry_type", "title", "content", "session_id"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{name} must be a string, got {getattr(self, name)!r}")
        if isinstance(self.evidence, list):
            object.__setattr__(self, "evidence", tuple(self.evidence))
        if not isinstance(self.evidence, tuple) or not all(
            isinstance(item, EvidenceSpan) for item in self.evidence
        ):
            raise ValueError("evidence must be a tuple of EvidenceSpan")
        if self.task_title is not None and not isinstance(self.task_title, str):
            raise ValueError(f"task_title must be a string or None, got {self.task_title!r}")
        object.__setattr__(self, "status", parse_status(self.status))

    @property
    def aligned_count(self) -> int:
        return sum(1 for item in self.evidence if item.aligned)

    @property
    def evidence_sessions(self) -> frozenset[str]:
        """Distinct sessions this entry's own evidence comes from."""
        return frozenset(item.session_id for item in self.evidence)

    def unaligned(self) -> tuple[tuple[int, EvidenceSpan], ...]:
        """(1-based position, item) for every evidence item the aligner could not place."""
        return tuple(
            (position, item)
            for position, item in enumerate(self.evidence, start=1)
            if not item.aligned
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "entry_type": self.entry_type,
            "title": self.title,
            "content": self.content,
            "session_id": self.session_id,
            "evidence": [item.to_json() for item in self.evidence],
            "status": str(self.status),
            "task_title": self.task_title,
        }


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
