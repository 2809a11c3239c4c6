"""A build of a session never built takes the keys of its task mentions' events as
unstored (`TaskResolver.fresh_entries`): checked once when the write unit's events go in,
and the unit runs again reading every key when one is stored after all."""

from __future__ import annotations

import logging
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest

from axiom.extract.rules import RuleExtractor
from axiom.ingest.importer import import_paths
from axiom.pipeline.batch import process_many
from axiom.pipeline.process import Pipeline, analyse_ingest, pending_ingests
from axiom.store.db import Database
from axiom.store.event_types import TASK_INPUT_REJECTED, TASK_MENTIONED
from axiom.store.events import EventStore, NewEvent, reading_every_key
from axiom.store.migrate import migrate
from axiom.tasks.events import mention_key
from tests.conftest import SAMPLE_SESSION


def _store(root: Path) -> tuple[Database, str, Pipeline]:
    db = Database(root / "axiom.duckdb")
    migrate(db)
    (sid,) = import_paths(db, [SAMPLE_SESSION]).session_ids
    return db, sid, Pipeline(extractor=RuleExtractor(), workdir=root / "work")


def _events(db: Database) -> list[tuple]:
    with db.read() as conn:
        return conn.execute(
            "SELECT event_type, dedupe_key, payload_json FROM events"
            " WHERE event_type NOT IN ('build_started', 'build_finished') ORDER BY seq"
        ).fetchall()


def _tasks(db: Database) -> list[tuple]:
    with db.read() as conn:
        return conn.execute(
            "SELECT entity_id, title, current_json FROM entities ORDER BY entity_id"
        ).fetchall()


def _processed(root: Path, plant: bool, reading: bool) -> tuple[list[tuple], list[tuple]]:
    """The sample session processed in a batch write unit; with `plant`, the receipt of
    its first task mention is stored beforehand (under another event type), as if that
    mention had been processed although the session was never built."""
    db, sid, pipeline = _store(root)
    if plant:
        with db.read() as conn:
            (ingest,) = pending_ingests(conn, [sid], pipeline)
        first = analyse_ingest(None, ingest, pipeline).outcome.task_mentions[0]
        key = f"{TASK_MENTIONED}:{mention_key(first.entry_id, first.title)}"
        with db.write() as conn:
            payload = {"task_id": None, "entry_id": None, "reason": "planted by the test"}
            EventStore(conn).append(NewEvent(TASK_INPUT_REJECTED, payload, key))
    with reading_every_key() if reading else nullcontext():
        (report,) = process_many(db, [sid], pipeline)
    assert report.status == "success"
    return _events(db), _tasks(db)


def test_a_fresh_session_s_mentions_need_no_key_reads_and_end_as_if_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queried: list[str] = []  # the keys the event store reads from `event_dedup`
    unread = EventStore._unread

    def spied(keys: list[str], state: Any, fresh: Any) -> list[str]:
        left = unread(keys, state, fresh)
        queried.extend(left)
        return left

    monkeypatch.setattr(EventStore, "_unread", staticmethod(spied))
    trusted = _processed(tmp_path / "trusted", plant=False, reading=False)
    assert not [k for k in queried if k.startswith(f"{TASK_MENTIONED}:")]
    read = _processed(tmp_path / "read", plant=False, reading=True)
    assert [k for k in queried if k.startswith(f"{TASK_MENTIONED}:")]  # read when not trusted
    assert [e[:2] for e in trusted[0]] == [e[:2] for e in read[0]]
    assert trusted[1] == read[1] and trusted[1]  # the same tasks, and some


def test_a_stored_mention_key_makes_the_unit_run_again_reading_every_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="axiom.projection"):
        trusted = _processed(tmp_path / "trusted", plant=True, reading=False)
    assert "running the unit of work again reading every key" in caplog.text
    read = _processed(tmp_path / "read", plant=True, reading=True)
    assert [e[:2] for e in trusted[0]] == [e[:2] for e in read[0]]
    assert trusted[1] == read[1]
    # the planted receipt stands for the mention: it is not processed again
    mentioned = [e for e in trusted[0] if e[0] == TASK_MENTIONED]
    fresh = _processed(tmp_path / "fresh", plant=False, reading=True)
    assert len(mentioned) == len([e for e in fresh[0] if e[0] == TASK_MENTIONED]) - 1
