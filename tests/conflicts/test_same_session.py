"""Within one session, a later statement that says it changed supersedes the earlier one
(kept as history); a contradiction that does not say so is a conflict, as across
sessions. Real pipeline, real DuckDB; rebuild == incremental."""

from __future__ import annotations

from pathlib import Path

from axiom.conflicts.queries import get_conflict, list_conflicts
from axiom.entries.queries import EntryRow, list_entries
from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.pipeline.process import Pipeline, process_session
from axiom.projections import rebuild_all
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_STATUS_CHANGED
from axiom.store.events import EventStore
from tests.conflicts.support import Said, run_sessions

OLD = "The DB port is 5432."
NEW = "The DB port is now 6543."


def _entries(db: Database) -> dict[str, tuple[str, str]]:
    with db.read() as conn:
        return {e.title: (e.stage, e.status) for e in list_entries(conn)}


def _stored_entries(db: Database) -> list[tuple]:
    """The `entries` rows without `created_at` (when the row was written)."""
    with db.read() as conn:
        return conn.execute("SELECT * EXCLUDE (created_at) FROM entries ORDER BY ALL").fetchall()


def _said(db: Database, tmp_path: Path, *texts: str, session: str = "s1") -> None:
    """One session saying `texts` in order, through the rule extractor."""
    messages = tuple(Message(i, "user", t) for i, t in enumerate(texts))
    ingest_transcripts(db, [Transcript(session, "p", "json", messages)])
    pipeline = Pipeline(extractor=RuleExtractor(), workdir=tmp_path / "work")
    assert process_session(db, session, pipeline).status == "success"


def test_it_supersedes_the_earlier_value_when_the_later_one_says_it_changed(
    db: Database, tmp_path: Path, table_rows
) -> None:
    _said(db, tmp_path, OLD, "Lunch was good.", NEW)
    with db.read() as conn:
        entries = {e.title.rstrip("."): e for e in list_entries(conn)}
        old, new = entries[OLD.rstrip(".")], entries[NEW.rstrip(".")]
        assert (old.subject, old.value, new.value) == ("DB port", "5432", "6543")
        assert old.status == "superseded" and new.status == "active"
        assert new.stage == "verified"  # graduates as usual
        assert list_conflicts(conn, "all") == []
        (change,) = [
            e.payload
            for e in EventStore(conn).about_any("entry_id", [old.entry_id], (ENTRY_STATUS_CHANGED,))
        ]
    assert change["to"] == "superseded" and change["superseded_by"] == new.entry_id
    before = table_rows(db, "conflicts"), _entries(db)
    rebuild_all(db)
    assert (table_rows(db, "conflicts"), _entries(db)) == before


def test_a_contradiction_without_a_change_word_is_a_same_session_conflict(
    db: Database, tmp_path: Path
) -> None:
    run_sessions(
        db,
        tmp_path,
        {
            "s1": [
                Said("The DB port is 5432", "fact", "DB port", "5432"),
                Said("The DB port is 6543", "fact", "DB port", "6543"),
            ]
        },
    )
    with db.read() as conn:
        (conflict,) = list_conflicts(conn, "open")
    assert conflict.conflict_type == "changed_value"
    assert set(_entries(db).values()) == {("raw", "contested"), ("verified", "contested")}


def test_restating_the_same_value_in_one_session_changes_nothing(
    db: Database, tmp_path: Path
) -> None:
    _said(db, tmp_path, OLD, "As I said, the DB port is 5432.")
    assert {status for _, status in _entries(db).values()} == {"active"}
    with db.read() as conn:
        assert list_conflicts(conn, "all") == []


def test_a_session_listing_numbered_things_contradicts_nothing(
    db: Database, tmp_path: Path
) -> None:
    said = ("The service12 port is 8012.", "The service13 port is 8013.")
    _said(db, tmp_path, *said, "The service14 port is now 8014.")
    assert {status for _, status in _entries(db).values()} == {"active"}
    with db.read() as conn:
        assert list_conflicts(conn, "all") == []


TAKEN_BACK, TAKES_BACK = "The DB port is 7000", "The DB port is now 5432"


def _b_takes_7000_back(db: Database, tmp_path: Path) -> dict[str, EntryRow]:
    """Session b says 7000, small talk, then "now 5432"; the entries by title."""
    _said(db, tmp_path, f"{TAKEN_BACK}.", "Lunch was good.", f"{TAKES_BACK}.", session="b")
    with db.read() as conn:
        return {e.title.rstrip("."): e for e in list_entries(conn)}


