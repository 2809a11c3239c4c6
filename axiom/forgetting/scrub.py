"""Forgotten text out of the plain files of the data directory: logs, the hook spool,
kept uploads and the validator's per-entry modules.

A log line goes when it names a forgotten id as a whole token (so `s1` does not take
`s10`'s lines) or contains a forgotten text (or a line of a multi-line one). A spooled hook
payload is someone's pending work, so it goes on stronger evidence only: a forgotten id, a
string equal to a forgotten text, or a long forgotten text inside one of its strings - never
a shared line such as "return result" or a short reply such as "Thanks a lot!".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from axiom.graduation.idris import module_relpath
from axiom.ingest.uploads import discard_upload, kept_uploads


class Needles:
    """The ids and texts to look for, compiled once."""

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        parts = {line.strip() for t in texts for line in t.splitlines() if len(line.strip()) >= 8}
        parts.update(t for t in texts if "\n" not in t)
        self.parts = sorted(p for p in parts if p)
        alternatives = "|".join(rf"(?<![\w-]){re.escape(i)}(?![\w-])" for i in ids)
        self.token = re.compile(alternatives or r"(?!x)x")

    def __bool__(self) -> bool:
        return bool(self.parts) or self.token.pattern != r"(?!x)x"

    def found_in(self, text: str) -> bool:
        return bool(self.token.search(text)) or any(p in text for p in self.parts)


# A forgotten text at least this long is looked for inside a spooled string; a shorter one
# only as the whole string (a short reply recurs in unrelated sessions).
SPOOL_SUBSTRING_CHARS = 40


class SpoolNeedles:
    """The forgotten ids and whole texts, as `scrub_spool` looks for them."""

    def __init__(self, ids: list[str], texts: list[str]) -> None:
        self.ids = Needles(ids, [])
        whole = {t.strip() for t in texts if t.strip()}
        self.exact = whole
        self.inside = sorted(t for t in whole if len(t) >= SPOOL_SUBSTRING_CHARS)

    def __bool__(self) -> bool:
        return bool(self.ids) or bool(self.exact)

    def found_in(self, text: str) -> bool:
        return (
            bool(self.ids.token.search(text))
            or text.strip() in self.exact
            or any(t in text for t in self.inside)
        )


def scrub_logs(logs_dir: Path, ids: list[str], texts: list[str] | None = None) -> int:
    """Drop every line of every file under `logs_dir` that names or quotes the target;
    returns how many lines went."""
    needles = Needles(ids, texts or [])
    if not logs_dir.is_dir() or not needles:
        return 0
    removed = 0
    for path in sorted(p for p in logs_dir.rglob("*") if p.is_file()):
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
        kept = [line for line in lines if not needles.found_in(line)]
        if len(kept) != len(lines):
            removed += len(lines) - len(kept)
            path.write_text("".join(kept), encoding="utf-8")
    return removed


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def scrub_spool(spool_dir: Path, ids: list[str], texts: list[str] | None = None) -> int:
    """Delete every spooled hook payload (waiting, failed or half-written) that names or
    quotes the target: it could only bring back what was forgotten. Payloads are read as
    JSON so a text with quotes or newlines (escaped on disk) is still found. Returns how
    many files went."""
    needles = SpoolNeedles(ids, texts or [])
    if not spool_dir.is_dir() or not needles:
        return 0
    removed = 0
    for path in sorted(p for p in spool_dir.rglob("*") if p.is_file()):
        raw = path.read_text(encoding="utf-8", errors="replace")
        try:
            strings = list(_strings(json.loads(raw)))
        except ValueError:
            strings = [raw]
        if any(needles.found_in(s) for s in strings):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def scrub_uploads(data_dir: Path, ids: list[str], texts: list[str] | None = None) -> int:
    """Delete every kept upload (`axiom.ingest.uploads`) that names or quotes the target;
    returns how many went."""
    needles = Needles(ids, texts or [])
    if not needles:
        return 0
    removed = 0
    for folder in kept_uploads(data_dir):
        files = [p for p in folder.rglob("*") if p.is_file()]
        if any(needles.found_in(p.read_text(encoding="utf-8", errors="replace")) for p in files):
            discard_upload(folder)
            removed += 1
    return removed


def remove_modules(idris_dir: Path, entry_ids: list[str]) -> int:
    """Delete each entry's validator module (`Axiom/Entry_<id>.idr`: session id, spans and
    quote hashes) and what idris2 built from it (`build/ttc/<v>/Axiom/Entry_<id>.tt*`)."""
    removed = 0
    for entry_id in entry_ids:
        relpath = module_relpath(entry_id)
        built = idris_dir.glob(f"build/*/*/{relpath.with_suffix('.*').as_posix()}")
        for path in [idris_dir / relpath, *built]:
            if path.is_file():
                path.unlink()
                removed += 1
    return removed
