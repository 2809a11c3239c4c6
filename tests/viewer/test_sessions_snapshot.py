"""The web process reads a snapshot while a writer holds the lock, but a session the
snapshot predates is looked up in the live file: a stale list, never a 404."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.urls import reverse

from axiom.ingest.importer import ingest_transcripts
from axiom.ingest.transcript import Transcript
from axiom.store import snapshots
from axiom.store.db import Database

ROOT = Path(__file__).resolve().parents[2]
HOLD_SECONDS = 1.0

# Another process stores session 1 (so this one's read-your-writes does not cover it).
WRITER = """
import sys
from axiom.ingest.importer import ingest_transcripts
from axiom.store.db import Database
from tests.viewer.conftest import synthetic_transcript

ingest_transcripts(Database(sys.argv[1], use_snapshots=False), [synthetic_transcript(1)])
"""


def hold_the_lock(db: Database, held: threading.Event) -> None:
    with db.write():
        held.set()
        time.sleep(HOLD_SECONDS)


def test_a_session_newer_than_the_snapshot_is_found_not_404(
    client, site: Database, synthetic: Callable[[int], Transcript], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshots, "_serving", True)  # as the web process
    ingest_transcripts(site, [synthetic(0)])
    assert client.get(reverse("viewer-sessions")).status_code == 200  # migrated, warm
    Database(site.path, use_snapshots=True).publish_snapshot()  # unless the writes just did
    (snap,) = snapshots.snapshots(site.path)
    assert snap.token == site.generation()  # session 0 only
    later = time.time() + 600
    os.utime(snap.path, (later, later))  # not dropped as stale however slow the writer is
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", WRITER, str(site.path)], env=env, check=True)
    os.utime(snap.path)  # and recent now
    held = threading.Event()
    holder = threading.Thread(target=hold_the_lock, args=(Database(site.path), held))
    holder.start()
    try:
        assert held.wait(30)
        listed = client.get(reverse("viewer-sessions")).content.decode()
        assert "Synthetic session 000" in listed
        assert "Synthetic session 001" not in listed  # served from the snapshot, stale
        detail = client.get(reverse("viewer-session", args=["synthetic-001"]))
        assert detail.status_code == 200  # looked up again in the live file
        assert "hello 1" in detail.content.decode()
    finally:
        holder.join()
