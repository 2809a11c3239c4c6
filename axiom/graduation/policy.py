"""Which stage an entry may move to, and why not when it may not.

`GraduationPolicy.decide` is a pure function of its arguments: no clock, no database, no
randomness, so replaying the same events yields the same decisions (the pipeline stays
idempotent). Starting from the entry's current stage it tries the next stage up, then the
next, one rank at a time, and stops at the first gate that does not open. Every step is a
`PromotionDecision`, the blocked one included, so the caller records a chain of steps
(raw → working → candidate …) and the reason the chain stopped. It never skips a stage
and never demotes; demotion (half-life, conflicts) is a separate policy.

Gates (the stage is reached when its gate opens):

- working: at least one evidence item is aligned.
- candidate: the entry has evidence and every item is aligned.
- verified: every item is aligned and the validator passed (a `CheckResult` of the
  current validator version with ``passed=True``).
- certified: evidence from at least ``min_sessions`` (2) distinct sessions, or a person's
  approval (``approved_by``). The caller counts the sessions of the entries stating the
  same memory (`axiom.graduation.corroboration`: the same canonical key, or the same type,
  speaker and most content words).

Only ``active`` entries are promoted. A contested entry is blocked with
``contested: resolve the conflict first``; deprecated and superseded entries are blocked
too (a stale or replaced memory should not gain standing). The current stage is trusted as
recorded: gates below it are not re-run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from axiom.graduation.candidate import CandidateEntry
from axiom.graduation.idris import CheckResult
from axiom.graduation.invariants import VALIDATOR_VERSION
from axiom.graduation.stages import Stage, Status, parse_stage

POLICY_VERSION = "graduation-v2"  # 2: restated memories corroborate (corroboration.py)
MIN_CORROBORATING_SESSIONS = 2

STATUS_BLOCK_REASONS: dict[Status, str] = {
    Status.CONTESTED: "contested: resolve the conflict first",
    Status.DEPRECATED: "deprecated: deprecated entries are not promoted",
    Status.SUPERSEDED: "superseded: promote the entry that replaced it instead",
}


@dataclass(frozen=True)
class PromotionDecision:
    """One step tried: ``from_stage`` → ``to_stage``, taken (``promoted``) or not, and why.

    ``to_stage`` is None only when there is no stage above ``from_stage`` (certified).
    """

    entry_id: str
    from_stage: Stage
    to_stage: Stage | None
    promoted: bool
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "entry_id": self.entry_id,
            "from_stage": str(self.from_stage),
            "to_stage": None if self.to_stage is None else str(self.to_stage),
            "promoted": self.promoted,
            "reason": self.reason,
        }

    def event_payload(self, policy_version: str, reason: str | None = None) -> dict[str, Any]:
        """The `entry_promoted` / `promotion_blocked` payload of a step that has a target."""
        return {
            "entry_id": self.entry_id,
            "from": str(self.from_stage),
            "to": str(self.to_stage),
            "reason": self.reason if reason is None else reason,
            "policy_version": policy_version,
        }


class GraduationPolicy:
    """The promotion rules. ``min_sessions`` is the corroboration needed for certified."""

    version = POLICY_VERSION

    def __init__(self, min_sessions: int = MIN_CORROBORATING_SESSIONS) -> None:
        if min_sessions < 1:
            raise ValueError(f"min_sessions must be at least 1, got {min_sessions}")
        self.min_sessions = min_sessions

    def decide(
        self,
        candidate: CandidateEntry,
        current_stage: Stage | str,
        check: CheckResult | None,
        sessions_with_evidence: int,
        approved_by: str | None,
    ) -> list[PromotionDecision]:
        """The steps up from ``current_stage``: all promoted but possibly the last.

        ``check`` is the validator's result for this candidate (None if it has not run).
        ``sessions_with_evidence`` counts the distinct sessions whose evidence supports
        the entry (its own and corroborating entries'). ``approved_by`` names the person
        who approved it in the UI, if anyone did.
        """
        stage = parse_stage(current_stage)
        if isinstance(sessions_with_evidence, bool) or not isinstance(sessions_with_evidence, int):
            raise ValueError(
                f"sessions_with_evidence must be an int, got {sessions_with_evidence!r}"
            )
        if sessions_with_evidence < 0:
            raise ValueError(f"sessions_with_evidence must be >= 0, got {sessions_with_evidence}")
        entry_id = candidate.entry_id
        target = stage.next()
        if target is None:
            return [PromotionDecision(entry_id, stage, None, False, "certified is the top stage")]
        if candidate.status is not Status.ACTIVE:
            reason = STATUS_BLOCK_REASONS[candidate.status]
            return [PromotionDecision(entry_id, stage, target, False, reason)]
        decisions: list[PromotionDecision] = []
        while target is not None:
            opened, reason = self._gate(
                target, candidate, check, sessions_with_evidence, approved_by
            )
            decisions.append(PromotionDecision(entry_id, stage, target, opened, reason))
            if not opened:
                break
            stage, target = target, target.next()
        return decisions

    def _gate(
        self,
        target: Stage,
        candidate: CandidateEntry,
        check: CheckResult | None,
        sessions: int,
        approved_by: str | None,
    ) -> tuple[bool, str]:
        if target is Stage.WORKING:
            return _gate_working(candidate)
        if target is Stage.CANDIDATE:
            return _gate_candidate(candidate)
        if target is Stage.VERIFIED:
            return _gate_verified(candidate, check)
        return self._gate_certified(sessions, approved_by)

    def _gate_certified(self, sessions: int, approved_by: str | None) -> tuple[bool, str]:
        approver = (approved_by or "").strip()
        corroborated = sessions >= self.min_sessions
        if corroborated and approver:
            return (
                True,
                f"corroborated by evidence from {sessions} sessions and approved by {approver}",
            )
        if corroborated:
            return True, f"corroborated by evidence from {sessions} sessions"
        if approver:
            return True, f"approved by {approver}"
        plural = "session" if sessions == 1 else "sessions"
        return False, (
            f"needs evidence from {self.min_sessions} sessions or approval "
            f"(evidence from {sessions} {plural})"
        )


def _unaligned_reasons(candidate: CandidateEntry) -> str:
    total = len(candidate.evidence)
    return "; ".join(
        f"evidence {position} of {total} not aligned: {item.failure_reason or 'unknown'}"
        for position, item in candidate.unaligned()
    )


def _gate_working(candidate: CandidateEntry) -> tuple[bool, str]:
    total = len(candidate.evidence)
    if total == 0:
        return False, "no evidence quotes to align"
    aligned = candidate.aligned_count
    if aligned == 0:
        return False, f"no evidence aligned: {_unaligned_reasons(candidate)}"
    return True, f"{aligned} of {total} evidence items aligned"


def _gate_candidate(candidate: CandidateEntry) -> tuple[bool, str]:
    total = len(candidate.evidence)
    if total == 0:
        return False, "no evidence quotes to align"
    if candidate.aligned_count < total:
        return False, _unaligned_reasons(candidate)
    return True, f"all {total} evidence items aligned"


def _gate_verified(candidate: CandidateEntry, check: CheckResult | None) -> tuple[bool, str]:
    opened, reason = _gate_candidate(candidate)
    if not opened:
        return False, reason
    if check is None:
        return False, "not validated yet: run the checker"
    if check.validator_version != VALIDATOR_VERSION:
        return False, (
            f"validator result is for {check.validator_version}, current is "
            f"{VALIDATOR_VERSION}: run the checker again"
        )
    if not check.passed:
        detail = "; ".join(" ".join(error.split()) for error in check.errors) or "no error output"
        return False, f"validator failed ({check.checker}): {detail}"
    return True, f"validator passed ({check.checker} {check.checker_version})"


def final_stage(current_stage: Stage | str, decisions: list[PromotionDecision]) -> Stage:
    """The stage an entry ends at after applying ``decisions`` from ``current_stage``."""
    stage = parse_stage(current_stage)
    for decision in decisions:
        if decision.promoted and decision.to_stage is not None:
            stage = decision.to_stage
    return stage
