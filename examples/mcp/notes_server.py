"""A tiny MCP server for ``examples/mcp_servers.py``: notes kept in memory.

``list_notes`` is read-only (so calls to it may overlap and need no permission);
``add_note`` declares itself non-destructive; ``clear_notes`` is destructive,
so the permission chain asks before it runs.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("notes")
NOTES: list[str] = []


@server.tool(annotations=ToolAnnotations(destructive_hint=False))
async def add_note(text: str) -> str:
    """Keep a note."""
    NOTES.append(text)
    return f"noted ({len(NOTES)} so far)"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def list_notes(prefix: str = "") -> str:
    """The notes that start with ``prefix``."""
    return "\n".join(note for note in NOTES if note.startswith(prefix)) or "(no notes)"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
async def clear_notes() -> str:
    """Forget every note."""
    NOTES.clear()
    return "cleared"


if __name__ == "__main__":
    server.run("stdio")
