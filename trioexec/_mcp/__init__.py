"""MCP servers as tools: reading ``.mcp.json`` and running its servers under trio."""
