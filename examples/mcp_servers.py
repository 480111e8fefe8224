"""MCP servers as tools: a ``.mcp.json`` in Claude Code's format, started under trio.

The project's ``.mcp.json`` names one stdio server (``examples/mcp/notes_server.py``).
:func:`~trioexec.mcp.open_mcp_servers` starts it, lists its tools as
``mcp__notes__*``, and stops it when the block ends.  One turn adds a note,
then lists the notes twice: the two read-only calls are concurrency-safe and
may overlap.
The destructive ``clear_notes`` asks first; with no ``can_use_tool`` answer the
ask is refused.  Needs the ``mcp`` extra (``pip install -e '.[mcp]'``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import trio

from trioexec import GuardRails, ToolUse, run_tools
from trioexec.mcp import load_mcp_config, open_mcp_servers

SERVER = Path(__file__).parent / "mcp" / "notes_server.py"


async def main() -> None:
    with tempfile.TemporaryDirectory() as project:
        config_file = Path(project) / ".mcp.json"
        config_file.write_text(
            json.dumps({"mcpServers": {"notes": {"command": "${PYTHON}", "args": [str(SERVER)]}}})
        )
        config = load_mcp_config(config_file, environ={"PYTHON": sys.executable})
        async with open_mcp_servers(config, cwd=project) as servers:
            print("tools:", sorted(tool.name for tool in servers.tools))
            outcome = await run_tools(
                [
                    ToolUse("toolu_1", "mcp__notes__add_note", {"text": "buy milk"}),
                    ToolUse("toolu_2", "mcp__notes__list_notes", {}),
                    ToolUse("toolu_3", "mcp__notes__list_notes", {"prefix": "buy"}),
                    ToolUse("toolu_4", "mcp__notes__clear_notes", {}),
                ],
                servers.tools,
                guard=GuardRails(),
            )
            for result in outcome.results:
                print(f"{result.tool_use_id} is_error={result.is_error}: {result.text}")
        print("server stopped; failures:", dict(servers.failures))


if __name__ == "__main__":
    trio.run(main)
