"""`python -m axiom.mcp`: the MCP server on stdio (what `python -m axiom mcp` runs)."""

from axiom.mcp.server import serve

serve()
