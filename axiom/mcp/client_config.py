"""What an MCP client needs to start Axiom's server, apart from the server itself: the CLI
prints it without importing the MCP SDK (about a second of every command's start)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

SERVER_NAME = "axiom"
SERVER_MODULE = "axiom.mcp"  # `python -m axiom.mcp` serves on stdio


def client_config(data_dir: Path, python: str = sys.executable) -> dict[str, Any]:
    """The `mcpServers` entry for Claude Code / Claude Desktop and other MCP clients."""
    return {
        "mcpServers": {
            SERVER_NAME: {
                "command": python,
                "args": ["-m", "axiom", "mcp"],
                "env": {"AXIOM_DATA_DIR": str(data_dir)},
            }
        }
    }


def server_argv(python: str = sys.executable) -> list[str]:
    """The command line that runs the server in a fresh interpreter (`axiom mcp` execs it)."""
    return [python, "-m", SERVER_MODULE]
