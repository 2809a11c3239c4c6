"""Points in time typed by people: dates, datetimes with a zone, and the ones no UTC
datetime can hold."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from axiom.store.timepoints import TimepointError, parse_timepoint, source_time
from tests.cli_support import run_cli


def test_a_zone_is_converted_to_naive_utc_and_a_date_spans_its_day() -> None:
    assert parse_timepoint("2026-04-20T16:30+02:00", end_of_day=True) == datetime(
        2026, 4, 20, 14, 30
    )
    assert parse_timepoint("2026-04-20", end_of_day=False) == datetime(2026, 4, 20)
    assert parse_timepoint("2026-04-20", end_of_day=True).hour == 23


@pytest.mark.parametrize("text", ["9999-12-31T23:59:59-05:00", "0001-01-01T00:00:00+05:00"])
def test_a_time_past_the_range_of_utc_dates_is_a_timepoint_error(text: str) -> None:
    with pytest.raises(TimepointError, match="out of the range"):
        parse_timepoint(text, end_of_day=True)
    assert source_time(text) is None  # a stored timestamp like it reads as unknown


def test_the_cli_reports_it_as_a_bad_as_of(db, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    shown = run_cli(data_dir, "tasks", "--as-of", "9999-12-31T23:59:59-05:00")
    assert shown.returncode == 1 and "out of the range" in shown.stderr
    assert "Traceback" not in shown.stderr
