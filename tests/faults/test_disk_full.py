"""A data directory on a tiny filesystem (a tmpfs of a few MB) filling up during an import:
a clear error, each session stored whole or not at all, and the same import finishes once
space is freed. Needs root for the mount (CI and these machines run as root)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from axiom.store.db import Database
from tests.faults.support import assert_recovered, count, run_axiom, write_sessions

pytestmark = pytest.mark.slow
SESSIONS, MESSAGES = 40, 4
INGESTS = "SELECT count(*) FROM events WHERE event_type = 'session_ingested'"


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs; `remount(size)` grows it, as freeing space would. A store of a few
    sessions takes about 14 MB (its keys take a block of their own each), and a commit
    that cannot be checkpointed fails as a whole."""
    if os.geteuid() != 0 and not os.environ.get("CI"):
        pytest.skip("mounting a tmpfs needs root (CI runs this as root)")
    mount = tmp_path / "small"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_a_full_disk_stops_the_import_with_a_clear_error_and_it_resumes_after(
    tmp_path: Path, small_disk: Path
) -> None:
    data_dir = small_disk / "data"
    ids = write_sessions(tmp_path / "src", SESSIONS, MESSAGES, filler=20000)
    assert run_axiom(data_dir, "migrate")[0] == 0
    db = Database(data_dir / "axiom.duckdb")

    # One file per write transaction, so the disk fills after some files are stored (by
    # default the first 32 are written in one transaction, which the full disk refuses).
    one_file = {"AXIOM_IMPORT_GROUP_FILES": "1"}
    code, _, err = run_axiom(
        data_dir, "import", str(tmp_path / "src"), "--no-process", settings=one_file
    )

    assert code == 1
    assert f"error: the disk holding {data_dir} is full (No space left on device)" in err
    assert "Free some space, then run the same command again" in err
    assert "Traceback" not in err
    stored = count(db, INGESTS)
    assert 0 < stored < SESSIONS
    assert count(db, "SELECT count(*) FROM messages") == stored * MESSAGES  # none half-written

    subprocess.run(["mount", "-o", "remount,size=512m", str(small_disk)], check=True)
    code, out, err = run_axiom(data_dir, "import", str(tmp_path / "src"), "--no-process")
    assert code == 0, err
    assert f"{SESSIONS - stored} new session(s), {stored} unchanged" in out
    assert_recovered(db, ids, MESSAGES)