def test_a_value_taken_back_in_its_session_never_conflicts_with_another_session(
    db: Database, tmp_path: Path, table_rows
) -> None:
    """Session b says 7000, then "now 5432": the 7000 is superseded before it is compared
    with other sessions, so it opens no conflict with a's 5432, which b's last word agrees
    with (and corroborates)."""
    _said(db, tmp_path, OLD, session="a")
    entries = _b_takes_7000_back(db, tmp_path)
    with db.read() as conn:
        assert list_conflicts(conn, "all") == []
    a, taken_back, last = entries[OLD.rstrip(".")], entries[TAKEN_BACK], entries[TAKES_BACK]
    assert (a.status, taken_back.status, last.status) == ("active", "superseded", "active")
    assert taken_back.stage == "raw"
    assert (a.stage, last.stage) == ("certified", "certified")  # two sessions agree
    with db.read() as conn:
        (change,) = [
            e.payload
            for e in EventStore(conn).about_any(
                "entry_id", [taken_back.entry_id], (ENTRY_STATUS_CHANGED,)
            )
        ]
    assert (change["from"], change["to"], change["superseded_by"]) == (
        "active",
        "superseded",
        last.entry_id,
    )
    before = table_rows(db, "conflicts", "conflict_facts"), _stored_entries(db)
    rebuild_all(db)
    assert (table_rows(db, "conflicts", "conflict_facts"), _stored_entries(db)) == before


def test_a_change_settles_an_earlier_same_session_contradiction(
    db: Database, tmp_path: Path
) -> None:
    """5432, then 6543 without a change word, then "now 7000": both earlier values are
    superseded by the last, so no conflict is left between two retired statements."""
    _said(db, tmp_path, OLD, "The DB port is 6543.", "The DB port is now 7000.")
    assert _entries(db) == {
        "The DB port is 5432": ("raw", "superseded"),
        "The DB port is 6543": ("raw", "superseded"),
        "The DB port is now 7000": ("verified", "active"),
    }
    with db.read() as conn:
        assert list_conflicts(conn, "all") == []


def test_a_grown_session_taking_its_value_back_settles_the_conflict_it_opened(
    db: Database, tmp_path: Path, table_rows
) -> None:
    """Session b said 7000 against a's 5432 (a conflict); b grew and, imported again, now
    says "now 5432": the conflict is settled by b itself (no person asked), b's 7000 is
    superseded, a's 5432 is active again, and a replay gives the same tables."""
    _said(db, tmp_path, OLD, session="a")
    _said(db, tmp_path, f"{TAKEN_BACK}.", session="b")
    with db.read() as conn:
        (opened,) = list_conflicts(conn, "open")
    entries = _b_takes_7000_back(db, tmp_path)
    with db.read() as conn:
        assert list_conflicts(conn, "open") == []
        settled = get_conflict(conn, opened.conflict_id)
    assert settled is not None and settled.status == "resolved"
    assert (settled.resolution, settled.resolved_by) == ("taken_back_newer", "session b")
    a, taken_back, last = entries[OLD.rstrip(".")], entries[TAKEN_BACK], entries[TAKES_BACK]
    assert (a.status, taken_back.status, last.status) == ("active", "superseded", "active")
    assert (a.stage, last.stage) == ("certified", "certified")  # two sessions agree now
    before = table_rows(db, "conflicts", "conflict_facts"), _stored_entries(db)
    rebuild_all(db)
    assert (table_rows(db, "conflicts", "conflict_facts"), _stored_entries(db)) == before


def test_a_grown_session_settling_its_own_conflict_leaves_both_sides_superseded(
    db: Database, tmp_path: Path
) -> None:
    """5432 and 6543 without a change word conflict; the session grows with "now 7000":
    the conflict is settled and both earlier statements end superseded, not active."""
    _said(db, tmp_path, OLD, "The DB port is 6543.")
    _said(db, tmp_path, OLD, "The DB port is 6543.", "The DB port is now 7000.")
    assert _entries(db) == {
        "The DB port is 5432": ("verified", "superseded"),  # verified before 6543 was said
        "The DB port is 6543": ("raw", "superseded"),
        "The DB port is now 7000": ("verified", "active"),
    }
    with db.read() as conn:
        assert list_conflicts(conn, "open") == []
