"""The sandbox's network: domain rules, and the proxy a confined command reaches.

The live tests start an HTTP server on the host's ``127.0.0.1`` standing in
for an allowed domain (``localhost``); the same server reached by another
name (``127.0.0.1``) stands in for a domain that is not allowed.  With
``TRIOEXEC_TEST_SANDBOX_OFF=1`` the refusal tests fail (unconfined, every
name is reachable).
"""

from __future__ import annotations

import os
import shutil
import socket
from typing import TYPE_CHECKING

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from trioexec._contract._tool import CallContext
from trioexec._guard._rails import GuardRails
from trioexec._guard._sandbox import probe_bwrap
from trioexec._guard._sandbox._domains import domain_allowed, domain_matches
from trioexec._guard._sandbox._proxy import open_proxy
from trioexec._models import ToolUse
from trioexec.tools import BashTool, ShellError
from trioexec.tools._bash import BashInput

if TYPE_CHECKING:
    from pathlib import Path

OFF = os.environ.get("TRIOEXEC_TEST_SANDBOX_OFF") == "1"
_WHY = probe_bwrap(None)
live = pytest.mark.skipif(
    _WHY is not None or shutil.which("socat") is None or shutil.which("curl") is None,
    reason=f"needs bubblewrap that runs, socat and curl ({_WHY or 'bubblewrap runs'})",
)


@pytest.mark.parametrize(
    ("host", "port", "pattern", "expected"),
    [
        ("github.com", 443, "github.com", True),
        ("api.github.com", 443, "github.com", False),
        ("api.github.com", 443, "*.github.com", True),
        ("a.b.github.com", 443, "*.github.com", True),
        ("github.com", 443, "*.github.com", False),  # the wildcard is for subdomains only
        ("evilgithub.com", 443, "*.github.com", False),
        ("GitHub.COM.", 443, "github.com", True),
        ("example.org", 8080, "example.org:8080", True),
        ("example.org", 443, "example.org:8080", False),
        ("::1", 443, "[::1]:443", True),
    ],
)
def test_domain_patterns_match_as_claude_codes(
    host: str, port: int, pattern: str, expected: bool
) -> None:
    assert domain_matches(host, port, pattern) is expected


_LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)


@given(st.lists(_LABEL, min_size=1, max_size=4), st.integers(1, 65535))
def test_a_denied_domain_is_never_allowed(labels: list[str], port: int) -> None:
    host = ".".join(labels)
    assert not domain_allowed(host, port, [host, "*." + labels[-1]], [host])
    assert domain_allowed(host, port, [host], []) is True
    assert domain_allowed(host, port, [], []) is False  # nothing listed: refused


async def _http_server(nursery: trio.Nursery) -> int:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")

    async def serve(stream: trio.SocketStream) -> None:
        async with stream:
            await stream.receive_some(65536)
            await stream.send_all(b"HTTP/1.0 200 OK\r\nContent-Length: 12\r\n\r\nfrom-server\n")

    nursery.start_soon(trio.serve_listeners, serve, listeners)
    return int(listeners[0].socket.getsockname()[1])


async def _bash(command: str, cwd: Path, guard: GuardRails) -> str:
    ctx = CallContext(ToolUse("t", "Bash", {}), cwd=cwd, permissions=guard.permissions)
    with trio.fail_after(60):
        try:
            return str(await BashTool().call(BashInput(command), ctx, lambda _: None))
        except ShellError as exc:
            return str(exc)


def _guard(**network: object) -> GuardRails:
    return GuardRails.from_settings({"sandbox": {"enabled": not OFF, "network": network}})


