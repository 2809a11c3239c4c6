"""Half-life demotion: a memory not restated loses one stage per half-life of its type,
never below the policy's floor.

Pure (no clock, no database): `demotion_target` takes the time the demotion is computed
for, so the same policy version at the same time always gives the same answer and replay
reproduces it. Policies are versioned: a new version is a new entry in `POLICIES`, never an
edit of an old one (the events name the version they were computed with).

The loss is counted from the entry's peak stage (the highest it was promoted to), not its
current one, so running the policy again does not demote an already demoted entry again
until another half-life has passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from axiom.graduation.stages import STAGES, Stage


class UnknownPolicy(ValueError):
    """A policy version that is not in `POLICIES`."""


@dataclass(frozen=True)
class DemotionPolicy:
    """Half-life in days per entry type (`default_half_life_days` for the others) and the
    stage below which nothing is demoted."""

    version: str
    floor: Stage
    default_half_life_days: float
    half_life_days: dict[str, float] = field(default_factory=dict)

    def half_life(self, entry_type: str) -> float:
        return self.half_life_days.get(entry_type, self.default_half_life_days)


POLICIES: dict[str, DemotionPolicy] = {
    "v1": DemotionPolicy(
        version="v1",
        floor=Stage.CANDIDATE,
        default_half_life_days=180.0,
        half_life_days={
            "decision": 365.0,
            "fact": 180.0,
            "insight": 120.0,
            "reference": 365.0,
            "error": 90.0,
            "task_note": 60.0,
        },
    ),
    # Faster: what a team that changes its mind often would want.
    "v2-fast": DemotionPolicy(
        version="v2-fast",
        floor=Stage.WORKING,
        default_half_life_days=30.0,
        half_life_days={"decision": 90.0, "task_note": 14.0},
    ),
}
CURRENT_POLICY = "v1"


def get_policy(version: str) -> DemotionPolicy:
    try:
        return POLICIES[version]
    except KeyError:
        known = ", ".join(sorted(POLICIES))
        raise UnknownPolicy(f"unknown demotion policy {version!r}; known: {known}") from None


def demotion_target(
    policy: DemotionPolicy,
    entry_type: str,
    current: Stage,
    peak: Stage,
    said_at: datetime,
    at: datetime,
) -> Stage | None:
    """The stage the entry should drop to at `at`, or None when it keeps its stage: one
    stage below `peak` per whole half-life since `said_at`, not below the floor, and only
    ever downwards from `current`."""
    if current.rank <= policy.floor.rank or at <= said_at:
        return None
    elapsed_days = (at - said_at).total_seconds() / 86400
    lost = int(elapsed_days // policy.half_life(entry_type))
    target = STAGES[max(policy.floor.rank, max(peak.rank, current.rank) - lost)]
    return target if target.rank < current.rank else None
