"""MCP servers as trioexec tools: :func:`open_mcp_servers` and :class:`McpTool`.

Needs the ``mcp`` extra (the ``mcp`` 2.x client, which runs on trio through
anyio).  Each server is hosted by a task of the context manager's own nursery:

```
open_mcp_servers ──► nursery ─┬─ host "files":  async with Client(stdio) ──► list tools ──► wait
                              └─ host "remote": async with Client(http)  ──► list tools ──► wait
     yields McpServers(tools, failures)   ...calls go to client.call_tool from the run's tasks...
exit / cancel ──► every host leaves its Client: the session closes, the process is stopped
```

Every server starts at once; one that fails (or takes longer than
``startup_timeout``) is reported in :attr:`McpServers.failures` and the others
go on.  A call that is cancelled (interrupt, abort, a sibling's error, a
timeout) is abandoned by the client, which sends the server
``notifications/cancelled``.  When the block exits, normally or cancelled, no
server process is left running.
"""

from __future__ import annotations

import io
import json
import logging
import math
import os
import re
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TextIO, cast

import attrs
import httpx2
import trio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from mcp.types import Tool as McpToolInfo

from .._contract._tool import CallContext, PermissionResult, ProgressSender, Tool
from .._contract._validation import compile_tool
from .._errors import ToolDefinitionError
from .._groups import is_only
from .._models import ContentBlock, ImageBlock, JSONObject, TextBlock
from ._config import McpConfig, McpServerConfig

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["McpProgress", "McpServers", "McpTool", "McpToolError", "open_mcp_servers"]

logger = logging.getLogger("trioexec.mcp")

DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds a server may take to start and list its tools."""

_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def mcp_tool_timeout(environ: Mapping[str, str] | None = None) -> float | None:
    """Claude Code's ``MCP_TOOL_TIMEOUT`` (milliseconds) as seconds; None when unset or invalid."""
    raw = (os.environ if environ is None else environ).get("MCP_TOOL_TIMEOUT", "").strip()
    try:
        milliseconds = int(raw)
    except ValueError:
        return None
    return milliseconds / 1000 if milliseconds > 0 else None


class McpToolError(Exception):
    """An MCP tool answered with ``isError``; the message is its content as text."""


@attrs.frozen
class McpProgress:
    """One ``notifications/progress`` of an MCP call, as a progress item.

    Attributes:
        progress: how far the call is (the server's unit).
        total: the value ``progress`` counts to, when the server knows it.
        message: the server's own words, when it sent any.
    """

    progress: float
    total: float | None = None
    message: str | None = None

    def __str__(self) -> str:
        amount = f"{self.progress:g}/{self.total:g}" if self.total else f"{self.progress:g}"
        return f"{self.message} ({amount})" if self.message else amount


@attrs.frozen
class McpServers:
    """What :func:`open_mcp_servers` yields.

    Attributes:
        tools: every tool of every server that started, as trioexec tools.
        failures: server (or ``server/tool``, or for a file that could not be
            read, the problem itself) -> why it is not available.
    """

    tools: tuple[McpTool, ...]
    failures: Mapping[str, str] = attrs.field(factory=dict)


