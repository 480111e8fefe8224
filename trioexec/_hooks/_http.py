"""HTTP hooks: POST the hook JSON to a URL, read the response body as a command's stdout.

``{"type": "http", "url": "http://127.0.0.1:8080/hook", "headers": {...},
"allowedEnvVars": [...], "timeout": 30}`` in Claude Code's settings.  The
request is one HTTP/1.1 ``POST`` with ``Content-Type: application/json`` and
the same JSON a command hook reads on stdin; redirects are not followed.
As Claude Code reads the answer: a 2xx response's body is the hook's JSON
output (an empty body is ``{}``); a body that is not JSON, or a status other
than 2xx, is a non-blocking error (an HTTP hook blocks only with a JSON
decision).  ``$VAR`` and ``${VAR}`` in a header value are replaced by the
environment variable when the hook lists it in ``allowedEnvVars``, by
nothing otherwise.

trio for the connection, h11 for the protocol (status line, headers,
``Content-Length`` and chunked bodies, a response cut short), ``ssl`` for
``https``; cancellation closes the connection at once.
"""

from __future__ import annotations

import json
import os
import re
import ssl
import urllib.parse
from collections.abc import Mapping

import attrs
import h11
import trio

from ._output import HookResult, parse_hook_json, result_from_output

__all__ = ["HTTP_RESPONSE_LIMIT", "HttpHook", "post_hook", "url_allowed"]

HTTP_RESPONSE_LIMIT = 1_000_000
"""Bytes of a response kept; a longer response is a non-blocking error."""

_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@attrs.frozen
class HttpHook:
    """A hook that POSTs the hook JSON to ``url`` (``{"type": "http", ...}``)."""

    url: str
    headers: Mapping[str, str] = attrs.field(factory=dict)
    allowed_env_vars: tuple[str, ...] = ()


def url_allowed(url: str, patterns: tuple[str, ...]) -> bool:
    """Whether ``url`` matches one of ``patterns`` (``allowedHttpHookUrls``).

    As Claude Code's setting: a pattern is the whole URL with ``*`` standing
    for any run of characters (``https://hooks.example.com/*``,
    ``http://localhost:*``); everything else is literal.
    """
    for pattern in patterns:
        regex = ".*".join(re.escape(part) for part in pattern.split("*"))
        if re.fullmatch(regex, url, re.DOTALL):
            return True
    return False


def _header_value(value: str, allowed: tuple[str, ...]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return os.environ.get(name, "") if name in allowed else ""

    # Header injection: a value never carries a line break into the request.
    return _ENV_REFERENCE.sub(replace, value).replace("\r", "").replace("\n", "")


async def post_hook(hook: HttpHook, body: bytes, event: str) -> HookResult:
    """POST ``body`` to the hook's URL and read its answer for ``event``.

    Never raises for a failing server: a refused connection, a bad status or
    a body that is not JSON is a non-blocking error.  On cancellation the
    connection is closed and Cancelled propagates.
    """
    label = hook.url
    try:
        status, payload = await _post(hook, body)
    except (OSError, ValueError, h11.ProtocolError, trio.BrokenResourceError, ssl.SSLError) as exc:
        return HookResult(label=label, error=f"HTTP request failed: {exc}")
    if not 200 <= status < 300:
        return HookResult(label=label, error=f"HTTP {status} from {hook.url}")
    text = payload.decode("utf-8", errors="replace").strip()
    if not text:
        text = "{}"
    if not text.startswith("{"):
        shown = text if len(text) <= 200 else text[:200] + "\u2026"
        return HookResult(
            label=label,
            error=f"HTTP hook must return JSON, but got non-JSON response body: {shown}",
        )
    try:
        output = parse_hook_json(json.loads(text), event)
    except ValueError as exc:
        return HookResult(label=label, error=f"JSON validation failed: {exc}")
    return result_from_output(output, event, label)


async def _post(hook: HttpHook, body: bytes) -> tuple[int, bytes]:
    """One ``POST`` over a fresh connection (h11 speaks HTTP/1.1): (status, body)."""
    url = urllib.parse.urlsplit(hook.url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(f"not an http(s) URL: {hook.url}")
    port = url.port or (443 if url.scheme == "https" else 80)
    target = urllib.parse.urlunsplit(("", "", url.path or "/", url.query, ""))
    host = url.hostname if url.port is None else f"{url.hostname}:{url.port}"
    headers = [
        ("Host", host),
        ("Content-Type", "application/json"),
        ("Content-Length", str(len(body))),
        ("Connection", "close"),
    ]
    for name, value in hook.headers.items():
        headers.append(
            (name.replace("\r", "").replace("\n", ""), _header_value(value, hook.allowed_env_vars))
        )
    connection = h11.Connection(our_role=h11.CLIENT)
    request = connection.send(h11.Request(method="POST", target=target, headers=headers))
    stream: trio.abc.Stream
    if url.scheme == "https":
        stream = await trio.open_ssl_over_tcp_stream(url.hostname, port)
    else:
        stream = await trio.open_tcp_stream(url.hostname, port)
    async with stream:
        await stream.send_all(
            (request or b"")
            + (connection.send(h11.Data(data=body)) or b"")
            + (connection.send(h11.EndOfMessage()) or b"")
        )
        return await _read_response(connection, stream)


async def _read_response(connection: h11.Connection, stream: trio.abc.Stream) -> tuple[int, bytes]:
    status: int | None = None
    payload = bytearray()
    while True:
        event = connection.next_event()
        if event is h11.NEED_DATA:
            connection.receive_data(bytes(await stream.receive_some(65536)))
        elif isinstance(event, h11.Response):
            status = event.status_code
        elif isinstance(event, h11.Data):
            payload += event.data
            if len(payload) > HTTP_RESPONSE_LIMIT:
                raise ValueError(f"response over {HTTP_RESPONSE_LIMIT} bytes")
        elif isinstance(event, h11.EndOfMessage):
            assert status is not None  # h11 sends the Response first
            return status, bytes(payload)
        elif isinstance(event, h11.ConnectionClosed):
            raise ValueError("incomplete HTTP response")
        # (an InformationalResponse, 1xx: the real answer follows)
