"""Markers of `forget` runs whose database commit happened but whose cleanup (rebuild,
LanceDB purge, file rewrite, log and spool scrubbing) may not have finished.

One JSON file per run under `<data dir>/forget-pending/`, written and fsynced inside the
write transaction, before its commit, and deleted once the cleanup is done. A crash in
between leaves the marker; the next `forget`, `process` or `up` finishes the work. A marker
whose `redacted` event never committed is dropped. The marker holds the texts to scrub from
logs and the spool (they are no longer in the database to be read again); it lives only as
long as those texts are still on disk elsewhere anyway.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Pending:
    redaction_id: str
    scope: str
    session_ids: list[str] = field(default_factory=list)
    entry_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    task_ids: list[str] = field(default_factory=list)  # tasks only the target created


def _path(folder: Path, redaction_id: str) -> Path:
    return folder / f"{redaction_id}.json"


def write(folder: Path, pending: Pending) -> Path:
    """Store the marker durably (temporary file, fsync, rename)."""
    folder.mkdir(parents=True, exist_ok=True)
    final = _path(folder, pending.redaction_id)
    tmp = folder / f".{final.name}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(asdict(pending), fh, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    return final


def waiting(folder: Path) -> list[Pending]:
    """Every marker left, oldest first; unreadable ones are removed (they name nothing)."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime):
        if path.name.startswith("."):  # a marker cut short before its rename: never in force
            path.unlink(missing_ok=True)  # (the commit comes after the rename), and it holds text
            continue
        try:
            found.append(Pending(**json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError, TypeError):
            path.unlink(missing_ok=True)
    return found


def done(folder: Path, redaction_id: str) -> None:
    _path(folder, redaction_id).unlink(missing_ok=True)