class McpTool(Tool[dict[str, Any]]):
    """One tool of a connected MCP server.

    The name is ``mcp__{server}__{tool}`` (characters outside ``[A-Za-z0-9_-]``
    become ``_``); the server's ``inputSchema`` is layer 1.  With the server's
    annotations trusted, ``readOnlyHint`` makes a call concurrency-safe,
    cancellable on interrupt and allowed by the tool's own permission check;
    any other tool that does not say ``destructiveHint: false`` gives no
    opinion, so the permission chain asks unless a rule allows it (the MCP
    default is that a tool may be destructive).  ``isError`` results become
    error tool_results; progress notifications become :class:`McpProgress`
    items.  Its ``timeout`` is Claude Code's ``MCP_TOOL_TIMEOUT`` environment
    variable (milliseconds) when that is set.
    """

    is_mcp = True
    """Marks MCP tools (a PostToolUse hook's ``updatedMCPToolOutput`` applies to them)."""

    def __init__(
        self, server: str, info: McpToolInfo, client: Client, *, trust_annotations: bool
    ) -> None:
        self.server = server
        self.mcp_name = info.name
        self.name = f"mcp__{_NAME_UNSAFE.sub('_', server)}__{_NAME_UNSAFE.sub('_', info.name)}"
        self.description = info.description or info.title or ""
        self.input_schema = dict(info.input_schema) if info.input_schema else {"type": "object"}
        annotations = info.annotations if trust_annotations else None
        self.read_only = bool(annotations and annotations.read_only_hint)
        self.destructive = not self.read_only and not (
            annotations is not None and annotations.destructive_hint is False
        )
        self.interrupt_behavior = "cancel" if self.read_only else "block"
        self.timeout = mcp_tool_timeout()
        self._client = client

    def is_concurrency_safe(self, input: dict[str, Any]) -> bool:  # noqa: A002
        """Whether the server marked the tool read-only (and its annotations are trusted)."""
        return self.read_only

    async def check_permissions(
        self,
        input: dict[str, Any],  # noqa: A002
        ctx: CallContext,
    ) -> PermissionResult:
        """Allow what is read-only or declared non-destructive; otherwise no opinion (ask)."""
        return PermissionResult.passthrough() if self.destructive else PermissionResult.allow()

    async def call(
        self,
        input: dict[str, Any],  # noqa: A002
        ctx: CallContext,
        progress: ProgressSender,
    ) -> object:
        """Call the tool on its server.

        Raises:
            McpToolError: the server answered with ``isError``.
            Exception: the connection failed or the server sent a JSON-RPC error.

        Cancellation: the request is abandoned at once and the server is sent
        ``notifications/cancelled``; ``Cancelled`` propagates.
        """

        send = progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            send(McpProgress(progress, total, message))

        result = await self._client.call_tool(
            self.mcp_name, dict(input), progress_callback=on_progress
        )
        blocks = _blocks(result)
        if result.is_error:
            raise McpToolError(_text(blocks) or f"{self.mcp_name} failed")
        if all(isinstance(block, TextBlock) for block in blocks):
            return _text(blocks)  # text only: one string, as a built-in tool answers
        return blocks

    def partial_output(self, progress: Sequence[object]) -> str:
        """The progress messages the server had sent, one per line."""
        return "\n".join(str(item) for item in progress if isinstance(item, McpProgress))

    def __repr__(self) -> str:
        return f"<McpTool {self.name!r}>"


@asynccontextmanager
async def open_mcp_servers(
    config: McpConfig | Mapping[str, McpServerConfig],
    *,
    cwd: Path | str | None = None,
    trust_annotations: bool | Mapping[str, bool] = True,
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    stderr: TextIO | None = None,
) -> AsyncIterator[McpServers]:
    """Start the configured MCP servers and yield their tools.

    Args:
        config: the servers (:func:`~trioexec.mcp.load_mcp_config`'s result, or
            a mapping of name -> :class:`McpServerConfig`).  An :class:`McpConfig`'s
            problems are reported in ``failures`` too.
        cwd: the working directory of stdio servers (default: this process's).
        trust_annotations: whether a server's ``readOnlyHint`` and
            ``destructiveHint`` are believed (True, False, or per server name;
            servers not named are trusted).
        startup_timeout: seconds a server may take to start and list its tools.
        stderr: where stdio servers' standard error goes (default: a temporary
            file per server, whose end is quoted when the server fails to start).

    Yields:
        :class:`McpServers`: the tools of every server that started, and why
        the others did not.

    Cancellation: cancelling the block (or leaving it) closes every session
    and stops every server process before the block is left; no server
    outlives it.
    """
    servers = config.servers if isinstance(config, McpConfig) else config
    failures: dict[str, str] = {}
    if isinstance(config, McpConfig):
        failures.update(config.rejected)
        failures.update({p: p for p in config.problems if p not in config.rejected.values()})
    found: dict[str, list[McpTool]] = {}
    stop = trio.Event()

    def trusted(name: str) -> bool:
        if isinstance(trust_annotations, Mapping):
            return trust_annotations.get(name, True)
        return trust_annotations

    async def host(
        name: str,
        server: McpServerConfig,
        *,
        task_status: trio.TaskStatus[list[McpTool]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        log = stderr if stderr is not None else _temporary_log()
        started = False
        try:
            with trio.move_on_after(startup_timeout) as startup:
                async with _connect(server, cwd, log) as client:
                    listed = await client.list_tools()
                    tools, skipped = _tools(name, listed.tools, client, trusted(name))
                    failures.update(skipped)
                    startup.deadline = math.inf
                    started = True
                    task_status.started(tools)
                    await stop.wait()
            if startup.cancelled_caught and not started:
                raise TimeoutError(f"did not start within {startup_timeout:g} s{_tail(log)}")
        except Exception as exc:
            if not started:
                raise _StartupError(f"{_describe(exc)}{_tail(log)}") from exc
            # The session broke after it started: its calls now fail as tool errors.
            logger.warning("MCP server %r stopped: %s", name, _describe(exc))
        finally:
            if stderr is None:
                log.close()

    async def start(nursery: trio.Nursery, name: str, server: McpServerConfig) -> None:
        try:
            found[name] = await nursery.start(host, name, server)
        except _StartupError as exc:  # a server that cannot start never stops the others
            failures[name] = f"{name}: failed to start: {exc}"
            logger.warning("MCP server %r failed to start: %s", name, exc)

    body_error: BaseException | None = None
    try:
        async with trio.open_nursery() as nursery:
            async with trio.open_nursery() as starters:
                for name, server in servers.items():
                    starters.start_soon(start, nursery, name, server)
            tools = tuple(tool for name in servers if name in found for tool in found[name])
            try:
                yield McpServers(tools=tools, failures=dict(failures))
            except BaseException as exc:
                body_error = exc
                raise
            finally:
                stop.set()
    except BaseExceptionGroup as group:
        if body_error is not None and is_only(body_error, group):
            raise body_error from None
        raise


class _StartupError(Exception):
    """A server did not start; the message says why."""


@asynccontextmanager
async def _connect(
    server: McpServerConfig, cwd: Path | str | None, log: TextIO
) -> AsyncIterator[Client]:
    """A connected client for ``server`` (its process started, for stdio)."""
    if server.transport == "stdio":
        assert server.command is not None
        params = StdioServerParameters(
            command=server.command,
            args=list(server.args),
            env=dict(server.env) or None,
            cwd=str(cwd) if cwd is not None else None,
        )
        async with Client(stdio_client(params, errlog=log)) as client:
            yield client
        return
    assert server.url is not None
    # The MCP client's own defaults: 30 s to connect, write or wait for a pool slot, 300 s to read.
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=dict(server.headers), timeout=timeout) as http,
        Client(streamable_http_client(server.url, http_client=http)) as client,
    ):
        yield client


