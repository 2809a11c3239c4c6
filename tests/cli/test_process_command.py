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


def test_an_import_whose_pipeline_fails_exits_1_and_keeps_the_session(
    tmp_path: Path, sample_session: Path
) -> None:
    """The session is stored and reported; the exit status says the pipeline failed (as
    `process` does), and a later `process` builds it."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "idris").write_text("")  # where the validator's modules go: cannot be a folder
    always = {"AXIOM_IDRIS_MODULES": "always"}
    imported = run_cli(data, "import", "--quiet", str(sample_session), env=always)
    assert imported.returncode == 1
    assert "1 new" in imported.stdout and "pipeline failed" in imported.stdout
    (data / "idris").unlink()
    again = run_cli(data, "process", "--quiet", env=always)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("processed 1 session(s)")
