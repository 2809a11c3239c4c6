"""Busy cores from /proc/stat: the share of time not idle between two readings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from axiom.outbox.cpu import busy_cores, busy_share, cpu_times


def test_cpu_times_read_the_cpu_line(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 5 50 800 40 1 2 0 0 0\ncpu0 50 2 25 400 20 0 1 0 0 0\n")
    assert cpu_times(stat) == (998, 840)
    assert cpu_times(tmp_path / "missing") is None
    stat.write_text("intr 1 2 3\n")
    assert cpu_times(stat) is None


@pytest.mark.parametrize(
    ("before", "after", "share"),
    [((1000, 800), (1200, 900), 0.5), ((1000, 800), (1100, 900), 0.0), ((5, 5), (5, 5), 0.0)],
)
def test_busy_share_is_the_time_not_idle(
    before: tuple[int, int], after: tuple[int, int], share: float
) -> None:
    assert busy_share(before, after) == pytest.approx(share)


def test_busy_cores_on_this_machine_is_within_its_cores() -> None:
    found = busy_cores(0.05)
    if Path("/proc/stat").exists():
        assert found is not None and 0.0 <= found <= (os.cpu_count() or 1)
    else:
        assert found is None
