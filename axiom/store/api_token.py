"""The API token: what a script, hook or MCP server sends as `Authorization: Bearer …`.

`AXIOM_AUTH_TOKEN` wins when it is set. Otherwise the token lives in the data directory
(`api-token`, mode 0600), made on first use, so the web process, the CLI
(`python -m axiom token`) and hooks on the same machine all read the same value and
nothing has to be configured for a local install.
"""

from __future__ import annotations

import os
import secrets
import stat
import tempfile
from pathlib import Path

from axiom.settings import Settings

API_TOKEN_FILE = "api-token"
_TOKEN_BYTES = 32


class ApiTokenError(RuntimeError):
    """The token file exists but cannot be used (empty, unreadable)."""


def api_token_path(data_dir: Path) -> Path:
    return data_dir / API_TOKEN_FILE


def _read(path: Path) -> str:
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        os.chmod(path, 0o600)  # readable by others: tighten it rather than leak it further
    token = path.read_text(encoding="utf-8").strip()
    if not token:
        raise ApiTokenError(f"{path} is empty: delete it and a new token is made")
    return token


def ensure_api_token(data_dir: Path) -> str:
    """The token stored in `data_dir`, created (0600, never world-readable) if missing.

    The token is written whole to a temporary file, then hard-linked into place, so two
    processes starting at once agree on one token and never read a half-written one.
    """
    path = api_token_path(data_dir)
    if path.exists():
        return _read(path)
    data_dir.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".api-token-", dir=data_dir)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(secrets.token_urlsafe(_TOKEN_BYTES) + "\n")
        os.link(temporary, path)  # atomic, and refuses to replace a token made meanwhile
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)
    return _read(path)


def api_token(settings: Settings | None = None) -> str:
    """The token API writes must carry: `AXIOM_AUTH_TOKEN` if set, else the data dir's."""
    settings = Settings.from_env() if settings is None else settings
    return settings.auth_token or ensure_api_token(settings.data_dir)
