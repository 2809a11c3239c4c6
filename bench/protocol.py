"""The bench protocol's JSON (see README "Benchmarks"): one object per script, one result
per metric. Shared by the bench scripts and `bench/run`, so every figure has one shape."""

from __future__ import annotations

import json
import platform
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def locomo_dev(root: Path) -> Path:
    """`shared/data/locomo-dev` in the nearest parent of `root` that has it (a worktree sits
    deeper than the main checkout); a path that does not exist if none has it."""
    for parent in root.parents:
        found = parent / "shared" / "data" / "locomo-dev"
        if found.is_dir():
            return found
    return root / "missing-shared-data"


def cpu_model() -> str:
    """The CPU's model name, for the machine a figure ran on."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def p95(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def result(
    metric: str,
    unit: str,
    samples: Sequence[float] | None = None,
    *,
    percentiles: tuple[float, float] | None = None,
    value: float | None = None,
    reference: float | None = None,
    ratio: float | None = None,
    target: str | None = None,
    met: bool | None = None,
) -> dict[str, Any]:
    """One metric: `samples` give median and p95, or `percentiles` gives (median, p95)
    computed elsewhere; `value` is a single figure."""
    if samples:
        percentiles = (statistics.median(samples), p95(samples))
    return {
        "metric": metric,
        "unit": unit,
        "median": percentiles[0] if percentiles else None,
        "p95": percentiles[1] if percentiles else None,
        "value": value,
        "reference": reference,
        "ratio": ratio,
        "target": target,
        "met": met,
    }


def write_json(path: Path | None, benchmark: str, params: dict[str, Any], results: list[dict[str, Any]]) -> None:  # fmt: skip
    """Write the protocol object to `path` (nothing without `--json OUT`)."""
    if path is not None:
        doc = {"benchmark": benchmark, "params": params, "results": results}
        path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
