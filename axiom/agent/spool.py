"""The spool: hook payloads waiting to be imported — those a hook wrote while the service
was down (or slower than its budget), and those the service handed to its worker.

One JSON file per payload under `<data dir>/spool/`, written atomically (a temporary file
in the same folder, fsynced, then renamed), so a reader never sees half a payload and a
crash leaves at most a `.tmp` file that `pending()` ignores. Every string in a payload
passes the privacy filter before it is written: secrets never reach the disk.

The next `up`, `import` or `process` drains the spool (`axiom.agent.drain`), and so does
the worker's `axiom.import_spooled_hooks` under `up` (queued per hook, and every minute by
beat): it imports the transcripts the payloads name and then deletes their files. Import
is idempotent (dedupe keys), so a payload drained twice — or handed to the service and
spooled — is stored once.
`forget` deletes every spooled payload naming or quoting what it forgets
(`axiom.forgetting.scrub.scrub_spool`).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from axiom.config import AxiomConfig
from axiom.ingest.privacy.filter import PrivacyFilter

_FILTER = PrivacyFilter()


def spool_dir(data_dir: Path) -> Path:
    return AxiomConfig(data_dir).spool_dir


def scrub(value: Any) -> Any:
    """`value` with every string passed through the privacy filter (keys included)."""
    if isinstance(value, str):
        return _FILTER.apply(value).text
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def write(data_dir: Path, event: str, payload: dict[str, Any]) -> Path:
    """Spool one hook payload (filtered) and return its file."""
    folder = spool_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    record = {"event": event, "received_at": time.time(), "payload": scrub(payload)}
    name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:12]}.json"
    tmp = folder / f".{name}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh, ensure_ascii=False)
        fh.flush()
        os.fsync(fh.fileno())
    final = folder / name
    os.replace(tmp, final)
    return final


def pending(data_dir: Path) -> list[Path]:
    """Spooled payload files, oldest first."""
    folder = spool_dir(data_dir)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))


def count(data_dir: Path) -> int:
    return len(pending(data_dir))


def read(path: Path) -> dict[str, Any] | None:
    """One spooled record, or None when the file is not a readable record."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and isinstance(record.get("payload"), dict) else None
