"""The sandbox's network: an HTTP ``CONNECT`` and SOCKS5 proxy that filters by domain.

A sandboxed command has no network but its own loopback.  When the settings
allow domains, :func:`open_proxy` binds a Unix socket outside the sandbox
and serves it in a trio nursery; inside, ``socat`` relays
``127.0.0.1:3128`` to that socket, and ``HTTP_PROXY``, ``HTTPS_PROXY`` and
``ALL_PROXY`` point there.  One port speaks both protocols: a first byte of
``5`` is SOCKS5, anything else HTTP (``CONNECT host:port`` for TLS, or a
plain request with an absolute URL).

Each connection names its destination; :func:`~._domains.domain_allowed`
decides.  A refused one gets ``403`` (HTTP) or "connection not allowed by
ruleset" (SOCKS5), and is recorded in :attr:`Proxy.refused` so the call's
result can tell the model.  Name resolution happens here, outside.

The proxy serves one command: it is opened around it and closed when it
ends (cancelling every connection still open), so it never outlives the call.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import attrs
import trio

from ._domains import domain_allowed

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["CONNECT_TIMEOUT", "PROXY_PORT", "Proxy", "open_proxy"]

logger = logging.getLogger("trioexec.sandbox")

PROXY_PORT = 3128
"""The port the proxy has inside the sandbox (on its own loopback)."""
CONNECT_TIMEOUT = 30.0
"""Seconds to reach an allowed destination before answering 502 / host unreachable."""
_MAX_HEADER = 65536
_REFUSED_BODY = (
    "Connection to {host}:{port} refused by the sandbox: the domain is not in "
    "sandbox.network.allowedDomains\n"
)


@attrs.define(eq=False)
class Proxy:
    """One command's proxy: where it listens, and what it refused and let through.

    Attributes:
        path: the Unix socket it listens on (outside the sandbox).
        allowed_domains: ``sandbox.network.allowedDomains``.
        denied_domains: ``sandbox.network.deniedDomains``.
        refused: ``host:port`` of each refused connection, in order.
        passed: ``host:port`` of each connection let through, in order.
    """

    path: str
    allowed_domains: tuple[str, ...]
    denied_domains: tuple[str, ...]
    refused: list[str] = attrs.field(factory=list)
    passed: list[str] = attrs.field(factory=list)

    def allows(self, host: str, port: int) -> bool:
        """Whether ``host:port`` may be reached; records the answer."""
        ok = domain_allowed(host, port, self.allowed_domains, self.denied_domains)
        (self.passed if ok else self.refused).append(f"{host}:{port}")
        return ok


@asynccontextmanager
async def open_proxy(
    directory: str, allowed: tuple[str, ...], denied: tuple[str, ...]
) -> AsyncIterator[Proxy]:
    """Serve a filtering proxy on a new Unix socket in ``directory`` while the block runs.

    Yields:
        The :class:`Proxy` (its ``path`` is bound and listening).

    On exit (and on cancellation) every connection is cut and the socket
    file removed.
    """
    path = os.path.join(directory, f"proxy-{secrets.token_hex(6)}.sock")
    sock = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        await sock.bind(path)
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    listener = trio.SocketListener(sock)
    proxy = Proxy(path, allowed, denied)
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_accept, listener, proxy, nursery)
            try:
                yield proxy
            finally:
                nursery.cancel_scope.cancel(reason="the sandboxed command has ended")
    finally:
        sock.close()
        with contextlib.suppress(OSError):
            os.unlink(path)


async def _accept(listener: trio.SocketListener, proxy: Proxy, nursery: trio.Nursery) -> None:
    while True:
        stream = await listener.accept()
        nursery.start_soon(_serve, stream, proxy)


class _Reader:
    """Bytes from a stream, read ahead as needed."""

    def __init__(self, stream: trio.abc.Stream, data: bytes = b"") -> None:
        self.stream = stream
        self.buffer = bytearray(data)

    async def fill(self) -> bool:
        chunk = await self.stream.receive_some(65536)
        self.buffer += chunk
        return bool(chunk)

    async def take(self, count: int) -> bytes:
        while len(self.buffer) < count:
            if not await self.fill():
                raise EOFError("the client closed the connection")
        data = bytes(self.buffer[:count])
        del self.buffer[:count]
        return data


async def _serve(stream: trio.abc.Stream, proxy: Proxy) -> None:
    """One client connection; whatever goes wrong ends it, never the proxy."""
    try:
        async with stream:
            reader = _Reader(stream)
            if not await reader.fill():
                return
            if reader.buffer[0] == 5:
                await _socks5(reader, proxy)
            else:
                await _http(reader, proxy)
    except (OSError, EOFError, ValueError, trio.BrokenResourceError, trio.ClosedResourceError):
        logger.debug("sandbox proxy: a connection ended early", exc_info=True)


async def _connect(host: str, port: int) -> trio.SocketStream | None:
    try:
        with trio.fail_after(CONNECT_TIMEOUT):
            return await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError):
        return None


async def _http(reader: _Reader, proxy: Proxy) -> None:
    while b"\r\n\r\n" not in reader.buffer:
        if len(reader.buffer) > _MAX_HEADER or not await reader.fill():
            return
    head, _, rest = bytes(reader.buffer).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    stream = reader.stream
    if method.upper() == "CONNECT":
        host, _, port_text = target.rpartition(":")
        host, port = host.strip("[]"), int(port_text or 443)
    else:
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            await _answer(stream, "400 Bad Request", "Only http:// URLs and CONNECT are proxied\n")
            return
        host, port = url.hostname, url.port or 80
    if not proxy.allows(host, port):
        await _answer(stream, "403 Forbidden", _REFUSED_BODY.format(host=host, port=port))
        return
    upstream = await _connect(host, port)
    if upstream is None:
        await _answer(stream, "502 Bad Gateway", f"Cannot reach {host}:{port}\n")
        return
    async with upstream:
        if method.upper() == "CONNECT":
            await stream.send_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            if rest:
                await upstream.send_all(rest)
        else:
            url = urlsplit(target)
            path = (url.path or "/") + (f"?{url.query}" if url.query else "")
            kept = [
                line
                for line in lines[1:]
                if line.split(":", 1)[0].strip().lower()
                not in ("proxy-connection", "proxy-authorization", "connection", "keep-alive")
            ]
            request = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close"])
            await upstream.send_all(request.encode("latin-1") + b"\r\n\r\n" + rest)
        await _splice(stream, upstream)


async def _answer(stream: trio.abc.Stream, status: str, body: str) -> None:
    data = body.encode()
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(data)}\r\n"
        "X-Proxy-Error: blocked-by-sandbox\r\nConnection: close\r\n\r\n"
    )
    await stream.send_all(head.encode() + data)


_SOCKS_REFUSED = bytes([5, 2, 0, 1, 0, 0, 0, 0, 0, 0])
_SOCKS_UNREACHABLE = bytes([5, 4, 0, 1, 0, 0, 0, 0, 0, 0])
_SOCKS_OK = bytes([5, 0, 0, 1, 0, 0, 0, 0, 0, 0])


async def _socks5(reader: _Reader, proxy: Proxy) -> None:
    stream = reader.stream
    _, count = await reader.take(2)
    methods = await reader.take(count)
    if 0 not in methods:
        await stream.send_all(bytes([5, 0xFF]))
        return
    await stream.send_all(bytes([5, 0]))
    _, command, _, kind = await reader.take(4)
    if kind == 1:
        host = socket.inet_ntop(socket.AF_INET, await reader.take(4))
    elif kind == 4:
        host = socket.inet_ntop(socket.AF_INET6, await reader.take(16))
    elif kind == 3:
        (length,) = await reader.take(1)
        host = (await reader.take(length)).decode("idna")
    else:
        raise ValueError(f"SOCKS5 address type {kind}")
    port = int.from_bytes(await reader.take(2), "big")
    if command != 1:  # only CONNECT
        await stream.send_all(bytes([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]))
        return
    if not proxy.allows(host, port):
        await stream.send_all(_SOCKS_REFUSED)
        return
    upstream = await _connect(host, port)
    if upstream is None:
        await stream.send_all(_SOCKS_UNREACHABLE)
        return
    async with upstream:
        await stream.send_all(_SOCKS_OK)
        if reader.buffer:
            await upstream.send_all(bytes(reader.buffer))
        await _splice(stream, upstream)


async def _splice(a: trio.abc.Stream, b: trio.abc.Stream) -> None:
    """Copy both ways until both sides have finished sending."""

    async def copy(source: trio.abc.Stream, sink: trio.abc.Stream) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            while data := await source.receive_some(65536):
                await sink.send_all(data)
            if isinstance(sink, trio.abc.HalfCloseableStream):
                await sink.send_eof()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(copy, a, b)
        nursery.start_soon(copy, b, a)
