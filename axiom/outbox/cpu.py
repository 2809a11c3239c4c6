"""How many cores other processes keep busy right now: a foreground drain sizes its torch
threads by it. The 1-minute load average lags: right after an import it still counts the
importer's core as busy, so a drain started then took one thread on an idle machine."""

from __future__ import annotations

import os
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")
SAMPLE_S = 0.25


def cpu_times(stat: Path = PROC_STAT) -> tuple[int, int] | None:
    """(total, idle) jiffies of all cores since boot, from the `cpu` line of /proc/stat
    (idle includes iowait); None where there is no such file."""
    try:
        fields = stat.read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if len(fields) < 5 or fields[0] != "cpu":
        return None
    values = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return sum(values), values[3] + values[4]


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The share of all cores' time spent busy between two `cpu_times` readings."""
    total = after[0] - before[0]
    idle = after[1] - before[1]
    return 0.0 if total <= 0 else max(0.0, min(1.0, (total - idle) / total))


def busy_cores(sample_s: float = SAMPLE_S) -> float | None:
    """Cores kept busy over the next `sample_s` seconds (this process sleeps meanwhile);
    None where /proc/stat cannot be read."""
    before = cpu_times()
    if before is None:
        return None
    time.sleep(sample_s)
    after = cpu_times()
    if after is None:
        return None
    return (os.cpu_count() or 1) * busy_share(before, after)
