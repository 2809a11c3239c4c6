"""Where a file uploaded to the import page is kept: `<data dir>/uploads/<random>/<name>`.

The name a browser sends is only a hint (it may be `../../x` or empty): it is cut to its
last part and to safe characters, keeping the extension the format detection reads.

A raw copy of a transcript would keep its secrets and outlive a `forget`, so an upload is
kept no longer, and no rawer, than it has to be:

- once an import has stored all of it, it is deleted (`settle_upload`): the event store
  holds it, privacy-filtered;
- a file with problems stays, so it can be fixed and imported again, filtered line by
  line: a line that parses as JSON through the whole privacy filter string by string (it
  stays JSON), any other line with its secrets masked (`mask_secrets`: cutting a private
  region out of a broken line could leave it unfixable);
- `forget` deletes every kept upload naming or quoting what it forgets
  (`axiom.forgetting.scrub.scrub_uploads`);
- a kept upload older than `KEEP_DAYS` is deleted when the next file is uploaded, so a file
  that failed completely (nothing of it stored, nothing to forget it by) is not kept forever.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from axiom.ingest.privacy.filter import PrivacyFilter, mask_secrets

UPLOADS = "uploads"
KEEP_DAYS = 7
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class UploadTooLarge(ValueError):
    """The upload is bigger than the configured limit (nothing is kept)."""


def safe_upload_name(name: str) -> str:
    """The last part of `name` in safe characters, never empty nor hidden."""
    last = re.split(r"[\\/]", name or "")[-1]
    cleaned = _UNSAFE.sub("_", last).lstrip(".")[:120]
    return cleaned or "upload.jsonl"


def store_upload(data_dir: Path, name: str, chunks: Iterable[bytes], max_bytes: int) -> Path:
    """Write the chunks to a fresh folder under the uploads dir; `UploadTooLarge` (and the
    partial file removed) once more than `max_bytes` arrive. Kept uploads older than
    `KEEP_DAYS` go first."""
    prune_kept_uploads(data_dir, KEEP_DAYS * 86400)
    folder = data_dir / UPLOADS / secrets.token_hex(8)
    folder.mkdir(parents=True)
    path = folder / safe_upload_name(name)
    written = 0
    with path.open("wb") as out:
        for chunk in chunks:
            written += len(chunk)
            if written > max_bytes:
                break
            out.write(chunk)
    if written > max_bytes:
        path.unlink()
        folder.rmdir()
        raise UploadTooLarge(f"the file is larger than {max_bytes // 1_000_000} MB")
    return path


def _upload_folder(data_dir: Path, path: Path) -> Path | None:
    """The upload's own folder, or None when `path` is not an upload (a typed path)."""
    folder = path.resolve().parent
    return folder if folder.parent == (data_dir / UPLOADS).resolve() else None


def settle_upload(data_dir: Path, path: Path, problems: int) -> bool:
    """After the import of `path`: an upload stored whole is deleted; one with problems is
    kept, its secrets masked (module docstring). A path that is not an upload is left
    alone. True if the upload went."""
    folder = _upload_folder(data_dir, path)
    if folder is None:
        return False
    if problems:
        mask_kept_upload(path)
        return False
    discard_upload(folder)
    return True


_FILTER = PrivacyFilter()


def _filter_line(line: str) -> tuple[str, int]:
    """One line of a kept upload, filtered (see `mask_kept_upload`), and how much was hidden."""
    body = line.rstrip("\r\n")
    try:
        value = json.loads(body)
    except ValueError:
        text, counts = mask_secrets(line)
        return text, sum(counts.values())
    hidden = [0]

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            result = _FILTER.apply(item)
            hidden[0] += sum(result.counts.values())
            return result.text
        if isinstance(item, list):
            return [clean(x) for x in item]
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        return item

    value = clean(value)
    if not hidden[0]:
        return line, 0
    return json.dumps(value, ensure_ascii=False) + line[len(body) :], hidden[0]


def abandon_upload(data_dir: Path, path: Path) -> bool:
    """An upload whose import never started (the queue was down): deleted, as the person
    is told to send it again. A path that is not an upload is left alone."""
    folder = _upload_folder(data_dir, path)
    if folder is None:
        return False
    discard_upload(folder)
    return True


def mask_kept_upload(path: Path) -> int:
    """Rewrite `path` with each line filtered: a line that parses as JSON through the whole
    privacy filter, string by string (private regions removed too, the line still JSON); any
    other line with its secrets masked (cutting a region out of it could make it unfixable).
    Bytes that are not UTF-8 are kept as they were. Returns how many things were hidden."""
    raw = path.read_bytes().decode("utf-8", errors="surrogateescape")
    masked = 0
    lines = []
    for line in raw.splitlines(keepends=True):
        text, hidden = _filter_line(line)
        masked += hidden
        lines.append(text)
    if masked:
        path.write_bytes("".join(lines).encode("utf-8", errors="surrogateescape"))
    return masked


def kept_uploads(data_dir: Path) -> Iterator[Path]:
    """The folder of every kept upload."""
    uploads = data_dir / UPLOADS
    if uploads.is_dir():
        yield from sorted(p for p in uploads.iterdir() if p.is_dir())


def discard_upload(folder: Path) -> None:
    """Delete one kept upload (its folder and everything in it)."""
    shutil.rmtree(folder, ignore_errors=True)


def _modified(folder: Path) -> float:
    """When `folder` last changed; +inf when it is gone (another upload pruned it first)."""
    try:
        return folder.stat().st_mtime
    except FileNotFoundError:
        return float("inf")


def prune_kept_uploads(data_dir: Path, max_age_s: float) -> int:
    """Delete the kept uploads not touched for `max_age_s`; returns how many went."""
    cutoff = time.time() - max_age_s
    old = [f for f in kept_uploads(data_dir) if _modified(f) < cutoff]
    for folder in old:
        discard_upload(folder)
    return len(old)
