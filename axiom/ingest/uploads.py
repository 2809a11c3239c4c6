"""Where a file uploaded to the import page is kept: `<data dir>/uploads/<random>/<name>`.

The name a browser sends is only a hint (it may be `../../x` or empty): it is cut to its
last part and to safe characters, keeping the extension the format detection reads. The
file stays until an import has stored all of it (`discard_imported_upload`), so a failed
import loses nothing and can be run again.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable
from pathlib import Path

UPLOADS = "uploads"
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
    partial file removed) once more than `max_bytes` arrive."""
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


def discard_imported_upload(data_dir: Path, path: Path, problems: int) -> bool:
    """Delete an uploaded file once everything in it is stored (the event store holds it,
    privacy-filtered; the raw copy would keep its secrets and outlive a `forget`). A file
    with problems stays, so it can be fixed and imported again. True if it went."""
    uploads = (data_dir / UPLOADS).resolve()
    folder = path.resolve().parent
    if problems or folder.parent != uploads:
        return False
    for leftover in folder.iterdir():
        leftover.unlink()
    folder.rmdir()
    return True
