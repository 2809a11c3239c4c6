"""Which transcript paths a server may read: only those under `AXIOM_IMPORT_ROOTS`.

A path typed at the CLI is the user's own choice and is imported as named. A path that
reaches the server from outside (the import page, a hook's `transcript_path`, an API
call) could name any file the server can read (`/etc/passwd`, `~/.ssh/id_rsa`), so it is
resolved — symlinks and `..` included — and must then lie under one of the roots
(default: Claude Code's projects folder).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from axiom.settings import Settings


class PathOutsideImportRoots(ValueError):
    """A path sent to the server is not under any of the import roots."""


def confine_to_import_roots(path: str | Path, roots: Sequence[Path] | None = None) -> Path:
    """The resolved `path` if it lies under one of `roots` (default: the configured
    `AXIOM_IMPORT_ROOTS`); otherwise `PathOutsideImportRoots` naming the roots."""
    roots = Settings.from_env().import_roots if roots is None else tuple(roots)
    text = str(path)
    if "\x00" in text:
        raise PathOutsideImportRoots("the path contains a NUL byte")
    candidate = Path(text).expanduser()
    if not candidate.is_absolute():
        raise PathOutsideImportRoots(f"{text!r} is not an absolute path")
    resolved = candidate.resolve()
    for root in roots:
        if resolved.is_relative_to(Path(root).resolve()):
            return resolved
    allowed = ", ".join(str(r) for r in roots) or "(none configured)"
    raise PathOutsideImportRoots(
        f"{text!r} is outside the import roots ({allowed}): set AXIOM_IMPORT_ROOTS"
        " to allow another folder, or import it with `python -m axiom import`"
    )
