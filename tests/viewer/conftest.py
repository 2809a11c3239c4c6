"""Viewer fixtures: the site reads a fresh DuckDB file in the test's data dir."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest

from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Message, Transcript
from axiom.store.db import Database


def synthetic_transcript(n: int, start: datetime = datetime(2025, 1, 1)) -> Transcript:
    """Session number `n`, started `n` hours after `start` (a bigger `n` is newer)."""
    ts = (start + timedelta(hours=n)).isoformat() + "Z"
    return Transcript(
        session_id=f"synthetic-{n:03d}",
        project="synthetic",
        source="json",
        messages=(Message(index=0, role="user", text=f"hello {n}", timestamp=ts),),
        started_at=ts,
        title=f"Synthetic session {n:03d}",
    )


@pytest.fixture
def synthetic() -> Callable[[int], Transcript]:
    """`synthetic(n)` builds synthetic session number `n` (for tests that own their store)."""
    return synthetic_transcript


@pytest.fixture
def make_sessions(site: Database) -> Callable[[int], list[Transcript]]:
    def make(count: int) -> list[Transcript]:
        transcripts = [synthetic_transcript(n) for n in range(count)]
        ingest_transcripts(site, transcripts)
        return transcripts

    return make
