"""Wall-clock time of each Claude Code hook command, interpreter start included.

    python bench/bench_hooks.py [--runs 5] [--data-dir DIR] [--service] [--quick] [--json OUT]

Runs each command exactly as `hooks install` writes it (a shell, Claude Code's hook JSON
on stdin) against DIR (default: a fresh temporary data dir with the sample session
imported) with the service down (nothing on AXIOM_PORT), and prints median and max
seconds per hook, wall and CPU. With `--service` a `manage.py runserver` (AXIOM_EMBEDDER
taken from the environment) answers on AXIOM_PORT first, so the hooks take the POST path;
a payload whose POST outruns the hook's 0.6 s is spooled (counted at the end).
Figures are (user + system of the hook process: what the hook costs
when the machine is not shared; wall also counts waiting for a core). Each must stay
under one second. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from protocol import result, write_json  # noqa: E402 - bench/protocol.py, beside this script

from axiom.hooks.install import EVENT_COMMANDS, hook_command  # noqa: E402

SAMPLE = next((ROOT / "axiom" / "samples" / "claude_code").rglob("*.jsonl"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_service(data_dir: Path, port: int, env: dict[str, str]) -> subprocess.Popen:
    """runserver on `port`, answering /api/v1/health (any status) before we go on."""
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env={**env, "AXIOM_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "config.settings"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            opener.open(f"http://127.0.0.1:{port}/api/v1/health", timeout=5).close()
            return server
        except urllib.error.HTTPError:
            return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise SystemExit("runserver did not answer within 120 s")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--data-dir", type=Path)
    parser.add_argument("--service", action="store_true", help="hooks POST to a live service")
    parser.add_argument("--quick", action="store_true", help="2 runs per hook")
    parser.add_argument("--json", type=Path, help="write the bench protocol's JSON here")
    args = parser.parse_args()
    if args.quick:
        args.runs = 2
    data_dir = args.data_dir or Path(tempfile.mkdtemp()) / "data"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "AXIOM_PORT": str(_free_port())}
    if args.data_dir is None:
        subprocess.run(
            [sys.executable, "-m", "axiom", "import", "--no-process", "--quiet", str(SAMPLE)],
            env={**env, "AXIOM_DATA_DIR": str(data_dir)},
            check=True,
            cwd=ROOT,
        )
    server = start_service(data_dir, int(env["AXIOM_PORT"]), env) if args.service else None
    try:
        results = run_hooks(args.runs, data_dir, env)
    finally:
        if server is not None:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait()
    spooled = len(list((data_dir / "spool").glob("*.json")))
    print(f"service: {'up' if args.service else 'down'}; spooled payloads: {spooled}")
    print(
        f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"
    )
    params = {"runs": args.runs, "service": args.service, "spooled": spooled}
    write_json(args.json, "hooks", params, results)
    return 0


def run_hooks(runs: int, data_dir: Path, env: dict[str, str]) -> list[dict[str, object]]:
    """Each hook `runs` times; per hook the wall and CPU seconds (target: under 1 s)."""
    results = []
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
        for _ in range(runs):
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
        wall_ms, cpu_ms = [t * 1000 for t in times], [c * 1000 for c in cpu]
        results += [
            result(
                f"hook {event} wall", "ms", wall_ms, target="p95 < 1000 ms", met=max(wall_ms) < 1000
            ),  # fmt: skip
            result(
                f"hook {event} cpu", "ms", cpu_ms, target="p95 < 1000 ms", met=max(cpu_ms) < 1000
            ),  # fmt: skip
        ]
    return results


if __name__ == "__main__":
    sys.exit(main())
