"""Graduation policy: each gate, each blocked reason, and properties of the step chain."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from axiom.graduation.candidate import CandidateEntry, EvidenceSpan
from axiom.graduation.idris import CheckResult, IdrisChecker
from axiom.graduation.policy import GraduationPolicy, PromotionDecision, final_stage
from axiom.graduation.stages import STAGE_MEANINGS, STAGES, Stage, Status, parse_stage

ENTRY_ID = "ent_00000000000000aa"
POLICY = GraduationPolicy()
PASSED = CheckResult(True, "builtin", "builtin-v1", (), "/tmp/x.idr")


def aligned(session: str = "s1", index: int = 0) -> EvidenceSpan:
    return EvidenceSpan(session, index, 0, 12, True, "exact", 1.0, "h" + str(index))


def unaligned(reason: str | None = "not_found", session: str = "s1") -> EvidenceSpan:
    return EvidenceSpan(session, 5, None, None, False, None, None, "h5", reason)


def entry(
    *evidence: EvidenceSpan, status: str = "active", entry_type: str = "fact"
) -> CandidateEntry:
    return CandidateEntry(
        entry_id=ENTRY_ID,
        entry_type=entry_type,
        title="Use DuckDB JSON columns",
        content="JSONB is not available; JSON is.",
        session_id="s1",
        evidence=evidence,
        status=status,  # type: ignore[arg-type]
    )


def steps(decisions: list[PromotionDecision]) -> list[tuple[str, str | None, bool]]:
    return [(d.from_stage, d.to_stage, d.promoted) for d in decisions]


# --- stages ------------------------------------------------------------------------------


def test_stages_are_ordered_and_each_has_a_meaning() -> None:
    assert [s.value for s in STAGES] == ["raw", "working", "candidate", "verified", "certified"]
    assert [s.rank for s in STAGES] == [0, 1, 2, 3, 4]
    assert Stage.RAW.next() is Stage.WORKING and Stage.CERTIFIED.next() is None
    assert set(STAGE_MEANINGS) == set(STAGES)
    assert {s.value for s in Status} == {"active", "contested", "deprecated", "superseded"}


def test_unknown_stage_and_status_are_refused_with_the_allowed_values() -> None:
    with pytest.raises(ValueError, match="unknown stage 'golden'; expected one of raw, working"):
        parse_stage("golden")
    with pytest.raises(ValueError, match="unknown status 'maybe'"):
        entry(aligned(), status="maybe")


# --- each gate ---------------------------------------------------------------------------


def test_full_chain_from_raw_to_certified_by_corroboration() -> None:
    decisions = POLICY.decide(entry(aligned("s1"), aligned("s2", 1)), "raw", PASSED, 2, None)
    assert steps(decisions) == [
        ("raw", "working", True),
        ("working", "candidate", True),
        ("candidate", "verified", True),
        ("verified", "certified", True),
    ]
    assert [d.reason for d in decisions] == [
        "2 of 2 evidence items aligned",
        "all 2 evidence items aligned",
        "validator passed (builtin builtin-v1)",
        "corroborated by evidence from 2 sessions",
    ]
    assert all(d.entry_id == ENTRY_ID for d in decisions)
    assert final_stage("raw", decisions) is Stage.CERTIFIED


def test_raw_without_evidence_stays_raw() -> None:
    decisions = POLICY.decide(entry(), "raw", None, 0, None)
    assert steps(decisions) == [("raw", "working", False)]
    assert decisions[0].reason == "no evidence quotes to align"


def test_raw_with_no_aligned_quote_stays_raw_and_says_why() -> None:
    decisions = POLICY.decide(
        entry(unaligned(), unaligned("message_out_of_range")), "raw", None, 1, None
    )
    assert steps(decisions) == [("raw", "working", False)]
    assert decisions[0].reason == (
        "no evidence aligned: evidence 1 of 2 not aligned: not_found; "
        "evidence 2 of 2 not aligned: message_out_of_range"
    )


def test_one_aligned_quote_makes_working_but_not_candidate() -> None:
    decisions = POLICY.decide(entry(aligned(), unaligned()), "raw", PASSED, 1, None)
    assert steps(decisions) == [("raw", "working", True), ("working", "candidate", False)]
    assert decisions[0].reason == "1 of 2 evidence items aligned"
    assert decisions[1].reason == "evidence 2 of 2 not aligned: not_found"


def test_unaligned_without_a_reason_says_unknown() -> None:
    decisions = POLICY.decide(entry(unaligned(None), aligned()), "working", None, 1, None)
    assert decisions[-1].reason == "evidence 1 of 2 not aligned: unknown"


def test_candidate_needs_a_validator_result() -> None:
    decisions = POLICY.decide(entry(aligned()), "candidate", None, 1, None)
    assert steps(decisions) == [("candidate", "verified", False)]
    assert decisions[0].reason == "not validated yet: run the checker"


def test_candidate_with_failed_validation_is_blocked_with_the_errors() -> None:
    failed = CheckResult(
        False,
        "idris2",
        "Idris 2, version 0.7.0",
        ("Error: While processing prfTitlePresent.", "Can't solve\n  constraint"),
        None,
    )
    decisions = POLICY.decide(entry(aligned()), "candidate", failed, 1, None)
    assert decisions == [
        PromotionDecision(
            ENTRY_ID,
            Stage.CANDIDATE,
            Stage.VERIFIED,
            False,
            "validator failed (idris2): Error: While processing prfTitlePresent.; "
            "Can't solve constraint",
        )
    ]


def test_validator_result_of_another_version_is_not_trusted() -> None:
    old = CheckResult(True, "builtin", "builtin-v0", (), None, validator_version="v0")
    decisions = POLICY.decide(entry(aligned()), "candidate", old, 1, None)
    assert decisions[0].reason == "validator result is for v0, current is v1: run the checker again"


def test_verified_still_requires_every_quote_aligned() -> None:
    decisions = POLICY.decide(entry(aligned(), unaligned()), "working", PASSED, 1, None)
    assert steps(decisions) == [("working", "candidate", False)]


def test_verified_needs_two_sessions_or_approval_for_certified() -> None:
    decisions = POLICY.decide(entry(aligned()), "verified", PASSED, 1, None)
    assert steps(decisions) == [("verified", "certified", False)]
    assert (
        decisions[0].reason
        == "needs evidence from 2 sessions or approval (evidence from 1 session)"
    )
    blank = POLICY.decide(entry(aligned()), "verified", PASSED, 0, "   ")
    assert (
        blank[0].reason == "needs evidence from 2 sessions or approval (evidence from 0 sessions)"
    )


def test_a_persons_approval_certifies() -> None:
    decisions = POLICY.decide(entry(aligned()), "verified", None, 1, " alice ")
    assert steps(decisions) == [("verified", "certified", True)]
    assert decisions[0].reason == "approved by alice"
    both = POLICY.decide(entry(aligned()), "verified", None, 3, "bob")
    assert both[0].reason == "corroborated by evidence from 3 sessions and approved by bob"


def test_min_sessions_is_configurable() -> None:
    strict = GraduationPolicy(min_sessions=3)
    assert not strict.decide(entry(aligned()), "verified", None, 2, None)[0].promoted
    assert strict.decide(entry(aligned()), "verified", None, 3, None)[0].promoted
    with pytest.raises(ValueError):
        GraduationPolicy(min_sessions=0)


def test_certified_is_the_top() -> None:
    assert POLICY.decide(entry(aligned()), Stage.CERTIFIED, PASSED, 5, "alice") == [
        PromotionDecision(ENTRY_ID, Stage.CERTIFIED, None, False, "certified is the top stage")
    ]


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        ("contested", "contested: resolve the conflict first"),
        ("deprecated", "deprecated: deprecated entries are not promoted"),
        ("superseded", "superseded: promote the entry that replaced it instead"),
    ],
)
def test_entries_that_are_not_active_are_not_promoted(status: str, reason: str) -> None:
    decisions = POLICY.decide(entry(aligned(), status=status), "candidate", PASSED, 3, "alice")
    assert decisions == [
        PromotionDecision(ENTRY_ID, Stage.CANDIDATE, Stage.VERIFIED, False, reason)
    ]


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown stage"):
        POLICY.decide(entry(aligned()), "gold", None, 0, None)
    with pytest.raises(ValueError, match=">= 0"):
        POLICY.decide(entry(aligned()), "raw", None, -1, None)
    with pytest.raises(ValueError, match="must be an int"):
        POLICY.decide(entry(aligned()), "raw", None, True, None)  # type: ignore[arg-type]


def test_decisions_serialize_for_events() -> None:
    decision = POLICY.decide(entry(), "raw", None, 0, None)[0]
    assert decision.to_json() == {
        "entry_id": ENTRY_ID,
        "from_stage": "raw",
        "to_stage": "working",
        "promoted": False,
        "reason": "no evidence quotes to align",
    }


# --- with the real checker ---------------------------------------------------------------


def test_checker_result_drives_the_verified_gate(tmp_path: Path) -> None:
    checker = IdrisChecker(executable=None)
    good = entry(aligned(), entry_type="decision")
    assert POLICY.decide(good, "candidate", checker.check(good, tmp_path), 1, None)[0].promoted
    bad = CandidateEntry(ENTRY_ID, "decision", "Use JSON", "", "s1", (aligned(),))
    decision = POLICY.decide(bad, "candidate", checker.check(bad, tmp_path), 1, None)[0]
    assert not decision.promoted
    assert decision.reason.startswith("validator failed (builtin): content_required: ")


def test_evidence_span_adapts_aligner_output() -> None:
    aligned_evidence = SimpleNamespace(
        message_index=4,
        quote="we chose JSON",
        quote_hash="abc",
        aligned=True,
        method="normalized",
        span_start=3,
        span_end=16,
        confidence=0.97,
        similarity=1.0,
        ambiguous=False,
        alternatives=(),
        failure_reason=None,
    )
    assert EvidenceSpan.from_alignment("s9", aligned_evidence) == EvidenceSpan(
        "s9", 4, 3, 16, True, "normalized", 0.97, "abc", None
    )


# --- properties --------------------------------------------------------------------------

spans = st.one_of(
    st.builds(aligned, st.sampled_from(["s1", "s2", "s3"]), st.integers(0, 9)),
    st.builds(unaligned, st.sampled_from([None, "not_found", "empty_quote"])),
)
candidates = st.builds(
    lambda evidence, status: entry(*evidence, status=status),
    st.lists(spans, max_size=4),
    st.sampled_from([s.value for s in Status]),
)
checks = st.one_of(
    st.none(),
    st.just(PASSED),
    st.builds(
        CheckResult,
        st.booleans(),
        st.sampled_from(["idris2", "builtin"]),
        st.just("x"),
        st.lists(st.text(max_size=20), max_size=2).map(tuple),
        st.none(),
        st.sampled_from(["v1", "v0"]),
    ),
)
arguments = st.tuples(
    candidates,
    st.sampled_from(STAGES),
    checks,
    st.integers(0, 4),
    st.one_of(st.none(), st.sampled_from(["", "alice"])),
)


@settings(max_examples=300)
@given(arguments)
def test_promotions_form_a_chain_of_single_steps(args: tuple) -> None:
    candidate, stage, check, sessions, approver = args
    decisions = POLICY.decide(candidate, stage, check, sessions, approver)
    assert decisions, "every call records at least one step"
    assert decisions[0].from_stage is stage
    for earlier, later in zip(decisions, decisions[1:], strict=False):
        assert earlier.promoted and later.from_stage is earlier.to_stage
    for decision in decisions:
        if decision.to_stage is None:
            assert decision.from_stage is Stage.CERTIFIED and not decision.promoted
        else:
            assert decision.to_stage.rank == decision.from_stage.rank + 1
    last = decisions[-1]
    assert not last.promoted or last.to_stage is Stage.CERTIFIED
    assert all(d.reason for d in decisions)


@settings(max_examples=300)
@given(arguments)
def test_only_active_entries_are_ever_promoted(args: tuple) -> None:
    candidate, stage, check, sessions, approver = args
    decisions = POLICY.decide(candidate, stage, check, sessions, approver)
    if candidate.status is not Status.ACTIVE:
        assert not any(d.promoted for d in decisions)
        assert final_stage(stage, decisions) is stage
    if candidate.status is Status.CONTESTED and stage is not Stage.CERTIFIED:
        assert decisions[0].reason == "contested: resolve the conflict first"


@settings(max_examples=300)
@given(arguments)
def test_gates_hold_for_every_stage_reached(args: tuple) -> None:
    candidate, stage, check, sessions, approver = args
    decisions = POLICY.decide(candidate, stage, check, sessions, approver)
    reached = {d.to_stage for d in decisions if d.promoted}
    all_aligned = bool(candidate.evidence) and candidate.aligned_count == len(candidate.evidence)
    if Stage.WORKING in reached:
        assert candidate.aligned_count >= 1
    if Stage.CANDIDATE in reached or Stage.VERIFIED in reached:
        assert all_aligned
    if Stage.VERIFIED in reached:
        assert check is not None and check.passed and check.validator_version == "v1"
    if Stage.CERTIFIED in reached:
        assert sessions >= 2 or approver == "alice"


@settings(max_examples=200)
@given(arguments)
def test_decide_is_deterministic_and_reaches_a_fixpoint(args: tuple) -> None:
    candidate, stage, check, sessions, approver = args
    first = POLICY.decide(candidate, stage, check, sessions, approver)
    assert GraduationPolicy().decide(candidate, stage.value, check, sessions, approver) == first
    reached = final_stage(stage, first)
    again = POLICY.decide(candidate, reached, check, sessions, approver)
    assert not any(d.promoted for d in again)
