"""MCP servers as tools (needs the ``mcp`` extra: ``pip install 'trioexec[mcp]'``).

:func:`load_mcp_config` reads a ``.mcp.json`` file in Claude Code's format;
:func:`open_mcp_servers` starts its servers and yields their tools, named
``mcp__{server}__{tool}``, ready for :func:`~trioexec.run_tools` or a
streaming executor.  See docs/mcp.md.
"""

# ruff: noqa: E402  (the extra is checked before the imports that need it)

from . import _util

_util.require_extra("trioexec.mcp", "mcp", "mcp", "httpx2")

from ._mcp._client import DEFAULT_STARTUP_TIMEOUT as DEFAULT_STARTUP_TIMEOUT
from ._mcp._client import McpProgress as McpProgress
from ._mcp._client import McpServers as McpServers
from ._mcp._client import McpTool as McpTool
from ._mcp._client import McpToolError as McpToolError
from ._mcp._client import open_mcp_servers as open_mcp_servers
from ._mcp._config import McpConfig as McpConfig
from ._mcp._config import McpServerConfig as McpServerConfig
from ._mcp._config import load_mcp_config as load_mcp_config
from ._mcp._config import parse_mcp_config as parse_mcp_config

__all__ = [
    "DEFAULT_STARTUP_TIMEOUT",
    "McpConfig",
    "McpProgress",
    "McpServerConfig",
    "McpServers",
    "McpTool",
    "McpToolError",
    "load_mcp_config",
    "open_mcp_servers",
    "parse_mcp_config",
]

_util.fixup_module_metadata(__name__, globals())
