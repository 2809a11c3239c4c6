"""The command line starts without the MCP SDK (about a second of every command's start);
`axiom mcp` runs the server in a fresh interpreter, `axiom mcp config` only prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.agent.support import ROOT, child_env, run_axiom


def test_the_cli_imports_no_mcp_sdk() -> None:
    probe = "import sys, axiom.cli.main; print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=child_env(), cwd=ROOT
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_mcp_config_names_the_server_command(tmp_path: Path) -> None:
    out = run_axiom("mcp", "config", env=child_env(AXIOM_DATA_DIR=str(tmp_path)))
    assert out.returncode == 0, out.stderr
    server = json.loads(out.stdout)["mcpServers"]["axiom"]
    assert server["command"] == sys.executable
    assert server["args"] == ["-m", "axiom", "mcp"]
    assert server["env"] == {"AXIOM_DATA_DIR": str(tmp_path)}
