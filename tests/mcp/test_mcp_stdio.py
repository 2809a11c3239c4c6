"""An MCP client from the `mcp` SDK talks to `python -m axiom mcp` over stdio, against a
data dir holding an imported, processed and embedded Claude Code session (default e5)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TextIO

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.agent.support import ROOT, SAMPLE, child_env, run_axiom


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("mcp") / "data"
    env = child_env(AXIOM_DATA_DIR=str(directory))
    assert run_axiom("import", "--quiet", str(SAMPLE), env=env).returncode == 0
    assert run_axiom("outbox", "drain", env=env).returncode == 0
    return directory


def _json(result) -> dict:  # noqa: ANN001 - a CallToolResult
    assert not result.is_error, result
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def _talk(data_dir: Path, errlog: TextIO) -> dict:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "axiom", "mcp"],
        env=child_env(AXIOM_DATA_DIR=str(data_dir)),
        cwd=ROOT,
    )
    out: dict = {}
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
        found = _json(
            await session.call_tool("mem-search", {"query": "DuckDB event store", "mode": "fts"})
        )
        out["search"] = found
        out["hybrid"] = _json(
            await session.call_tool("mem-search", {"query": "DuckDB event store"})
        )
        entry = next(h for h in found["hits"] if h["kind"] == "entry")
        out["timeline"] = _json(await session.call_tool("mem-timeline", {"id": entry["id"]}))
        out["details"] = _json(await session.call_tool("mem-details", {"id": entry["id"]}))
        out["cite"] = _json(await session.call_tool("mem-cite", {"citation": entry["citation"]}))
        out["bad"] = await session.call_tool("mem-details", {"id": "nonsense"})
        out["bad_cite"] = await session.call_tool("mem-cite", {"citation": "mem:nonexistent"})
        out["empty"] = [
            await session.call_tool("mem-search", {"query": query}) for query in ("", "   ")
        ]
    return out


@pytest.mark.slow
def test_an_mcp_client_searches_and_opens_hits_over_stdio(data_dir: Path, tmp_path: Path) -> None:
    with (tmp_path / "server.err").open("w+", encoding="utf-8") as errlog:
        out = asyncio.run(_talk(data_dir, errlog))
        errlog.seek(0)
        server_log = errlog.read()
    assert out["tools"] == ["mem-cite", "mem-details", "mem-search", "mem-timeline"]
    hits = out["search"]["hits"]
    assert hits and {"id", "summary", "score", "citation", "relevance"} <= set(hits[0])
    assert "duckdb" in hits[0]["summary"].lower()
    assert out["search"]["unindexed"] == 0  # the fixture drained the outbox
    # the default mode embeds the query with the configured (default e5) embedder
    assert any(h["kind"] == "entry" for h in out["hybrid"]["hits"])
    assert out["timeline"]["messages"] and any(m["hit"] for m in out["timeline"]["messages"])
    assert out["details"]["kind"] == "entry" and out["details"]["evidence"]
    assert out["cite"]["quote"] and out["cite"]["quote"] in (
        out["cite"]["context_before"] + out["cite"]["quote"] + out["cite"]["context_after"]
    )
    assert out["bad"].is_error
    # an anticipated error reaches the agent with its message, not only "Error executing tool"
    assert out["bad_cite"].is_error
    assert "unknown citation mem:nonexistent" in out["bad_cite"].content[0].text
    assert "not a search hit id" in out["bad"].content[0].text
    # an empty or blank query is the agent's mistake: a clear tool error, no server traceback
    for empty in out["empty"]:
        assert empty.is_error and "the query is empty" in empty.content[0].text
    assert "Traceback" not in server_log, server_log
