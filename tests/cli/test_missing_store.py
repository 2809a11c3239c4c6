"""A command that reads the store, run where there is none, says so and creates nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from axiom.cli.main import NEEDS_STORE, main
from tests.cli_support import run_cli


def test_search_in_a_folder_without_a_store_names_the_data_dir_and_creates_nothing(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    done = run_cli(data_dir, "search", "retry budget")
    assert done.returncode == 1
    assert f"no Axiom store at {data_dir / 'axiom.duckdb'}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not data_dir.exists()


@pytest.mark.parametrize("argv", [["stats"], ["entries"], ["tasks"], ["outbox", "status"]])
def test_every_reading_command_stops_on_a_missing_store(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("AXIOM_DATA_DIR", str(tmp_path / "nowhere"))
    assert argv[0] in NEEDS_STORE
    assert main(argv) == 1
    assert "no Axiom store at" in capsys.readouterr().err
    assert not (tmp_path / "nowhere").exists()


def test_migrate_creates_the_store_and_reading_commands_then_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("AXIOM_DATA_DIR", str(tmp_path / "data"))
    assert main(["migrate"]) == 0
    assert main(["stats", "--json"]) == 0
    assert '"sessions": 0' in capsys.readouterr().out
