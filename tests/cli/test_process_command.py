"""`axiom process` with session ids: an id no session has is one line of error, not a
traceback, and the store is left as it was for a rerun without it."""

from __future__ import annotations

from pathlib import Path

from tests.cli_support import run_cli


def test_an_unknown_session_id_is_one_line_of_error(tmp_path: Path, sample_session: Path) -> None:
    data = tmp_path / "data"
    imported = run_cli(data, "import", "--quiet", "--no-process", str(sample_session))
    assert imported.returncode == 0, imported.stderr
    stored = sample_session.stem  # a Claude Code transcript is named after its session
    done = run_cli(data, "process", "--quiet", stored, "no-such-session")
    assert done.returncode == 1
    assert done.stderr.strip() == "error: no session_ingested event for session 'no-such-session'"
    again = run_cli(data, "process", "--quiet", stored)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("processed 1 session(s)")
