"""`axiom import` and `axiom process` publish the store as it stands before they write: a
writer publishes a read snapshot only once it has written for a while, and until then a
page would wait for its first write units (`Database.publish_before_writing`)."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import pytest

from axiom.cli.main import main
from axiom.store import snapshots
from axiom.store.db import Database


def published(data: Path) -> tuple[int, int, str]:
    """(snapshots, their newest's sequence, the live generation) of the store in `data`."""
    db = Database(data / "axiom.duckdb")
    found = snapshots.snapshots(db.path)
    return len(found), found[0].sequence if found else -1, db.generation()


def rows(path: Path, table: str) -> int:
    with duckdb.connect(str(path), read_only=True) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data directory whose writers never publish on their own (no run is long enough),
    so a snapshot there was published before the writing."""
    monkeypatch.setenv("AXIOM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AXIOM_READ_SNAPSHOTS", "1")
    monkeypatch.setattr(snapshots, "PUBLISH_AFTER_SECONDS", math.inf)
    return tmp_path / "data"


def test_import_publishes_the_store_before_it_writes(data: Path, sample_session: Path) -> None:
    assert main(["import", "--quiet", "--no-process", str(sample_session)]) == 0
    count, sequence, live = published(data)
    assert count == 1 and sequence < snapshots.sequence(live)  # from before the import
    [snap] = snapshots.snapshots(data / "axiom.duckdb")
    assert rows(snap.path, "sessions") == 0
    assert rows(data / "axiom.duckdb", "sessions") == 1


def test_process_publishes_the_store_before_it_writes(data: Path, sample_session: Path) -> None:
    assert main(["import", "--quiet", "--no-process", str(sample_session)]) == 0
    assert main(["process", "--quiet"]) == 0
    [snap] = snapshots.snapshots(data / "axiom.duckdb")
    assert snap.sequence < snapshots.sequence(published(data)[2])
    assert rows(snap.path, "sessions") == 1  # the import's, not the processing's
    assert rows(snap.path, "entries") == 0 < rows(data / "axiom.duckdb", "entries")


def test_with_snapshots_off_nothing_is_published(
    data: Path, sample_session: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AXIOM_READ_SNAPSHOTS", "0")
    assert main(["import", "--quiet", str(sample_session)]) == 0
    assert published(data)[0] == 0


def test_a_run_that_writes_nothing_copies_nothing(data: Path, sample_session: Path) -> None:
    assert main(["import", "--quiet", str(sample_session)]) == 0
    before = snapshots.snapshots(data / "axiom.duckdb")
    assert main(["process", "--quiet"]) == 0  # every session is up to date
    assert snapshots.snapshots(data / "axiom.duckdb") == before
    assert before[0].sequence < snapshots.sequence(published(data)[2])
