"""The half-life demotion policy is a pure function of its arguments."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from axiom.graduation.demotion import POLICIES, UnknownPolicy, demotion_target, get_policy
from axiom.graduation.stages import STAGES, Stage

SAID = datetime(2025, 1, 10, 9, 0)
V1 = get_policy("v1")


def test_a_decision_loses_one_stage_per_half_life_down_to_the_floor() -> None:
    year = timedelta(days=365)
    at = SAID + year
    assert (
        demotion_target(
            V1, "decision", Stage.CERTIFIED, Stage.CERTIFIED, SAID, at - timedelta(days=1)
        )
        is None
    )
    assert (
        demotion_target(V1, "decision", Stage.CERTIFIED, Stage.CERTIFIED, SAID, at)
        == Stage.VERIFIED
    )
    assert (
        demotion_target(V1, "decision", Stage.CERTIFIED, Stage.CERTIFIED, SAID, SAID + 9 * year)
        == Stage.CANDIDATE
    )


def test_an_already_demoted_entry_is_not_demoted_again_within_the_same_half_life() -> None:
    at = SAID + timedelta(days=400)
    assert demotion_target(V1, "decision", Stage.VERIFIED, Stage.CERTIFIED, SAID, at) is None


def test_an_unknown_version_is_refused_with_the_known_ones() -> None:
    with pytest.raises(UnknownPolicy, match="v1"):
        get_policy("v0")


@given(
    version=st.sampled_from(sorted(POLICIES)),
    entry_type=st.sampled_from(["fact", "decision", "insight", "task_note", "reference", "error"]),
    current=st.sampled_from(STAGES),
    lift=st.integers(0, 4),
    days=st.integers(0, 5000),
)
def test_demotion_only_goes_down_never_below_the_floor_and_is_reproducible(
    version: str, entry_type: str, current: Stage, lift: int, days: int
) -> None:
    policy = POLICIES[version]
    peak = STAGES[min(len(STAGES) - 1, current.rank + lift)]
    at = SAID + timedelta(days=days)
    target = demotion_target(policy, entry_type, current, peak, SAID, at)
    assert target == demotion_target(policy, entry_type, current, peak, SAID, at)
    if target is not None:
        assert policy.floor.rank <= target.rank < current.rank
        # Applying it and asking again at the same time changes nothing more.
        assert demotion_target(policy, entry_type, target, peak, SAID, at) is None
