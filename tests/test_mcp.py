"""MCP servers as tools: a real stdio (and HTTP) server, started and stopped by trioexec.

These tests run real processes, so they use real time (bounded waits only).
The server is ``tests/data/mcp_test_server.py``; it writes its pid and marker
files into a temporary directory the tests read.
"""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

pytest.importorskip("mcp")

from trioexec import (
    GuardRails,
    ImageBlock,
    ProgressUpdate,
    TextBlock,
    ToolUse,
    Turn,
    Update,
    open_streaming_executor,
    run_tools,
)
from trioexec._contract._permission_context import PermissionContext
from trioexec.mcp import (
    McpConfig,
    McpProgress,
    McpServerConfig,
    McpServers,
    load_mcp_config,
    open_mcp_servers,
    parse_mcp_config,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

SERVER = Path(__file__).parent / "data" / "mcp_test_server.py"
INTERRUPTED = "Interrupted by the user while running: mcp__test__hang had started"


def _stdio(name: str, markers: Path) -> McpServerConfig:
    return McpServerConfig(
        name=name,
        command=sys.executable,
        args=(str(SERVER), str(markers)),
        env={"MCP_TEST_NAME": name},
    )


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live (not zombie) process, read from /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _pid(markers: Path, name: str) -> int:
    return int((markers / f"pid-{name}").read_text())


@asynccontextmanager
async def _servers(markers: Path, *names: str, **options: object) -> AsyncIterator[McpServers]:
    config = {name: _stdio(name, markers) for name in names}
    async with open_mcp_servers(config, **options) as servers:  # type: ignore[arg-type]
        yield servers


# --- configuration ----------------------------------------------------------------------------


def test_a_stdio_and_an_http_server_are_read_in_claude_codes_format(tmp_path: Path) -> None:
    file = tmp_path / ".mcp.json"
    file.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "files": {
                        "command": "npx",
                        "args": ["-y", "srv", "${ROOT}"],
                        "env": {"A": "1"},
                    },
                    "remote": {
                        "type": "http",
                        "url": "${BASE:-http://127.0.0.1:9}/mcp",
                        "headers": {"Authorization": "Bearer ${TOKEN}"},
                    },
                }
            }
        )
    )
    config = load_mcp_config(file, environ={"ROOT": "/src", "TOKEN": "t0k"})
    assert config.problems == ()
    assert config.servers["files"] == McpServerConfig(
        name="files", command="npx", args=("-y", "srv", "/src"), env={"A": "1"}
    )
    assert config.servers["remote"] == McpServerConfig(
        name="remote",
        transport="http",
        url="http://127.0.0.1:9/mcp",
        headers={"Authorization": "Bearer t0k"},
    )


def test_a_bare_dollar_variable_is_left_as_written() -> None:
    config = parse_mcp_config(
        {"mcpServers": {"s": {"command": "run", "args": ["$HOME"]}}}, environ={"HOME": "/h"}
    )
    assert config.servers["s"].args == ("$HOME",)


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"command": "x", "args": ["${MISSING}"]}, "args: environment variable MISSING is not set"),
        ({"type": "sse", "url": "http://x"}, '"type": "sse"'),
        ({"type": "ws", "url": "ws://x"}, "unknown \"type\" 'ws'"),
        ({"args": ["x"]}, 'a stdio server needs "command"'),
        ({"type": "http"}, 'an http server needs "url"'),
        ({"command": "x", "cmd": "y"}, "unknown key(s) cmd"),
        ({"command": "x", "env": {"A": 1}}, '"env" must be an object of strings'),
        ("not an object", "expected an object"),
    ],
)
def test_a_bad_server_entry_is_one_problem_and_never_hides_the_others(
    entry: object, problem: str
) -> None:
    config = parse_mcp_config(
        {"mcpServers": {"bad": entry, "good": {"command": "ok"}}}, source="proj/.mcp.json"
    )
    assert list(config.servers) == ["good"]
    (line,) = config.problems
    assert line.startswith("proj/.mcp.json: mcpServers.bad: ")
    assert problem in line


def test_a_missing_file_is_an_empty_configuration_and_garbage_is_a_problem(
    tmp_path: Path,
) -> None:
    assert load_mcp_config(tmp_path / "absent.json") == McpConfig()
    (tmp_path / "bad.json").write_text("{not json")
    (problem,) = load_mcp_config(tmp_path / "bad.json").problems
    assert "not valid JSON" in problem
    (tmp_path / "list.json").write_text("[]")
    (problem,) = load_mcp_config(tmp_path / "list.json").problems
    assert '"mcpServers" object' in problem


