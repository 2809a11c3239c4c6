"""Every AXIOM_* environment variable, parsed in this one module.

Each setting is read through a typed helper that raises `SettingsError` naming the
variable and what it accepts, so a typo fails loudly at start instead of silently taking
a default. `Settings.from_env()` reads them all at once; it is cheap, so callers read it
when they need it and tests can change the environment between calls.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


class SettingsError(ValueError):
    """An AXIOM_* variable holds a value Axiom cannot use."""


def env_str(env: Mapping[str, str], name: str, default: str) -> str:
    value = env.get(name)
    return default if value is None or value.strip() == "" else value.strip()


def env_int(
    env: Mapping[str, str],
    name: str,
    default: int,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a whole number") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise SettingsError(f"{name}={raw!r}: expected a number in [{minimum}, {maximum}]")
    return value


def env_float(
    env: Mapping[str, str],
    name: str,
    default: float,
    *,
    minimum: float,
    maximum: float,
    include_minimum: bool = True,
) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw.strip())
    except ValueError:
        raise SettingsError(f"{name}={raw!r}: expected a number") from None
    low_ok = value >= minimum if include_minimum else value > minimum
    if not (low_ok and value <= maximum) or value != value:
        bracket = "[" if include_minimum else "("
        raise SettingsError(f"{name}={raw!r}: expected a number in {bracket}{minimum}, {maximum}]")
    return value


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{name}={raw!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = env_str(env, name, default).lower()
    if value not in choices:
        raise SettingsError(f"{name}={value!r}: expected one of {', '.join(choices)}")
    return value


def env_path(env: Mapping[str, str], name: str, default: Path) -> Path:
    raw = env.get(name)
    return Path(raw).expanduser() if raw and raw.strip() else default


def env_secret(env: Mapping[str, str], name: str) -> str:
    """A secret from `NAME`, or from the file that `NAME_FILE` names (Docker/systemd style)."""
    file_name = env.get(f"{name}_FILE", "").strip()
    if not file_name:
        return env_str(env, name, "")
    try:
        secret = Path(file_name).expanduser().read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise SettingsError(f"{name}_FILE={file_name!r}: cannot read it ({exc.strerror})") from None
    if not secret:
        raise SettingsError(f"{name}_FILE={file_name!r}: the file is empty")
    return secret


def env_paths(env: Mapping[str, str], name: str, default: tuple[Path, ...]) -> tuple[Path, ...]:
    """A list of directories separated by `os.pathsep` (`:` on Linux), each made absolute."""
    raw = env_str(env, name, "")
    if not raw:
        return default
    parts = [p.strip() for p in raw.split(os.pathsep) if p.strip()]
    paths = tuple(Path(p).expanduser() for p in parts)
    relative = [str(p) for p in paths if not p.is_absolute()]
    if relative:
        raise SettingsError(f"{name}={raw!r}: expected absolute paths, got {relative}")
    return tuple(p.resolve() for p in paths)


def claude_projects_dir(env: Mapping[str, str]) -> Path:
    """Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects` or `~/.claude/projects`."""
    config_dir = env_path(env, "CLAUDE_CONFIG_DIR", Path.home() / ".claude")
    return (config_dir / "projects").resolve()


@dataclass(frozen=True)
class Settings:
    """The parsed AXIOM_* variables (the README lists each with its default)."""

    data_dir: Path
    # Bearer token for the API (and, when set, for every page); empty = the data dir's token.
    auth_token: str = ""
    # Folders a path sent to the server (import page, hook transcript_path) must lie under.
    import_roots: tuple[Path, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        return cls(
            data_dir=env_path(env, "AXIOM_DATA_DIR", Path("data")).resolve(),
            auth_token=env_secret(env, "AXIOM_AUTH_TOKEN"),
            import_roots=env_paths(env, "AXIOM_IMPORT_ROOTS", (claude_projects_dir(env),)),
        )
