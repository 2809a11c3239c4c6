"""The API token: the environment's when set, else one file in the data dir, mode 0600."""

from __future__ import annotations

import os
import stat
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from axiom.settings import Settings, SettingsError
from axiom.store.api_token import ApiTokenError, api_token, api_token_path, ensure_api_token
from tests.cli_support import run_cli


def test_it_makes_one_private_token_on_first_use_and_keeps_it(tmp_path: Path) -> None:
    first = ensure_api_token(tmp_path / "data")
    path = api_token_path(tmp_path / "data")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) >= 40 and ensure_api_token(tmp_path / "data") == first
    assert [p.name for p in (tmp_path / "data").iterdir()] == ["api-token"]


def test_processes_starting_together_agree_on_one_token(tmp_path: Path) -> None:
    with ThreadPoolExecutor(8) as pool:
        tokens = set(pool.map(lambda _: ensure_api_token(tmp_path), range(32)))
    assert len(tokens) == 1


def test_a_token_file_readable_by_others_is_tightened(tmp_path: Path) -> None:
    token = ensure_api_token(tmp_path)
    os.chmod(api_token_path(tmp_path), 0o644)
    assert ensure_api_token(tmp_path) == token
    assert stat.S_IMODE(api_token_path(tmp_path).stat().st_mode) == 0o600


def test_an_empty_token_file_is_a_clear_error(tmp_path: Path) -> None:
    api_token_path(tmp_path).write_text("")
    with pytest.raises(ApiTokenError, match="empty"):
        ensure_api_token(tmp_path)


def test_auth_token_setting_wins_over_the_file(tmp_path: Path) -> None:
    settings = Settings.from_env({"AXIOM_DATA_DIR": str(tmp_path), "AXIOM_AUTH_TOKEN": "s3cret"})
    assert api_token(settings) == "s3cret"
    assert not api_token_path(tmp_path).exists()


def test_auth_token_can_come_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("from-file\n")
    env = {"AXIOM_DATA_DIR": str(tmp_path), "AXIOM_AUTH_TOKEN_FILE": str(secret)}
    assert Settings.from_env(env).auth_token == "from-file"


def test_auth_token_file_that_is_missing_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-secret"
    env = {"AXIOM_DATA_DIR": str(tmp_path), "AXIOM_AUTH_TOKEN_FILE": str(missing)}
    with pytest.raises(SettingsError, match="AXIOM_AUTH_TOKEN_FILE=.*cannot read it"):
        Settings.from_env(env)
    assert not api_token_path(tmp_path).exists()


def test_auth_token_file_that_is_empty_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "secret"
    empty.write_text("\n")
    env = {"AXIOM_DATA_DIR": str(tmp_path), "AXIOM_AUTH_TOKEN_FILE": str(empty)}
    with pytest.raises(SettingsError, match="AXIOM_AUTH_TOKEN_FILE=.*empty"):
        Settings.from_env(env)


def test_unset_auth_token_means_the_data_dir_token(tmp_path: Path) -> None:
    settings = Settings.from_env({"AXIOM_DATA_DIR": str(tmp_path)})
    assert settings.auth_token == ""
    assert api_token(settings) == api_token_path(tmp_path).read_text().strip()


def test_token_command_prints_the_stored_token(tmp_path: Path) -> None:
    shown = run_cli(tmp_path, "token")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == api_token_path(tmp_path).read_text().strip()
    where = run_cli(tmp_path, "token", "--path")
    assert where.stdout.strip() == str(api_token_path(tmp_path))