def test_importing_trioexec_does_not_import_the_mcp_client() -> None:
    code = "import sys, trioexec, trioexec.tools; assert 'mcp' not in sys.modules, 'mcp imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- tools, calls, results --------------------------------------------------------------------


async def test_tools_are_named_after_their_server_and_keep_its_schema(tmp_path: Path) -> None:
    async with _servers(tmp_path, "test") as servers:
        names = {tool.name for tool in servers.tools}
        assert names == {
            f"mcp__test__{t}" for t in ("meet", "fail", "steps", "hang", "picture", "wipe")
        }
        meet = next(tool for tool in servers.tools if tool.name == "mcp__test__meet")
        assert meet.input_schema is not None
        assert meet.input_schema["required"] == ["me", "peer"]
        assert servers.failures == {}


async def test_read_only_calls_overlap(tmp_path: Path) -> None:
    async with _servers(tmp_path, "test") as servers:
        outcome = await run_tools(
            [
                ToolUse("a", "mcp__test__meet", {"me": "a", "peer": "b"}),
                ToolUse("b", "mcp__test__meet", {"me": "b", "peer": "a"}),
            ],
            servers.tools,
        )
    assert [r.text for r in outcome.results] == ["a met b", "b met a"]


async def test_an_input_that_fails_the_servers_schema_never_reaches_the_server(
    tmp_path: Path,
) -> None:
    async with _servers(tmp_path, "test") as servers:
        outcome = await run_tools([ToolUse("a", "mcp__test__meet", {"me": 1})], servers.tools)
    (result,) = outcome.results
    assert result.is_error
    assert "The required parameter `peer` is missing" in result.text
    assert not (tmp_path / "1").exists()


async def test_an_is_error_result_is_an_error_tool_result(tmp_path: Path) -> None:
    async with _servers(tmp_path, "test") as servers:
        outcome = await run_tools(
            [ToolUse("f", "mcp__test__fail", {"reason": "disk full"})], servers.tools
        )
    (result,) = outcome.results
    assert result.is_error
    assert "failed on purpose: disk full" in result.text


async def test_text_and_image_content_are_mapped_to_blocks(tmp_path: Path) -> None:
    async with _servers(tmp_path, "test") as servers:
        outcome = await run_tools([ToolUse("p", "mcp__test__picture", {})], servers.tools)
    (result,) = outcome.results
    assert not result.is_error
    assert isinstance(result.content, tuple)
    text, image = result.content
    assert text == TextBlock("a pixel")
    assert isinstance(image, ImageBlock)
    assert image.source["type"] == "base64"
    assert image.source["media_type"] == "image/png"


async def test_progress_notifications_become_progress_updates(tmp_path: Path) -> None:
    send, receive = trio.open_memory_channel[Update](math.inf)
    async with _servers(tmp_path, "test") as servers:
        outcome = await run_tools(
            [ToolUse("s", "mcp__test__steps", {})], servers.tools, updates=send
        )
    send.close()
    progress = [u.data async for u in receive if isinstance(u, ProgressUpdate)]
    assert progress == [McpProgress(float(i), 3.0, f"step {i}") for i in (1, 2, 3)]
    assert str(progress[0]) == "step 1 (1/3)"
    assert outcome.results[0].text == "all steps done"


async def test_cancelling_a_call_sends_the_mcp_cancellation(tmp_path: Path) -> None:
    async with _servers(tmp_path, "test") as servers:
        turn = Turn()
        async with open_streaming_executor(servers.tools, turn=turn) as executor:
            executor.add_tool(ToolUse("h", "mcp__test__hang", {}))
            with trio.fail_after(10):
                while not executor.in_progress_ids:  # noqa: ASYNC110 - a real process starts
                    await trio.sleep(0.01)
            await trio.sleep(0.3)  # the request reaches the server
            turn.interrupt()  # read-only: interrupt_behavior "cancel"
            results = [u async for u in executor.remaining()]
        with trio.fail_after(10):
            while not (tmp_path / "cancelled").exists():  # noqa: ASYNC110 - the server's file
                await trio.sleep(0.02)
    (update,) = results
    assert update.result.is_error
    assert update.result.text.startswith(INTERRUPTED)


# --- permissions ------------------------------------------------------------------------------


async def test_a_destructive_tool_asks_unless_a_rule_allows_it(tmp_path: Path) -> None:
    use = ToolUse("w", "mcp__test__wipe", {"target": "db"})
    async with _servers(tmp_path, "test") as servers:
        refused = await run_tools([use], servers.tools, guard=GuardRails())
        allowed = await run_tools(
            [use],
            servers.tools,
            guard=GuardRails(permissions=PermissionContext(allow=["mcp__test__wipe"])),
        )
    assert refused.results[0].is_error
    assert "haven't granted it yet" in refused.results[0].text
    assert allowed.results[0].text == "wiped db"


