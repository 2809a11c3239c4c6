"""`forget` also empties the hook spool of the target, and a `forget` killed after its
commit is finished by the next `process` or `forget`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from axiom.agent import spool
from axiom.config import AxiomConfig
from axiom.forgetting import forget as forget_module
from axiom.forgetting import pending
from axiom.forgetting.forget import ForgetTarget, ForgetUnfinished, finish_pending, forget
from axiom.forgetting.pending import Pending
from axiom.forgetting.scrub import scrub_spool
from axiom.ingest.session_queries import get_session
from axiom.store.db import Database, OutOfSpace, out_of_space
from axiom.store.event_types import REDACTED
from axiom.store.events import EventStore
from tests.cli_support import ROOT, run_cli
from tests.conflicts.support import run_sessions
from tests.forgetting.test_forget import KEPT, SECRET, TOKEN, _embed, _hits

KILLED_AFTER_COMMIT = """
import os, signal, sys
from pathlib import Path
from axiom.config import AxiomConfig
from axiom.forgetting.forget import ForgetTarget, commit
from axiom.store.db import Database
from axiom.store.event_types import REDACTED
from axiom.store.events import EventStore
data = Path(sys.argv[1])
commit(Database(data / "axiom.duckdb"), ForgetTarget(session_id="secret"), "t", AxiomConfig(data))
os.kill(os.getpid(), signal.SIGKILL)
"""


def _forget_killed_after_commit(data_dir: Path) -> None:
    """`forget` of "secret" in another process, killed once its commit is done."""
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_COMMIT, str(data_dir)],
        cwd=ROOT,
        env={"AXIOM_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr


def _only_secret_forgotten(db: Database) -> None:
    with db.read() as conn:
        assert get_session(conn, "secret") is None
        assert get_session(conn, "kept") is not None


def _spool_payloads(data_dir: Path, transcripts: Path) -> tuple[Path, Path, Path]:
    """Real Claude Code hook payloads: one about the forgotten session, one quoting it
    from another session, one unrelated."""
    named = spool.write(
        data_dir,
        "Stop",
        {
            "session_id": "secret",
            "transcript_path": str(transcripts / "secret.jsonl"),
            "hook_event_name": "Stop",
        },
    )
    quoting = spool.write(
        data_dir,
        "UserPromptSubmit",
        {
            "session_id": "elsewhere",
            "prompt": f'Remind me:\n"{SECRET.text}"',
            "hook_event_name": "UserPromptSubmit",
        },
    )
    other = spool.write(
        data_dir,
        "Stop",
        {"session_id": "kept", "transcript_path": str(transcripts / "kept.jsonl")},
    )
    return named, quoting, other


def test_forget_removes_the_spooled_payloads_naming_or_quoting_the_session(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    named, quoting, other = _spool_payloads(data_dir, tmp_path)
    failed = spool.spool_dir(data_dir) / "failed"
    failed.mkdir()
    (failed / "old.json").write_text(json.dumps({"payload": {"session_id": "secret"}}))
    assert {"spool/" + p.name for p in (quoting,)} <= set(_hits(data_dir, TOKEN))

    done = run_cli(data_dir, "forget", "--session", "secret", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["spool_payloads_removed"] == 3
    assert _hits(data_dir, TOKEN) == []
    assert _hits(data_dir / "spool", '"secret"') == []
    assert not named.exists() and not quoting.exists() and not (failed / "old.json").exists()
    assert spool.pending(data_dir) == [other]


def test_a_forget_killed_after_its_commit_is_finished_by_the_next_process(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    store = _embed(db, data_dir)
    spool.write(data_dir, "UserPromptSubmit", {"session_id": "x", "prompt": SECRET.text})
    _forget_killed_after_commit(data_dir)
    # Committed (the tombstone is in the event store) but not cleaned up: the derived rows,
    # the LanceDB rows, the spooled prompt and the marker are still there.
    with db.read() as conn:
        [tombstone] = EventStore(conn).replay([REDACTED])
        assert tombstone.payload["session_ids"] == ["secret"]
        assert get_session(conn, "secret") is not None
    assert any(k.startswith("message:secret") for k in store.count_by_id())
    assert any(h.startswith("lancedb/") for h in _hits(data_dir, TOKEN))
    marker_dir = AxiomConfig(data_dir).forget_pending_dir
    assert len(pending.waiting(marker_dir)) == 1

    done = run_cli(data_dir, "process")
    assert done.returncode == 0, done.stderr
    assert not any(k.startswith("message:secret") for k in store.count_by_id())
    assert store.count_by_id().keys() >= {"message:kept:0"}
    assert _hits(data_dir, TOKEN) == []
    assert pending.waiting(marker_dir) == []
    with db.read() as conn:
        assert get_session(conn, "secret") is None
    again = run_cli(data_dir, "process")  # nothing left to finish: a no-op
    assert again.returncode == 0, again.stderr


def test_running_the_same_forget_again_finishes_the_one_cut_short(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    """A forget cut short after its commit (a kill here; a full disk or Ctrl-C alike) asks
    to be run again: the same command finishes it and says so, instead of answering that
    the session it already forgot is unknown."""
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    _forget_killed_after_commit(data_dir)
    marker_dir = AxiomConfig(data_dir).forget_pending_dir
    assert len(pending.waiting(marker_dir)) == 1

    again = run_cli(data_dir, "forget", "--session", "secret", "--yes")
    assert again.returncode == 0, again.stderr
    assert "finished an earlier forget (red_" in again.stdout
    assert "nothing else to forget: the earlier forget did it" in again.stdout
    assert "Traceback" not in again.stderr
    assert pending.waiting(marker_dir) == []
    _only_secret_forgotten(db)


def test_a_forget_after_one_cut_short_still_names_an_unknown_target_and_keeps_json(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    """Finishing an earlier forget does not make another target's run a success: an id
    never stored is still an error. A session forgotten already is said to be, and with
    `--json` the output stays JSON."""
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    _forget_killed_after_commit(data_dir)
    typo = run_cli(data_dir, "forget", "--session", "no-such-session", "--yes")
    assert typo.returncode == 1
    assert "finished an earlier forget (red_" in typo.stdout
    assert "unknown session 'no-such-session'" in typo.stderr
    again = run_cli(data_dir, "forget", "--session", "secret", "--yes", "--json")
    assert again.returncode == 0, again.stderr  # finished by the run before
    said = json.loads(again.stdout)
    assert said["forgotten"] is False
    assert said["message"].startswith("session 'secret' was forgotten already (red_")


def test_a_full_disk_after_the_commit_says_the_forget_is_recorded(
    db: Database, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of space while finishing (the commit done): `ForgetUnfinished`, which says the
    forget is recorded and how to finish it; the next run finishes it. Out of space at the
    commit is the usual error: nothing was recorded."""
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    config = AxiomConfig(data_dir)

    def full(*_: object) -> None:
        raise out_of_space(db.path, OSError("No space left on device"))

    monkeypatch.setattr(forget_module, "rebuild_all", full)
    with pytest.raises(ForgetUnfinished, match="is recorded") as raised:
        forget(db, ForgetTarget(session_id="secret"), "t", config)
    assert raised.value.strerror.endswith("to finish it")
    monkeypatch.undo()
    [finished] = finish_pending(db, config)
    assert finished.redaction_id == raised.value.redaction_id
    monkeypatch.setattr(forget_module, "commit", full)
    with pytest.raises(OutOfSpace, match="rolled back") as at_commit:
        forget(db, ForgetTarget(session_id="kept"), "t", config)
    assert not isinstance(at_commit.value, ForgetUnfinished)
    _only_secret_forgotten(db)


