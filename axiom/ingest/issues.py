"""Problems found while reading input: reported, never fatal to the rest of the import."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputIssue:
    """A problem at `path:line` (line is None for whole-file problems)."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.reason}"