def _temporary_log() -> TextIO:
    return cast("TextIO", tempfile.TemporaryFile("w+", encoding="utf-8"))


def _tail(log: TextIO, limit: int = 500) -> str:
    """The end of a server's standard error, for a failure message ('' when empty)."""
    try:
        log.flush()
        log.seek(0)
        text = log.read().strip()
    except (OSError, ValueError, io.UnsupportedOperation):
        return ""
    if not text:
        return ""
    return f"; its stderr ends: {text[-limit:]}"


def _tools(
    server: str, infos: list[McpToolInfo], client: Client, trusted: bool
) -> tuple[list[McpTool], dict[str, str]]:
    tools: list[McpTool] = []
    skipped: dict[str, str] = {}
    for info in infos:
        tool = McpTool(server, info, client, trust_annotations=trusted)
        try:
            compile_tool(tool)
        except ToolDefinitionError as exc:
            skipped[f"{server}/{info.name}"] = f"{server}/{info.name}: not usable: {exc}"
            logger.warning("MCP tool %s/%s skipped: %s", server, info.name, exc)
            continue
        tools.append(tool)
    return tools, skipped


def _blocks(result: CallToolResult) -> tuple[ContentBlock, ...]:
    blocks: list[ContentBlock] = []
    for item in result.content:
        if isinstance(item, TextContent):
            blocks.append(TextBlock(item.text))
        elif isinstance(item, ImageContent):
            source: JSONObject = {"type": "base64", "media_type": item.mime_type, "data": item.data}
            blocks.append(ImageBlock(source))
        elif isinstance(item, AudioContent):
            blocks.append(
                TextBlock(f"[audio: {item.mime_type}, {len(item.data)} base64 characters]")
            )
        elif isinstance(item, ResourceLink):
            label = f" {item.name}" if item.name else ""
            blocks.append(TextBlock(f"[resource: {item.uri}{label}]"))
        elif isinstance(item, EmbeddedResource):
            resource = item.resource
            if isinstance(resource, TextResourceContents):
                blocks.append(TextBlock(resource.text))
            else:
                blocks.append(TextBlock(f"[binary resource: {resource.uri}]"))
    if not blocks and result.structured_content is not None:
        blocks.append(TextBlock(json.dumps(result.structured_content, ensure_ascii=False)))
    return tuple(blocks)


def _text(blocks: tuple[ContentBlock, ...]) -> str:
    return "\n".join(block.text for block in blocks if isinstance(block, TextBlock))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(leaf) for leaf in exc.exceptions)
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
