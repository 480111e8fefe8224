"""The ``trioexec agent`` tool provider for the MCP servers of the project's ``.mcp.json``.

A project's ``.mcp.json`` names commands to start, and a repository can be
cloned from anywhere, so, as in Claude Code, its servers start only once
approved: by a settings file (``enableAllProjectMcpServers: true``, or the
server's name in ``enabledMcpjsonServers``; ``disabledMcpjsonServers`` always
wins), or by the user answering ``y`` on a terminal.  With stdin not a
terminal, a server no setting approves is skipped with one line on stderr.
Problems in the file, and servers that fail to start, are one line each; the
agent goes on with the tools it has.
"""

from __future__ import annotations

import json
import sys
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from ._agent_terminal import is_terminal

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Sequence
    from pathlib import Path

    from .._contract._tool import Tool
    from .._mcp._config import McpServerConfig

__all__ = ["McpApproval", "mcp_json_provider"]


class _Setup(Protocol):
    """What the provider reads of the agent's ``AgentSetup``."""

    @property
    def cwd(self) -> Path: ...

    @property
    def stderr(self) -> TextIO: ...


class McpApproval:
    """Which project MCP servers may start: settings first, then the user on a terminal.

    Attributes:
        enable_all: ``enableAllProjectMcpServers`` was true in a settings file,
            or ``--approve-all-mcp`` was given.
        enabled: names in ``enabledMcpjsonServers`` and in ``--approve-mcp``.
        disabled: names in ``disabledMcpjsonServers`` (these never start).
    """

    def __init__(
        self,
        settings_files: Sequence[Path],
        *,
        approve: Iterable[str] = (),
        approve_all: bool = False,
        stdin: TextIO | None = None,
        stderr: TextIO | None = None,
    ) -> None:
        self.enable_all = approve_all
        self.enabled: set[str] = set(approve)
        self.disabled: set[str] = set()
        for file in settings_files:
            document = _read_json(file)
            if document.get("enableAllProjectMcpServers") is True:
                self.enable_all = True
            self.enabled.update(_names(document.get("enabledMcpjsonServers")))
            self.disabled.update(_names(document.get("disabledMcpjsonServers")))
        self._stdin = stdin if stdin is not None else sys.stdin
        self._stderr = stderr if stderr is not None else sys.stderr

    def approves(self, server: McpServerConfig) -> bool:
        """Whether ``server`` may start (asks on a terminal when no setting decides)."""
        if server.name in self.disabled:
            return False
        if self.enable_all or server.name in self.enabled:
            return True
        what = server.url or " ".join([server.command or "", *server.args])
        if not is_terminal(self._stdin):
            print(
                f"trioexec agent: MCP server {server.name!r} of .mcp.json ({what}) not started: "
                "no setting approves it (enabledMcpjsonServers, or --approve-mcp "
                f"{server.name}) and stdin is not a terminal",
                file=self._stderr,
            )
            return False
        self._stderr.write(f"Start MCP server {server.name!r} of .mcp.json ({what})? [y/N] ")
        self._stderr.flush()
        answer = self._stdin.readline().strip().lower()
        return answer in ("y", "yes")


def mcp_json_provider(
    settings_files: Sequence[Path], *, approve: Sequence[str] = (), approve_all: bool = False
) -> Any:  # noqa: ANN401 - a ToolProvider
    """A tool provider for ``trioexec agent``: the approved servers of ``{cwd}/.mcp.json``.

    Args:
        settings_files: the settings files in force (for the approval keys).
        approve: server names approved on the command line (``--approve-mcp``).
        approve_all: every server approved (``--approve-all-mcp``), except the
            ones ``disabledMcpjsonServers`` names.
    """

    @asynccontextmanager
    async def provide(setup: _Setup) -> AsyncIterator[Sequence[Tool[Any]]]:
        path = setup.cwd / ".mcp.json"
        if not path.is_file():
            yield ()
            return
        try:
            from .._mcp._client import open_mcp_servers
            from .._mcp._config import McpConfig, load_mcp_config
        except ImportError:
            print(
                "trioexec agent: .mcp.json found, but MCP needs the mcp extra: "
                "pip install 'trioexec[mcp]'",
                file=setup.stderr,
            )
            yield ()
            return
        config = load_mcp_config(path)
        for problem in config.problems:
            print(f"trioexec agent: {problem}", file=setup.stderr)
        for name in approve:
            if name not in config.servers:
                known = ", ".join(sorted(config.servers)) or "none"
                print(
                    f"trioexec agent: --approve-mcp {name}: no such server in .mcp.json "
                    f"(its servers: {known})",
                    file=setup.stderr,
                )
        approval = McpApproval(
            settings_files, approve=approve, approve_all=approve_all, stderr=setup.stderr
        )
        approved = {n: s for n, s in config.servers.items() if approval.approves(s)}
        async with open_mcp_servers(McpConfig(servers=approved), cwd=setup.cwd) as servers:
            for failure in servers.failures.values():
                print(f"trioexec agent: MCP {failure}", file=setup.stderr)
            yield servers.tools

    return provide


def _read_json(file: Path) -> dict[str, Any]:
    try:
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # the settings loader reports unreadable files
        return {}
    return document if isinstance(document, dict) else {}


def _names(value: object) -> set[str]:
    if not isinstance(value, list):
        return set()
    return {item for item in value if isinstance(item, str)}
