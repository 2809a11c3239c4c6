"""Forgetting `s1` must not touch `s10`: ids are matched whole, in events and in logs."""

from __future__ import annotations

from pathlib import Path

from axiom.forgetting.scrub import scrub_logs
from axiom.store.db import Database
from axiom.store.event_types import ENTRY_CREATED
from axiom.store.events import EventStore, NewEvent


def test_it_finds_only_the_events_that_name_the_whole_id(db: Database) -> None:
    with db.write() as conn:
        store = EventStore(conn)
        mine = store.append(
            NewEvent(ENTRY_CREATED, {"entry_id": "e1", "session_id": "s1"}, session_id="s1")
        )
        nested = store.append(NewEvent(ENTRY_CREATED, {"entry_id": "e2", "cites": ["s1"]}))
        other = store.append(
            NewEvent(ENTRY_CREATED, {"entry_id": "e10", "session_id": "s10"}, session_id="s10")
        )
        found = store.ids_about(["s1"], ["s1", "e1"])
    assert mine.event.event_id in found and nested.event.event_id in found
    assert other.event.event_id not in found


def test_it_scrubs_only_log_lines_naming_the_whole_id(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "web.log").write_text(
        "processed session s1\nprocessed session s10\nGET /sessions/s1/ 200\n"
        "quoted: the secret plan\n",
        encoding="utf-8",
    )
    assert scrub_logs(logs, ["s1"], ["the secret plan"]) == 3
    assert (logs / "web.log").read_text(encoding="utf-8") == "processed session s10\n"
