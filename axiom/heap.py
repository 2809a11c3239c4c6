"""The cycle collector's schedule during batch work: an import, the pipeline over many
sessions.

CPython frees almost every object by reference counting; its cycle collector only finds
garbage that refers to itself. It runs every 700 net allocations, and its older passes
scan every object alive. A batch that parses transcripts and builds thousands of events
holds hundreds of thousands of objects and allocates millions, so those passes took a
large share of its time (README, "Session 23"). `batch_work` runs the collector less often
meanwhile: after `BATCH_THRESHOLDS[0]` net allocations instead of 700. It also freezes
the objects alive when it starts (`gc.freeze`): modules, settings, caches. These are
never garbage, so no pass scans them. Leaving the outermost `batch_work` restores the
thresholds and unfreezes those objects; cyclic garbage the batch left in the older
generations is then found on the usual schedule. A process that froze objects itself (a
server before it forks its workers) keeps them frozen: the block then only changes the
thresholds. A child forked meanwhile (`axiom.forking`) inherits the schedule.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# (net allocations before a young pass, young passes before a middle one, middle passes
# before a full one): a young pass every 100,000 allocations, a middle one every 2 million
# and a full one every 20 million keep a batch's cyclic garbage (exceptions and their
# tracebacks, mostly) bounded, at a fraction of the cost.
BATCH_THRESHOLDS = (100_000, 20, 10)


class _Schedule:
    """How many `batch_work` blocks are open (threads may nest them), and the thresholds
    to restore when the last one closes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.saved: tuple[int, int, int] = gc.get_threshold()
        self.froze = False  # whether the outermost block froze (none was frozen before)


_SCHEDULE = _Schedule()


@contextmanager
def batch_work() -> Iterator[None]:
    """The collector on the batch schedule (see the module docstring) inside the block."""
    with _SCHEDULE.lock:
        if _SCHEDULE.depth == 0:
            _SCHEDULE.saved = gc.get_threshold()
            _SCHEDULE.froze = gc.get_freeze_count() == 0
            if _SCHEDULE.froze:
                gc.freeze()
            gc.set_threshold(*BATCH_THRESHOLDS)
        _SCHEDULE.depth += 1
    try:
        yield
    finally:
        with _SCHEDULE.lock:
            _SCHEDULE.depth -= 1
            if _SCHEDULE.depth == 0:
                gc.set_threshold(*_SCHEDULE.saved)
                if _SCHEDULE.froze:
                    gc.unfreeze()
