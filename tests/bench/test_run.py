"""`bench/run` as a user runs it: one benchmark's smoke sizes give a RESULTS.md with the
machine block and the benchmark's table; a benchmark that fails is reported, not fatal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_bench(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    out = tmp_path / "RESULTS.md"
    env = {"PATH": "/usr/bin:/bin", "AXIOM_BENCH_PYTHON": sys.executable}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run"), *args, "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done, out.read_text() if out.exists() else ""


@pytest.mark.slow
def test_a_quick_run_of_one_benchmark_writes_results_with_the_machine_block(
    tmp_path: Path,
) -> None:
    done, results = run_bench(tmp_path, "--quick", "--only", "bench_align")

    assert done.returncode == 0, done.stderr
    for line in ("## Machine", "| CPU model |", "| cores |", "| RAM |", "| load average (1/5/15 min) before |", "| date |", "| git commit |"):  # fmt: skip
        assert line in results
    assert "## align" in results and "`bench/bench_align.py --quick`" in results
    assert "| metric | unit | median | p95 | value | reference | ratio | target | met |" in results
    assert "| align fuzzy (english) | ms |" in results
    assert "FAILED" not in results


def test_a_failing_benchmark_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    done, results = run_bench(tmp_path, "--quick", "--only", "bench_align", "--timeout", "0.01")

    assert done.returncode == 0
    assert "## bench_align" in results and "**FAILED** (timed out)" in results
