"""Points in time typed by people: dates, datetimes with a zone, and the ones no UTC
datetime can hold."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from axiom.store.timepoints import parse_timepoint, source_time
from tests.cli_support import run_cli


def test_a_zone_is_converted_to_naive_utc_and_a_date_spans_its_day() -> None:
    assert parse_timepoint("2026-04-20T16:30+02:00", end_of_day=True) == datetime(
        2026, 4, 20, 14, 30
    )
    assert parse_timepoint("2026-04-20", end_of_day=False) == datetime(2026, 4, 20)
    assert parse_timepoint("2026-04-20T09:30:00z", end_of_day=True) == datetime(2026, 4, 20, 9, 30)
    assert parse_timepoint("2026-04-20", end_of_day=True).hour == 23


def test_a_time_past_the_range_of_utc_dates_is_the_first_or_last_time() -> None:
    """As of the end (or the start) of time, not an error: a client that sends any valid
    date-time (the API documents the format) gets an answer."""
    assert parse_timepoint("9999-12-31T23:59:59-05:00", end_of_day=True) == datetime.max
    assert parse_timepoint("0001-01-01T00:00:00+05:00", end_of_day=True) == datetime.min
    assert source_time("9999-12-31T23:59:59-05:00") is None  # a stored one reads as unknown


def test_the_cli_answers_as_of_the_end_of_time(db, data_dir: Path) -> None:  # type: ignore[no-untyped-def]
    shown = run_cli(data_dir, "tasks", "--as-of", "9999-12-31T23:59:59-05:00")
    assert shown.returncode == 0, shown.stderr
    assert "Traceback" not in shown.stderr
