"""Progress for the commands that run longer than a second, drawn on stderr.

The core reports progress through plain callbacks (`on_session`, `on_projector`,
`on_step`, …) and never draws anything; the CLI hands it a `Bar`. A bar shows only when
stderr is a terminal and the user did not pass `--quiet`: piped or logged output stays
clean, and a disabled bar writes nothing at all.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType

from tqdm import tqdm


def wanted(quiet: bool = False) -> bool:
    """Whether to draw progress: stderr is a terminal and `--quiet` was not given."""
    return not quiet and sys.stderr.isatty()


def _shape() -> tuple[int, int]:
    """stderr's terminal (columns, lines); 80×24 where it reports none (a fresh
    pseudo-terminal says 0×0, and tqdm then draws nothing at all)."""
    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError):
        return 80, 24
    return size.columns or 80, size.lines or 24


class Bar:
    """A progress bar on stderr, or nothing when disabled. Use as a context manager."""

    def __init__(self, total: int | None, unit: str, desc: str = "", enabled: bool = True):
        self.enabled = enabled
        columns, lines = _shape() if enabled else (None, None)
        self._bar = tqdm(
            total=total, unit=unit, desc=desc or None, file=sys.stderr,
            leave=False, disable=not enabled, ncols=columns, nrows=lines,
        )  # fmt: skip

    def set_total(self, total: int) -> None:
        """The number of units, once the core knows it (`process_sessions`' `on_start`)."""
        self._bar.total = total
        self._bar.refresh()

    def advance(self, n: int = 1, note: str | None = None) -> None:
        """`n` more units done; `note` (what is being worked on) shows after the bar."""
        if note is not None:
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.update(n)

    def step(self, name: str) -> None:
        """One unit done, named (`rebuild`'s projectors, `reconcile`'s phases)."""
        self.advance(1, name)

    def say(self, line: str) -> None:
        """A line above the bar (a finished conversation); silent when disabled."""
        if self.enabled:
            self._bar.write(line, file=sys.stderr)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Bar:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