@live
async def test_an_allowed_domain_is_reached_through_the_proxy(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        port = await _http_server(nursery)
        guard = _guard(allowedDomains=["localhost"])
        http = await _bash(f"curl -sS http://localhost:{port}/", tmp_path, guard)
        socks = await _bash(
            f"curl -sS --proxy socks5h://127.0.0.1:3128 http://localhost:{port}/", tmp_path, guard
        )
        proxied = await _bash('echo "$HTTPS_PROXY"', tmp_path, guard)
        nursery.cancel_scope.cancel(reason="the test is over")
    assert "from-server" in http
    assert "from-server" in socks
    assert proxied.strip() == "http://127.0.0.1:3128"  # it went through the proxy


@live
async def test_a_domain_not_allowed_is_refused_and_the_model_is_told(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        port = await _http_server(nursery)
        guard = _guard(allowedDomains=["localhost"])
        text = await _bash(f"curl -sS --fail http://127.0.0.1:{port}/", tmp_path, guard)
        nursery.cancel_scope.cancel(reason="the test is over")
    assert "from-server" not in text
    assert "<sandbox_violations>" in text
    assert f"a connection to 127.0.0.1:{port}: the domain is not in" in text


@live
async def test_a_denied_domain_wins_over_an_allowed_wildcard(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        port = await _http_server(nursery)
        guard = _guard(allowedDomains=["localhost", "127.0.0.1"], deniedDomains=["127.0.0.1"])
        text = await _bash(
            f"curl -sS -x socks5h://127.0.0.1:3128 http://127.0.0.1:{port}/", tmp_path, guard
        )
        nursery.cancel_scope.cancel(reason="the test is over")
    assert "from-server" not in text
    assert f"127.0.0.1:{port}" in text


@live
async def test_without_allowed_domains_there_is_no_network_at_all(tmp_path: Path) -> None:
    async with trio.open_nursery() as nursery:
        port = await _http_server(nursery)
        guard = _guard()
        text = await _bash(
            f"curl -sS --max-time 5 --noproxy '*' http://127.0.0.1:{port}/", tmp_path, guard
        )
        nursery.cancel_scope.cancel(reason="the test is over")
    assert "from-server" not in text


async def test_the_proxy_refuses_and_records_a_socks_connection(tmp_path: Path) -> None:
    async with open_proxy(str(tmp_path), ("allowed.test",), ()) as proxy:
        client = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        await client.connect(proxy.path)
        stream = trio.SocketStream(client)
        name = b"blocked.test"
        await stream.send_all(bytes([5, 1, 0]))
        assert await stream.receive_some(2) == bytes([5, 0])
        await stream.send_all(bytes([5, 1, 0, 3, len(name)]) + name + (443).to_bytes(2, "big"))
        reply = await stream.receive_some(10)
        await stream.aclose()
    assert reply[1] == 2  # "connection not allowed by ruleset"
    assert proxy.refused == ["blocked.test:443"]
    assert not await trio.Path(proxy.path).exists()  # closed with the block


async def test_the_proxy_answers_403_to_an_http_request_for_a_refused_host(tmp_path: Path) -> None:
    async with open_proxy(str(tmp_path), ("allowed.test",), ()) as proxy:
        client = trio.socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        await client.connect(proxy.path)
        stream = trio.SocketStream(client)
        await stream.send_all(b"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
        answer = b""
        while chunk := await stream.receive_some(4096):
            answer += chunk
        await stream.aclose()
    assert answer.startswith(b"HTTP/1.1 403 Forbidden")
    assert b"evil.test:443 refused by the sandbox" in answer
    assert proxy.refused == ["evil.test:443"]


@live
async def test_cancelling_a_proxied_call_closes_its_proxy_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    guard = _guard(allowedDomains=["localhost"])
    sandbox = guard.sandbox
    assert sandbox is not None
    with trio.move_on_after(1.0) as scope:
        await _bash("sleep 1234.625", tmp_path, guard)
    assert scope.cancelled_caught
    assert [p for p in os.listdir(sandbox.proxy_dir) if p.endswith(".sock")] == []
    assert not any(b"1234.625" in _cmdline(pid) for pid in os.listdir("/proc") if pid.isdigit())


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""
