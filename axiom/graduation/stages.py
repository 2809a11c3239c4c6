"""Stages an entry graduates through, and the statuses that sit beside them.

A stage says how well an entry is proven; a status says whether it is still believed.
They are independent: a verified entry can become contested, a raw one can be superseded.

Stages, lowest first (each includes everything the ones below require):

- ``raw``: extracted, but none of its evidence is aligned yet (or it has no evidence).
  It may still be a hallucination.
- ``working``: at least one evidence quote was found in the transcript by the aligner.
- ``candidate``: every evidence quote is aligned; the entry is ready for validation.
- ``verified``: a candidate that passed the validator (``idris2 --check`` of its emitted
  module, or the built-in checker of the same invariants).
- ``certified``: verified and corroborated, by evidence from at least two distinct
  sessions or by a person's approval.

Statuses: ``active`` (believed), ``contested`` (in conflict with another entry; cannot be
promoted until the conflict is resolved), ``deprecated`` (stale, demoted by policy),
``superseded`` (replaced by a newer entry).
"""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    """How well an entry is proven. Compares by rank, not alphabetically, via `rank`."""

    RAW = "raw"
    WORKING = "working"
    CANDIDATE = "candidate"
    VERIFIED = "verified"
    CERTIFIED = "certified"

    @property
    def rank(self) -> int:
        """0 for raw up to 4 for certified."""
        return STAGES.index(self)

    def next(self) -> Stage | None:
        """The stage directly above this one, or None for certified."""
        position = self.rank + 1
        return STAGES[position] if position < len(STAGES) else None


class Status(StrEnum):
    """Whether an entry is still believed."""

    ACTIVE = "active"
    CONTESTED = "contested"
    DEPRECATED = "deprecated"
    SUPERSEDED = "superseded"


STAGES: tuple[Stage, ...] = tuple(Stage)
STATUSES: tuple[Status, ...] = tuple(Status)

STAGE_MEANINGS: dict[Stage, str] = {
    Stage.RAW: "extracted; no evidence aligned yet",
    Stage.WORKING: "at least one evidence quote aligned",
    Stage.CANDIDATE: "every evidence quote aligned; ready for validation",
    Stage.VERIFIED: "candidate that passed the validator",
    Stage.CERTIFIED: "verified and corroborated by two sessions or approved by a person",
}


def parse_stage(value: str) -> Stage:
    """`Stage` from its name; ValueError naming the allowed values otherwise."""
    try:
        return Stage(value)
    except ValueError:
        allowed = ", ".join(STAGES)
        raise ValueError(f"unknown stage {value!r}; expected one of {allowed}") from None


def parse_status(value: str) -> Status:
    """`Status` from its name; ValueError naming the allowed values otherwise."""
    try:
        return Status(value)
    except ValueError:
        allowed = ", ".join(STATUSES)
        raise ValueError(f"unknown status {value!r}; expected one of {allowed}") from None
