"""`python -m axiom cite`: a citation of a whole message (no memory behind it) names the
message by speaker and session, not a literal `None`."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.cli_support import run_cli


def test_a_message_citation_names_its_speaker_and_session(
    tmp_path: Path, sample_session: Path
) -> None:
    data = tmp_path / "data"
    assert run_cli(data, "import", "--quiet", str(sample_session)).returncode == 0
    with duckdb.connect(str(data / "axiom.duckdb"), read_only=True) as conn:
        cid, session_id, index, role = conn.execute(
            "SELECT c.citation_id, c.session_id, c.message_index, m.role"
            " FROM message_citations c JOIN messages m USING (session_id, message_index)"
            " ORDER BY c.message_index LIMIT 1"
        ).fetchone()
    done = run_cli(data, "cite", cid)
    assert done.returncode == 0, done.stderr
    heading = done.stdout.splitlines()[0]
    assert heading == f"[{cid}] {role} message {index} of session {session_id}"
    assert "None" not in done.stdout
