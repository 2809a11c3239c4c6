"""Forgotten text out of the plain files of the data directory: logs and the hook spool.

A line or payload goes when it names a forgotten id as a whole token (so `s1` does not take
`s10`'s lines) or contains a forgotten text (or a line of a multi-line one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any


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
    needles = Needles(ids, texts or [])
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