def test_a_marker_whose_commit_never_happened_is_dropped_by_the_next_forget(
    db: Database, data_dir: Path, tmp_path: Path
) -> None:
    run_sessions(db, tmp_path / "idris", {"secret": [SECRET], "kept": [KEPT]})
    marker_dir = AxiomConfig(data_dir).forget_pending_dir
    pending.write(marker_dir, Pending("red_0000000000000000", "session", ["kept"], [], []))
    done = run_cli(data_dir, "forget", "--session", "secret", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    assert pending.waiting(marker_dir) == []
    _only_secret_forgotten(db)  # the uncommitted run touched nothing


def test_the_spool_keeps_payloads_that_only_share_a_short_reply_or_a_line(
    tmp_path: Path,
) -> None:
    """A spooled payload is pending work: a line or a short reply the forgotten session
    shares with others ("return result", "Thanks a lot!") does not take it; the forgotten
    id, the whole forgotten text, or a long one quoted inside do."""
    forgotten = ["Thanks a lot!", f"def f():\n    return result\n# {TOKEN} keys rotate monthly"]
    folder = tmp_path / "spool"
    folder.mkdir()
    payloads = {
        "short.json": {"session_id": "other", "prompt": "Thanks a lot! Now the tests."},
        "line.json": {"session_id": "other", "tool_response": "x = 1\n    return result\n"},
        "named.json": {"session_id": "gone", "prompt": "anything"},
        "exact.json": {"session_id": "other", "prompt": "Thanks a lot!"},
        "quoted.json": {"session_id": "other", "prompt": "see: " + forgotten[1] + " (end)"},
    }
    for name, payload in payloads.items():
        (folder / name).write_text(json.dumps({"payload": payload}))
    assert scrub_spool(folder, ["gone"], forgotten) == 3
    assert sorted(p.name for p in folder.iterdir()) == ["line.json", "short.json"]
