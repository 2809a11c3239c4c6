"""Read snapshots (`axiom.store.snapshots`): a process serving pages reads the newest
snapshot instead of waiting for a writer, never one older than its own writes, never for a
missing row, and never when told to read the live file; writers publish only after a run of
writes, best effort."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from axiom.store import snapshots
from axiom.store.db import Database

ROOT = Path(__file__).resolve().parents[2]
HOLD_SECONDS = 1.0

# A process serving pages: reads as the web process does (`serve_reads`), once told to on
# stdin. Modes: `read`, `fresh` (read(fresh=True)), `lookup <id>`, `write-then-read`
# (first commits a row of its own).
CHILD = textwrap.dedent(
    """
    import json, sys
    from axiom.store import snapshots
    from axiom.store.db import Database

    db, mode = Database(sys.argv[1]), sys.argv[2]
    if mode == "write-then-read":  # before serving: this write publishes nothing
        with db.write() as conn:
            conn.execute("INSERT INTO probe VALUES (99)")
    snapshots.serve_reads()
    print("ready", flush=True)
    sys.stdin.readline()
    print("reading", flush=True)
    if mode == "lookup":
        wanted = int(sys.argv[3])
        value = db.lookup(
            lambda c: c.execute("SELECT id FROM probe WHERE id = ?", [wanted]).fetchone()
        )
        value = None if value is None else value[0]
    else:
        with db.read(fresh=mode == "fresh") as conn:
            value = sorted(r[0] for r in conn.execute("SELECT id FROM probe").fetchall())
    print(json.dumps({"value": value}), flush=True)
    """
)


@pytest.fixture(autouse=True)
def _not_serving(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process is a writer, not the web (only `config.wsgi` turns serving on; a test
    may have turned it on for itself); the children serve."""
    monkeypatch.setattr(snapshots, "_serving", False)


@pytest.fixture
def probe_db(tmp_path: Path) -> Database:
    """A table `probe` holding row 1."""
    db = Database(tmp_path / "snap.duckdb", use_snapshots=True)
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (id INTEGER)")
        conn.execute("INSERT INTO probe VALUES (1)")
    return db


