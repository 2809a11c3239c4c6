"""`python -m axiom mcp` (which runs `python -m axiom.mcp`): Axiom's memory as MCP tools on stdio, over the same store as the web.

Four tools, cheapest first (progressive disclosure, `axiom.retrieval.disclosure`):

* `mem-search` — the index layer: per hit its id, one-line summary, score, confidence
  (`axiom.retrieval.confidence.relevance`) and citation;
* `mem-timeline` — the messages around one hit in its session;
* `mem-details` — one hit in full: an entry with its evidence and citations, or a message;
* `mem-cite` — a `mem:` citation opened: the exact span with the text around it.

The search service (LanceDB table + embedder) is opened on the first search and kept.
`python -m axiom mcp config` prints the client configuration (`axiom.mcp.client_config`).
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as SDKToolError

from axiom.config import AxiomConfig
from axiom.evidence.citations import get_citation
from axiom.mcp.client_config import SERVER_NAME
from axiom.retrieval.confidence import relevance
from axiom.retrieval.disclosure import details, index_item, parse_hit_id, timeline
from axiom.retrieval.query import MAX_K, MODES, QueryError
from axiom.retrieval.search import SearchService
from axiom.store import snapshots
from axiom.store.migrate import open_database


class ToolError(SDKToolError, ValueError):
    """Bad arguments or an unknown id: the agent gets the message as the tool's error.

    It must be the SDK's `ToolError`: any other exception counts as a crash, the client
    sees only "Error executing tool …" and the server logs a traceback."""


class MemoryTools:
    """The tools' bodies, over one database and one (lazily opened) search service."""

    def __init__(self, config: AxiomConfig | None = None) -> None:
        self.config = config or AxiomConfig.from_env()
        self.db = open_database(self.config)
        self._search: SearchService | None = None

    def service(self) -> SearchService:
        if self._search is None:
            self._search = SearchService.from_config(self.config)
        return self._search

    def search(self, query: str, k: int = 10, mode: str = "hybrid") -> dict[str, Any]:
        if mode not in MODES:
            raise ToolError(f"mode must be one of {', '.join(MODES)}")
        try:
            result = self.service().search(query, k=max(1, min(int(k), MAX_K)), mode=mode)
        except QueryError as exc:  # an empty or blank query: the agent's argument, not a crash
            raise ToolError(str(exc)) from exc
        hits = [{**index_item(h), "relevance": relevance(h)} for h in result.hits]
        return {
            "query": result.query,
            "mode": result.mode,
            "hits": hits,
            "warnings": result.warnings,
            "unindexed": result.unindexed,
        }

    def timeline(self, hit_id: str) -> dict[str, Any]:
        _check_hit_id(hit_id)
        with self.db.read() as conn:
            found = timeline(conn, hit_id)
        if found is None:
            raise ToolError(f"no timeline for {hit_id}")
        return found

    def details(self, hit_id: str) -> dict[str, Any]:
        _check_hit_id(hit_id)
        with self.db.read() as conn:
            found = details(conn, hit_id)
        if found is None:
            raise ToolError(f"nothing found for {hit_id}")
        return found

    def cite(self, citation_id: str) -> dict[str, Any]:
        with self.db.read() as conn:
            found = get_citation(conn, citation_id)
        if found is None:
            raise ToolError(f"unknown citation {citation_id}")
        return found.to_json()


def _check_hit_id(hit_id: str) -> None:
    try:
        parse_hit_id(hit_id)
    except ValueError as exc:
        raise ToolError(str(exc)) from exc


def build_server(tools: MemoryTools) -> MCPServer:
    server = MCPServer(
        SERVER_NAME,
        instructions="Search Axiom's memory of past sessions;"
        " every memory carries a `mem:` citation to the exact words.",
    )

    @server.tool(name="mem-search")
    def mem_search(query: str, k: int = 10, mode: str = "hybrid") -> dict[str, Any]:
        """Search memories and messages. Returns per hit: id, summary, score, tier,
        relevance (high/suggested/none) and citation. Open a hit with mem-details."""
        return tools.search(query, k, mode)

    @server.tool(name="mem-timeline")
    def mem_timeline(id: str) -> dict[str, Any]:
        """The messages around a hit (id from mem-search) in its session."""
        return tools.timeline(id)

    @server.tool(name="mem-details")
    def mem_details(id: str) -> dict[str, Any]:
        """One hit in full: an entry with stage, status and evidence, or a message."""
        return tools.details(id)

    @server.tool(name="mem-cite")
    def mem_cite(citation: str) -> dict[str, Any]:
        """Open a `mem:` citation: the exact cited span with the text before and after."""
        return tools.cite(citation)

    return server


def serve() -> None:
    """Run the server on stdin/stdout until the client closes it. Like the web, it only
    reads and answers someone waiting, so a read that would wait for a writer's
    transaction is served from the newest read snapshot (`axiom.store.snapshots`)."""
    snapshots.serve_reads()
    build_server(MemoryTools()).run("stdio")
