"""The MCP server (stdio) that lets an agent search Axiom's memory itself."""
