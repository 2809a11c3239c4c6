"""A session that grew and, imported again, takes back a statement an earlier build put in
conflict settles that conflict itself (`axiom.pipeline.build_conflicts`): the other side is
active again only if it was contested and nothing else holds it, it graduates, the result
does not depend on extraction order, and "as of" later reads what is current. Real
pipeline, real DuckDB; rebuild == incremental."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from pathlib import Path

import pytest

from axiom.conflicts.queries import list_conflicts, statuses_as_of
from axiom.entries.queries import list_entries
from axiom.ingest.transcript import Transcript
from axiom.projections import rebuild_all
from axiom.store.db import Database
from tests.conflicts.support import Said, ScriptedExtractor, run_sessions

A = [Said("The DB port is 5432", "fact", "DB port", "5432")]
B = [Said("The DB port is 7000", "fact", "DB port", "7000")]


def _now(value: str) -> Said:
    return Said(f"The DB port is now {value}", "fact", "DB port", value)


def _state(db: Database) -> tuple[dict[tuple[str | None, str], tuple[str, str]], list[tuple]]:
    """(session, title) -> (stage, status); and each conflict's (status, resolution, by)."""
    with db.read() as conn:
        entries = {(e.session_id, e.title): (e.stage, e.status) for e in list_entries(conn)}
        conflicts = sorted(
            (c.status, c.resolution, c.resolved_by) for c in list_conflicts(conn, "all")
        )
    return entries, conflicts


class ReversedExtractor(ScriptedExtractor):
    """The scripted entries in reverse order (an LLM need not follow the said order)."""

    def extract(self, transcript: Transcript):  # type: ignore[no-untyped-def]
        result = super().extract(transcript)
        return dataclasses.replace(result, entries=tuple(reversed(result.entries)))


def test_taken_back_to_a_third_value_leaves_the_other_side_in_a_new_conflict(
    db: Database, tmp_path: Path, table_rows
) -> None:
    run_sessions(db, tmp_path, {"a": A, "b": B})
    run_sessions(db, tmp_path, {"b": [*B, _now("6000")]})
    entries, conflicts = _state(db)
    assert entries[("a", "The DB port is 5432")][1] == "contested"
    assert entries[("b", "The DB port is now 6000")][1] == "contested"
    assert entries[("b", "The DB port is 7000")][1] == "superseded"
    assert conflicts == [("open", None, None), ("resolved", "taken_back_newer", "session b")]
    before = table_rows(db, "conflicts", "conflict_facts", "entries")
    rebuild_all(db)
    assert table_rows(db, "conflicts", "conflict_facts", "entries") == before


def test_a_side_a_reimport_superseded_is_not_brought_back(db: Database, tmp_path: Path) -> None:
    run_sessions(db, tmp_path, {"a": A, "b": B})
    run_sessions(db, tmp_path, {"a": [Said("We cache with Redis", "fact", "cache", "Redis")]})
    run_sessions(db, tmp_path, {"b": [*B, _now("6000")]})
    entries, conflicts = _state(db)
    assert entries[("a", "The DB port is 5432")][1] == "superseded"  # its text is gone
    assert conflicts == [("resolved", "taken_back_newer", "session b")]


def test_the_side_kept_by_the_session_graduates(db: Database, tmp_path: Path) -> None:
    """b's 7000 first; a's 5432 is contested when created, so held back at raw; b grows
    with "now 5432": a's entry is active again and graduates, as after a person's choice."""
    run_sessions(db, tmp_path, {"b": B})
    run_sessions(db, tmp_path, {"a": A})
    assert _state(db)[0][("a", "The DB port is 5432")] == ("raw", "contested")
    run_sessions(db, tmp_path, {"b": [*B, _now("5432")]})
    entries, conflicts = _state(db)
    assert entries[("a", "The DB port is 5432")] == ("verified", "active")
    assert conflicts == [("resolved", "taken_back_older", "session b")]


@pytest.mark.parametrize("extractor", [ScriptedExtractor, ReversedExtractor])
def test_the_outcome_does_not_depend_on_extraction_order(
    db: Database, tmp_path: Path, extractor: type[ScriptedExtractor], monkeypatch
) -> None:
    run_sessions(db, tmp_path, {"a": A, "b": B})
    monkeypatch.setattr("tests.conflicts.support.ScriptedExtractor", extractor)
    run_sessions(db, tmp_path, {"b": [*B, _now("5432")]})
    entries, _ = _state(db)
    assert entries[("a", "The DB port is 5432")] == ("certified", "active")
    assert entries[("b", "The DB port is now 5432")] == ("certified", "active")


def test_as_of_later_reads_both_taken_back_sides_as_superseded(
    db: Database, tmp_path: Path
) -> None:
    """5432 and 6543 conflict in one session; it grows with "now 7000": the conflict is
    `taken_back_both`, and as of any later time both read superseded, as they are."""
    said = [
        Said("The DB port is 5432", "fact", "DB port", "5432"),
        Said("The DB port is 6543", "fact", "DB port", "6543"),
    ]
    run_sessions(db, tmp_path, {"s": said})
    run_sessions(db, tmp_path, {"s": [*said, _now("7000")]})
    with db.read() as conn:
        rows = list_entries(conn)
        (conflict,) = list_conflicts(conn, "all")
        later = statuses_as_of(conn, {r.entry_id: r.status for r in rows}, datetime(2100, 1, 1))
    assert conflict.resolution == "taken_back_both"
    assert {r.title: later[r.entry_id] for r in rows} == {r.title: r.status for r in rows}
