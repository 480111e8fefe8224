"""``.mcp.json`` in Claude Code's format: which MCP servers to start and how.

Pure: reads and checks the file, expands environment variables, and imports
neither trio nor the ``mcp`` package, so a configuration can be checked where
the ``mcp`` extra is not installed.

The format (Claude Code's project ``.mcp.json``)::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-files"], "env": {"ROOT": "."}},
        "remote": {"type": "http", "url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${TOKEN}"}}}}

``${VAR}`` and ``${VAR:-default}`` are expanded in ``command``, ``args``,
``env``, ``url`` and ``headers``, as Claude Code does; a bare ``$VAR`` is left
alone.  A variable that is unset and has no default makes that server a
problem (it is not started) rather than starting it with the literal text.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, TypeAlias

import attrs

__all__ = ["McpConfig", "McpServerConfig", "load_mcp_config", "parse_mcp_config"]

Transport: TypeAlias = Literal["stdio", "http"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SERVER_KEYS = frozenset({"type", "command", "args", "env", "url", "headers"})


@attrs.frozen
class McpServerConfig:
    """One MCP server, environment variables already expanded.

    Attributes:
        name: the key under ``mcpServers``; tools are named ``mcp__{name}__{tool}``.
        transport: ``"stdio"`` (a command trioexec starts) or ``"http"`` (a URL).
        command / args / env: the process to start (stdio).  ``env`` is added
            to a minimal safe environment, as the MCP client does.
        url / headers: where the server listens (http).
    """

    name: str
    transport: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)


@attrs.frozen
class McpConfig:
    """The servers of one or more ``.mcp.json`` files, and what was wrong with the rest.

    Attributes:
        servers: the usable servers, by name, in file order.
        problems: one line per server that cannot be used (or per file that
            cannot be read), naming the file and the server.
        rejected: server name -> its problem line, for the servers among them.
    """

    servers: Mapping[str, McpServerConfig] = attrs.field(factory=dict)
    problems: tuple[str, ...] = ()
    rejected: Mapping[str, str] = attrs.field(factory=dict)


def load_mcp_config(path: Path | str, *, environ: Mapping[str, str] | None = None) -> McpConfig:
    """Read one ``.mcp.json`` file.

    A missing file is an empty configuration; a file that is not JSON, or not
    an object with an ``mcpServers`` object, is one problem line.  Each server
    is checked on its own: one bad entry never hides the others.

    Args:
        path: the file.
        environ: the variables ``${VAR}`` expands from (default: ``os.environ``).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return McpConfig()
    except (OSError, UnicodeDecodeError) as exc:
        return McpConfig(problems=(f"{file}: cannot be read: {exc}",))
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        return McpConfig(problems=(f"{file}: not valid JSON: {exc}",))
    return parse_mcp_config(document, source=str(file), environ=environ)


def parse_mcp_config(
    document: object, *, source: str = ".mcp.json", environ: Mapping[str, str] | None = None
) -> McpConfig:
    """Check a parsed ``.mcp.json`` document; see :func:`load_mcp_config`."""
    env = os.environ if environ is None else environ
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        return McpConfig(problems=(f'{source}: expected an object with an "mcpServers" object',))
    servers: dict[str, McpServerConfig] = {}
    rejected: dict[str, str] = {}
    for name, entry in document["mcpServers"].items():
        try:
            servers[name] = _server(name, entry, env)
        except _Problem as problem:
            rejected[name] = f"{source}: mcpServers.{name}: {problem}"
    return McpConfig(servers=servers, problems=tuple(rejected.values()), rejected=rejected)


class _Problem(Exception):
    """One server entry that cannot be used."""


def _server(name: str, entry: object, environ: Mapping[str, str]) -> McpServerConfig:
    if not name or not isinstance(entry, dict):
        raise _Problem("expected an object")
    unknown = sorted(set(entry) - _SERVER_KEYS)
    if unknown:
        known = ", ".join(sorted(_SERVER_KEYS))
        raise _Problem(f"unknown key(s) {', '.join(unknown)} (known: {known})")
    kind = entry.get("type", "stdio")
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command:
            raise _Problem('a stdio server needs "command" (a string)')
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise _Problem('"args" must be a list of strings')
        return McpServerConfig(
            name=name,
            transport="stdio",
            command=_expand(command, environ, "command"),
            args=tuple(_expand(arg, environ, "args") for arg in args),
            env=_string_map(entry.get("env", {}), environ, "env"),
        )
    if kind == "http":
        url = entry.get("url")
        if not isinstance(url, str) or not url:
            raise _Problem('an http server needs "url" (a string)')
        return McpServerConfig(
            name=name,
            transport="http",
            url=_expand(url, environ, "url"),
            headers=_string_map(entry.get("headers", {}), environ, "headers"),
        )
    if kind == "sse":
        raise _Problem('"type": "sse" (the deprecated transport) is not supported; use "http"')
    raise _Problem(f'unknown "type" {kind!r} (known: "stdio", "http")')


def _string_map(value: object, environ: Mapping[str, str], field: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Problem(f'"{field}" must be an object of strings')
    return {key: _expand(item, environ, field) for key, item in value.items()}


def _expand(text: str, environ: Mapping[str, str], field: str) -> str:
    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is not None:
            return value
        if default is not None:
            return default
        raise _Problem(f"{field}: environment variable {name} is not set and has no default")

    return _VARIABLE.sub(replace, text)