def start(
    db: Database, *args: str, env: dict[str, str] | None = None, publish: bool = True
) -> subprocess.Popen[str]:
    """A serving process, started and ready (then `db`'s state is published as a snapshot):
    it reads when `go` tells it to."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(db.path), *args],
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_line(child, "ready")
    assert not publish or db.publish_snapshot() is not None
    return child


def go(child: subprocess.Popen[str]) -> None:
    child.stdin.write("go\n")  # type: ignore[union-attr]
    child.stdin.flush()  # type: ignore[union-attr]
    wait_line(child, "reading")


def wait_line(child: subprocess.Popen[str], expected: str) -> None:
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if line != expected:
        child.kill()
        raise AssertionError(f"{line!r} from the child: {child.stderr.read()}")  # type: ignore[union-attr]


def result(child: subprocess.Popen[str]) -> object:
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    return json.loads(out)["value"]


def test_a_reader_is_answered_from_the_snapshot_while_a_writer_holds_the_lock(
    probe_db: Database,
) -> None:
    child = start(probe_db, "read")
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (2)")
        go(child)
        # It finishes while the lock is still held: it did not wait for the writer.
        assert result(child) == [1]
    again = start(probe_db, "read", publish=False)
    go(again)
    assert result(again) == [1, 2]  # no writer now: the live file


def test_a_fresh_read_waits_for_the_writer(probe_db: Database) -> None:
    child = start(probe_db, "fresh")
    with probe_db.write() as conn:
        go(child)
        time.sleep(HOLD_SECONDS)
        conn.execute("INSERT INTO probe VALUES (2)")
    assert result(child) == [1, 2]  # it read after the commit


def test_a_process_never_reads_a_snapshot_older_than_its_own_writes(probe_db: Database) -> None:
    snap = probe_db.publish_snapshot()  # row 1 only
    assert snap is not None
    child = start(probe_db, "write-then-read", publish=False)  # then it committed row 99
    os.utime(snap.path)  # recent, however long the child took to start
    with probe_db.write() as conn:
        go(child)
        time.sleep(HOLD_SECONDS)
        conn.execute("INSERT INTO probe VALUES (2)")
    assert result(child) == [1, 2, 99]  # it waited for the live file


def test_a_row_the_snapshot_lacks_is_looked_up_in_the_live_file(probe_db: Database) -> None:
    present = start(probe_db, "lookup", "1")
    missing = start(probe_db, "lookup", "2", publish=False)
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (2)")
    with probe_db.write() as conn:  # row 2 is committed but in no snapshot
        go(present)
        assert result(present) == 1  # in the snapshot: answered while the lock is held
        go(missing)
        time.sleep(HOLD_SECONDS)
        conn.execute("INSERT INTO probe VALUES (3)")
    assert result(missing) == 2  # not a 404 from the old copy


def test_an_old_snapshot_is_not_used(probe_db: Database) -> None:
    child = start(probe_db, "read")
    (snap,) = snapshots.snapshots(probe_db.path)
    old = time.time() - snapshots.MAX_AGE_SECONDS - 5
    os.utime(snap.path, (old, old))
    with probe_db.write() as conn:
        go(child)
        time.sleep(HOLD_SECONDS)
        conn.execute("INSERT INTO probe VALUES (2)")
    assert result(child) == [1, 2]


def test_with_snapshots_off_a_reader_waits(probe_db: Database) -> None:
    child = start(probe_db, "read", env={"AXIOM_READ_SNAPSHOTS": "off"})
    with probe_db.write() as conn:
        go(child)
        time.sleep(HOLD_SECONDS)
        conn.execute("INSERT INTO probe VALUES (2)")
    assert result(child) == [1, 2]


@pytest.mark.parametrize(("raw", "publishes"), [("on", True), ("off", False)])
def test_the_setting_decides_whether_writers_publish(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raw: str, publishes: bool
) -> None:
    monkeypatch.setenv("AXIOM_READ_SNAPSHOTS", raw)
    db = Database(tmp_path / "s.duckdb")
    assert db.use_snapshots is publishes
    with db.write() as conn:
        conn.execute("CREATE TABLE probe (id INTEGER)")
    assert snapshots.snapshots(db.path) == []  # a single write never publishes
    deadline = time.monotonic() + snapshots.PUBLISH_AFTER_SECONDS * 10
    while time.monotonic() < deadline and not snapshots.snapshots(db.path):
        with db.write() as conn:  # a continuous run of writes
            conn.execute("INSERT INTO probe VALUES (1)")
    found = snapshots.snapshots(db.path)
    assert len(found) == (1 if publishes else 0)


def test_a_snapshot_names_the_generation_it_holds(probe_db: Database) -> None:
    snap = probe_db.publish_snapshot()
    assert snap is not None and snapshots.snapshots(probe_db.path) == [snap]
    assert snap.token == probe_db.generation()
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (2)")
    newer = probe_db.generation()
    assert snapshots.sequence(newer) == snap.sequence + 1
    os.utime(snap.path, (0, 0))  # let the next publish happen at once
    published = probe_db.publish_snapshot()
    assert published is not None and published.token == newer
    assert snapshots.snapshots(probe_db.path) == [published]  # the older one is deleted


def test_a_write_drops_a_snapshot_too_old_to_be_read(
    probe_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshots, "PUBLISH_AFTER_SECONDS", 3600.0)  # these writes never publish
    snap = probe_db.publish_snapshot()
    assert snap is not None
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (2)")
    assert snapshots.snapshots(probe_db.path) == [snap]  # recent: kept for readers
    old = time.time() - snapshots.MAX_AGE_SECONDS - 5
    os.utime(snap.path, (old, old))
    with probe_db.write() as conn:
        conn.execute("INSERT INTO probe VALUES (3)")
    assert snapshots.snapshots(probe_db.path) == []


def test_the_publish_clock_waits_for_a_run_of_writes() -> None:
    clock = snapshots.PublishClock()
    assert not clock.unit_done(100.0, 100.1)  # a single write
    assert not clock.unit_done(100.5, 100.6)
    assert clock.unit_done(101.0, 101.2)  # a second of continuous writing
    clock.published(101.2, copy_seconds=0.5)
    assert not clock.unit_done(101.3, 101.4)
    assert not clock.unit_done(200.0, 200.9)  # a pause ends the run
    assert clock.unit_done(201.0, 202.0)
    assert not clock.copy_allowed(105.0)  # a 0.5 s copy: at most one per 5 s
    assert clock.copy_allowed(106.2)


def test_a_serving_process_publishes_its_own_write_while_snapshots_are_read(
    probe_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = probe_db.publish_snapshot()
    assert old is not None
    monkeypatch.setattr(snapshots, "COPY_DUTY", 0)  # however soon after the last copy
    with probe_db.write() as conn:  # not serving (an importer): its single write waits
        conn.execute("INSERT INTO probe VALUES (2)")
    assert snapshots.snapshots(probe_db.path) == [old]
    monkeypatch.setattr(snapshots, "_serving", True)
    with probe_db.write() as conn:  # the web process, e.g. an approval during an import
        conn.execute("INSERT INTO probe VALUES (3)")
    (newest,) = snapshots.snapshots(probe_db.path)
    assert newest.token == probe_db.generation() != old.token  # its pages need not wait


def test_a_full_disk_while_publishing_is_logged_and_the_write_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    if os.geteuid() != 0 and not os.environ.get("CI"):
        pytest.skip("mounting a tmpfs needs root (CI runs this as root)")
    built = Database(tmp_path / "full.duckdb", use_snapshots=False)
    with built.write() as conn:  # megabytes of md5 text
        conn.execute(
            "CREATE TABLE probe AS SELECT range AS id, md5(range::VARCHAR) || "
            "md5((range * 7)::VARCHAR) AS filler FROM range(110000)"
        )
    size = built.path.stat().st_size
    assert size > 4 * 1024 * 1024
    mount = tmp_path / "small"
    mount.mkdir()
    fits_once = f"size={size * 3 // 2 // 1024}k"  # the file and a write's growth, no copy
    subprocess.run(["mount", "-t", "tmpfs", "-o", fits_once, "tmpfs", str(mount)], check=True)
    try:
        shutil.copyfile(built.path, mount / built.path.name)
        db = Database(mount / built.path.name, use_snapshots=True)
        monkeypatch.setattr(snapshots, "PUBLISH_AFTER_SECONDS", 0.0)  # every write is due
        with db.write() as conn:
            conn.execute("INSERT INTO probe VALUES (-1, 'kept')")
        with db.read() as conn:
            assert conn.execute("SELECT filler FROM probe WHERE id = -1").fetchone() == ("kept",)
        assert "not published" in caplog.text and "No space left on device" in caplog.text
        assert sorted(p.name for p in mount.iterdir() if ".snap" in p.name) == []
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)
