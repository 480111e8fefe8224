"""A small MCP server for trioexec's tests, spoken to over stdio.

Run as ``python mcp_test_server.py MARKER_DIR`` (stdio), or
``python mcp_test_server.py MARKER_DIR http PORT`` (streamable HTTP on
127.0.0.1).  It writes its pid to ``MARKER_DIR/pid-<name>`` (the name is
the ``MCP_TEST_NAME`` environment variable, default ``server``) so tests can
check that no server outlives its context, and its tools leave marker files
there:

* ``meet`` (read-only): writes ``MARKER_DIR/<me>`` then waits up to 10 s for
  ``MARKER_DIR/<peer>``; two calls overlap only if both find each other.
* ``fail`` (not destructive): raises, so the result has ``isError``.
* ``steps``: reports three progress notifications, then answers.
* ``hang``: waits for ever; when the request is cancelled it writes
  ``MARKER_DIR/cancelled``.
* ``picture``: answers with a text block and a one-pixel PNG.
* ``wipe`` (destructive): answers ``wiped``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

MARKERS = Path(sys.argv[1])
NAME = os.environ.get("MCP_TEST_NAME", "server")
PIXEL = "".join(
    [
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGA",
        "hKmMIQAAAABJRU5ErkJggg==",
    ]
)

server = MCPServer(NAME)


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def meet(me: str, peer: str) -> str:
    """Wait for a peer call to arrive."""
    (MARKERS / me).write_text("here")
    with anyio.move_on_after(10):
        while not (MARKERS / peer).exists():  # noqa: ASYNC110 - another process makes the file
            await anyio.sleep(0.01)
        return f"{me} met {peer}"
    return f"{me} was alone"


@server.tool(annotations=ToolAnnotations(destructive_hint=False))
async def fail(reason: str) -> str:
    """Always fails."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def steps(ctx: Context) -> str:
    """Report progress three times."""
    for step in range(1, 4):
        await ctx.report_progress(step, 3, f"step {step}")
    return "all steps done"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def hang() -> str:
    """Wait until cancelled."""
    try:
        await anyio.sleep_forever()
    finally:
        (MARKERS / "cancelled").write_text("yes")
    return "never"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def picture() -> list[TextContent | ImageContent]:
    """A caption and a one-pixel image."""
    return [
        TextContent(type="text", text="a pixel"),
        ImageContent(type="image", data=PIXEL, mime_type="image/png"),
    ]


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
async def wipe(target: str) -> str:
    """Pretend to delete ``target``."""
    return f"wiped {target}"


if __name__ == "__main__":
    (MARKERS / f"pid-{NAME}").write_text(str(os.getpid()))
    if len(sys.argv) > 3 and sys.argv[2] == "http":  # MARKER_DIR http PORT
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[3]))
    else:
        server.run("stdio")
