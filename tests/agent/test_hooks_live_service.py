"""Every installed hook command, run as Claude Code runs it (a shell, real hook JSON on
stdin), with the service running: each exits 0, what it hands over reaches the store
through `POST /api/v1/hooks`, and running every hook twice stores the session, its
messages and its events exactly once."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from axiom.agent import spool
from axiom.hooks.install import install, installed_events, load
from axiom.store.db import Database
from tests.agent.live_service import live_service, post_json
from tests.agent.support import SAMPLE_SESSION, child_env, fake_home, payload, run_axiom, run_shell

pytestmark = pytest.mark.slow

MESSAGES = 12  # in the bundled sample transcript


def _counts(data_dir: Path) -> tuple[int, int, int]:
    with Database(data_dir / "axiom.duckdb").read() as conn:
        return tuple(
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("sessions", "messages", "events")
        )


def _settled_counts(data_dir: Path) -> tuple[int, int, int]:
    """The counts once the service has finished what the hooks handed it (a hook whose
    reply timed out leaves the service still importing for a moment)."""
    last = _counts(data_dir)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = _counts(data_dir)
        if now == last:
            return now
        last = now
    return last


def test_hooks_hand_over_to_the_running_service_and_store_once(tmp_path: Path) -> None:
    home = fake_home(tmp_path)
    data_dir = tmp_path / "data"
    settings_file = home / ".claude" / "settings.json"
    install(settings_file, data_dir)
    transcript = next((home / ".claude" / "projects").rglob("*.jsonl"))
    commands = installed_events(load(settings_file))
    assert set(commands) == {
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    }
    token = "hook-test-token"
    with live_service(
        data_dir,
        tmp_path / "web.log",
        AXIOM_AUTH_TOKEN=token,
        AXIOM_EMBEDDER="none",
        AXIOM_IMPORT_ROOTS=str((home / ".claude" / "projects").resolve()),
    ) as base:
        port = base.rsplit(":", 1)[1]
        env = child_env(
            HOME=str(home), AXIOM_PORT=port, AXIOM_DATA_DIR=str(data_dir), AXIOM_AUTH_TOKEN=token
        )
        # Warm the service (first request migrates and opens the store) with a long timeout.
        warm = post_json(
            base + "/api/v1/hooks",
            {"event": "SessionStart", "payload": payload("SessionStart", transcript)},
            token,
        )
        assert warm["accepted"] is True and warm["imported"] == []
        before = _counts(data_dir)
        assert before[:2] == (0, 0)
        after_rounds = []
        for _ in range(2):
            for event, (command,) in commands.items():
                done = run_shell(command, json.dumps(payload(event, transcript)), env)
                assert done.returncode == 0, done.stderr
                assert "axiom hook" not in done.stderr
            after_rounds.append(_settled_counts(data_dir))
        # A payload the service refuses (a transcript outside the import roots) is not
        # spooled for a later import: the hook says why on stderr and still exits 0.
        elsewhere = tmp_path / "elsewhere" / "private.jsonl"
        elsewhere.parent.mkdir()
        elsewhere.write_bytes(transcript.read_bytes())
        pending = set(spool.pending(data_dir))
        refused = run_shell(commands["Stop"][0], json.dumps(payload("Stop", elsewhere)), env)
        assert refused.returncode == 0
        if "refused" in refused.stderr:  # else the reply missed the hook's 0.6 s: spooled
            assert "outside the import roots" in refused.stderr
            assert set(spool.pending(data_dir)) == pending
        # A reply lost to the hook's timeout leaves a spooled copy: the next drain dedupes
        # (and refuses the outside transcript the same way, see test_hook_commands.py).
        spooled = len(spool.pending(data_dir))
        if spooled:
            drained = run_axiom("import", "--no-process", "--quiet", env=env)
            assert drained.returncode == 0, drained.stderr
    log = (tmp_path / "web.log").read_text(encoding="utf-8")
    served = log.count('"POST /api/v1/hooks HTTP/1.1" 200')
    # Each call reached the service or, when it did not answer within the hook's 0.6 s (a
    # loaded machine), the spool: nothing is lost either way. Most go straight through.
    assert served + spooled >= 1 + 2 * len(commands)
    assert served > len(commands)
    first, second = after_rounds
    assert first[:2] == (1, MESSAGES)
    assert second == first  # the second round stored nothing new: not a session, not an event
    assert _counts(data_dir) == first
    with Database(data_dir / "axiom.duckdb").read() as conn:
        assert conn.execute("SELECT session_id FROM sessions").fetchall() == [(SAMPLE_SESSION,)]
