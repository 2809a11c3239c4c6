"""`python -m axiom compact` rewrites the file with its live data only: blocks freed by a
rebuild (which drops and refills every derived table) leave the file, the data stays."""

from __future__ import annotations

from pathlib import Path

import duckdb

from tests.cli_support import run_cli


def free_blocks(path: Path) -> int:
    with duckdb.connect(str(path), read_only=True) as conn:
        return int(conn.execute("SELECT free_blocks FROM pragma_database_size()").fetchone()[0])


def test_compact_drops_freed_blocks_and_keeps_every_row(
    tmp_path: Path, sample_session: Path
) -> None:
    data = tmp_path / "data"
    assert run_cli(data, "import", "--quiet", str(sample_session)).returncode == 0
    for _ in range(3):
        assert run_cli(data, "rebuild", "--quiet").returncode == 0
    before = run_cli(data, "stats", "--json").stdout
    size = (data / "axiom.duckdb").stat().st_size
    assert free_blocks(data / "axiom.duckdb") > 0

    done = run_cli(data, "compact")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"compacted {data / 'axiom.duckdb'}: ")
    assert (data / "axiom.duckdb").stat().st_size < size
    assert free_blocks(data / "axiom.duckdb") == 0
    assert run_cli(data, "stats", "--json").stdout == before
