"""Paths that reach the server are confined to AXIOM_IMPORT_ROOTS."""

from __future__ import annotations

from pathlib import Path

import pytest

from axiom.ingest.import_roots import PathOutsideImportRoots, confine_to_import_roots
from axiom.settings import Settings, SettingsError


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root" / "proj").mkdir(parents=True)
    return tmp_path / "root"


def test_a_path_under_a_root_is_returned_resolved(root: Path) -> None:
    inside = root / "proj" / ".." / "proj" / "s.jsonl"
    assert confine_to_import_roots(inside, [root]) == (root / "proj" / "s.jsonl").resolve()


@pytest.mark.parametrize("outside", ["/etc/passwd", "{root}/../secret", "{root}2/x.jsonl"])
def test_a_path_outside_every_root_is_refused(root: Path, outside: str) -> None:
    with pytest.raises(PathOutsideImportRoots, match="outside the import roots"):
        confine_to_import_roots(outside.format(root=root), [root])


def test_a_symlink_leading_out_of_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("x")
    (root / "proj" / "link.jsonl").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(PathOutsideImportRoots):
        confine_to_import_roots(root / "proj" / "link.jsonl", [root])


@pytest.mark.parametrize("bad", ["relative/x.jsonl", "/tmp/a\x00b"])
def test_relative_paths_and_nul_bytes_are_refused(root: Path, bad: str) -> None:
    with pytest.raises(PathOutsideImportRoots):
        confine_to_import_roots(bad, [root])


def test_default_root_is_claude_codes_projects_folder(tmp_path: Path) -> None:
    settings = Settings.from_env({"HOME": str(tmp_path)})
    assert settings.import_roots == (Path.home().resolve() / ".claude" / "projects",)
    configured = Settings.from_env({"CLAUDE_CONFIG_DIR": str(tmp_path / "cc")})
    assert configured.import_roots == ((tmp_path / "cc" / "projects").resolve(),)


def test_import_roots_setting_takes_several_folders(tmp_path: Path, monkeypatch) -> None:
    value = f"{tmp_path / 'a'}:{tmp_path / 'b'}"
    monkeypatch.setenv("AXIOM_IMPORT_ROOTS", value)
    assert Settings.from_env().import_roots == (tmp_path / "a", tmp_path / "b")
    (tmp_path / "b").mkdir()
    assert confine_to_import_roots(tmp_path / "b" / "x.jsonl") == tmp_path / "b" / "x.jsonl"


def test_import_roots_must_be_absolute() -> None:
    with pytest.raises(SettingsError, match="AXIOM_IMPORT_ROOTS"):
        Settings.from_env({"AXIOM_IMPORT_ROOTS": "relative/dir"})
