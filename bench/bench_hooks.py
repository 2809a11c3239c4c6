"""Wall-clock time of each Claude Code hook command, interpreter start included.

    python bench/bench_hooks.py [--runs 5] [--data-dir DIR]

Runs each command exactly as `hooks install` writes it (a shell, Claude Code's hook JSON
on stdin) against DIR (default: a fresh temporary data dir with the sample session
imported) with the service down (nothing on AXIOM_PORT), and prints median and max
seconds per hook, wall and CPU (user + system of the hook process: what the hook costs
when the machine is not shared; wall also counts waiting for a core). Each must stay
under one second. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from axiom.hooks.install import EVENT_COMMANDS, hook_command  # noqa: E402

SAMPLE = next((ROOT / "axiom" / "samples" / "claude_code").rglob("*.jsonl"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data-dir", type=Path)
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp()) / "data"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AXIOM_PORT": str(_free_port())}
    if args.data_dir is None:
        subprocess.run(
            [sys.executable, "-m", "axiom", "import", "--no-process", "--quiet", str(SAMPLE)],
            env={**env, "AXIOM_DATA_DIR": str(data_dir)},
            check=True,
            cwd=ROOT,
        )
    for event in EVENT_COMMANDS:
        body = json.dumps(
            {
                "session_id": SAMPLE.stem,
                "transcript_path": str(SAMPLE),
                "cwd": "/home/dev/axiom",
                "hook_event_name": event,
                "prompt": "which database holds the event store?",
            }
        )
        times, cpu = [], []
        for _ in range(args.runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(
                hook_command(event, data_dir),
                shell=True,
                input=body,
                text=True,
                capture_output=True,
                env=env,
                check=True,
            )
            times.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        print(
            f"{event:<17} wall median {statistics.median(times):.3f} s max {max(times):.3f} s"
            f"  cpu median {statistics.median(cpu):.3f} s max {max(cpu):.3f} s"
        )
    print(
        f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
