"""Graduation: the pure rules that move an entry from raw to certified.

No database and no Django here. `GraduationPolicy.decide` turns an entry, its stage, the
validator's `CheckResult` and its corroboration into a chain of `PromotionDecision`s;
`IdrisChecker` produces the `CheckResult` from the invariants in
`axiom.graduation.invariants`.
"""

from axiom.graduation.candidate import CandidateEntry, EvidenceSpan
from axiom.graduation.idris import CheckResult, IdrisChecker, IdrisModule, module_name
from axiom.graduation.invariants import INVARIANTS, VALIDATOR_VERSION, check_invariants
from axiom.graduation.policy import GraduationPolicy, PromotionDecision, final_stage
from axiom.graduation.stages import Stage, Status

__all__ = [
    "INVARIANTS",
    "VALIDATOR_VERSION",
    "CandidateEntry",
    "CheckResult",
    "EvidenceSpan",
    "GraduationPolicy",
    "IdrisChecker",
    "IdrisModule",
    "PromotionDecision",
    "Stage",
    "Status",
    "check_invariants",
    "final_stage",
    "module_name",
]