async def test_untrusted_annotations_make_no_call_concurrency_safe(tmp_path: Path) -> None:
    async with _servers(tmp_path, "test", trust_annotations={"test": False}) as servers:
        meet = next(tool for tool in servers.tools if tool.name == "mcp__test__meet")
        assert not meet.is_concurrency_safe({"me": "a", "peer": "b"})
        assert meet.interrupt_behavior == "block"
        verdict = await meet.check_permissions({"me": "a", "peer": "b"}, None)  # type: ignore[arg-type]
        assert verdict.behavior == "passthrough"


# --- processes --------------------------------------------------------------------------------


async def test_no_server_process_outlives_the_block(tmp_path: Path) -> None:
    async with _servers(tmp_path, "one", "two") as servers:
        pids = [_pid(tmp_path, "one"), _pid(tmp_path, "two")]
        assert all(_alive(pid) for pid in pids)
        assert len(servers.tools) == 12
    assert not any(_alive(pid) for pid in pids)


async def test_no_server_process_outlives_an_abort_during_a_call(tmp_path: Path) -> None:
    with trio.move_on_after(30) as deadline:
        async with _servers(tmp_path, "test") as servers:
            pid = _pid(tmp_path, "test")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run_tools, [ToolUse("h", "mcp__test__hang", {})], servers.tools)
                await trio.sleep(0.5)
                nursery.cancel_scope.cancel(reason="abort")
    assert not deadline.cancelled_caught
    assert not _alive(pid)


async def test_a_server_that_cannot_start_is_reported_and_the_others_go_on(
    tmp_path: Path,
) -> None:
    config = {
        "test": _stdio("test", tmp_path),
        "broken": McpServerConfig(name="broken", command=str(tmp_path / "no-such-program")),
        "crash": McpServerConfig(
            name="crash",
            command=sys.executable,
            args=("-c", "import sys; sys.stderr.write('boom: bad config'); sys.exit(3)"),
        ),
    }
    async with open_mcp_servers(config) as servers:
        assert {tool.name.split("__")[1] for tool in servers.tools} == {"test"}
    assert set(servers.failures) == {"broken", "crash"}
    assert servers.failures["broken"].startswith("broken: failed to start: ")
    assert "boom: bad config" in servers.failures["crash"]


async def test_a_server_that_never_answers_is_stopped_after_the_startup_timeout(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "silent.pid"
    script = (
        # A process that never speaks MCP: it waits for a signal (the client's stop).
        f"import os, signal; open({str(pid_file)!r}, 'w').write(str(os.getpid())); signal.pause()"
    )
    config = {"silent": McpServerConfig(name="silent", command=sys.executable, args=("-c", script))}
    with trio.fail_after(20):
        async with open_mcp_servers(config, startup_timeout=1.0) as servers:
            pass
    assert servers.tools == ()
    assert "did not start within 1 s" in servers.failures["silent"]
    assert not _alive(int(pid_file.read_text()))


async def test_a_config_files_problems_are_reported_as_failures(tmp_path: Path) -> None:
    config = parse_mcp_config({"mcpServers": {"bad": {"type": "sse", "url": "http://x"}}})
    async with open_mcp_servers(config) as servers:
        assert servers.tools == ()
    assert '"type": "sse"' in servers.failures["bad"]


# --- streamable HTTP --------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_an_http_server_is_reached_by_its_url(tmp_path: Path) -> None:
    port = _free_port()
    process = await trio.lowlevel.open_process(
        [sys.executable, str(SERVER), str(tmp_path), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "MCP_TEST_NAME": "web"},
    )
    try:
        with trio.fail_after(20):
            while True:
                try:
                    stream = await trio.open_tcp_stream("127.0.0.1", port)
                    await stream.aclose()
                    break
                except OSError:
                    await trio.sleep(0.05)
        config = {
            "web": McpServerConfig(
                name="web",
                transport="http",
                url=f"http://127.0.0.1:{port}/mcp",
                headers={"X-Test": "1"},
            )
        }
        async with open_mcp_servers(config) as servers:
            outcome = await run_tools(
                [ToolUse("f", "mcp__web__fail", {"reason": "remote"})], servers.tools
            )
        assert servers.failures == {}
        assert "failed on purpose: remote" in outcome.results[0].text
    finally:
        process.terminate()
        with trio.move_on_after(10):
            await process.wait()
